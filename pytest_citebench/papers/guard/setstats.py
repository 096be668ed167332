"""The guard tasks' set metrics: numbers of a whole (model, suite, task) group, not of an item.

Why apart from the tasks: the terminal summary recomputes them when a group has no aggregate
(a partial run), and the numbers must be the very same function's. Every interval follows the
protocol: item bootstrap, B = 2000, seed 0 (Wilson for recall@k; percentiles over seeded splits
for the conformal rule).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_citebench.api import MetricSpec, Stat
from pytest_citebench.metrics.stats import roc_auc_arrays as _auc
from pytest_citebench.papers.guard.settings import DEFAULT_THRESHOLD, SEED, B, calibration_settings
from pytest_citebench.papers.guard.stats import (
    Interval,
    bootstrap_ci,
    conformal_k,
    conformal_threshold,
    conformal_trials,
    recall_at_k,
    too_few,
)

#: ``verify``'s set metrics, declared (``Verify.set_metric_specs``).
VALIDATION_SPECS: Mapping[str, MetricSpec] = {
    "recall_supported": MetricSpec(
        "verify: share of gold-supported citations the verifier calls "
        "supported (score > threshold), bootstrap 95% CI",
        higher_is_better=True,
    ),
    "specificity": MetricSpec(
        "verify: share of gold-unsupported citations the verifier flags "
        "(score <= threshold), bootstrap 95% CI",
        higher_is_better=True,
    ),
    "kappa": MetricSpec(
        "verify: Cohen's kappa between gold and the verifier at its threshold, bootstrap",
        higher_is_better=True,
        scale="number",
    ),
    "auc": MetricSpec(
        "verify: ROC-AUC of the verifier score against gold (threshold-free), bootstrap",
        higher_is_better=True,
    ),
}
#: ``calibrate``'s set metrics, declared (``Calibrate.set_metric_specs``).
CALIBRATION_SPECS: Mapping[str, MetricSpec] = {
    "catch_rate": MetricSpec(
        "calibrate: split-conformal rule at alpha (CITEBENCH_GUARD_ALPHA, 0.10): "
        "mean share of held-out unsupported items flagged over repeated seeded splits "
        "(interval: 5th-95th percentile over splits)",
        higher_is_better=True,
    ),
    "flag_rate": MetricSpec(
        "calibrate: same rule, mean share of supported items flagged (the review "
        "budget; interval: 5th-95th percentile over splits)",
        higher_is_better=False,
    ),
    "tau": MetricSpec(
        "calibrate: the conformal threshold tau(alpha) from all unsupported scores",
        scale="number",
    ),
}
#: ``verify``'s set metrics, in their declared order.
VALIDATION_METRICS = tuple(VALIDATION_SPECS)
#: ``calibrate``'s set metrics, in their declared order.
CALIBRATION_METRICS = tuple(CALIBRATION_SPECS)


def in_item_order(
    records: Sequence[Mapping[str, Any]], metric: str | None = None
) -> list[Mapping[str, Any]]:
    """The records with a verdict (errors have none; the core counts them), and with ``metric``
    among their metrics when one is named, in item order so a bootstrap over them is
    reproducible."""
    kept = (
        r
        for r in records
        if r.get("outcome") != "error" and (metric is None or metric in (r.get("metrics") or {}))
    )
    return sorted(kept, key=lambda r: str(r["item_id"]))


def task_groups(
    records: Sequence[Mapping[str, Any]], task: str, metric: str | None = None
) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """(suite, model) -> :func:`in_item_order` records of ``task``, groups in key order: the
    grouping of every per-model summary (the guard's tables, HALLMARK's sections)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("task") == task:
            groups.setdefault((str(r["suite"]), str(r["model"])), []).append(r)
    ordered = {k: in_item_order(v, metric) for k, v in sorted(groups.items())}
    return {k: v for k, v in ordered.items() if v}


