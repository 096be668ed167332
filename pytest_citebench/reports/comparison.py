"""The baseline comparison as a terminal table: one row per metric delta (failures marked).

``results/compare.py`` computes the comparison; this shows it, for the run's summary, ``merge``
and ``baseline compare`` alike.
"""

from __future__ import annotations

import math

from pytest_citebench.reports.table import text_table
from pytest_citebench.results.compare import Comparison, points


def comparison_lines(comparison: Comparison, *, all_rows: bool = True) -> list[str]:
    """The terminal table: one row per metric delta (failures marked), then the notes."""
    header = ["suite", "task", "model", "metric", "n", "base", "new", "delta [95% CI]", "test", ""]
    rows = [header]
    for d in comparison.deltas:
        if not all_rows and d.verdict not in ("FAIL", "worse"):
            continue
        ci = "" if math.isnan(d.lo) else f" [{points(d.lo)},{points(d.hi)}]"
        test = d.p_text()
        rows.append(
            [
                d.suite,
                d.task,
                d.model,
                d.metric,
                str(d.n),
                f"{100 * d.base:.1f}",
                f"{100 * d.new:.1f}",
                f"{points(d.delta)}{ci}",
                test,
                d.verdict,
            ]
        )
    if len(rows) == 1:
        return []
    numbers = range(4, len(header) - 1)  # the verdict, last, reads as a word: left-aligned
    return text_table(rows[0], rows[1:], right=numbers, rule=True)
