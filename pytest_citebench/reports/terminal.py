"""The per-suite table of the terminal summary: every aggregate with its CIs, narrowed to fit.

Rows sorted by suite, task, stage, then model, so models sit side by side; outcome shares first,
then the task's own metrics. Written with the one table helper (``reports.table``).
"""

from __future__ import annotations

import math
import textwrap
from collections import defaultdict

from pytest_citebench import registry
from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.reports.format import is_raw, label
from pytest_citebench.reports.table import text_table
from pytest_citebench.results.aggregate import share, task_of


def _fmt(stat: Stat | None, percent: bool = True, count: bool = False) -> str:
    """Shares as percent with one decimal; raw numbers (τ, κ, AC1) with the three decimals
    every detail table prints, so the same τ never reads 0.4 here and 0.4318 below; counts
    (``MetricSpec.scale == "count"``, HALLMARK's ``uncertain``) as whole numbers."""
    if stat is None or math.isnan(stat.value):
        return "-"
    if count:
        return str(round(stat.value))
    if not percent:
        if math.isnan(stat.lo) or math.isnan(stat.hi) or stat.lo == stat.hi:
            return f"{stat.value:.3f}"
        return f"{stat.value:.3f} [{stat.lo:.3f}, {stat.hi:.3f}]"
    scale = 100.0
    return f"{stat.value * scale:5.1f} [{stat.lo * scale:4.1f},{stat.hi * scale:5.1f}]"


# Outcome-share columns of the per-suite table: metric name -> outcome counted.
_SHARE_COLUMNS = {
    "accuracy": "correct",
    "hallucinated": "hallucinated",
    "unanswered": "unanswered",
    "partial": "partial",
    "pp": "abstained",
}
# The terminal table fits this many columns unless -v asks for every metric.
TABLE_WIDTH = 160


def _is_count(metric: str) -> bool:
    return registry.metric_spec(metric).scale == "count"


def table_metrics(agg: Aggregate) -> tuple[str, ...]:
    """The columns for an aggregate: the outcome shares, then the task's own metrics. Tasks
    judged only by their set metrics (``outcome_shares = False``) get no share columns: a
    calibration point is "correct" by definition, so its accuracy says nothing."""
    task_obj = task_of(agg.task)
    own = [*task_obj.metrics, *task_obj.set_metric_specs]
    if not task_obj.outcome_shares:
        return tuple(own)
    return (*_SHARE_COLUMNS, *own)


def column_stat(agg: Aggregate, metric: str) -> Stat | None:
    """A metric of the aggregate; outcome shares the aggregate lacks (an older results file,
    or a share that is not a gate metric) are computed from its counts, Wilson CI."""
    stat = agg.metrics.get(metric)
    if stat is None and metric in _SHARE_COLUMNS:
        return share(agg.counts, _SHARE_COLUMNS[metric])
    return stat


def render_table(
    aggregates: list[Aggregate],
    *,
    width: int = TABLE_WIDTH,
    verbose: bool = False,
    stages: bool = True,
) -> list[str]:
    """One table per set of columns, rows sorted by suite, task, stage, then model, so models sit
    side by side for comparison. Unless ``verbose``, each table keeps the columns that fit in
    ``width`` characters (shares first) and says which it left out. Without ``stages`` the
    per-final-stage rows of escalating tasks are left out (more than half the rows of a full
    REASONS run) and counted in a last line."""
    shown = aggregates if stages else [a for a in aggregates if a.stage is None]
    by_columns: dict[tuple[str, ...], list[Aggregate]] = defaultdict(list)
    for agg in shown:
        by_columns[table_metrics(agg)].append(agg)
    lines: list[str] = []
    for columns, group in by_columns.items():
        if lines:
            lines.append("")
        lines += _render(columns, group, width=width, verbose=verbose)
    hidden = len(aggregates) - len(shown)
    if hidden:
        lines.append(
            f"{hidden} per-final-stage row(s) not shown (--citebench-tables full shows them)"
        )
    return lines


def _render(
    columns: tuple[str, ...],
    aggregates: list[Aggregate],
    *,
    width: int = TABLE_WIDTH,
    verbose: bool = False,
) -> list[str]:
    ordered = sorted(aggregates, key=lambda a: (a.suite, a.task, a.stage or "", a.model))
    if not verbose:
        # A share no aggregate has (no unanswered item anywhere) is a column of zeros.
        columns = tuple(
            m
            for m in columns
            if m not in ("unanswered", "partial") or any(a.counts.get(m) for a in ordered)
        )
    ident = [["suite", "task", "model", "n", "err"]]
    for agg in ordered:
        task = agg.task + (f" >{agg.stage}" if agg.stage else "") + (" *" if agg.label else "")
        ident.append(
            [agg.suite, task, agg.model, str(agg.metrics["n"].n), str(agg.counts.get("error", 0))]
        )
    cells = {
        m: [label(m)]
        + [_fmt(column_stat(agg, m), percent=not is_raw(m), count=_is_count(m)) for agg in ordered]
        for m in columns
    }
    col_width = {m: max(len(c) for c in cells[m]) for m in columns}
    used = sum(max(len(r[i]) for r in ident) + 2 for i in range(len(ident[0]))) - 2
    shown = list(columns)
    if not verbose:
        # Kept first when the table must be narrowed to fit: the verdict's shares, then the
        # task's key metrics (``MetricSpec.key``); the rest in the task's order.
        first = [m for m in _SHARE_COLUMNS if m in columns]
        first += [m for m in columns if m not in first and registry.metric_spec(m).key]
        ranked = first + [m for m in columns if m not in first]
        keep: set[str] = set()
        for index, metric in enumerate(ranked):
            # The first two (correct and hallucinated) are shown whatever the width.
            if index < 2 or used + 2 + col_width[metric] <= width:
                keep.add(metric)
                used += 2 + col_width[metric]
        shown = [m for m in columns if m in keep]
    rows = [ident[i] + [cells[m][i] for m in shown] for i in range(len(ident))]
    lines = text_table(rows[0], rows[1:], right_from=3, rule=True)
    labels = {(a.task, a.label) for a in aggregates if a.label}
    for task, note in sorted(labels):
        lines += textwrap.wrap(f"* {task}: {note}", width, subsequent_indent="  ")
    hidden = [label(m) for m in columns if m not in shown]
    if hidden:
        lines.append(f"not shown, to fit {width} columns (-v shows them): {', '.join(hidden)}")
    return lines
