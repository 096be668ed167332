"""The ``citebench`` section of pytest's terminal summary: the verdict and the headline (shares
per model and task) first, then the per-suite table, task extras, usage, the worst answers of
every suite x task, gates and baseline, and the verdict again as the last line."""

from __future__ import annotations

from typing import Any

from pytest_citebench import registry
from pytest_citebench.reports.escape import terminal
from pytest_citebench.reports.headline import (
    Verdict,
    headline_lines,
    item_metrics_text,
    pooled_by_task,
    verdict,
    where,
    worst_groups,
    wrong_counts_text,
)
from pytest_citebench.reports.terminal import TABLE_WIDTH, render_table
from pytest_citebench.reports.usage import usage_lines


def write_summary(tr: Any, cb: Any) -> None:
    """After an interrupt, aggregates the finished items for display only (never written)."""
    tr.write_sep("=", "citebench")
    opts = cb.options
    tr.write_line(
        f"models: {', '.join(opts.models)} | record: {opts.record} | {cb.sampling_line()}"
    )
    if not cb.aggregates and cb.records:
        # An interrupted run (Ctrl-C, --citebench-max-errors) never reached finish(): show what
        # finished, without writing partial aggregates to the results file.
        from pytest_citebench.results.aggregate import aggregate

        cb.aggregates = aggregate(cb.records)
        tr.write_line("(interrupted: aggregates of the items that finished)")
    full = getattr(opts, "tables", "compact") == "full"
    verdict = _verdict(cb)
    _write_verdict(tr, verdict)
    if not cb.aggregates:
        tr.write_line("no citebench items ran")
    else:
        headline = headline_lines(cb.records, cb.aggregates)
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
        for line in render_table(cb.aggregates, verbose=verbose, stages=full):
            tr.write_line(line)
    from pytest_citebench.reports.sections import paper_sections, terminal_lines

    for section in paper_sections(cb.aggregates, cb.records):
        if section.terminal:
            tr.write_sep("-", f"citebench: {section.title}")
            for line in terminal_lines(section):
                tr.write_line(line)
    # Tasks may add lines of their own (a calibration table, a DOI breakdown), once per task.
    tasks = sorted({agg.task for agg in cb.aggregates})
    for name in tasks:
        task = registry.find(name)
        lines = task.summary_lines([a for a in cb.aggregates if a.task == name], cb.records)
        if lines:
            tr.write_sep("-", f"citebench: {name}")
            for line in lines:
                tr.write_line(line)
    usage = usage_lines(cb.records)
    if usage:
        tr.write_sep("-", "citebench: usage per model (cost from litellm's local price map)")
        for line in usage:
            tr.write_line(line)
    errors = cb.error_counts()
    for model, count in sorted(errors.items()):
        tr.write_line(
            f"ERROR {model}: {count} item(s) ended in an error (provider, cassette or parse)",
            red=True,
        )
    write_worst(tr, cb.records, opts.show, per_task=not full)
    if cb.gates:
        tr.write_sep("-", "citebench gates")
    for result in cb.gate_results:
        tr.write_line(result.describe(), green=result.passed, red=not result.passed)
    for gate in cb.unmatched_gates:
        tr.write_line(f"SKIP gate {gate.spec} [{gate.source}]: no results matched it", yellow=True)
    write_baseline_section(tr, cb)
    shard = getattr(opts, "shard", None)
    if shard is not None and (cb.gate_results or getattr(cb, "comparison", None) is not None):
        tr.write_line(
            f"shard {shard.spec}: gates and baseline deltas cover this shard's items only and do "
            "not fail it; merge the shards to decide (python -m pytest_citebench merge)",
            yellow=True,
        )
    if opts.results:
        tr.write_line(f"results: {opts.results}")
    for label, path in getattr(cb, "written_reports", []):
        tr.write_line(f"{label}: {path}")
    if cb.aggregates:
        # Repeated last: the end of a CI log is what people read.
        _write_verdict(tr, verdict)


def _verdict(cb: Any) -> Verdict:
    return verdict(
        cb.gate_results,
        cb.unmatched_gates,
        errors=sum(cb.error_counts().values()),
        comparison=getattr(cb, "comparison", None),
    )


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


def write_baseline_section(tr: Any, cb: Any) -> None:
    """Deltas against ``--citebench-baseline`` with CIs, then one FAIL line per regression."""
    comparison = getattr(cb, "comparison", None)
    if comparison is None:
        return
    from pytest_citebench.results.compare import comparison_lines

    tr.write_sep(
        "-",
        f"citebench baseline {comparison.baseline} "
        f"(tolerance {100 * comparison.tolerance:g} points; deltas in points, 95% CI; "
        f"p adjusted: {getattr(comparison, 'correction', 'none')})",
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
