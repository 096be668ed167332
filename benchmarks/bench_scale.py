"""Peak RSS and wall time of ``pytest --citebench`` at three sizes (issue 46): is memory flat in
the number of cases?

Not a test: a measurement script. Each size runs in a fresh process under ``/usr/bin/time -v``
on ``citebench/bm25`` (offline), writing a results file; the table gives wall seconds, peak RSS,
and the RSS growth per case between consecutive sizes (MB per 1,000 cases). Run two checkouts
back to back (``--tree`` a second checkout, e.g. ``git archive REV | tar -x -C DIR``) to compare.

    python benchmarks/bench_scale.py [--tree DIR ...] [--workers 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_floor import ENV, PY, REPO, timed

#: (label, suite paths): about 1k, 13k and 60k cases on the committed suites.
SIZES = (
    ("small", ["suites/reasons/biomolecules", "suites/guard/qasa-calibration"]),
    ("ir", ["suites/reasons/ir"]),
    ("large", ["suites/reasons", "suites/guard"]),
)


def cases(tree: Path, suites: list[str]) -> int:
    """The size of a run, as ``--collect-only -qq`` counts it."""
    import subprocess

    run = subprocess.run(
        [PY, "-m", "pytest", "--citebench", *suites, "--collect-only", "-qq",
         "-p", "no:cacheprovider"],
        cwd=tree, env={**ENV, "PYTHONPATH": str(tree)}, capture_output=True, text=True,
    )  # fmt: skip
    return sum(int(line.rsplit(": ", 1)[1]) for line in run.stdout.splitlines() if ": " in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", help="checkouts (default: this)")
    parser.add_argument("--workers", default="0")
    parser.add_argument("--sizes", nargs="*", help="labels to run (default: all)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    trees = args.tree or [REPO]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, suites in SIZES:
            if args.sizes and label not in args.sizes:
                continue
            for tree in trees:  # back to back, per size: the same load for both checkouts
                n = cases(tree, suites)
                ENV["PYTHONPATH"] = str(tree)
                run = timed(
                    [PY, "-m", "pytest", "--citebench", *suites, "-q", "-p", "no:cacheprovider",
                     "-n", args.workers, "--citebench-model", "citebench/bm25",
                     f"--citebench-results={Path(tmp) / 'results.jsonl'}"],
                    tree,
                )  # fmt: skip
                rows.append({"tree": str(tree), "size": label, "cases": n, **run})
    print(f"{'tree':<24} {'size':<6} {'cases':>7} {'wall s':>8} {'peak MB':>8} {'MB/1k':>7}")
    last: dict[str, dict[str, object]] = {}
    for row in rows:
        prev = last.get(str(row["tree"]))
        slope = ""
        if prev is not None:
            dn = int(row["cases"]) - int(prev["cases"])  # type: ignore[call-overload]
            dm = float(row["rss_mb"]) - float(prev["rss_mb"])  # type: ignore[arg-type]
            slope = f"{1000 * dm / dn:7.2f}" if dn else ""
        name = Path(str(row["tree"])).name
        print(
            f"{name:<24} {row['size']:<6} {row['cases']:>7} {float(row['wall_s']):>8.1f} "
            f"{float(row['rss_mb']):>8.0f} {slope:>7}"
        )
        last[str(row["tree"])] = row
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
