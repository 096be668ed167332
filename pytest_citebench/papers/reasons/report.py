"""REASONS Table 3 as a report section: each swapped suite beside its original, on the same items.

A model that matches on surface similarity answers for the wrong paper once the citing title
(or cited abstract) is swapped for a near-identical one, so the table pairs every
``<suite>+swap-<kind>`` group with the original suite's records *of the same items* (skipped
swaps drop out of both sides) and shows each metric as original → swapped. The core renders the
section in every report; the grouped bar charts are drawn in HTML only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.api import Aggregate, Chart, Records, Section

#: The metrics of the table, in the paper's order (PP, BLEU, F1, HR).
METRICS = ("pp", "bleu", "f1", "hr_code", "hr_paper")
#: The metrics charted, one grouped bar chart each.
CHARTED = ("hr_paper", "pp", "f1")
_VARIANT = "+swap-"


@dataclass(frozen=True)
class AdversarialRow:
    """One (model, swapped suite, task) beside its original, aggregated over the shared items."""

    model: str
    suite: str  # the variant, e.g. reasons/nlp+swap-title
    original: str
    task: str
    n: int
    before: Aggregate
    after: Aggregate


def adversarial_rows(records: Sequence[Mapping[str, Any]]) -> list[AdversarialRow]:
    """Each swapped suite beside its original on the same items (REASONS Table 3).

    Compared only on the items both sides ran, so a swap skipped for lack of a similar enough
    value never counts against (or for) the original.
    """
    from pytest_citebench.results.aggregate import aggregate_group

    groups: dict[tuple[str, str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for r in records:
        groups[(r["model"], r["suite"], r["task"])][r["item_id"]] = r
    rows = []
    for (model, suite, task), swapped in sorted(groups.items(), key=lambda kv: kv[0][1:]):
        if _VARIANT not in suite:
            continue
        original_suite = suite.split(_VARIANT)[0]
        original = groups.get((model, original_suite, task), {})
        shared = sorted(set(swapped) & set(original))
        if not shared:
            continue
        before = aggregate_group(model, original_suite, task, [original[i] for i in shared])
        after = aggregate_group(model, suite, task, [swapped[i] for i in shared])
        rows.append(AdversarialRow(model, suite, original_suite, task, len(shared), before, after))
    return rows


def _charts(rows: Sequence[AdversarialRow]) -> tuple[Chart, ...]:
    from pytest_citebench.reports.format import label

    cats = [f"{r.suite} {r.task} [{r.model}]" for r in rows]
    charts = []
    for metric in CHARTED:
        values: dict[tuple[str, str], tuple[float, float, float]] = {}
        for cat, r in zip(cats, rows, strict=True):
            for name, agg in (("original", r.before), ("swapped", r.after)):
                s = agg.metrics.get(metric)
                if s is not None and not math.isnan(s.value):
                    values[(cat, name)] = (s.value, s.lo, s.hi)
        if values:
            data = {
                "title": f"{label(metric)}: original vs swapped",
                "categories": cats,
                "series": ["original", "swapped"],
                "values": values,
            }
            charts.append(Chart(kind="grouped_bars", data=data))
    return tuple(charts)


def sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    """The paper's report sections: Table 3, then the kinds of wrong citation
    (``kinds_report``), then the judge model's disagreements with the rules (``judge_report``),
    then the agent funnel (``agent_report``), each only when the run has something for it."""
    from pytest_citebench.papers.reasons.agent_report import agent_sections
    from pytest_citebench.papers.reasons.judge_report import judge_sections
    from pytest_citebench.papers.reasons.kinds_report import sections as kind_sections

    return [
        *adversarial_sections(aggregates, records),
        *kind_sections(aggregates, records),
        *judge_sections(records),
        *agent_sections(aggregates, records),
    ]


def adversarial_sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    """Table 3 when a run has swapped suites beside their originals, nothing otherwise (a run
    without ``--citebench-adversarial`` shows no table)."""
    rows = adversarial_rows(records)
    if not rows:
        return []
    from pytest_citebench.reports.format import fmt, label

    cells = tuple(
        (
            r.suite,
            r.task,
            r.model,
            str(r.n),
            *(
                f"{fmt(r.before.metrics.get(m), m, ci=False)} → "
                f"{fmt(r.after.metrics.get(m), m, ci=False)}"
                for m in METRICS
            ),
        )
        for r in rows
    )
    return [
        Section(
            key="adversarial",
            title="Adversarial swaps (REASONS Table 3)",
            note="Each swapped suite beside its original, on the same items; % values, "
            "original → swapped.",
            headers=("suite", "task", "model", "n", *(label(m) for m in METRICS)),
            rows=cells,
            charts=_charts(rows),
            numeric_from=3,
            terminal=True,
        )
    ]
