"""``python -m pytest_citebench merge``: shard results files -> one results file, as if one
machine had run everything.

Only item records are read: each shard's aggregates describe its own share and would be wrong
for the whole, so they are recomputed here with the same ``report.aggregate`` the plugin uses on
sorted records. Same records in, same aggregates, gates and reports out, whatever the number of
shards (a test checks four shards against one unsharded run).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_citebench.results.files import (
    ItemKey,
    dedupe,
    read_shard,
    record_key,
    version_mix,
    write_results,
)
from pytest_citebench.results.gates import Gate

__all__ = [
    "ItemKey",
    "Merged",
    "add_arguments",
    "collect_gates",
    "dedupe",
    "execute",
    "merge_files",
    "read_shard",
    "record_key",
    "run",
    "shard_problems",
    "write_results",
]


@dataclass
class Merged:
    """What merging found besides the records, so ``run`` can warn or refuse before writing."""

    files: list[Path]
    records: list[dict[str, Any]]
    duplicates: int = 0
    conflicts: list[ItemKey] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # shards missing or incomplete
    # Groups whose records were made under more than one scorer or suite version: refused
    # whatever --allow-partial says (``files.version_mix``).
    mixed: list[str] = field(default_factory=list)


def merge_files(paths: Sequence[Path]) -> Merged:
    """Shards' item records as one deduplicated set; their own aggregates describe only their share
    and are dropped."""
    from pytest_citebench.results.files import read_all

    items: list[dict[str, Any]] = []
    per_file: dict[Path, set[ItemKey]] = {}
    shards: dict[Path, dict[str, Any] | None] = {}
    sources: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        # One pass per file; the shard's own aggregates are ignored.
        file_items, _, shards[path] = read_all(path)
        items.extend(file_items)
        sources.setdefault(str(path), []).extend(file_items)
        per_file.setdefault(path, set()).update(record_key(r) for r in file_items)
    records, duplicates, conflicts = dedupe(items)
    problems = shard_problems(shards, per_file)
    # Before dedupe: a record dropped as a duplicate still shows the files disagree.
    return Merged(list(paths), records, duplicates, conflicts, problems, version_mix(sources))


def version_advice(mixed: Sequence[str]) -> list[str]:
    """What to do about groups of mixed versions: rescore for a scorer, re-run for a suite."""
    advice = []
    if any(" mixes scorer versions" in line for line in mixed):
        advice.append(
            "rescore the file(s) of the older scorer from their recorded answers (no model "
            "call): python -m pytest_citebench rescore FILE (or -o NEW_FILE), then merge again"
        )
    if any(" mixes suite versions" in line for line in mixed):
        advice.append(
            "the suite changed between the runs: run the items of the older suite version "
            "again (pytest --citebench --citebench-resume FILE re-runs them), then merge again"
        )
    return advice


def shard_problems(
    shards: Mapping[Path, Mapping[str, Any] | None], keys: Mapping[Path, set[ItemKey]]
) -> list[str]:
    """Why the files are not a complete set of shards, or [] when they are (or when none of them
    is a shard's results: merging whole runs is fine).

    Complete means: every shard 1..N of one N is there, and each shard's files hold at least the
    item records it owed (its ``expected``). Errored items count as records: ``merge`` fails on
    them separately.
    """
    if all(info is None for info in shards.values()):
        return []
    problems = [
        f"{path}: no shard record: that run did not finish (killed?) or is not a "
        "--citebench-shard run; finish it with --citebench-resume"
        for path, info in shards.items()
        if info is None
    ]
    by_index: dict[tuple[int, int], list[Path]] = {}
    for path, info in shards.items():
        if info is not None:
            by_index.setdefault((int(info["index"]), int(info["total"])), []).append(path)
    totals = sorted({total for _, total in by_index})
    if len(totals) > 1:
        problems.append(f"shards of different splits mixed: N = {', '.join(map(str, totals))}")
    for total in totals:
        missing = [f"{i}/{total}" for i in range(1, total + 1) if (i, total) not in by_index]
        if missing:
            problems.append(f"shard(s) {', '.join(missing)} missing: no file given holds them")
    for (index, total), paths in sorted(by_index.items()):
        expected = max(int(shards[p]["expected"]) for p in paths)  # type: ignore[index]
        got = len(set().union(*(keys[p] for p in paths)))
        if got < expected:
            names = ", ".join(str(p) for p in paths)
            problems.append(
                f"shard {index}/{total} ({names}): {got} of {expected} item records; the run "
                "stopped early; finish it with --citebench-resume"
            )
    return problems


def collect_gates(
    specs: Sequence[str], suites: Sequence[Path], pyproject: Path | None
) -> list[Gate]:
    """Gates from the command line, from the manifests under ``suites`` and from a pyproject's
    ``[tool.citebench] gates``: the same three sources a pytest run reads, parsed by the same
    ``results.gates`` helpers."""
    from pytest_citebench.results.gates import add_manifest_gates, add_new, gates_from
    from pytest_citebench.suites import discover, load_manifest

    gates: list[Gate] = []
    add_new(gates, gates_from(specs, "--gate"))
    for root in suites:
        for manifest_file in discover(root):
            add_manifest_gates(gates, load_manifest(manifest_file))
    if pyproject is not None:
        table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
        specs = table.get("citebench", {}).get("gates", [])
        add_new(gates, gates_from(specs, f"{pyproject} [tool.citebench]"))
    return gates


def run(
    paths: Sequence[Path],
    *,
    out: Path | None = None,
    gates: Sequence[str] = (),
    suites: Sequence[Path] = (),
    pyproject: Path | None = None,
    baseline: Path | None = None,
    tolerance: float = 0.0,
    reports: Mapping[str, Path] | None = None,
    allow_partial: bool = False,
    correction: str = "holm",
    include_suspect: bool = False,
    echo: Any = print,
) -> int:
    """The merge command; returns the exit status (1 on errors, failed gates, regressions, or
    shards missing or incomplete unless ``allow_partial``)."""
    from pytest_citebench.reports.conclude import Baseline, conclude
    from pytest_citebench.reports.data import ReportData
    from pytest_citebench.reports.formats import FORMATS
    from pytest_citebench.reports.output import write_reports
    from pytest_citebench.reports.terminal import render_table
    from pytest_citebench.results.files import check_files, read_results
    from pytest_citebench.suites import suite_files_around

    reports = dict(reports or {})
    outputs = [("--out", out), *((fmt.merge_option, reports.get(fmt.name)) for fmt in FORMATS)]
    check_files(
        [*(("input", Path(p)) for p in paths), ("--baseline", baseline)],
        outputs,
        # What merge reads besides results files, and any suite an output would land on.
        reads=[
            ("--pyproject", pyproject),
            *(read for _, path in outputs if path is not None for read in suite_files_around(path)),
        ],
    )
    merged = merge_files(paths)
    if merged.mixed:
        # Never merged, even with --allow-partial: the numbers would mean neither version.
        for line in merged.mixed:
            echo(f"merge: {line}")
        for line in version_advice(merged.mixed):
            echo(f"merge: {line}")
        echo("merge: refused: one model x suite x task must be scored under one version")
        return 1
    if merged.problems and not allow_partial:
        for problem in merged.problems:
            echo(f"merge: {problem}")
        echo("merge: not a complete run; pass --allow-partial to merge what is there")
        return 1
    for problem in merged.problems:
        echo(f"WARNING partial merge (--allow-partial): {problem}")
    if not merged.records:
        echo(f"merge: no item records in {len(paths)} file(s)")
        return 1
    gate_list = collect_gates(gates, suites, pyproject)
    base = None
    if baseline is not None:
        base_items, _ = read_results(baseline)
        base = Baseline(base_items, str(baseline), tolerance, correction)
    # The same end as a pytest run's (session.finish): one conclude, so they cannot disagree.
    conclusion = conclude(merged.records, gate_list, base, include_suspect=include_suspect)
    aggregates, comparison = conclusion.aggregates, conclusion.comparison
    if out is not None:
        write_results(out, merged.records, list(aggregates))
    # File names only: the directories are the runner's, not the report reader's.
    data = ReportData.of(
        conclusion, settings=[("merged from", ", ".join(Path(p).name for p in paths))]
    )
    written = write_reports(data, **reports)
    echo(
        f"merged {len(merged.records)} item records from {len(paths)} file(s)"
        + (f", dropped {merged.duplicates} duplicate(s)" if merged.duplicates else "")
    )
    for key in merged.conflicts:
        echo(f"WARNING {' '.join(key)}: recorded twice with different results; kept the first")
    from pytest_citebench.reports.headline import headline_lines

    echo(f"citebench verdict: {conclusion.verdict().line()}")
    for line in headline_lines(merged.records, list(aggregates)):
        echo(line)
    for line in render_table(list(aggregates)):
        echo(line)
    errors = sum(conclusion.error_counts.values())
    if errors:
        echo(f"ERROR {errors} item(s) ended in an error (provider, cassette or parse)")
    for result in conclusion.gate_results:
        echo(result.describe())
    for gate in conclusion.unmatched_gates:
        echo(f"SKIP gate {gate.spec} [{gate.source}]: no results matched it")
    regressions = 0
    if comparison is not None:
        from pytest_citebench.reports.comparison import comparison_lines

        for line in comparison_lines(comparison):
            echo(line)
        for note in comparison.notes():
            echo(f"note: {note}")
        for delta in comparison.failures:
            echo(delta.describe())
        regressions = len(comparison.failures)
    if out is not None:
        echo(f"results: {out}")
    for kind, path in written:
        echo(f"{kind}: {path}")
    return 1 if errors or conclusion.failed_gates or regressions else 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    from pytest_citebench.reports.formats import FORMATS

    p.add_argument("files", nargs="+", help="results files (JSON lines) of the shards")
    p.add_argument("-o", "--out", help="write the merged results file here")
    p.add_argument("--gate", action="append", help="gate SUITE_GLOB:TASK:METRIC<=VALUE")
    p.add_argument(
        "--suites", action="append", help="also apply the gates of the suite manifests here"
    )
    p.add_argument("--pyproject", help="also apply [tool.citebench] gates of this pyproject.toml")
    p.add_argument("--baseline", help="compare with this baseline results file")
    p.add_argument("--tolerance", type=float, default=0.0, help="allowed worsening (0.02 = 2 pts)")
    p.add_argument(
        "--correction",
        choices=("none", "holm", "bh"),
        default="holm",
        help="adjust the baseline p-values over all tests (default holm)",
    )
    for fmt in FORMATS:
        p.add_argument(fmt.merge_option, help=fmt.merge_help)
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge even when a shard is missing or stopped early (default: fail)",
    )
    p.add_argument(
        "--include-suspect",
        action="store_true",
        help="count items with a suspect gold (docs/audit.md) in the numbers, gates and comparison",
    )


def execute(args: argparse.Namespace) -> int:
    from pytest_citebench.commands import USAGE_ERROR
    from pytest_citebench.jsonl import JsonlError
    from pytest_citebench.reports.formats import FORMATS
    from pytest_citebench.results.files import FileUsageError
    from pytest_citebench.results.gates import GateError
    from pytest_citebench.suites import SuiteError

    try:
        return run(
            [Path(p) for p in args.files],
            out=Path(args.out) if args.out else None,
            gates=args.gate or [],
            suites=[Path(p) for p in args.suites or []],
            pyproject=Path(args.pyproject) if args.pyproject else None,
            baseline=Path(args.baseline) if args.baseline else None,
            tolerance=args.tolerance,
            reports={
                fmt.name: Path(getattr(args, fmt.name))
                for fmt in FORMATS
                if getattr(args, fmt.name, None)
            },
            allow_partial=args.allow_partial,
            correction=args.correction,
            include_suspect=args.include_suspect,
        )
    except (JsonlError, FileUsageError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (GateError, SuiteError, ValueError, OSError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 2
