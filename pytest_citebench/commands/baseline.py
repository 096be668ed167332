"""``python -m pytest_citebench baseline promote|compare``: make a results file the baseline, or
compare a results file with one (exit 1: worse). The statistics are ``results/compare.py``'s;
the table is ``reports/comparison.py``'s."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def promote(source: Path, target: Path, *, allow_errors: bool = False) -> str:
    """Copy a results file to the baseline path: items deduplicated and sorted, aggregates
    recomputed, written atomically (a CI job killed mid-copy never leaves half a baseline).

    A run with errors is refused unless ``allow_errors``: its errored items would silently drop
    out of every later comparison, which is exactly the kind of gap a baseline must not hide.
    """
    from pytest_citebench.results.aggregate import aggregate
    from pytest_citebench.results.files import (
        check_files,
        dedupe,
        read_results,
        version_mix,
        write_results,
    )
    from pytest_citebench.suites import suite_files_around

    check_files([], [("--to", target)], reads=suite_files_around(target))  # not a suite's file
    items, _ = read_results(source)
    records, _, conflicts = dedupe(items)
    if not records:
        raise ValueError(f"{source}: no item records; nothing to promote")
    mixed = version_mix({str(source): items})
    if mixed:
        # A baseline of one group under two rules would be compared with neither.
        raise ValueError(
            f"{source}: {'; '.join(mixed)}; rescore it (python -m pytest_citebench rescore "
            f"{source}) or re-run the items of the older suite version, then promote"
        )
    if conflicts:
        raise ValueError(
            f"{source}: {len(conflicts)} item(s) recorded twice with different results"
        )
    errors = sum(r["outcome"] == "error" for r in records)
    if errors and not allow_errors:
        raise ValueError(
            f"{source}: {errors} item(s) ended in an error; rerun them "
            "(pytest --citebench --citebench-resume ...) or pass --allow-errors"
        )
    write_results(target, records, aggregate(records))
    models = sorted({r["model"] for r in records})
    suites = sorted({r["suite"] for r in records})
    return (
        f"promoted {len(records)} items ({len(models)} model(s): {', '.join(models)}; "
        f"{len(suites)} suite(s)) from {source} to {target}"
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    bsub = p.add_subparsers(dest="baseline_command", required=True)
    b = bsub.add_parser("promote", help="make a results file the new baseline")
    b.add_argument("results", help="the results file to promote")
    b.add_argument(
        "--to", default="baselines/baseline.jsonl", help="baseline path (baselines/baseline.jsonl)"
    )
    b.add_argument("--allow-errors", action="store_true", help="promote a run with errored items")
    b = bsub.add_parser("compare", help="compare a results file with a baseline (exit 1: worse)")
    b.add_argument("results")
    b.add_argument("baseline")
    b.add_argument("--tolerance", type=float, default=0.0)
    b.add_argument(
        "--correction",
        choices=("none", "holm", "bh"),
        default="holm",
        help="adjust the p-values over all tested suite x task x metric (default holm)",
    )
    b.add_argument(
        "--include-suspect",
        action="store_true",
        help="count items with a suspect gold (docs/audit.md) in the numbers, gates and comparison",
    )


def execute(args: argparse.Namespace) -> int:
    """``promote`` or ``compare``, as parsed."""
    return _promote(args) if args.baseline_command == "promote" else _compare(args)


def _promote(args: argparse.Namespace) -> int:
    from pytest_citebench.commands import USAGE_ERROR
    from pytest_citebench.jsonl import JsonlError

    try:
        print(promote(Path(args.results), Path(args.to), allow_errors=args.allow_errors))
    except JsonlError as exc:
        print(f"baseline promote: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (ValueError, OSError) as exc:
        print(f"baseline promote: {exc}", file=sys.stderr)
        return 1
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pytest_citebench.commands import USAGE_ERROR
    from pytest_citebench.jsonl import JsonlError
    from pytest_citebench.reports.comparison import comparison_lines
    from pytest_citebench.results.compare import compare_files

    try:
        comparison = compare_files(
            Path(args.results),
            Path(args.baseline),
            tolerance=args.tolerance,
            correction=args.correction,
            include_suspect=args.include_suspect,
        )
    except JsonlError as exc:
        print(f"baseline compare: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (ValueError, OSError) as exc:
        print(f"baseline compare: {exc}", file=sys.stderr)
        return 2
    for line in comparison_lines(comparison):
        print(line)
    for note in comparison.notes():
        print(f"note: {note}")
    for delta in comparison.failures:
        print(delta.describe())
    nothing = comparison.nothing_compared(args.results)
    if nothing is not None:  # no delta could fail: exit 0 would read as "no regression"
        print(f"baseline compare: {nothing}", file=sys.stderr)
        return 2
    return 1 if comparison.failures else 0
