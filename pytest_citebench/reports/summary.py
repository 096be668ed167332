"""The ``citebench`` section of pytest's terminal summary: the verdict and the headline (shares
per model and task) first, then the per-suite table, task extras, usage, the worst answers of
every suite x task, gates and baseline, and the verdict again as the last line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_citebench import registry
from pytest_citebench.reports.escape import terminal
from pytest_citebench.reports.headline import (
    Verdict,
    headline_lines,
    item_metrics_text,
    pooled_by_task,
    where,
    worst_groups,
    wrong_counts_text,
)
from pytest_citebench.reports.terminal import TABLE_WIDTH, render_table
from pytest_citebench.reports.usage import usage_lines

if TYPE_CHECKING:
    from pytest_citebench.reports.conclude import Conclusion
    from pytest_citebench.results.compare import Comparison


@dataclass(frozen=True)
class RunFacts:
    """What the summary says about the run itself, besides what it concluded."""

    models: Sequence[str]
    record: str
    sampling: str
    show: int = 2
    tables: str = "compact"
    shard: str | None = None  # the --citebench-shard spec
    results: Path | None = None
    written: Sequence[tuple[str, Path]] = ()


def write_summary(tr: Any, conclusion: Conclusion, facts: RunFacts) -> None:
    """The summary of what the run concluded (``reports.conclude``); it never changes it."""
    tr.write_sep("=", "citebench")
    tr.write_line(f"models: {', '.join(facts.models)} | record: {facts.record} | {facts.sampling}")
    # The numbers' records: those set apart as suspect golds have their own section below.
    aggregates, records = list(conclusion.aggregates), conclusion.counted_records
    if conclusion.interrupted:
        # An interrupted run (Ctrl-C, --citebench-max-errors) never reached its end: what
        # finished is shown, and no partial aggregate is written to the results file.
        tr.write_line("(interrupted: aggregates of the items that finished)")
    full = facts.tables == "full"
    verdict = conclusion.verdict()
    _write_verdict(tr, verdict)
    if not aggregates:
        tr.write_line("no citebench items ran")
    else:
        headline = headline_lines(records, aggregates)
        if headline:
            tr.write_line(
                "share of scored items per model and task (suites pooled, tasks never), "
                "Wilson 95% CI"
            )
            for line in headline:
                tr.write_line(line)
        tr.write_sep("-", "citebench: per suite")
        tr.write_line("95% CIs in brackets: Wilson for shares, bootstrap (B=2000) for HR/F1/BLEU")
        verbose = int(getattr(tr.config.option, "verbose", 0) or 0) > 0
        for line in render_table(aggregates, verbose=verbose, stages=full):
            tr.write_line(line)
    from pytest_citebench.reports.sections import paper_sections, terminal_lines

    for section in paper_sections(aggregates, records):
        if section.terminal:
            tr.write_sep("-", f"citebench: {section.title}")
            for line in terminal_lines(section):
                tr.write_line(line)
    # Tasks may add lines of their own (a calibration table, a DOI breakdown), once per task.
    tasks = sorted({agg.task for agg in aggregates})
    for name in tasks:
        task = registry.find(name)
        lines = task.summary_lines([a for a in aggregates if a.task == name], records)
        if lines:
            tr.write_sep("-", f"citebench: {name}")
            for line in lines:
                tr.write_line(line)
    suspect = conclusion.suspect_summary()
    if suspect.total or suspect.included:
        from pytest_citebench.reports.suspect import text_lines

        title = "set apart" if suspect.total else "counted"
        tr.write_sep("-", f"citebench: gold suspect, {title}")
        for line in text_lines(suspect):
            tr.write_line(line)
    usage = usage_lines(list(conclusion.records))
    if usage:
        tr.write_sep("-", "citebench: usage per model (cost from litellm's local price map)")
        for line in usage:
            tr.write_line(line)
    for model, count in sorted(conclusion.error_counts.items()):
        tr.write_line(
            f"ERROR {model}: {count} item(s) ended in an error (provider, cassette or parse)",
            red=True,
        )
    write_worst(tr, records, facts.show, per_task=not full)
    if conclusion.gates:
        tr.write_sep("-", "citebench gates")
    for result in conclusion.gate_results:
        tr.write_line(result.describe(), green=result.passed, red=not result.passed)
    for gate in conclusion.unmatched_gates:
        tr.write_line(f"SKIP gate {gate.spec} [{gate.source}]: no results matched it", yellow=True)
    write_baseline_section(tr, conclusion.comparison)
    if facts.shard is not None and (conclusion.gate_results or conclusion.comparison is not None):
        tr.write_line(
            f"shard {facts.shard}: gates and baseline deltas cover this shard's items only and do "
            "not fail it; merge the shards to decide (python -m pytest_citebench merge)",
            yellow=True,
        )
    if facts.results:
        tr.write_line(f"results: {facts.results}")
    for label, path in facts.written:
        tr.write_line(f"{label}: {path}")
    if aggregates:
        # Repeated last: the end of a CI log is what people read.
        _write_verdict(tr, verdict)


def _write_verdict(tr: Any, v: Verdict) -> None:
    colour = {"ok": {"green": True}, "bad": {"red": True}}.get(v.state, {"yellow": True})
    tr.write_line(f"citebench verdict: {v.line()}", bold=True, **colour)


# Wider answers are cut: every line of the summary fits the table's width.
_TEXT = TABLE_WIDTH - 14


def write_worst(
    tr: Any, records: list[dict[str, Any]], per_group: int, *, per_task: bool = False
) -> None:
    """Up to ``per_group`` worst answers of every suite x task, most severe first; with
    ``per_task`` (the compact default) of every task, suites pooled: a full REASONS run has
    some 70 suite x task groups, which was ~500 lines here (the reports keep every group)."""
    groups = worst_groups(records, per_group)
    if not groups or per_group <= 0:
        return
    order = "hallucinated, then unanswered, then partial"
    title = f"up to {per_group} per suite x task ({order}; all in --citebench-results)"
    if per_task:
        groups = pooled_by_task(groups, per_group)
        title = (
            f"up to {per_group} per task, suites pooled "
            f"({order}; per suite x task: --citebench-tables full)"
        )
    tr.write_sep("-", f"citebench: worst answers, {title}")
    for group in groups:
        heading = (
            f"{group.task} over {group.suite}" if group.pooled else f"{group.suite}:{group.task}"
        )
        tr.write_line(f"{heading}  ({wrong_counts_text(group)})"[:TABLE_WIDTH])
        for record in group.shown:
            # The node id, so the item can be re-run as it is (the terminal is local, unlike the
            # reports); the metrics beside it when they fit, else on their own line.
            head = f"  {record['outcome']}: {terminal(record.get('nodeid') or where(record))}"
            metrics = item_metrics_text(record)
            if len(head) + 2 + len(metrics) <= TABLE_WIDTH:
                tr.write_line(f"{head}  {metrics}".rstrip())
            else:
                tr.write_line(head[:TABLE_WIDTH])
                tr.write_line(f"    metrics:  {metrics}"[:TABLE_WIDTH])
            tr.write_line(f"    expected: {_one_line(record.get('expected'))[:_TEXT]}")
            tr.write_line(f"    given:    {_one_line(record.get('answer'))[:_TEXT]}")
            reason = record.get("reason")
            if reason:
                tr.write_line(f"    reason:   {_one_line(reason)[:_TEXT]}")


def _one_line(value: Any) -> str:
    """One line, control characters shown as escapes (an answer can hold ESC or NUL)."""
    return terminal(" ".join(str(value or "").split()))


def write_baseline_section(tr: Any, comparison: Comparison | None) -> None:
    """Deltas against ``--citebench-baseline`` with CIs, then one FAIL line per regression."""
    if comparison is None:
        return
    from pytest_citebench.reports.comparison import comparison_lines

    tr.write_sep(
        "-",
        f"citebench baseline {comparison.baseline} "
        f"(tolerance {100 * comparison.tolerance:g} points; deltas in points, 95% CI; "
        f"p adjusted: {comparison.correction})",
    )
    lines = comparison_lines(comparison)
    if not lines:
        tr.write_line("nothing to compare: no model x suite x task of this run is in the baseline")
    for line in lines:
        tr.write_line(line)
    for note in comparison.notes():
        tr.write_line(f"note: {note}", yellow=True)
    for delta in comparison.failures:
        tr.write_line(delta.describe(), red=True)
