"""HALLMARK's sections of every report: the detector's numbers per difficulty tier and per
hallucination type, per model x suite, as HALLMARK publishes them.

The headline metrics (with CIs) are the task's set metrics and appear in the core's tables and
gates; these sections are the breakdowns, computed from the item records alone (the tier rides
in the metrics, the type in ``expected``), so they render from any results file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_citebench.api import Aggregate, Records, Section
from pytest_citebench.papers.hallmark.setstats import (
    prediction,
    record_type,
    tier_rows,
    type_rows,
)


def _num(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.3f}"


def sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    """Per-tier and per-type tables of every (model, suite) that ran ``detect``."""
    from pytest_citebench.papers.guard.setstats import task_groups

    groups = task_groups(records, "detect", "gold")
    if not groups:
        return []
    tiers: list[tuple[str, ...]] = []
    types: list[tuple[str, ...]] = []
    for (suite, model), rows in groups.items():
        preds = [prediction(r) for r in rows]
        for tier, m in tier_rows(preds).items():
            tiers.append(
                (
                    suite,
                    model,
                    tier,
                    _num(m["detection_rate"]),
                    _num(m["false_positive_rate"]),
                    _num(m["precision"]),
                    _num(m["f1"]),
                    str(int(m["hallucinated"])),
                    str(int(m["valid"])),
                )
            )
        for kind, m in type_rows(preds, [record_type(r) for r in rows]).items():
            types.append(
                (
                    suite,
                    model,
                    kind,
                    _num(m["detection_rate"]),
                    _num(m["false_positive_rate"]),
                    _num(m["f1"]),
                    str(int(m["hallucinated"] + m["valid"])),
                )
            )
    note = (
        "UNCERTAIN and unanswered entries are left out of DR, FPR, precision and F1 "
        "(HALLMARK's protocol); see docs/hallmark.md."
    )
    return [
        Section(
            "hallmark-tiers",
            "HALLMARK per difficulty tier (each tier's hallucinated entries against all VALID "
            "entries)",
            ("suite", "model", "tier", "DR", "FPR", "precision", "F1", "hallucinated", "valid"),
            tuple(tiers),
            note,
            numeric_from=3,
        ),
        Section(
            "hallmark-types",
            "HALLMARK per hallucination type",
            ("suite", "model", "type", "DR", "FPR", "F1", "n"),
            tuple(types),
            note,
            numeric_from=3,
        ),
    ]
