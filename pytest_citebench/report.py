"""Aggregation, the terminal table and the results file.

Aggregates are computed once, on the controller, from the item records sorted by their keys, so
the numbers do not depend on the order in which xdist workers happened to finish.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pytest_citebench.metrics.stats import bootstrap_mean_ci, wilson_ci
from pytest_citebench.tasks.base import OUTCOMES

# name -> (kind, description). Shares get Wilson CIs, means get bootstrap CIs.
METRICS: Mapping[str, tuple[str, str]] = {
    "accuracy": ("share", "share of items answered correctly"),
    "pp": ("share", "pass percentage: share of items where the model abstained"),
    "hallucinated": ("share", "share of items answered wrongly (neither correct nor abstained)"),
    "hr_paper": ("mean", "hallucination rate, the paper's formula (answered items)"),
    "hr_code": ("mean", "hallucination rate, the REASONS code's |H-R|/|H| (answered items)"),
    "f1": ("mean", "token-set F1 against the gold answer (answered items)"),
    "bleu": ("mean", "BLEU-4, nltk, no smoothing (answered items)"),
    "errors": ("count", "items that ended in an error"),
    "n": ("count", "items scored"),
}
TABLE_METRICS = ("accuracy", "pp", "hr_paper", "hr_code", "f1", "bleu")


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

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.model, self.suite, self.task)

    def to_record(self) -> dict[str, Any]:
        return {
            "type": "aggregate",
            "model": self.model,
            "suite": self.suite,
            "task": self.task,
            "counts": dict(self.counts),
            "metrics": {k: v.to_json() for k, v in self.metrics.items()},
        }


def _aggregate_group(
    model: str, suite: str, task: str, records: list[Mapping[str, Any]]
) -> Aggregate:
    records = sorted(records, key=lambda r: r["item_id"])
    counts = Counter(r["outcome"] for r in records)
    scored = [r for r in records if r["outcome"] != "error"]
    n = len(scored)
    metrics: dict[str, Stat] = {}
    for name, outcome in (
        ("accuracy", "correct"),
        ("pp", "abstained"),
        ("hallucinated", "hallucinated"),
    ):
        k = counts.get(outcome, 0)
        lo, hi = wilson_ci(k, n)
        metrics[name] = Stat(k / n if n else math.nan, lo, hi, n)
    answered = [r for r in scored if r["outcome"] != "abstained"]
    for name in ("hr_paper", "hr_code", "f1", "bleu"):
        values = [float(r["metrics"][name]) for r in answered if name in r["metrics"]]
        if values:
            lo, hi = bootstrap_mean_ci(values)
            metrics[name] = Stat(sum(values) / len(values), lo, hi, len(values))
        else:
            metrics[name] = Stat(math.nan, math.nan, math.nan, 0)
    errors = counts.get("error", 0)
    metrics["errors"] = Stat(errors, errors, errors, len(records))
    metrics["n"] = Stat(n, n, n, n)
    return Aggregate(model, suite, task, {o: counts.get(o, 0) for o in OUTCOMES}, metrics)


def aggregate(records: Iterable[Mapping[str, Any]]) -> list[Aggregate]:
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["model"], record["suite"], record["task"])].append(record)
    return [_aggregate_group(*key, groups[key]) for key in sorted(groups)]


def _fmt(stat: Stat | None, percent: bool = True) -> str:
    if stat is None or math.isnan(stat.value):
        return "-"
    scale = 100.0 if percent else 1.0
    return f"{stat.value * scale:5.1f} [{stat.lo * scale:4.1f},{stat.hi * scale:5.1f}]"


def render_table(aggregates: list[Aggregate]) -> list[str]:
    """Rows sorted by suite, task, then model, so models sit side by side for comparison."""
    header = ["suite", "task", "model", "n", "err"] + [
        {
            "accuracy": "acc %",
            "pp": "PP %",
            "hr_paper": "HR paper %",
            "hr_code": "HR code %",
            "f1": "F1 %",
            "bleu": "BLEU %",
        }[m]
        for m in TABLE_METRICS
    ]
    rows = [header]
    for agg in sorted(aggregates, key=lambda a: (a.suite, a.task, a.model)):
        rows.append(
            [
                agg.suite,
                agg.task,
                agg.model,
                str(agg.metrics["n"].n),
                str(agg.counts.get("error", 0)),
            ]
            + [_fmt(agg.metrics.get(m)) for m in TABLE_METRICS]
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
    return lines


class ResultsWriter:
    """Appends one JSON line per finished item and flushes it, so an interrupted run keeps every
    item that finished; aggregates are appended at the end."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._handle: IO[str] | None = path.open("w", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True)
        with self._lock:
            if self._handle is not None:
                self._handle.write(line + "\n")
                self._handle.flush()

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def read_results(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(items, aggregates) from a results file; a torn last line (killed mid-write) is ignored."""
    items: list[dict[str, Any]] = []
    aggregates: list[dict[str, Any]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise ValueError(f"{path}:{number}: malformed JSON line in results file") from None
        (aggregates if record.get("type") == "aggregate" else items).append(record)
    return items, aggregates
