"""The plugin against pytest's own floor, in one run (issue 46): the same suite three ways.

Not a test: a measurement script.

1. **bare pytest**: a parametrized test of as many trivial cases as the suite has, in a fresh
   process (what pytest itself costs per case: collection, the runtest protocol, the terminal);
2. **bare loop**: the same solve and score for every item and task, with the same offline model
   (``citebench/bm25`` by default), with no pytest: what the work itself costs;
3. **the plugin**: ``pytest --citebench SUITE`` with the same model, writing a results file.

Each runs in its own process under ``/usr/bin/time -v`` (wall seconds and peak RSS). The table
gives the ratios the issue asks for: plugin / bare pytest, plugin / (bare pytest + bare loop),
and the same for memory.

    python benchmarks/bench_floor.py [--suite suites/reasons/ir] [--model citebench/bm25]
                                     [--workers 0] [--breakdown] [--out FILE]

``--breakdown`` runs the plugin a fourth time with a timing plugin (``BREAKDOWN``) that clocks
where its time goes beyond the bare loop, printed as a table: start-up and collection, each
phase of pytest's runtest protocol (all plugins' hooks of that phase together), inside them
the case's work (``CaseItem.runtest``: solve and score), the record's parse and writing
(``case_record``, ``Ledger.add``), the end of the run (aggregation and gates, the results
file's tail, the reports) and the terminal summary. Run it with ``-n 0``: under xdist the work
happens in the workers and only the controller is clocked.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
ENV = {
    **os.environ,
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "CITEBENCH_INSTALLED_SUITES": "0",
}

BARE_LOOP = textwrap.dedent(
    """
    import asyncio, sys, time
    from pytest_citebench import registry
    from pytest_citebench.api import Sample
    from pytest_citebench.models.baselines import all_baselines
    from pytest_citebench.suites import load_suite

    suite = load_suite(sys.argv[1])
    answer = all_baselines()[sys.argv[2].split("/", 1)[1]]
    corpus = str(suite.manifest.corpus_file) if suite.manifest.corpus_file else None

    async def generate(messages, *, hint):
        return answer(hint, {})

    async def converse(messages, *, hint, tools):  # the agentic tasks (issue 45)
        from pytest_citebench.models.agent import agent_turn

        return agent_turn(messages, tools=tools, hint=hint, options={})

    generate.converse = converse

    cases = 0
    loop = asyncio.new_event_loop()  # one loop, as the plugin's engine: not one per case
    for name in suite.manifest.tasks:
        task = registry.get(name)
        for item in suite.items:
            attempt = loop.run_until_complete(task.solve(item, generate, suite_corpus=corpus))
            task.score(item, attempt)
            cases += 1
    print("cases", cases)
    """
)


BREAKDOWN = textwrap.dedent(
    """
    import json, os, time
    import pytest

    T = {}
    START = time.perf_counter()

    def add(name, dt):
        T[name] = T.get(name, 0.0) + dt

    def clocked(owner, attr, name):
        real = getattr(owner, attr)
        def wrapper(*a, **kw):
            t = time.perf_counter()
            try:
                return real(*a, **kw)
            finally:
                add(name, time.perf_counter() - t)
        setattr(owner, attr, wrapper)

    def pytest_configure(config):
        from pytest_citebench.reports import conclude, output
        from pytest_citebench.run import items, ledger, session
        clocked(items.CaseItem, "runtest", "case work (CaseItem.runtest: solve, score, dumps)")
        clocked(items, "case_record", "record parse (case_record, twice a case)")
        clocked(ledger.Ledger, "add", "record kept and written (Ledger.add)")
        clocked(session.CitebenchSession, "finish", "end of run (CitebenchSession.finish)")
        clocked(conclude, "conclude", "  aggregation, gates (conclude)")
        clocked(ledger.Ledger, "finish", "  results file's tail (Ledger.finish)")
        clocked(output, "write_requested", "  reports written (write_requested)")
        # pytest's own per-test work that no hook phase isolates
        from _pytest import capture
        from _pytest._io import terminalwriter
        from pytest_citebench import jsonl
        for attr in ("suspend_capturing", "resume_capturing", "readouterr"):
            clocked(capture.MultiCapture, attr, "pytest's output capture (per phase)")
        clocked(terminalwriter.TerminalWriter, "write_raw", "terminal writes (progress)")
        clocked(jsonl.Appender, "write_line", "results file: write + flush a line")

    def phase(hook, name):
        @pytest.hookimpl(wrapper=True)
        def impl(*a, **kw):
            t = time.perf_counter()
            try:
                return (yield)
            finally:
                add(name, time.perf_counter() - t)
        impl.__name__ = hook
        return impl

    pytest_collection = phase("pytest_collection", "collection")
    pytest_runtestloop = phase("pytest_runtestloop", "the test loop (all of it)")
    pytest_runtest_setup = phase("pytest_runtest_setup", "  setup phase (all plugins)")
    pytest_runtest_call = phase("pytest_runtest_call", "  call phase (all plugins)")
    pytest_runtest_teardown = phase("pytest_runtest_teardown", "  teardown phase (all plugins)")
    pytest_runtest_makereport = phase("pytest_runtest_makereport", "  reports made (3 a case)")
    pytest_runtest_logreport = phase("pytest_runtest_logreport", "  reports logged (3 a case)")
    pytest_terminal_summary = phase("pytest_terminal_summary", "terminal summary (all plugins)")

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(config):
        T["in pytest (configure to unconfigure)"] = time.perf_counter() - START
        with open(os.environ["CITEBENCH_BREAKDOWN"], "w") as f:
            json.dump(T, f)
    """
)


def _tree_rss_kb(root: int) -> int:
    """The memory of ``root`` and every process under it, summed (kB): the plugin's children
    (``--citebench-processes``, xdist's workers) count, which ``/usr/bin/time``'s peak, one
    process's, leaves out. Each process counts its proportional set size (a page shared by a
    forked child and its parent counts half in each), or its RSS where the kernel gives no PSS."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += _memory_kb(pid)
        stack.extend(child for child, parent in parents.items() if parent == pid)
    return total


