"""Peak RSS and wall time of ``pytest --citebench`` at three sizes (issue 46): is memory flat in
the number of cases?

Not a test: a measurement script. Each size runs in a fresh process under ``/usr/bin/time -v``
on ``citebench/bm25`` (offline), writing a results file; the table gives wall seconds, peak RSS
(one process), the peak of the whole process tree (children included, ``bench_floor.timed``),
and the tree's growth per case between consecutive sizes (MB per 1,000 cases). Run two checkouts
back to back (``--tree`` a second checkout, e.g. ``git archive REV | tar -x -C DIR``) to compare.

    python benchmarks/bench_scale.py [--tree DIR ...] [--workers 0] [--out FILE]
    python benchmarks/bench_scale.py --sizes --copies 4     # ~243k cases: the 200k check

``--copies N`` adds a size of N copies of the large size's suites (REASONS and the guard, 60,757
cases each), written to a temporary folder under new names (``reasons/ir-copy2``): the same
items and corpora, so the same work per case, at N times the cases.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
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


def copies(root: Path, n: int) -> list[str]:
    """``n`` copies of the large size's suites under ``root``, each suite renamed by its copy."""
    folders = []
    for k in range(1, n + 1):
        for suites in SIZES[-1][1]:
            target = root / f"copy{k}" / Path(suites).name
            shutil.copytree(REPO / suites, target)
            for toml in target.rglob("suite.toml"):
                text = toml.read_text(encoding="utf-8")
                toml.write_text(
                    re.sub(r'^name = "([^"]+)"', rf'name = "\1-copy{k}"', text, flags=re.M),
                    encoding="utf-8",
                )
            folders.append(str(target))
    return folders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", help="checkouts (default: this)")
    parser.add_argument("--workers", default="0")
    parser.add_argument("--sizes", nargs="*", help="labels to run (default: all)")
    parser.add_argument("--copies", type=int, help="add a size of N copies of the large one")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    trees = args.tree or [REPO]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sizes = list(SIZES)
        if args.copies:
            sizes.append((f"x{args.copies}", copies(Path(tmp), args.copies)))
        for label, suites in sizes:
            if args.sizes is not None and label not in args.sizes and not label.startswith("x"):
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
    print(
        f"{'tree':<24} {'size':<6} {'cases':>7} {'wall s':>8} {'peak MB':>8} {'tree MB':>8} "
        f"{'MB/1k':>7}"
    )
    last: dict[str, dict[str, object]] = {}
    for row in rows:
        prev = last.get(str(row["tree"]))
        slope = ""
        if prev is not None:
            dn = int(row["cases"]) - int(prev["cases"])  # type: ignore[call-overload]
            dm = float(row["tree_rss_mb"]) - float(prev["tree_rss_mb"])  # type: ignore[arg-type]
            slope = f"{1000 * dm / dn:7.2f}" if dn else ""
        name = Path(str(row["tree"])).name
        print(
            f"{name:<24} {row['size']:<6} {row['cases']:>7} {float(row['wall_s']):>8.1f} "
            f"{float(row['rss_mb']):>8.0f} {float(row['tree_rss_mb']):>8.0f} {slope:>7}"
        )
        last[str(row["tree"])] = row
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
