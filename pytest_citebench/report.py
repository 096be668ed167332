"""Aggregation, the terminal table and the results file.

Aggregates are computed once, on the controller, from the item records sorted by their keys, so
the numbers do not depend on the order in which xdist workers happened to finish.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_citebench.metrics.stats import bootstrap_mean_ci, wilson_ci
from pytest_citebench.tasks.base import OUTCOMES

# Metrics every task has, from the outcomes. Shares get Wilson CIs; task metrics (means of
# per-item numbers) get bootstrap CIs; tasks may add set-level metrics of their own.
BASE_METRICS: Mapping[str, str] = {
    "accuracy": "share of items answered correctly",
    "pp": "pass percentage: share of items where the model abstained",
    "hallucinated": "share of items answered wrongly (neither correct nor abstained)",
    "errors": "items that ended in an error",
    "n": "items scored",
}
_SHARES = (("accuracy", "correct"), ("pp", "abstained"), ("hallucinated", "hallucinated"))
_HEADERS = {
    "accuracy": "acc %",
    "pp": "PP %",
    "hallucinated": "halluc %",
    "hr_paper": "HR paper %",
    "hr_code": "HR code %",
    "f1": "F1 %",
    "bleu": "BLEU %",
}


def known_metrics() -> dict[str, str]:
    """Every metric a gate may name: the base ones and those of every registered task."""
    from pytest_citebench.tasks import registry

    known = dict(BASE_METRICS)
    for task in registry.all_tasks():
        known.update(task.metrics)
        known.update(getattr(task, "set_metric_docs", {}))
    return known


@dataclass(frozen=True)
class Stat:
    value: float
    lo: float
    hi: float
    n: int

    def to_json(self) -> dict[str, Any]:
        return {"value": _num(self.value), "ci": [_num(self.lo), _num(self.hi)], "n": self.n}


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


@dataclass(frozen=True)
class Aggregate:
    model: str
    suite: str
    task: str
    counts: Mapping[str, int]
    metrics: Mapping[str, Stat] = field(default_factory=dict)
    # Set for the per-final-stage breakdown of escalating tasks; None for the task as a whole.
    stage: str | None = None
    label: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.model, self.suite, self.task, self.stage or "")

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": "aggregate",
            "model": self.model,
            "suite": self.suite,
            "task": self.task,
            "counts": dict(self.counts),
            "metrics": {k: v.to_json() for k, v in self.metrics.items()},
        }
        if self.stage is not None:
            record["stage"] = self.stage
        if self.label:
            record["label"] = self.label
        return record


def _task(name: str) -> Any:
    from pytest_citebench.tasks import registry

    try:
        return registry.get(name)
    except KeyError:
        return None


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
    answered = [r for r in scored if r["outcome"] != "abstained"]
    for name in getattr(task_obj, "metrics", {}):
        values = [float(r["metrics"][name]) for r in answered if name in r["metrics"]]
        if values:
            lo, hi = bootstrap_mean_ci(values)
            metrics[name] = Stat(sum(values) / len(values), lo, hi, len(values))
        else:
            metrics[name] = Stat(math.nan, math.nan, math.nan, 0)
    set_metrics = getattr(task_obj, "set_metrics", None)
    if set_metrics is not None and scored:
        metrics.update(set_metrics(scored))
    errors = counts.get("error", 0)
    metrics["errors"] = Stat(errors, errors, errors, len(records))
    metrics["n"] = Stat(n, n, n, n)
    label = getattr(task_obj, "label", "")
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
        if len(getattr(task_obj, "stages", ())) > 1 and record["outcome"] != "error":
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


def table_metrics(agg: Aggregate) -> tuple[str, ...]:
    """The columns for an aggregate: the outcome shares, then the task's own metrics."""
    task_obj = _task(agg.task)
    own = list(getattr(task_obj, "metrics", {})) + list(getattr(task_obj, "set_metric_docs", {}))
    return ("accuracy", "pp", *own)


def render_table(aggregates: list[Aggregate]) -> list[str]:
    """One table per set of columns, rows sorted by suite, task, stage, then model, so models sit
    side by side for comparison."""
    by_columns: dict[tuple[str, ...], list[Aggregate]] = defaultdict(list)
    for agg in aggregates:
        by_columns[table_metrics(agg)].append(agg)
    lines: list[str] = []
    for columns, group in by_columns.items():
        if lines:
            lines.append("")
        lines += _render(columns, group)
    return lines


def _render(columns: tuple[str, ...], aggregates: list[Aggregate]) -> list[str]:
    header = ["suite", "task", "model", "n", "err"] + [_HEADERS.get(m, m) for m in columns]
    rows = [header]
    ordered = sorted(aggregates, key=lambda a: (a.suite, a.task, a.stage or "", a.model))
    for agg in ordered:
        task = agg.task + (f" >{agg.stage}" if agg.stage else "") + (" *" if agg.label else "")
        rows.append(
            [agg.suite, task, agg.model, str(agg.metrics["n"].n), str(agg.counts.get("error", 0))]
            + [_fmt(agg.metrics.get(m), percent=not _is_raw(m)) for m in columns]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for index, row in enumerate(rows):
        cells = [
            c.ljust(w) if i < 3 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    labels = {(a.task, a.label) for a in aggregates if a.label}
    for task, label in sorted(labels):
        lines.append(f"* {task}: {label}")
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
        self._appender.write(record)

    def close(self) -> None:
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
        # other records (a shard's "shard" line) are for merge.read_shard
    return items, aggregates