def scored_records(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records with a score, in item order (the bootstrap resamples rows, so order is fixed)."""
    rows = [r for r in records if "score" in (r.get("metrics") or {})]
    return sorted(rows, key=lambda r: str(r["item_id"]))


def to_stat(interval: Any, n: int) -> Stat:
    """An (estimate, low, high) interval as the core's :class:`Stat`."""
    estimate, low, high = interval
    return Stat(float(estimate), float(low), float(high), n)


def _nan_stat(n: int = 0) -> Stat:
    return Stat(math.nan, math.nan, math.nan, n)


def validation_stats(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """Recall on supported, specificity, kappa and ROC-AUC with paired bootstrap CIs."""
    if not records:
        return {name: _nan_stat() for name in VALIDATION_METRICS}
    # bootstrap_ci hands the statistics numpy arrays; they are written as array arithmetic (the
    # same definitions as guard.stats.recall_specificity / cohen_kappa, which the tests check)
    # because 2000 replicates of a Python loop per metric made the summary slow.
    y = [bool(r["metrics"]["label"]) for r in records]
    s = [float(r["metrics"]["score"]) for r in records]
    t = [float(r["metrics"].get("threshold", DEFAULT_THRESHOLD)) for r in records]
    n_pos = sum(y)
    n_neg = len(y) - n_pos

    def recall(yy: Any, ss: Any, tt: Any) -> float:
        return _share(ss[yy] > tt[yy])

    def specificity(yy: Any, ss: Any, tt: Any) -> float:
        return _share(ss[~yy] <= tt[~yy])

    def kappa(yy: Any, ss: Any, tt: Any) -> float:
        return binary_agreement(yy, ss > tt)["kappa"]

    def auc(yy: Any, ss: Any, tt: Any) -> float:
        return _auc(yy, ss)

    def ci(fn: Callable[..., float]) -> Any:
        return bootstrap_ci(fn, y, s, t, B=B, seed=SEED)

    return {
        "recall_supported": to_stat(ci(recall), n_pos),
        "specificity": to_stat(ci(specificity), n_neg),
        "kappa": to_stat(ci(kappa), len(y)),
        "auc": to_stat(ci(auc), len(y)),
    }


def _share(hits: Any) -> float:
    """Mean of a boolean array; NaN when it is empty (a class absent from a resample)."""
    return float(hits.sum() / len(hits)) if len(hits) else math.nan


def binary_agreement(a: Any, b: Any) -> dict[str, float]:
    """Cohen's kappa, Gwet's AC1, PSA and NSA of two boolean arrays, vectorised.

    Same definitions as ``guard.stats`` (cohen_kappa, gwet_ac1 with categories {True, False},
    psa_nsa), restricted to binary ratings so one bootstrap replicate costs microseconds.
    """
    n = len(a)
    both_pos = float((a & b).sum())
    both_neg = float((~a & ~b).sum())
    disc = n - both_pos - both_neg
    po = (both_pos + both_neg) / n
    pa, pb = float(a.sum()) / n, float(b.sum()) / n
    pe_kappa = pa * pb + (1 - pa) * (1 - pb)
    pi = (pa + pb) / 2
    pe_ac1 = 2 * pi * (1 - pi)  # sum over the two categories of pi_q (1 - pi_q), / (Q - 1)
    return {
        "kappa": math.nan if math.isclose(pe_kappa, 1.0) else (po - pe_kappa) / (1 - pe_kappa),
        "ac1": (po - pe_ac1) / (1 - pe_ac1),
        "psa": 2 * both_pos / (2 * both_pos + disc) if (2 * both_pos + disc) else math.nan,
        "nsa": 2 * both_neg / (2 * both_neg + disc) if (2 * both_neg + disc) else math.nan,
    }


AGREEMENT_STATS = ("psa", "nsa", "kappa", "ac1")


def agreement_stat(name: str) -> Callable[[Any, Any], float]:
    """One of :func:`binary_agreement`'s statistics as a function of two arrays (a bootstrap
    statistic)."""

    def stat(p: Any, q: Any) -> float:
        return binary_agreement(p, q)[name]

    return stat


def agreement_intervals(
    x: Sequence[bool], y: Sequence[bool], names: Sequence[str] = AGREEMENT_STATS
) -> dict[str, Interval]:
    """PSA, NSA, kappa and AC1 of two raters' flags on the same items, each with the protocol's
    paired item bootstrap (B, seed): the guard's verifiers and HALLMARK's detectors alike."""
    return {name: bootstrap_ci(agreement_stat(name), x, y, B=B, seed=SEED) for name in names}


def conformal_row(
    unsupported: Sequence[float],
    supported: Sequence[float],
    alpha: float,
    *,
    n_cal: int | None,
    trials: int,
) -> dict[str, Any]:
    """One alpha of a split-conformal table: k, tau, the in-sample catch and flag rate (NaN on
    an empty side), and the held-out ``conformal_trials`` run (seed :data:`SEED`; None when
    ``n_cal`` is None, i.e. too few unsupported points)."""
    tau = conformal_threshold(unsupported, alpha)
    return {
        "k": conformal_k(len(unsupported), alpha),
        "tau": tau,
        "catch": _mean([u <= tau for u in unsupported]),
        "flag_rate": _mean([s <= tau for s in supported]),
        "run": None
        if n_cal is None
        else conformal_trials(unsupported, supported, alpha, n_cal=n_cal, trials=trials, seed=SEED),
    }


def _mean(hits: Sequence[bool]) -> float:
    return sum(hits) / len(hits) if hits else math.nan


def split_scores(records: Sequence[Mapping[str, Any]]) -> tuple[list[float], list[float]]:
    """(unsupported, supported) scores: the conformal rule calibrates on the first only."""
    unsupported = [float(r["metrics"]["score"]) for r in records if not r["metrics"]["label"]]
    supported = [float(r["metrics"]["score"]) for r in records if r["metrics"]["label"]]
    return unsupported, supported


def n_cal_for(n_unsupported: int, wanted: int | None) -> int | None:
    """Calibration size for the held-out splits: as asked (if it leaves a test set), else half."""
    if n_unsupported < 2:
        return None
    if wanted is not None and 1 <= wanted < n_unsupported:
        return wanted
    return max(1, n_unsupported // 2)


def calibration_stats(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """catch_rate / flag_rate (held-out, repeated splits) and tau at the primary alpha."""
    settings = calibration_settings()
    unsupported, supported = split_scores(records)
    n_cal = n_cal_for(len(unsupported), settings["n_cal"])
    if n_cal is None:
        return {name: _nan_stat(len(unsupported)) for name in CALIBRATION_METRICS}
    alpha = settings["alpha"]
    run = conformal_trials(
        unsupported, supported, alpha, n_cal=n_cal, trials=settings["trials"], seed=SEED
    )
    tau = conformal_threshold(unsupported, alpha)
    catch = run["conformal"]["catch"]
    flags = run["conformal"]["flag_rate"]
    out = {
        "catch_rate": Stat(catch["mean"], catch["q05"], catch["q95"], run["n_test_unsupported"]),
        "tau": Stat(tau, tau, tau, len(unsupported)),
    }
    # Too few points for alpha: tau is +inf (flag everything) and a catch of 1.0 says nothing,
    # so the numbers are undefined (a gate on them fails, "undefined on these items"), never a
    # rule that passes; the summary's conformal table says why.
    if too_few(len(unsupported), alpha):
        out["tau"] = _nan_stat(len(unsupported))
    if too_few(n_cal, alpha):  # the held-out splits calibrate on too few: catch says nothing
        out["catch_rate"] = _nan_stat(run["n_test_unsupported"])
        out["flag_rate"] = _nan_stat(len(supported))
        return out
    out["flag_rate"] = (
        Stat(flags["mean"], flags["q05"], flags["q95"], len(supported))
        if flags
        else _nan_stat(len(supported))
    )
    return out


def reattribution_stats(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """recall@1 and recall@5 of the gold passage, Wilson 95% intervals (a miss is never dropped)."""
    ranks = _ranks(records)
    return {
        "recall_at_1": to_stat(recall_at_k(ranks, 1), len(ranks)),
        "recall_at_5": to_stat(recall_at_k(ranks, 5), len(ranks)),
    }


def _ranks(records: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """1-based gold ranks; abstentions and omissions are ``None`` (a miss, never dropped)."""
    out: list[int | None] = []
    for r in records:
        rank = int((r.get("metrics") or {}).get("rank", 0))
        out.append(rank if rank >= 1 else None)
    return out


def unsupported_rate(records: Sequence[Mapping[str, Any]]) -> Stat:
    """Flagged / all citations over answers that cite, with an item (cluster) bootstrap CI:
    citations of one answer are not independent, so whole answers are resampled."""
    rows = sorted(
        (r for r in records if (r.get("metrics") or {}).get("citations", 0) > 0),
        key=lambda r: str(r["item_id"]),
    )
    if not rows:
        return Stat(math.nan, math.nan, math.nan, 0)
    flagged = [float(r["metrics"]["flagged"]) for r in rows]
    cited = [float(r["metrics"]["citations"]) for r in rows]

    def ratio(f: Any, c: Any) -> float:
        return float(f.sum() / c.sum())

    return to_stat(bootstrap_ci(ratio, flagged, cited, B=B, seed=SEED), int(sum(cited)))