def _memory_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            pages = int(f.read().rsplit(")", 1)[1].split()[21])
        return pages * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError):
        return 0  # ended between the listing and the read


def timed(cmd: list[str], cwd: Path) -> dict[str, float | str]:
    """Wall seconds, peak RSS (MB, the largest one process reached) and the peak of the whole
    process tree's memory summed (``_tree_rss_kb``, sampled every 50 ms) of ``cmd`` in a fresh
    process, and its last line."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            ["/usr/bin/time", "-v", *cmd], cwd=cwd, env=ENV, stdout=out, stderr=err, text=True
        )
        tree_kb = 0
        while process.poll() is None:
            tree_kb = max(tree_kb, _tree_rss_kb(process.pid))
            time.sleep(0.05)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    if process.returncode not in (0, 1) or wall is None or rss is None:
        raise SystemExit(f"{cmd} failed ({process.returncode}):\n{stdout[-2000:]}{stderr[-2000:]}")
    hours, minutes, seconds = (float(g or 0) for g in wall.groups())
    lines = [x for x in stdout.splitlines() if x.strip()]
    return {
        "wall_s": hours * 3600 + minutes * 60 + seconds,
        "rss_mb": int(rss.group(1)) / 1024,
        "tree_rss_mb": tree_kb / 1024,
        "last": lines[-1] if lines else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="suites/reasons/ir")
    parser.add_argument("--model", default="citebench/bm25")
    parser.add_argument("--workers", default="0", help="pytest -n for the plugin and bare runs")
    parser.add_argument("--breakdown", action="store_true", help="where the plugin's time goes")
    parser.add_argument(
        "--processes", help="--citebench-processes for the plugin's runs (default: its own)"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    processes = ["--citebench-processes", args.processes] if args.processes else []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        loop_py = tmp / "bare_loop.py"
        loop_py.write_text(BARE_LOOP, encoding="utf-8")
        loop = timed([PY, str(loop_py), args.suite, args.model], REPO)
        cases = int(str(loop["last"]).split()[-1])
        bare_dir = tmp / "bare"
        bare_dir.mkdir()
        (bare_dir / "test_bare.py").write_text(
            f"import pytest\n\n\n@pytest.mark.parametrize('i', range({cases}))\n"
            "def test_case(i):\n    pass\n",
            encoding="utf-8",
        )
        bare = timed(
            [
                PY,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-n",
                args.workers,
                "test_bare.py",
            ],
            bare_dir,
        )
        plugin = timed(
            [
                PY, "-m", "pytest", "--citebench", args.suite, "-q", "-p", "no:cacheprovider",
                "-n", args.workers, "--citebench-model", args.model,
                f"--citebench-results={tmp / 'results.jsonl'}", *processes,
            ],
            REPO,
        )  # fmt: skip
        breakdown = None
        if args.breakdown:
            (tmp / "citebench_breakdown.py").write_text(BREAKDOWN, encoding="utf-8")
            out = tmp / "breakdown.json"
            env = {
                "PYTHONPATH": os.pathsep.join([str(tmp), *filter(None, [ENV.get("PYTHONPATH")])]),
                "CITEBENCH_BREAKDOWN": str(out),
            }
            ENV.update(env)
            clocked = timed(
                [
                    PY, "-m", "pytest", "-p", "citebench_breakdown", "--citebench", args.suite,
                    "-q", "-p", "no:cacheprovider", "-n", args.workers,
                    "--citebench-model", args.model,
                    f"--citebench-results={tmp / 'results2.jsonl'}", *processes,
                ],
                REPO,
            )  # fmt: skip
            breakdown = {"wall (/usr/bin/time)": float(clocked["wall_s"])}
            breakdown.update(json.loads(out.read_text(encoding="utf-8")))
    floor_s = float(bare["wall_s"]) + float(loop["wall_s"])
    rows = {"bare pytest": bare, "bare loop": loop, "plugin": plugin}
    print(f"{args.suite} on {args.model}, {cases} cases, -n {args.workers}\n")
    print(f"{'run':<12} {'wall s':>8} {'peak RSS MB':>12} {'tree MB':>8}  last line")
    for name, row in rows.items():
        print(
            f"{name:<12} {row['wall_s']:>8.1f} {row['rss_mb']:>12.0f} "
            f"{row['tree_rss_mb']:>8.0f}  {row['last']}"
        )
    print(
        f"\nplugin / bare pytest: {float(plugin['wall_s']) / float(bare['wall_s']):.2f}x time, "
        f"{float(plugin['tree_rss_mb']) / float(bare['tree_rss_mb']):.2f}x memory (process trees)"
        f"\nplugin / (bare pytest + bare loop): {float(plugin['wall_s']) / floor_s:.2f}x time"
    )
    if breakdown is not None:
        print_breakdown(breakdown, cases, float(loop["wall_s"]), float(bare["wall_s"]))
    if args.out:
        out_rows = {"cases": cases, **rows, "breakdown": breakdown}
        args.out.write_text(json.dumps(out_rows, indent=2), encoding="utf-8")


def print_breakdown(times: dict[str, float], cases: int, loop_s: float, bare_s: float) -> None:
    """The timing plugin's clocks as a table: seconds, share of the wall, microseconds a case;
    what no clock covers is start-up (imports, configure) and exit."""
    wall = times["wall (/usr/bin/time)"]
    times = {**times, "outside pytest (imports, exit)": wall - times[
        "in pytest (configure to unconfigure)"]}  # fmt: skip
    print(f"\nwhere the plugin's {wall:.1f} s go (a separate, clocked run; bare loop "
          f"{loop_s:.1f} s, bare pytest {bare_s:.1f} s)\n")  # fmt: skip
    order = [
        "wall (/usr/bin/time)", "outside pytest (imports, exit)",
        "in pytest (configure to unconfigure)", "collection", "the test loop (all of it)",
        "  setup phase (all plugins)", "  call phase (all plugins)",
        "  teardown phase (all plugins)", "  reports made (3 a case)",
        "  reports logged (3 a case)", "end of run (CitebenchSession.finish)",
        "  aggregation, gates (conclude)", "  results file's tail (Ledger.finish)",
        "  reports written (write_requested)", "terminal summary (all plugins)",
        "inside those phases:", "case work (CaseItem.runtest: solve, score, dumps)",
        "record parse (case_record, twice a case)", "record kept and written (Ledger.add)",
        "results file: write + flush a line", "pytest's output capture (per phase)",
        "terminal writes (progress)",
    ]  # fmt: skip
    times["inside those phases:"] = math.nan
    print(f"{'phase':<54} {'s':>7} {'share':>6} {'us/case':>8}")
    for name in order:
        seconds = times.get(name, 0.0)
        if math.isnan(seconds):
            print(name)
            continue
        print(
            f"{name:<54} {seconds:>7.2f} {100 * seconds / wall:>5.1f}% "
            f"{1e6 * seconds / max(1, cases):>8.0f}"
        )


if __name__ == "__main__":
    main()
