"""Aggregation: the item records of one (model, suite, task) become its metrics, with CIs.

Aggregates are computed once, on the controller, from the item records sorted by their keys, so
the numbers do not depend on the order in which xdist workers happened to finish. Shares get
Wilson CIs, per-item metrics bootstrap CIs; a task may add set metrics of its own.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_citebench.api import CORE_METRICS, OUTCOMES, Aggregate, Stat, Task
from pytest_citebench.metrics.stats import bootstrap_mean_ci, wilson_ci

# Metrics every task has, from the outcomes (declared in ``api.CORE_METRICS``): name -> meaning.
# Shares get Wilson CIs; task metrics (means of per-item numbers) get bootstrap CIs; tasks may
# add set-level metrics of their own.
BASE_METRICS: Mapping[str, str] = {name: spec.doc for name, spec in CORE_METRICS.items()}
_SHARES = tuple((name, spec) for name, spec in CORE_METRICS.items() if spec.outcome)
# Per-item metrics (HR, F1, BLEU, ...) are means over items that named something: abstained and
# unanswered items have no answer to measure.
_NOT_ANSWERED = ("abstained", "unanswered")


def known_metrics() -> dict[str, str]:
    """Every metric a gate may name: the base ones and those of every registered task."""
    from pytest_citebench import registry

    known = dict(BASE_METRICS)
    for task in registry.all_tasks():
        known.update({name: spec.doc for name, spec in task.declared_metrics().items()})
    return known


def task_of(name: str) -> Task:
    """The registered task, or a bare ``Task`` (defaults) for one no installed paper provides,
    so a results file from elsewhere still aggregates."""
    from pytest_citebench import registry

    return registry.find(name)


def aggregate_group(
    model: str, suite: str, task: str, records: list[Mapping[str, Any]], stage: str | None = None
) -> Aggregate:
    """One group's aggregate; also how REASONS Table 3 compares a swapped suite with its
    original on the items both share."""
    records = sorted(records, key=lambda r: r["item_id"])
    task_obj = task_of(task)
    counts = Counter(r["outcome"] for r in records)
    scored = [r for r in records if r["outcome"] != "error"]
    n = len(scored)
    metrics: dict[str, Stat] = {}
    # The core's outcome shares, then the shares a task declares among its metrics (the kinds
    # of a hallucinated answer): a spec naming an outcome is a share of the scored items.
    shares = [*_SHARES, *((m, s) for m, s in task_obj.metrics.items() if s.outcome)]
    for name, spec in shares:
        if spec.kind is None:
            k = counts.get(str(spec.outcome), 0)
        else:
            k = sum(1 for r in scored if spec.counts(r))
        lo, hi = wilson_ci(k, n)
        metrics[name] = Stat(k / n if n else math.nan, lo, hi, n)
    answered = [r for r in scored if r["outcome"] not in _NOT_ANSWERED]
    for name, spec in task_obj.metrics.items():
        if spec.outcome:
            continue  # a share, counted above
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
        task_obj = task_of(record["task"])
        if len(task_obj.stages) > 1 and record["outcome"] != "error":
            stage = _final_stage(record)
            if stage:
                groups[(*key, stage)].append(record)
    return [
        aggregate_group(model, suite, task, groups[(model, suite, task, stage)], stage or None)
        for model, suite, task, stage in sorted(groups)
    ]


def share(counts: Mapping[str, int], outcome: str) -> Stat:
    """The share of ``outcome`` among the scored (non-error) items, Wilson 95% CI."""
    n = sum(v for k, v in counts.items() if k != "error")
    k = counts.get(outcome, 0)
    lo, hi = wilson_ci(k, n)
    return Stat(k / n if n else math.nan, lo, hi, n)
