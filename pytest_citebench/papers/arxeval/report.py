"""ArxEval's section of every report: Table 5 (DOIs given, found, under their title) per run.

The core draws the section (table in every format, chart in HTML); this module only says what
is in it, computed from the mixed task's aggregates, so the reports need not know the paper.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_citebench.api import Aggregate, Chart, Records, Section
from pytest_citebench.reports.format import fmt

_DOI_HEADER = ("model", "suite", "Total DOIs", "DOIs found (%)", "DOIs not found (%)")


@dataclass(frozen=True)
class DoiRow:
    """One model x suite of Table 5 as counts (the aggregates hold shares of ``total``)."""

    model: str
    suite: str
    total: int
    found: int
    matching: int
    aggregate: Aggregate


def doi_rows(aggregates: Sequence[Aggregate]) -> list[DoiRow]:
    """ArxEval Table 5: DOIs given, found, matching their title, per model x suite."""
    rows = []
    for agg in sorted(aggregates, key=lambda a: (a.suite, a.model)):
        m = agg.metrics
        if agg.stage is not None or "dois_count" not in m:
            continue
        total = int(m["dois_count"].value) if not math.isnan(m["dois_count"].value) else 0
        found_share = m.get("doi_found")
        found = (
            round(found_share.value * total)
            if found_share is not None and not math.isnan(found_share.value)
            else 0
        )
        match_share = m.get("doi_title_match")
        matching = (
            round(match_share.value * found)
            if match_share is not None and not math.isnan(match_share.value)
            else 0
        )
        rows.append(DoiRow(agg.model, agg.suite, total, found, matching, agg))
    return rows


def _cells(r: DoiRow) -> tuple[str, ...]:
    m = r.aggregate.metrics
    return (
        r.model,
        r.suite,
        str(r.total),
        f"{r.found} ({fmt(m.get('doi_found'), 'doi_found')})",
        f"{r.total - r.found} ({fmt(m.get('doi_not_found'), 'doi_not_found')})",
        fmt(m.get("doi_title_match"), "doi_title_match"),
        fmt(m.get("adherence"), "adherence"),
    )


def sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    """Table 5 with its stacked-bar chart, when any mixed-titles aggregate is in the run.

    Not in the terminal summary: the mixed task prints Table 5 there itself, in the paper's form.
    """
    rows = doi_rows(aggregates)
    if not rows:
        return []
    chart = Chart(
        kind="stacked_bars",
        data={
            "title": "DOIs given, by what the registry says",
            "bars": [
                (f"{r.model} · {r.suite}", (r.matching, r.found - r.matching, r.total - r.found))
                for r in rows
            ],
            "parts": (
                ("found, title matches", "#59a14f"),
                ("found, other title", "#edc948"),
                ("not found", "#e15759"),
            ),
        },
    )
    return [
        Section(
            key="dois",
            title="DOIs (ArxEval Table 5)",
            headers=(*_DOI_HEADER, "Matching titles %", "Adherence %"),
            rows=tuple(_cells(r) for r in rows),
            charts=(chart,),
            numeric_from=2,
            terminal=False,
        )
    ]
