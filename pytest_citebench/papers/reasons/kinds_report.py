"""The kinds of wrong citation as a report section: per model x suite x task, how many of the
scored items named a real paper that is not the gold (misattributed), a work no lookup found
(fabricated) or a wrong citation nothing could place (unverified), beside the hallucinated
share they split.

Why a section of its own: the headline has one hallucinated column, and the per-suite table
narrows to fit the terminal; this is the one table where the split is always shown, in the
terminal, the Markdown and the HTML alike (the core renders a paper's sections in every
format). Every share and CI is the aggregate's own (Wilson 95%, over the scored items, items
with a suspect gold set apart as for every number), so the section never disagrees with the
per-suite tables, gates and baseline comparison. Rows only where something was hallucinated;
a task's suites are also pooled when there are several.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import KIND_METRICS, KINDS, Aggregate, Chart, Records, Section

#: The columns after the identity ones: the hallucinated share, then its kinds.
COLUMNS = ("hallucinated", *KIND_METRICS)
_COLOURS = {"misattributed": "#e08e0b", "fabricated": "#c0392b", "unverified": "#9aa5b1"}


def _has_kinds(task: str) -> bool:
    from pytest_citebench import registry

    return all(name in registry.find(task).metrics for name in KIND_METRICS)


def _pooled(records: Records) -> list[Aggregate]:
    """One aggregate per model x task over its suites (a variant's suites apart), for tasks
    run on more than one suite."""
    from pytest_citebench import registry
    from pytest_citebench.results.aggregate import aggregate_group

    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    suites: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for r in records:
        variant = registry.split_variant(str(r["suite"]))[1] or ""
        key = (str(r["model"]), str(r["task"]), variant)
        groups[key].append(r)
        suites[key].add(str(r["suite"]))
    out = []
    for (model, task, variant), group in sorted(groups.items()):
        if len(suites[(model, task, variant)]) > 1 and _has_kinds(task):
            name = f"all {len(suites[(model, task, variant)])} suites"
            name += f" (+{variant})" if variant else ""
            out.append(aggregate_group(model, name, task, group))
    return out


def sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    """The section, when a task that tells kinds apart had a hallucinated item; else none."""
    from pytest_citebench.reports.format import fmt, label

    shown = [
        a
        for a in aggregates
        if a.stage is None and _has_kinds(a.task) and a.counts.get("hallucinated")
    ]
    if not shown:
        return []
    pooled = [a for a in _pooled(records) if a.counts.get("hallucinated")]
    rows = []
    for agg in [*sorted(shown, key=lambda a: (a.task, a.suite, a.model)), *pooled]:
        n = agg.metrics["n"].n if "n" in agg.metrics else 0
        cells = [fmt(agg.metrics.get(m), m) for m in COLUMNS]
        rows.append((agg.suite, agg.task, agg.model, str(n), *cells))
    bars = [
        (
            f"{a.model} {a.task} ({a.suite})",
            [_count(a, kind) for kind in KINDS],
        )
        for a in (pooled or shown)
    ]
    chart = Chart(
        kind="stacked_bars",
        data={
            "title": "Hallucinated items by kind of wrong citation",
            "bars": bars,
            "parts": [(kind, _COLOURS[kind]) for kind in KINDS],
        },
    )
    return [
        Section(
            key="kinds",
            title="Wrong citations by kind",
            note=(
                "% of scored items, Wilson 95% CI; the kinds add up to hallucinated; unverified: "
                "nothing the run saw says real or invented (docs/outcomes.md)"
            ),
            headers=("suite", "task", "model", "n", *(label(m) for m in COLUMNS)),
            rows=tuple(rows),
            charts=(chart,),
            numeric_from=3,
            terminal=True,
        )
    ]


def _count(agg: Aggregate, kind: str) -> int:
    """Items of one kind in an aggregate, from its share (exact: a share is k / n)."""
    stat = agg.metrics.get(kind)
    if stat is None or stat.n == 0 or math.isnan(stat.value):
        return 0  # undefined (fabricated with nothing looked up): none was shown to be
    return round(stat.value * stat.n)
