"""What the HTML and Markdown reports show, computed once and shared, so both always agree.

Every section is defensive: it appears only when the records carry what it needs (adversarial
pairs when ``+swap-`` suites ran, Table 5 when DOI metrics exist, guard curves when calibration
records exist), because one report renders runs of any mix of tasks, including tasks added later.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.reports.format import is_raw
from pytest_citebench.reports.terminal import table_metrics

if TYPE_CHECKING:
    from pytest_citebench.api import Section
    from pytest_citebench.reports.conclude import Conclusion
    from pytest_citebench.reports.headline import Verdict
    from pytest_citebench.reports.suspect import SuspectSummary
    from pytest_citebench.results.compare import Comparison
    from pytest_citebench.results.gates import Gate, GateResult


def columns(aggregates: Sequence[Aggregate]) -> list[str]:
    """Every metric any of the aggregates has, in the terminal table's order, then the rest."""
    order: list[str] = []
    for agg in aggregates:
        for metric in (*table_metrics(agg), *agg.metrics):
            # The core's counts (n, errors) have columns of their own; a task's count (HALLMARK's
            # ``uncertain``) is a column like its other metrics, printed as a count by ``fmt``.
            if metric not in order and metric in agg.metrics and not _core_count(metric):
                order.append(metric)
    return order


def _core_count(metric: str) -> bool:
    from pytest_citebench.api import CORE_METRICS

    return metric in CORE_METRICS and CORE_METRICS[metric].scale == "count"


def by_task(aggregates: Sequence[Aggregate]) -> dict[str, list[Aggregate]]:
    """Whole-task aggregates (no stage breakdown) per task, suites and models sorted."""
    out: dict[str, list[Aggregate]] = defaultdict(list)
    for agg in sorted(aggregates, key=lambda a: (a.task, a.suite, a.model, a.stage or "")):
        out[agg.task].append(agg)
    return dict(out)


def is_variant(suite: str) -> bool:
    """A suite a paper derived from another (``reasons/nlp+swap-title``)."""
    from pytest_citebench import registry

    return registry.split_variant(suite)[1] is not None


@dataclass(frozen=True)
class ChartSpec:
    """One grouped bar chart: a metric of one task, per suite (domain), one bar per model."""

    task: str
    metric: str
    suites: list[str]
    models: list[str]
    values: dict[tuple[str, str], Stat]  # (suite, model) -> stat


def chart_specs(aggregates: Sequence[Aggregate]) -> list[ChartSpec]:
    """Per task, per rate metric with at least one value: the paper's per-domain figures."""
    from pytest_citebench import registry

    specs = []
    for task, group in by_task(aggregates).items():
        plain = [a for a in group if a.stage is None and not is_variant(a.suite)]
        if not plain:
            continue
        suites = sorted({a.suite for a in plain})
        models = sorted({a.model for a in plain})
        metrics: list[str] = []
        for agg in plain:
            metrics += [m for m in table_metrics(agg) if m not in metrics]
        for metric in metrics:
            # A task may keep a share out of its figures (``MetricSpec.charted``).
            if is_raw(metric) or not registry.metric_spec(metric).charted:
                continue
            values = {
                (a.suite, a.model): a.metrics[metric]
                for a in plain
                if metric in a.metrics and not math.isnan(a.metrics[metric].value)
            }
            if values:
                specs.append(ChartSpec(task, metric, suites, models, values))
    return specs


@dataclass(frozen=True)
class HeatCell:
    """Both shares of one suite x model, with their CIs, so a cell can show its uncertainty."""

    correct: Stat
    hallucinated: Stat


@dataclass(frozen=True)
class Heatmap:
    """One task's suite x model grid of hallucinated % and correct % (the HTML's first view)."""

    task: str
    suites: list[str]
    models: list[str]
    cells: dict[tuple[str, str], HeatCell]  # (suite, model) -> shares


