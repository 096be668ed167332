"""Aggregation, the terminal table and the results file.

Aggregates are computed once, on the controller, from the item records sorted by their keys, so
the numbers do not depend on the order in which xdist workers happened to finish.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_citebench.api import OUTCOMES, Aggregate, Stat, Task
from pytest_citebench.metrics.stats import bootstrap_mean_ci, wilson_ci
from pytest_citebench.reports.table import text_table

# Metrics every task has, from the outcomes. Shares get Wilson CIs; task metrics (means of
# per-item numbers) get bootstrap CIs; tasks may add set-level metrics of their own.
BASE_METRICS: Mapping[str, str] = {
    "accuracy": "share of items answered correctly",
    "pp": "pass percentage: share of items where the model abstained",
    "hallucinated": "share of items naming at least one invented or wrong citation element",
    "partial": "share of items answered with nothing invented but incomplete",
    "unanswered": "share of items whose reply names no citation (empty, an echo of the prompt, "
    "a placeholder)",
    "errors": "items that ended in an error",
    "n": "items scored",
}
_SHARES = (
    ("accuracy", "correct"),
    ("pp", "abstained"),
    ("hallucinated", "hallucinated"),
    ("partial", "partial"),
    ("unanswered", "unanswered"),
)
# Per-item metrics (HR, F1, BLEU, ...) are means over items that named something: abstained and
# unanswered items have no answer to measure.
_NOT_ANSWERED = ("abstained", "unanswered")
_HEADERS = {
    "accuracy": "acc %",
    "pp": "PP %",
    "hallucinated": "halluc %",
    "unanswered": "unans %",
    "partial": "partial %",
    "hr_paper": "HR paper %",
    "hr_code": "HR code %",
    "f1": "F1 %",
    "bleu": "BLEU %",
}


def known_metrics() -> dict[str, str]:
    """Every metric a gate may name: the base ones and those of every registered task."""
    from pytest_citebench import registry

    known = dict(BASE_METRICS)
    for task in registry.all_tasks():
        known.update(task.metrics)
        known.update(task.set_metric_docs)
    return known


def _task(name: str) -> Task:
    from pytest_citebench import registry

    return registry.find(name)


def _aggregate_group(
    model: str, suite: str, task: str, records: list[Mapping[str, Any]], stage: str | None = None
) -> Aggregate:
    records = sorted(records, key=lambda r: r["item_id"])
    task_obj = _task(task)
    counts = Counter(r["outcome"] for r in records)
    scored = [r for r in records if r["outcome"] != "error"]
    n = len(scored)
    metrics: dict[str, Stat] = {}
    for name, outcome in _SHARES:
        k = counts.get(outcome, 0)
        lo, hi = wilson_ci(k, n)
        metrics[name] = Stat(k / n if n else math.nan, lo, hi, n)
    answered = [r for r in scored if r["outcome"] not in _NOT_ANSWERED]
    for name in task_obj.metrics:
        values = [float(r["metrics"][name]) for r in answered if name in r["metrics"]]
        if values:
            lo, hi = bootstrap_mean_ci(values)
            metrics[name] = Stat(sum(values) / len(values), lo, hi, len(values))
        else:
            metrics[name] = Stat(math.nan, math.nan, math.nan, 0)
    if scored:
        metrics.update(task_obj.set_metrics(scored))
    errors = counts.get("error", 0)
    metrics["errors"] = Stat(errors, errors, errors, len(records))
    metrics["n"] = Stat(n, n, n, n)
    label = task_obj.label
    return Aggregate(
        model, suite, task, {o: counts.get(o, 0) for o in OUTCOMES}, metrics, stage, label
    )


def _final_stage(record: Mapping[str, Any]) -> str | None:
    stages = record.get("stages") or []
    return str(stages[-1]["name"]) if stages else None


def aggregate(records: Iterable[Mapping[str, Any]]) -> list[Aggregate]:
    """One aggregate per (model, suite, task); escalating tasks also get one per final stage."""
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        key = (record["model"], record["suite"], record["task"])
        groups[(*key, "")].append(record)
        task_obj = _task(record["task"])
        if len(task_obj.stages) > 1 and record["outcome"] != "error":
            stage = _final_stage(record)
            if stage:
                groups[(*key, stage)].append(record)
    return [
        _aggregate_group(model, suite, task, groups[(model, suite, task, stage)], stage or None)
        for model, suite, task, stage in sorted(groups)
    ]


def _fmt(stat: Stat | None, percent: bool = True) -> str:
    if stat is None or math.isnan(stat.value):
        return "-"
    scale = 100.0 if percent else 1.0
    return f"{stat.value * scale:5.1f} [{stat.lo * scale:4.1f},{stat.hi * scale:5.1f}]"


# Outcome-share columns of the per-suite table: metric name -> outcome counted.
_SHARE_COLUMNS = {
    "accuracy": "correct",
    "hallucinated": "hallucinated",
    "unanswered": "unanswered",
    "partial": "partial",
    "pp": "abstained",
}
# Kept first when the table must be narrowed to fit: the verdict's shares, then the paper's HR
# and F1; the rest in the task's order.
_PRIORITY = (*_SHARE_COLUMNS, "hr_paper", "f1")
# The terminal table fits this many columns unless -v asks for every metric.
TABLE_WIDTH = 160


def table_metrics(agg: Aggregate) -> tuple[str, ...]:
    """The columns for an aggregate: the outcome shares, then the task's own metrics. Tasks
    judged only by their set metrics (``outcome_shares = False``) get no share columns: a
    calibration point is "correct" by definition, so its accuracy says nothing."""
    task_obj = _task(agg.task)
    own = [*task_obj.metrics, *task_obj.set_metric_docs]
    if not task_obj.outcome_shares:
        return tuple(own)
    return (*_SHARE_COLUMNS, *own)


def share(counts: Mapping[str, int], outcome: str) -> Stat:
    """The share of ``outcome`` among the scored (non-error) items, Wilson 95% CI."""
    n = sum(v for k, v in counts.items() if k != "error")
    k = counts.get(outcome, 0)
    lo, hi = wilson_ci(k, n)
    return Stat(k / n if n else math.nan, lo, hi, n)


def column_stat(agg: Aggregate, metric: str) -> Stat | None:
    """A metric of the aggregate; outcome shares the aggregate lacks (an older results file,
    or a share that is not a gate metric) are computed from its counts, Wilson CI."""
    stat = agg.metrics.get(metric)
    if stat is None and metric in _SHARE_COLUMNS:
        return share(agg.counts, _SHARE_COLUMNS[metric])
    return stat


def render_table(
    aggregates: list[Aggregate], *, width: int = TABLE_WIDTH, verbose: bool = False
) -> list[str]:
    """One table per set of columns, rows sorted by suite, task, stage, then model, so models sit
    side by side for comparison. Unless ``verbose``, each table keeps the columns that fit in
    ``width`` characters (shares first) and says which it left out."""
    by_columns: dict[tuple[str, ...], list[Aggregate]] = defaultdict(list)
    for agg in aggregates:
        by_columns[table_metrics(agg)].append(agg)
    lines: list[str] = []
    for columns, group in by_columns.items():
        if lines:
            lines.append("")
        lines += _render(columns, group, width=width, verbose=verbose)
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
        m: [_HEADERS.get(m, m)]
        + [_fmt(column_stat(agg, m), percent=not _is_raw(m)) for agg in ordered]
        for m in columns
    }
    col_width = {m: max(len(c) for c in cells[m]) for m in columns}
    used = sum(max(len(r[i]) for r in ident) + 2 for i in range(len(ident[0]))) - 2
    shown = list(columns)
    if not verbose:
        ranked = [m for m in _PRIORITY if m in columns] + [m for m in columns if m not in _PRIORITY]
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
    for task, label in sorted(labels):
        lines += textwrap.wrap(f"* {task}: {label}", width, subsequent_indent="  ")
    hidden = [_HEADERS.get(m, m) for m in columns if m not in shown]
    if hidden:
        lines.append(f"not shown, to fit {width} columns (-v shows them): {', '.join(hidden)}")
    return lines


def _is_raw(metric: str) -> bool:
    """Metrics not on a 0-1 scale are printed as they are, not as percentages."""
    return metric in {"kappa", "ac1", "tau"} or metric.endswith(("_count", "_mean_n"))


class ResultsWriter:
    """Appends one JSON line per finished item and flushes it, so an interrupted run keeps every
    item that finished; aggregates are appended at the end."""

    def __init__(self, path: Path) -> None:
        from pytest_citebench.jsonl import Appender

        self.path = path
        self._appender = Appender(path)

    def write(self, record: Mapping[str, Any]) -> None:
        """One line, flushed before returning."""
        self._appender.write(record)

    def close(self) -> None:
        """Idempotent; a record written after it is dropped."""
        self._appender.close()


def read_results(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(items, aggregates) from a results file; a torn last line (killed mid-write) is ignored.

    Raises ``ValueError`` naming ``file:line`` for any other bad line."""
    from pytest_citebench import jsonl

    items: list[dict[str, Any]] = []
    aggregates: list[dict[str, Any]] = []
    for _, record in jsonl.iter_objects(path, torn_tail_ok=True):
        kind = record.get("type", "item")
        if kind == "item":
            items.append(record)
        elif kind == "aggregate":
            aggregates.append(record)
        # other records (a shard's "shard" line) are for results_io.read_shard
    return items, aggregates
