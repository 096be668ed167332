"""What the HTML and Markdown reports show, computed once and shared, so both always agree.

Every section is defensive: it appears only when the records carry what it needs (adversarial
pairs when ``+swap-`` suites ran, Table 5 when DOI metrics exist, guard curves when calibration
records exist), because one report renders runs of any mix of tasks, including tasks added later.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.report import _HEADERS, _is_raw, table_metrics

# Metrics never charted: counts, not rates.
_NOT_CHARTED = {"errors", "n"}
# Left out of the per-domain figures (still in every table): hr_code repeats hr_paper's story
# on another formula; the figures follow the paper's HR, PP, F1, BLEU (plus accuracy).
_NOT_CHARTED_FIGURES = {"hr_code"}
GUARD_ALPHAS = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
GUARD_TRIALS = 200


def label(metric: str) -> str:
    return _HEADERS.get(metric, metric)


def is_raw(metric: str) -> bool:
    """Metrics not on a 0-1 scale (kappa, tau, counts) are shown as they are, not as %."""
    return _is_raw(metric)


def fmt(stat: Stat | None, metric: str, *, ci: bool = True) -> str:
    if stat is None or stat.value is None or math.isnan(stat.value):
        return "-"
    if metric in ("n", "errors"):
        return str(int(stat.value))
    scale, digits = (1.0, 3) if is_raw(metric) else (100.0, 1)
    text = f"{stat.value * scale:.{digits}f}"
    if ci and not math.isnan(stat.lo) and not math.isnan(stat.hi) and stat.lo != stat.hi:
        text += f" [{stat.lo * scale:.{digits}f}, {stat.hi * scale:.{digits}f}]"
    return text


def columns(aggregates: Sequence[Aggregate]) -> list[str]:
    """Every metric any of the aggregates has, in the terminal table's order, then the rest."""
    order: list[str] = []
    for agg in aggregates:
        for metric in (*table_metrics(agg), *agg.metrics):
            if metric not in order and metric not in _NOT_CHARTED and metric in agg.metrics:
                order.append(metric)
    return order


def by_task(aggregates: Sequence[Aggregate]) -> dict[str, list[Aggregate]]:
    """Whole-task aggregates (no stage breakdown) per task, suites and models sorted."""
    out: dict[str, list[Aggregate]] = defaultdict(list)
    for agg in sorted(aggregates, key=lambda a: (a.task, a.suite, a.model, a.stage or "")):
        out[agg.task].append(agg)
    return dict(out)


def is_variant(suite: str) -> bool:
    return "+swap-" in suite


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
            if is_raw(metric) or metric in _NOT_CHARTED_FIGURES:
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


@dataclass(frozen=True)
class AdversarialRow:
    model: str
    suite: str  # the variant, e.g. reasons/nlp+swap-title
    original: str
    task: str
    n: int
    before: Aggregate
    after: Aggregate


def adversarial_rows(records: Sequence[Mapping[str, Any]]) -> list[AdversarialRow]:
    """Each swapped suite beside its original on the same items (REASONS Table 3)."""
    from pytest_citebench.report import _aggregate_group

    groups: dict[tuple[str, str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for r in records:
        groups[(r["model"], r["suite"], r["task"])][r["item_id"]] = r
    rows = []
    for (model, suite, task), swapped in sorted(groups.items(), key=lambda kv: kv[0][1:]):
        if not is_variant(suite):
            continue
        original_suite = suite.split("+swap-")[0]
        original = groups.get((model, original_suite, task), {})
        shared = sorted(set(swapped) & set(original))
        if not shared:
            continue
        before = _aggregate_group(model, original_suite, task, [original[i] for i in shared])
        after = _aggregate_group(model, suite, task, [swapped[i] for i in shared])
        rows.append(AdversarialRow(model, suite, original_suite, task, len(shared), before, after))
    return rows


@dataclass(frozen=True)
class DoiRow:
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


@dataclass(frozen=True)
class GuardCurve:
    """tau(alpha), held-out catch and flag rates over a grid of alpha, for one model x suite."""

    model: str
    suite: str
    n_unsupported: int
    n_supported: int
    alphas: tuple[float, ...]
    tau: tuple[float, ...]  # inf when too few calibration points for that alpha
    catch: tuple[float, ...]  # NaN when there is no held-out split
    flag: tuple[float, ...]


def guard_curves(records: Sequence[Mapping[str, Any]]) -> list[GuardCurve]:
    """Curves for every (model, suite) with scored calibration records (the ``calibrate`` task).

    tau uses all unsupported scores (what a deployment would use); catch and flag rates come from
    repeated seeded calibration/held-out splits (half the unsupported scores calibrate), as in the
    guard's own summary, so they show what the rule achieves on scores it has not seen.
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        metrics = r.get("metrics") or {}
        if r.get("task") == "calibrate" and "score" in metrics and "label" in metrics:
            groups[(r["model"], r["suite"])].append(r)
    if not groups:
        return []
    from pytest_citebench.papers.guard.stats import conformal_threshold, conformal_trials

    curves = []
    for (model, suite), rows in sorted(groups.items()):
        rows = sorted(rows, key=lambda r: str(r["item_id"]))
        unsupported = [float(r["metrics"]["score"]) for r in rows if not r["metrics"]["label"]]
        supported = [float(r["metrics"]["score"]) for r in rows if r["metrics"]["label"]]
        if not unsupported:
            continue
        taus, catches, flags = [], [], []
        n_cal = len(unsupported) // 2
        for alpha in GUARD_ALPHAS:
            taus.append(conformal_threshold(unsupported, alpha))
            if n_cal >= 1 and len(unsupported) >= 2:
                run = conformal_trials(
                    unsupported, supported, alpha, n_cal=n_cal, trials=GUARD_TRIALS, seed=0
                )
                catches.append(float(run["conformal"]["catch"]["mean"]))
                flag_rate = run["conformal"]["flag_rate"]
                flags.append(float(flag_rate["mean"]) if supported else math.nan)
            else:
                catches.append(math.nan)
                flags.append(math.nan)
        curves.append(
            GuardCurve(
                model,
                suite,
                len(unsupported),
                len(supported),
                GUARD_ALPHAS,
                tuple(taus),
                tuple(catches),
                tuple(flags),
            )
        )
    return curves


def item_metrics_text(record: Mapping[str, Any], limit: int = 4) -> str:
    from pytest_citebench.reports.headline import item_metrics_text as text

    return text(record, limit)
