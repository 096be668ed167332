"""The end of a run, decided once: records and gates in, one ``Conclusion`` out.

A pytest run (``run/session.py``) and ``python -m pytest_citebench merge`` both end here, so a
merged run and a single run of the same records cannot disagree on aggregates, gates, baseline
deltas or verdict: there is no second implementation to drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_citebench.results.record import is_suspect

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate
    from pytest_citebench.reports.headline import Verdict
    from pytest_citebench.reports.suspect import SuspectSummary
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
    # Records of items whose gold the suite flags as suspect (docs/audit.md), left out of the
    # aggregates, gates and baseline comparison; empty when the run included them.
    set_apart: Sequence[dict[str, Any]] = ()
    # The run counted suspect golds in its numbers (``--citebench-include-suspect``): how many.
    included_suspect: int = 0

    @property
    def counted_records(self) -> list[dict[str, Any]]:
        """The records the numbers are made of: all but those set apart."""
        if not self.set_apart:
            return list(self.records)
        apart = {id(r) for r in self.set_apart}
        return [r for r in self.records if id(r) not in apart]

    def suspect_summary(self) -> SuspectSummary:
        """What the run set apart (or counted) as suspect golds, for every report."""
        from pytest_citebench.reports.suspect import summarize

        return summarize(self.set_apart, self.included_suspect)

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


def split_suspect(
    records: Sequence[dict[str, Any]], include_suspect: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the records the numbers are made of, the records set apart). Errors stay in the first
    list whatever the gold: a provider failure is an error of the run, never set apart."""
    if include_suspect:
        return list(records), []
    kept: list[dict[str, Any]] = []
    apart: list[dict[str, Any]] = []
    for record in records:
        if is_suspect(record) and record.get("outcome") != "error":
            apart.append(record)
        else:
            kept.append(record)
    return kept, apart


def _without(
    records: Sequence[Mapping[str, Any]], apart: set[tuple[str, str]]
) -> list[Mapping[str, Any]]:
    return [
        r
        for r in records
        if (str(r["suite"]), str(r["item_id"])) not in apart and not is_suspect(r)
    ]


def conclude(
    records: Sequence[dict[str, Any]],
    gates: Sequence[Gate],
    baseline: Baseline | None = None,
    *,
    include_suspect: bool = False,
) -> Conclusion:
    """Aggregate, check the gates, compare with the baseline: the end of every run.

    Items with a suspect gold are set apart first (unless ``include_suspect``): the headline
    numbers, gates and the baseline comparison are made of the other items only, on both sides
    of the comparison, so a baseline recorded before the audit compares like with like."""
    from pytest_citebench.results.aggregate import aggregate
    from pytest_citebench.results.gates import evaluate

    counted, apart = split_suspect(records, include_suspect)
    aggregates = aggregate(counted)
    gate_results, unmatched = evaluate(list(gates), aggregates)
    comparison = None
    if baseline is not None:
        from pytest_citebench.results.compare import compare

        apart_keys = {(str(r["suite"]), str(r["item_id"])) for r in apart}
        comparison = compare(
            counted,
            _without(baseline.records, apart_keys) if not include_suspect else baseline.records,
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
        set_apart=tuple(apart),
        included_suspect=sum(map(is_suspect, records)) if include_suspect else 0,
    )


def interrupted(
    records: Sequence[dict[str, Any]], gates: Sequence[Gate], *, include_suspect: bool = False
) -> Conclusion:
    """A run that never reached its end (Ctrl-C, ``--citebench-max-errors``): what finished,
    aggregated for display, with no gate or baseline judged."""
    from pytest_citebench.results.aggregate import aggregate

    counted, apart = split_suspect(records, include_suspect)
    return Conclusion(
        records=records,
        aggregates=aggregate(counted) if counted else [],
        set_apart=tuple(apart),
        gates=tuple(gates),
        error_counts=error_counts(records),
        interrupted=bool(records),
    )
