"""The end of a run, decided once: records and gates in, one ``Conclusion`` out.

A pytest run (``session``) and ``python -m pytest_citebench merge`` both end here, so a merged
run and a single run of the same records cannot disagree on aggregates, gates, baseline deltas
or verdict: there is no second implementation to drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate
    from pytest_citebench.reports.headline import Verdict
    from pytest_citebench.results.compare import Comparison
    from pytest_citebench.results.gates import Gate, GateResult


@dataclass(frozen=True)
class Baseline:
    """``--citebench-baseline``: its item records and how to compare against them."""

    records: Sequence[Mapping[str, Any]]
    name: str
    tolerance: float = 0.0
    correction: str = "holm"


@dataclass(frozen=True)
class Conclusion:
    """What a run concluded; reports read it and never change it."""

    records: Sequence[dict[str, Any]]
    aggregates: Sequence[Aggregate]
    gates: Sequence[Gate] = ()
    gate_results: Sequence[GateResult] = ()
    unmatched_gates: Sequence[Gate] = ()
    comparison: Comparison | None = None
    # Errored items per model: the summary's red ERROR lines and the verdict count them.
    error_counts: Mapping[str, int] = field(default_factory=dict)
    # An interrupted run: aggregates of the items that finished, for display only (no gate or
    # baseline was judged, and nothing of it is written to the results file).
    interrupted: bool = False

    @property
    def failed_gates(self) -> int:
        return sum(not r.passed for r in self.gate_results)

    @property
    def regressions(self) -> int:
        return len(self.comparison.failures) if self.comparison is not None else 0

    def verdict(self) -> Verdict:
        from pytest_citebench.reports.headline import verdict

        return verdict(
            list(self.gate_results),
            list(self.unmatched_gates),
            errors=sum(self.error_counts.values()),
            comparison=self.comparison,
        )


def error_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Errored items per model, in the order the models first erred."""
    counts: dict[str, int] = {}
    for record in records:
        if record["outcome"] == "error":
            counts[record["model"]] = counts.get(record["model"], 0) + 1
    return counts


def conclude(
    records: Sequence[dict[str, Any]],
    gates: Sequence[Gate],
    baseline: Baseline | None = None,
) -> Conclusion:
    """Aggregate, check the gates, compare with the baseline: the end of every run."""
    from pytest_citebench.results.aggregate import aggregate
    from pytest_citebench.results.gates import evaluate

    aggregates = aggregate(list(records))
    gate_results, unmatched = evaluate(list(gates), aggregates)
    comparison = None
    if baseline is not None:
        from pytest_citebench.results.compare import compare

        comparison = compare(
            list(records),
            list(baseline.records),
            tolerance=baseline.tolerance,
            baseline=baseline.name,
            correction=baseline.correction,
        )
    return Conclusion(
        records=records,
        aggregates=aggregates,
        gates=tuple(gates),
        gate_results=tuple(gate_results),
        unmatched_gates=tuple(unmatched),
        comparison=comparison,
        error_counts=error_counts(records),
    )


def interrupted(records: Sequence[dict[str, Any]], gates: Sequence[Gate]) -> Conclusion:
    """A run that never reached its end (Ctrl-C, ``--citebench-max-errors``): what finished,
    aggregated for display, with no gate or baseline judged."""
    from pytest_citebench.results.aggregate import aggregate

    return Conclusion(
        records=records,
        aggregates=aggregate(list(records)) if records else [],
        gates=tuple(gates),
        error_counts=error_counts(records),
        interrupted=bool(records),
    )
