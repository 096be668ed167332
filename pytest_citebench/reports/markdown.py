"""``--citebench-markdown FILE``: a short Markdown summary for CI, e.g. ``$GITHUB_STEP_SUMMARY``.

GitHub renders step summaries of up to 1 MiB, in a narrow column, to people scrolling a job page.
So: the verdict first (gates passed, gate failed, or no gate set: nothing was judged), the
outcome shares per model and task, one table per set of columns with the key metrics and CIs,
usage, what failed, the baseline deltas that matter, and the worst answers of every suite x task
folded away; everything else is in the HTML report and the results file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pytest_citebench.reports import data as d
from pytest_citebench.reports.data import ReportData
from pytest_citebench.reports.escape import markdown_cell, markdown_code
from pytest_citebench.reports.format import fmt, label
from pytest_citebench.reports.formats import ReportFormat
from pytest_citebench.reports.sections import markdown_lines
from pytest_citebench.reports.table import markdown_table

FORMAT = ReportFormat(
    name="markdown",
    label="markdown summary",
    help="write a Markdown summary here (appends when FILE is $GITHUB_STEP_SUMMARY)",
    merge_help="write the Markdown summary here",
    render="render_markdown",
    step_summary=True,
)

# GitHub's limit is 1 MiB per step summary; stay well below it on huge runs.
MAX_ROWS = 200
WORST = 5


def _cell(text: Any) -> str:
    return markdown_cell(text)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int) -> list[str]:
    shown = [[str(c) for c in row] for row in rows[:MAX_ROWS]]
    lines = markdown_table(header, shown, right_from=numeric_from)
    if len(rows) > MAX_ROWS:
        lines.append(f"\n_{len(rows) - MAX_ROWS} more rows in the results file._")
    return lines


def _n(agg: Any) -> int:
    stat = agg.metrics.get("n")
    return int(stat.n) if stat is not None else sum(agg.counts.values())


_MARK = {"ok": "✅", "bad": "❌", "neutral": "⚪"}


def render_markdown(data: ReportData) -> str:
    """The summary, unscrubbed (``write_reports`` scrubs keys and paths before writing it)."""
    from pytest_citebench.reports import headline as h
    from pytest_citebench.reports import usage as u

    v = data.verdict()
    lines = [f"## citebench: {_MARK[v.state]} {_cell(v.line())}", ""]
    models = sorted({str(r["model"]) for r in data.records})
    suites = sorted({str(r["suite"]) for r in data.records})
    lines.append(
        f"{len(data.records)} item results · models: {', '.join(models) or '-'} · "
        f"{len(suites)} suite(s)"
    )
    settings = " · ".join(f"{key}: {value}" for key, value in data.settings if value)
    if settings:
        lines += ["", settings]
    lines.append("")
    rows = h.headline_rows(data.records)
    if rows:
        lines += [
            "### Outcomes per model and task",
            "",
            "Share of scored items (errors excluded), suites of a task pooled, tasks never; "
            "Wilson 95% CI.",
            "",
        ]
        table = [
            [r.model, r.task_label, r.suites, r.n, r.errors]
            + [fmt(r.share(s), s) for s in h.SHARES]
            for r in rows
        ]
        header = ["model", "task", "suites", "n", "err", *(h.SHARE_LABELS[s] for s in h.SHARES)]
        lines += _table(header, table, 2)
        lines.append("")
    own = h.own_metric_aggregates(data.aggregates)
    if own:
        lines += ["Tasks judged by their own metrics (no outcome shares):", ""]
        table = [
            [
                a.model,
                a.task,
                a.suite,
                _n(a),
                a.counts.get("error", 0),
                ", ".join(f"{label(m)} {fmt(a.metrics.get(m), m)}" for m in h.own_metrics(a)),
            ]
            for a in own
        ]
        lines += _table(["model", "task", "suite", "n", "err", "metrics"], table, 3)
        lines.append("")
    # One table per set of columns (as in the terminal), whole-task rows only.
    by_columns: dict[tuple[str, ...], list[Any]] = {}
    for agg in sorted(data.aggregates, key=lambda a: (a.task, a.suite, a.model)):
        if agg.stage is not None:
            continue
        by_columns.setdefault(tuple(d.columns([agg])), []).append(agg)
    if by_columns:
        lines += ["### Per suite", ""]
    for cols, group in by_columns.items():
        table = [
            [a.suite, a.task, a.model, _n(a), a.counts.get("error", 0)]
            + [fmt(a.metrics.get(m), m) for m in cols]
            for a in group
        ]
        lines += _table(["suite", "task", "model", "n", "err"] + [label(m) for m in cols], table, 3)
        lines.append("")
    if not data.aggregates:
        lines += ["No citebench items ran.", ""]
    suspect = data.suspect
    if suspect is not None and (suspect.total or suspect.included):
        from pytest_citebench.reports import suspect as sus

        lines += [f"### Gold suspect, {'set apart' if suspect.total else 'counted'}", ""]
        lines += [_cell(sus.intro(suspect)), ""]
        if suspect.rows:
            cells = sus.table(suspect)
            lines += _table(cells[0], cells[1:], 99)
            lines.append("")
            for flag, (where, reason) in suspect.examples.items():
                lines.append(f"- {markdown_code(flag)}: {markdown_code(where)}: {_cell(reason)}")
            lines.append("")
    usage = u.usage_rows(data.usage_records)
    if usage:
        lines += ["### Usage per model", ""]
        lines += _table(list(u.HEADER), [u.cells(r) for r in usage], 1)
        lines.append("")
    if data.gate_results or data.unmatched_gates:
        lines.append("### Gates")
        for g in data.gate_results:
            lines.append(f"- {'✅' if g.passed else '❌'} {markdown_code(g.describe())}")
        for gate in data.unmatched_gates:
            skip = markdown_code(f"SKIP gate {gate.spec} [{gate.source}]")
            lines.append(f"- ⚠️ {skip}: no results matched it")
        lines.append("")
    if data.comparison is not None:
        lines += _baseline(data)
    for section in data.sections:
        lines += markdown_lines(section)
    errors = data.errors
    if errors:
        lines.append(f"### Errors ({len(errors)})")
        for r in errors[:WORST]:
            first = (r.get("error") or "").strip().splitlines()[:1]
            lines.append(f"- {markdown_code(h.where(r))}: {_cell(first[0] if first else '')}")
        lines.append("")
    groups = h.worst_groups(data.records, min(data.show, WORST))
    if groups:
        shown = sum(len(g.shown) for g in groups)
        lines += [
            f"<details><summary>Worst answers: {shown} from {len(groups)} suite × task "
            "(hallucinated, then unanswered, then partial)</summary>",
            "",
        ]
        table = [
            [
                f"{g.suite}:{g.task}",
                h.wrong_counts_text(g),
                r.get("outcome", ""),
                r.get("model", ""),
                r.get("item_id", ""),
                str(r.get("expected", ""))[:200],
                str(r.get("answer", ""))[:200],
                d.item_metrics_text(r),
            ]
            for g in groups
            for r in g.shown
        ]
        header = ["suite:task", "wrong", "outcome", "model", "item", "expected", "given", "metrics"]
        lines += _table(header, table, 99)
        lines += ["", "</details>", ""]
    return "\n".join(lines) + "\n"


def _baseline(data: ReportData) -> list[str]:
    comparison = data.comparison
    assert comparison is not None
    lines = [
        f"### Baseline {markdown_code(comparison.baseline)} "
        f"(tolerance {100 * comparison.tolerance:.1f} points)",
        "",
    ]
    deltas = comparison.deltas
    if not deltas:
        lines += ["Nothing to compare: no group of this run has a baseline.", ""]
    else:
        rows = []
        changed = [x for x in deltas if x.verdict != "same"]
        if len(changed) < len(deltas):
            lines += [f"{len(deltas) - len(changed)} metric(s) unchanged on the paired items.", ""]
        for x in sorted(changed, key=lambda x: (not x.failed, -x.worse_by)):
            ci = "" if math.isnan(x.lo) else f" [{100 * x.lo:+.1f}, {100 * x.hi:+.1f}]"
            mark = {"FAIL": "❌ FAIL", "worse": "worse", "better": "better"}.get(x.verdict, "=")
            p = x.p_text().removeprefix("p=")
            rows.append(
                [
                    mark,
                    x.suite,
                    x.task,
                    x.model,
                    x.metric,
                    x.n,
                    f"{100 * x.base:.1f}",
                    f"{100 * x.new:.1f}",
                    f"{100 * x.delta:+.1f}{ci}",
                    p,
                ]
            )
        if rows:
            lines += _table(
                ["", "suite", "task", "model", "metric", "n", "base %", "new %", "Δ [95% CI]", "p"],
                rows,
                5,
            )
            lines.append("")
    for note in comparison.notes():
        lines.append(f"- {note}")
    if comparison.notes():
        lines.append("")
    return lines
