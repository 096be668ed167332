"""A metric's declaration (:class:`MetricSpec`) and the core's own metrics, re-exported by
:mod:`pytest_citebench.api`.

Apart from ``api`` to keep that module short; like it, this imports nothing from the package, so
every layer can read a declaration without a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

#: What kind of wrong citation a *hallucinated* answer gives, when its task tells them apart
#: (docs/outcomes.md, "Kinds of wrong citation"): ``misattributed`` (the named work is a real one,
#: not the gold), ``fabricated`` (a title lookup found no such work) or ``unverified`` (nothing
#: the run can see says either). One concept apart from the outcome: the outcome says the
#: answer is wrong, the kind what is wrong with it.
HallucinationKind = Literal["misattributed", "fabricated", "unverified"]
KINDS: tuple[HallucinationKind, ...] = ("misattributed", "fabricated", "unverified")


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
    #: For a share of items of ``outcome``: only those whose record carries this ``kind``
    #: (``misattributed`` counts the hallucinated items of that kind), so a kind's share is a
    #: share of every scored item, and the kinds' shares add up to the outcome's.
    kind: str | None = None
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
        if self.kind is not None and self.outcome is None:
            raise ValueError(f"{self.doc!r}: a kind is a kind of one outcome: name the outcome")

    def counts(self, record: Any) -> bool:
        """Whether an item record (a results-file mapping) is one this share counts: its
        outcome, and its kind when the share is of one kind. Aggregation and the baseline's
        McNemar test both ask this, so a share and its paired test never count differently."""
        if record.get("outcome") != self.outcome:
            return False
        return self.kind is None or record.get("kind") == self.kind


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


#: The shares of the kinds of wrong citation, for a task that tells them apart (it lists these
#: among its ``metrics``; REASONS does): each a share of every scored item, Wilson CI, compared
#: with a baseline by McNemar like ``hallucinated``, and gateable like any metric. Declared once
#: here so every such task reports them under the same names. Not drawn as per-domain figures:
#: the task's own section shows the split (REASONS: ``kinds_report``).
KIND_METRICS: Mapping[str, MetricSpec] = MappingProxyType(
    {
        "misattributed": MetricSpec(
            "share of items naming a real work that is not the gold (a wrong attribution)",
            higher_is_better=False,
            label="misattrib %",
            paired_test="mcnemar",
            outcome="hallucinated",
            kind="misattributed",
            charted=False,
        ),
        "fabricated": MetricSpec(
            "share of items naming a work a title lookup found nowhere (an invented citation)",
            higher_is_better=False,
            label="fabricated %",
            paired_test="mcnemar",
            outcome="hallucinated",
            kind="fabricated",
            charted=False,
        ),
        "unverified": MetricSpec(
            "share of items naming a wrong citation that nothing the run saw shows real or "
            "invented (never counted as fabricated)",
            higher_is_better=False,
            label="unverified %",
            paired_test="mcnemar",
            outcome="hallucinated",
            kind="unverified",
            charted=False,
        ),
    }
)