def heatmaps(aggregates: Sequence[Aggregate]) -> list[Heatmap]:
    """Per task with outcome shares: every suite (swapped variants included) x every model."""
    from pytest_citebench.reports.headline import has_outcome_shares, share

    out = []
    for task, group in by_task(aggregates).items():
        whole = [a for a in group if a.stage is None]
        if not whole or not has_outcome_shares(task):
            continue
        cells = {
            (a.suite, a.model): HeatCell(
                share(a.counts, "correct"), share(a.counts, "hallucinated")
            )
            for a in whole
        }
        suites = sorted({a.suite for a in whole})
        models = sorted({a.model for a in whole})
        out.append(Heatmap(task, suites, models, cells))
    return out


def item_metrics_text(record: Mapping[str, Any], limit: int = 4) -> str:
    """The terminal's metric text, so the HTML and Markdown rows say exactly the same."""
    from pytest_citebench.reports.headline import item_metrics_text as text

    return text(record, limit)


@dataclass
class ReportData:
    """Everything a report shows, from the records and nothing else (no clock, no host)."""

    records: Sequence[Mapping[str, Any]]
    aggregates: Sequence[Aggregate]
    gate_results: Sequence[GateResult] = ()
    unmatched_gates: Sequence[Gate] = ()
    comparison: Comparison | None = None
    # (label, value) lines shown under the title: models, sampling settings, shard, sources.
    settings: Sequence[tuple[str, str]] = field(default_factory=list)
    title: str = "pytest-citebench report"
    # Worst answers shown per suite x task (--citebench-show).
    show: int = 2
    # Items set apart as suspect golds (``records`` holds the others): their own section.
    suspect: SuspectSummary | None = None
    # Every record, those set apart too: what the run called and paid for (the usage table).
    all_records: Sequence[Mapping[str, Any]] | None = None

    @property
    def usage_records(self) -> Sequence[Mapping[str, Any]]:
        return self.records if self.all_records is None else self.all_records

    @classmethod
    def of(
        cls, conclusion: Conclusion, *, settings: Sequence[tuple[str, str]] = (), show: int = 2
    ) -> ReportData:
        """What a run concluded (``reports.conclude``), as the reports show it."""
        return cls(
            records=conclusion.counted_records,
            all_records=conclusion.records,
            suspect=conclusion.suspect_summary(),
            aggregates=conclusion.aggregates,
            gate_results=list(conclusion.gate_results),
            unmatched_gates=list(conclusion.unmatched_gates),
            comparison=conclusion.comparison,
            settings=list(settings),
            show=show,
        )

    @functools.cached_property
    def sections(self) -> list[Section]:
        """The papers' own sections for this run (computed once for every format)."""
        from pytest_citebench.reports.sections import paper_sections

        return paper_sections(self.aggregates, self.records)

    @property
    def errors(self) -> list[Mapping[str, Any]]:
        """Errored items, listed on their own: they are in no share and must not go unseen."""
        return [r for r in self.records if r.get("outcome") == "error"]

    @property
    def failed_gates(self) -> list[GateResult]:
        """Gates that failed, in the order they were given."""
        return [g for g in self.gate_results if not g.passed]

    def verdict(self) -> Verdict:
        """The one line every report opens with (reports.headline.verdict)."""
        from pytest_citebench.reports.headline import verdict

        return verdict(
            self.gate_results,
            self.unmatched_gates,
            errors=len(self.errors),
            comparison=self.comparison,
        )

    def problems(self) -> list[str]:
        """Why this run should not ship, in words; empty when nothing failed."""
        out = []
        if self.errors:
            out.append(f"{len(self.errors)} item(s) ended in an error")
        if self.failed_gates:
            out.append(f"{len(self.failed_gates)} gate(s) failed")
        if self.comparison is not None and self.comparison.failures:
            out.append(f"{len(self.comparison.failures)} regression(s) against the baseline")
        return out
