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
                                     [--workers 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
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

    cases = 0
    for name in suite.manifest.tasks:
        task = registry.get(name)
        for item in suite.items:
            attempt = asyncio.run(task.solve(item, generate, suite_corpus=corpus))
            task.score(item, attempt)
            cases += 1
    print("cases", cases)
    """
)


def timed(cmd: list[str], cwd: Path) -> dict[str, float | str]:
    """Wall seconds and peak RSS (MB) of ``cmd`` in a fresh process, and its last line."""
    run = subprocess.run(
        ["/usr/bin/time", "-v", *cmd], cwd=cwd, env=ENV, capture_output=True, text=True
    )
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", run.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
    if run.returncode not in (0, 1) or wall is None or rss is None:
        raise SystemExit(
            f"{cmd} failed ({run.returncode}):\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
        )
    hours, minutes, seconds = (float(g or 0) for g in wall.groups())
    lines = [x for x in run.stdout.splitlines() if x.strip()]
    return {
        "wall_s": hours * 3600 + minutes * 60 + seconds,
        "rss_mb": int(rss.group(1)) / 1024,
        "last": lines[-1] if lines else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="suites/reasons/ir")
    parser.add_argument("--model", default="citebench/bm25")
    parser.add_argument("--workers", default="0", help="pytest -n for the plugin and bare runs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
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
                f"--citebench-results={tmp / 'results.jsonl'}",
            ],
            REPO,
        )  # fmt: skip
    floor_s = float(bare["wall_s"]) + float(loop["wall_s"])
    rows = {"bare pytest": bare, "bare loop": loop, "plugin": plugin}
    print(f"{args.suite} on {args.model}, {cases} cases, -n {args.workers}\n")
    print(f"{'run':<12} {'wall s':>8} {'peak RSS MB':>12}  last line")
    for name, row in rows.items():
        print(f"{name:<12} {row['wall_s']:>8.1f} {row['rss_mb']:>12.0f}  {row['last']}")
    print(
        f"\nplugin / bare pytest: {float(plugin['wall_s']) / float(bare['wall_s']):.2f}x time, "
        f"{float(plugin['rss_mb']) / float(bare['rss_mb']):.2f}x memory"
        f"\nplugin / (bare pytest + bare loop): {float(plugin['wall_s']) / floor_s:.2f}x time"
    )
    if args.out:
        args.out.write_text(json.dumps({"cases": cases, **rows}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
