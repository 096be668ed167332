"""A metric's declaration (:class:`MetricSpec`) and the core's own metrics, re-exported by
:mod:`pytest_citebench.api`.

Apart from ``api`` to keep that module short; like it, this imports nothing from the package, so
every layer can read a declaration without a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal


@dataclass(frozen=True)
class MetricSpec:
    """What a metric means and how the core treats it, declared once by the task that makes it.

    Compare, the headline, every report's formatting and gate validation read these instead of
    knowing any paper's metric names, so a new metric is one entry in its task's declaration.
    """

    doc: str
    #: Which way is better; None for numbers with no good direction (counts, thresholds).
    higher_is_better: bool | None = None
    #: ``share`` (0-1, printed as a percentage), ``number`` (printed as is, three decimals) or
    #: ``count`` (a whole number, printed as one).
    scale: Literal["share", "number", "count"] = "share"
    #: The column header in every report; empty means the metric's own name.
    label: str = ""
    #: How ``compare`` pairs two runs on it: ``mcnemar`` for a share of an ``outcome`` (yes/no
    #: per item), ``bootstrap`` for a mean of per-item numbers, ``none`` for not compared.
    paired_test: Literal["mcnemar", "bootstrap", "none"] = "none"
    #: For a share of items: the outcome it counts (``accuracy`` counts ``correct``).
    outcome: str | None = None
    #: Says how far an answer is from the gold: the worst answers are ordered by the first such
    #: metric an item has (in the task's order), and their rows show these metrics.
    ranks_worst: bool = False
    #: One of the task's key numbers: kept, after the outcome shares, when a table is narrowed.
    key: bool = False
    #: Drawn in the per-domain figures, if a share (every metric stays in the tables either way).
    charted: bool = True

    def __post_init__(self) -> None:
        if self.paired_test != "none" and self.higher_is_better is None:
            raise ValueError(f"{self.doc!r}: a compared metric needs higher_is_better")
        if self.paired_test == "mcnemar" and self.outcome is None:
            raise ValueError(f"{self.doc!r}: McNemar compares a share of one outcome: name it")


#: The metrics every task has, computed by the core from the outcomes: a task's ``metrics``
#: and ``set_metric_specs`` add to these and never redeclare them.
CORE_METRICS: Mapping[str, MetricSpec] = MappingProxyType(
    {
        "accuracy": MetricSpec(
            "share of items answered correctly",
            higher_is_better=True,
            label="acc %",
            paired_test="mcnemar",
            outcome="correct",
        ),
        "pp": MetricSpec(
            "pass percentage: share of items where the model abstained",
            label="PP %",
            outcome="abstained",
        ),
        "hallucinated": MetricSpec(
            "share of items naming at least one invented or wrong citation element",
            higher_is_better=False,
            label="halluc %",
            paired_test="mcnemar",
            outcome="hallucinated",
        ),
        "partial": MetricSpec(
            "share of items answered with nothing invented but incomplete",
            label="partial %",
            outcome="partial",
        ),
        "unanswered": MetricSpec(
            "share of items whose reply names no citation (empty, an echo of the prompt, "
            "a placeholder)",
            label="unans %",
            outcome="unanswered",
        ),
        "errors": MetricSpec("items that ended in an error", scale="count"),
        "n": MetricSpec("items scored", scale="count"),
    }
)
