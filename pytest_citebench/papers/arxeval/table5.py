"""ArxEval's Table 5: how many DOIs the mixed answers gave, how many exist, how many match.

The paper reports these shares pooled over DOIs, not averaged over items; the intervals resample
items (a model that invents one DOI tends to invent both), and prompt adherence is counted over
items. The terminal summary prints the table as the paper does; ``report.py`` draws it in HTML.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_citebench.papers.arxeval.prompts import DOIS_ASKED
from pytest_citebench.reports.table import text_table

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate, Stat


def doi_modes(records: Sequence[Mapping[str, Any]]) -> str:
    """How the DOIs of these records were checked, as their stages say ("offline", "live")."""
    modes = {
        str(stage["details"]["resolver"])
        for record in records
        for stage in record.get("stages") or []
        if isinstance(stage.get("details"), Mapping) and "resolver" in stage["details"]
    }
    return "+".join(sorted(modes)) or "none needed"


def _counts(record: Mapping[str, Any]) -> tuple[int, int, int, bool]:
    metrics = record.get("metrics") or {}
    given = int(metrics.get("dois_given", 0))
    found = int(metrics.get("dois_found", 0))
    matching = int(metrics.get("dois_matching", 0))
    return given, found, matching, given == DOIS_ASKED


def table5(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """The paper's Table 5 columns, pooled over DOIs, plus prompt adherence over items."""
    from pytest_citebench.api import Stat
    from pytest_citebench.metrics.stats import ratio_ci, wilson_ci

    counts = [_counts(r) for r in records]
    given = sum(c[0] for c in counts)
    found = sum(c[1] for c in counts)
    matching = sum(c[2] for c in counts)
    adherent = sum(c[3] for c in counts)
    n_items = len(counts)

    def share(num: int, den: int, pairs: list[tuple[int, int]]) -> Stat:
        lo, hi = ratio_ci(pairs)
        return Stat(num / den if den else math.nan, lo, hi, den)

    lo, hi = wilson_ci(adherent, n_items)
    return {
        "dois_count": Stat(float(given), float(given), float(given), n_items),
        "doi_found": share(found, given, [(c[1], c[0]) for c in counts]),
        "doi_not_found": share(given - found, given, [(c[0] - c[1], c[0]) for c in counts]),
        "doi_title_match": share(matching, found, [(c[2], c[1]) for c in counts]),
        "adherence": Stat(adherent / n_items if n_items else math.nan, lo, hi, n_items),
    }


def _pct(stat: Stat | None) -> str:
    if stat is None or math.isnan(stat.value):
        return "-"
    return f"{100 * stat.value:.2f}%"


def _ci(stat: Stat | None) -> str:
    if stat is None or math.isnan(stat.lo):
        return ""
    return f" ({100 * stat.lo:.1f}-{100 * stat.hi:.1f})"


_MODE_NOTES = {
    "offline": " (closed-world registry of the suite corpus: a real DOI outside it counts as "
    "not found)",
    "live": " (Crossref, DataCite, OpenAlex, Unpaywall)",
}


def table5_lines(aggregates: Sequence[Aggregate], mode: str) -> list[str]:
    """Table 5 as the paper prints it: counts with shares, one row per model x suite."""
    rows = [("model", "suite", "Total DOIs", "DOIs Found", "DOIs Not Found", "Matching Titles")]
    for agg in sorted(aggregates, key=lambda a: (a.suite, a.model)):
        if agg.stage is not None or "dois_count" not in agg.metrics:
            continue
        m = agg.metrics
        total = int(m["dois_count"].value)
        found = round(m["doi_found"].value * total) if total else 0
        rows.append(
            (
                agg.model,
                agg.suite,
                str(total),
                f"{found} [{_pct(m['doi_found'])}]{_ci(m['doi_found'])}",
                f"{total - found} [{_pct(m['doi_not_found'])}]{_ci(m['doi_not_found'])}",
                _pct(m["doi_title_match"]) + _ci(m["doi_title_match"]),
            )
        )
    if len(rows) == 1:
        return []
    lines = text_table(rows[0], rows[1:], rule=True)
    lines.append(
        "Table 5 of ArxEval; Matching Titles is over found DOIs; 95% CIs: item bootstrap "
        f"(B=2000). DOI checks: {mode}" + _MODE_NOTES.get(mode, "")
    )
    return lines
