"""Statistics for the citation-guard protocol (seed paper 002): conformal flagging, agreement,
separation and bootstrap intervals.

All functions are pure and deterministic (fixed seeds). numpy is imported inside the functions
that need it so that ``import pytest_citebench.guard`` stays cheap for pytest collection.

Conventions used throughout:

* A *score* is a verifier's ``P(supported)`` in ``[0, 1]``; higher means "more supported".
* A citation is *flagged* when ``score <= tau`` (ties flagged): flagging is the conservative
  action, so a tie must not let an unsupported citation through.
* *Catch* is the share of truly unsupported citations that are flagged; *flag rate* on supported
  citations is the review budget spent on false alarms.
* Binary labels: truthy = supported / positive, falsy = unsupported / negative.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

from pytest_citebench.metrics.stats import roc_auc

T = TypeVar("T")
U = TypeVar("U")

__all__ = [
    "Interval",
    "bootstrap_ci",
    "cohen_kappa",
    "conformal_k",
    "conformal_threshold",
    "conformal_trials",
    "flag",
    "gwet_ac1",
    "matched_catch_frontier",
    "min_calibration_n",
    "naive_threshold",
    "psa_nsa",
    "recall_at_k",
    "recall_specificity",
    "roc_auc",
    "too_few",
    "wilson_interval",
]


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval.

    Iterable as ``(estimate, low, high)`` so callers can unpack it like a tuple.
    ``n_invalid`` counts bootstrap replicates whose statistic was undefined (NaN, e.g. a resample
    with a single class for ROC-AUC); they are dropped, and a large count is a warning sign.
    """

    estimate: float
    low: float
    high: float
    level: float = 0.95
    method: str = ""
    n_invalid: int = 0

    def __iter__(self) -> Iterator[float]:
        return iter((self.estimate, self.low, self.high))


def _exact(x: float) -> Fraction:
    """The decimal the caller typed (``0.1`` -> 1/10), so ceil() is not fooled by float error."""
    return Fraction(repr(float(x)))


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def _finite_floats(values: Sequence[float] | Any, what: str) -> list[float]:
    out = [float(v) for v in values]
    if any(math.isnan(v) for v in out):
        raise ValueError(f"{what} contain NaN")
    return out


# --------------------------------------------------------------------------- conformal flagging


def conformal_k(n: int, alpha: float) -> int:
    """Rank of the split-conformal threshold: ``k = ceil((n + 1)(1 - alpha))``.

    Why this rank: if a new unsupported score is exchangeable with the ``n`` calibration ones,
    its rank among the ``n + 1`` is uniform, so ``P(score <= k-th smallest) >= k / (n + 1)
    >= 1 - alpha``. The ``+1`` is the finite-sample correction the naive quantile lacks.

    Returns ``n + 1`` when ``k > n`` (too few calibration points for this ``alpha``; the only
    valid threshold is ``tau = +inf``, i.e. flag everything). ``alpha`` is read as the decimal it
    prints as, so ``conformal_k(9, 0.1) == 9`` despite ``10 * 0.9`` being inexact in floats.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    _check_alpha(alpha)
    k = math.ceil((n + 1) * (1 - _exact(alpha)))
    return min(k, n + 1)


def min_calibration_n(alpha: float) -> int:
    """The fewest calibration negatives for which ``tau(alpha)`` is finite: ``conformal_k(n,
    alpha) <= n`` exactly when ``n >= (1 - alpha) / alpha`` (9 for alpha 0.1, 19 for 0.05)."""
    _check_alpha(alpha)
    a = _exact(alpha)
    return math.ceil((1 - a) / a)


def too_few(n: int, alpha: float) -> str | None:
    """What to print instead of a rule when ``n`` calibration negatives are too few for
    ``alpha`` (``tau`` is +inf: only flagging everything keeps the promise, so "flag if score
    <= inf" and its catch of 1.0 say nothing); None when ``tau`` is finite."""
    need = min_calibration_n(alpha)
    if n >= need:
        return None
    return f"too few items for alpha={alpha:g}: need n >= {need}, have {n}"


def conformal_threshold(unsupported_scores: Sequence[float], alpha: float) -> float:
    """``tau(alpha)``: the ``conformal_k``-th smallest calibration score of unsupported items.

    Flagging ``score <= tau`` then catches at least ``1 - alpha`` of unsupported citations,
    marginally over the calibration draw, *if* deployment negatives are exchangeable with the
    calibration ones (the paper's caveat: easy distractors make tau optimistic for real
    mis-citations). Returns ``math.inf`` when ``k > n``.
    """
    scores = sorted(_finite_floats(unsupported_scores, "unsupported scores"))
    k = conformal_k(len(scores), alpha)
    return math.inf if k > len(scores) else scores[k - 1]


def naive_threshold(scores: Sequence[float], alpha: float, *, method: str = "linear") -> float:
    """Empirical ``1 - alpha`` quantile of the calibration scores, with no finite-sample fix.

    Kept as the baseline the paper compares against: it under-covers at small calibration sizes
    (about 0.87 average catch at n=25, alpha=0.1 with numpy's default linear interpolation).
    ``method`` is passed to ``numpy.quantile``.
    """
    import numpy as np

    _check_alpha(alpha)
    vals = _finite_floats(scores, "scores")
    if not vals:
        raise ValueError("naive_threshold needs at least one score")
    quantile: Any = np.quantile  # numpy types `method` as a Literal; ours is a checked str
    return float(quantile(np.asarray(vals), 1.0 - alpha, method=method))


def flag(scores: Sequence[float], tau: float) -> list[bool]:
    """``score <= tau`` per item: ties are flagged because flagging is the safe side."""
    return [float(s) <= tau for s in scores]


def _summary(values: Any) -> dict[str, float]:
    import numpy as np

    v = np.asarray(values, dtype=float)
    return {
        "mean": float(v.mean()),
        "q05": float(np.quantile(v, 0.05)),
        "q50": float(np.quantile(v, 0.50)),
        "q95": float(np.quantile(v, 0.95)),
    }


def conformal_trials(
    unsupported: Sequence[float],
    supported: Sequence[float],
    alpha: float,
    *,
    n_cal: int,
    trials: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Repeated random calibration/test splits of the unsupported scores (the paper's Table S4).

    Each trial calibrates on ``n_cal`` random unsupported scores and measures, on the held-out
    unsupported scores, the *achieved catch*, and on all supported scores (never used for
    calibration) the *flag rate*, for both the conformal and the naive rule. The conformal
    guarantee is on the *mean* catch over trials (marginal coverage); single splits may fall
    below target, which ``share_below_target`` makes visible.

    Returns ``{"alpha", "target", "n_cal", "k", "trials", "seed", "n_test_unsupported",
    "n_supported", "conformal": {...}, "naive": {...}}`` where each rule maps to
    ``catch`` / ``flag_rate`` / ``tau`` summaries (mean, q05, q50, q95) and ``share_below_target``.
    """
    import numpy as np

    _check_alpha(alpha)
    u = np.asarray(_finite_floats(unsupported, "unsupported scores"))
    s = np.asarray(_finite_floats(supported, "supported scores"))
    if not 1 <= n_cal < len(u):
        raise ValueError(f"need 1 <= n_cal < {len(u)} (number of unsupported scores), got {n_cal}")
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    rng = np.random.default_rng(seed)
    k = conformal_k(n_cal, alpha)
    rows: dict[str, dict[str, list[float]]] = {
        rule: {"catch": [], "flag_rate": [], "tau": []} for rule in ("conformal", "naive")
    }
    for _ in range(trials):
        perm = rng.permutation(len(u))
        cal, test = u[perm[:n_cal]], u[perm[n_cal:]]
        cal_sorted = np.sort(cal)
        taus = {
            "conformal": math.inf if k > n_cal else float(cal_sorted[k - 1]),
            "naive": float(np.quantile(cal, 1.0 - alpha)),
        }
        for rule, tau in taus.items():
            rows[rule]["catch"].append(float(np.mean(test <= tau)))
            rows[rule]["flag_rate"].append(float(np.mean(s <= tau)) if len(s) else math.nan)
            rows[rule]["tau"].append(tau)
    target = float(1 - _exact(alpha))
    out: dict[str, Any] = {
        "alpha": alpha,
        "target": target,
        "n_cal": n_cal,
        "k": k,
        "trials": trials,
        "seed": seed,
        "n_test_unsupported": len(u) - n_cal,
        "n_supported": len(s),
    }
    for rule, r in rows.items():
        out[rule] = {
            "catch": _summary(r["catch"]),
            "flag_rate": _summary(r["flag_rate"]) if len(s) else {},
            "tau": _summary(r["tau"]) if all(math.isfinite(t) for t in r["tau"]) else {},
            "share_below_target": float(np.mean(np.asarray(r["catch"]) < target)),
        }
    return out


# --------------------------------------------------------------------------- agreement


def _pairs(a: Sequence[T], b: Sequence[U]) -> list[tuple[T, U]]:
    if len(a) != len(b):
        raise ValueError(f"rating sequences differ in length: {len(a)} != {len(b)}")
    if not a:
        raise ValueError("need at least one rated item")
    return list(zip(a, b, strict=True))


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa ``(p_o - p_e) / (1 - p_e)`` for two raters over any label set.

    Returns NaN when ``p_e == 1`` (both raters used one and the same label throughout): kappa is
    0/0 there, which is why the paper also reports Gwet's AC1 and PSA/NSA.
    """
    pairs = _pairs(a, b)
    n = len(pairs)
    po = sum(x == y for x, y in pairs) / n
    ca, cb = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    pe = sum(ca[c] * cb[c] for c in ca) / (n * n)
    if math.isclose(pe, 1.0):
        return math.nan
    return (po - pe) / (1.0 - pe)


def gwet_ac1(
    a: Sequence[Hashable], b: Sequence[Hashable], *, categories: Sequence[Hashable] | None = None
) -> float:
    """Gwet's AC1 for two raters: ``(p_o - p_e) / (1 - p_e)`` with
    ``p_e = sum_q pi_q (1 - pi_q) / (Q - 1)``, ``pi_q`` the mean of the two raters' marginals.

    Why report it: kappa collapses under skewed prevalence (most citations are supported), AC1
    does not. ``Q`` is ``len(categories)`` if given, else the number of observed labels but at
    least 2 (binary), so unanimous ratings give AC1 = 1 rather than 0/0.
    """
    pairs = _pairs(a, b)
    n = len(pairs)
    cats = set(categories) if categories is not None else {x for p in pairs for x in p}
    observed = {x for p in pairs for x in p}
    if not observed <= cats:
        raise ValueError(f"labels {observed - cats} not in categories")
    q = max(len(cats), 2)
    po = sum(x == y for x, y in pairs) / n
    ca, cb = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    pe = sum(((ca[c] + cb[c]) / (2 * n)) * (1 - (ca[c] + cb[c]) / (2 * n)) for c in cats) / (q - 1)
    return (po - pe) / (1.0 - pe)


def psa_nsa(a: Sequence[object], b: Sequence[object]) -> tuple[float, float]:
    """Positive- and negative-specific agreement for binary ratings (truthy = supported).

    With ``a`` = both positive, ``b``/``c`` = discordant, ``d`` = both negative:
    ``PSA = 2a / (2a + b + c)``, ``NSA = 2d / (2d + b + c)``. NSA is the diagnostic the paper
    leans on: verifiers agree on what is supported (PSA 0.90-0.96) but not on what to flag
    (NSA 0.27-0.30). NaN when the denominator is zero.
    """
    pairs = _pairs([bool(x) for x in a], [bool(y) for y in b])
    both_pos = sum(x and y for x, y in pairs)
    both_neg = sum((not x) and (not y) for x, y in pairs)
    disc = len(pairs) - both_pos - both_neg
    psa = 2 * both_pos / (2 * both_pos + disc) if (2 * both_pos + disc) else math.nan
    nsa = 2 * both_neg / (2 * both_neg + disc) if (2 * both_neg + disc) else math.nan
    return psa, nsa


# --------------------------------------------------------------------------- separation


def recall_specificity(
    labels: Sequence[object], predicted: Sequence[object]
) -> tuple[float, float]:
    """``(recall on the positive class, specificity on the negative class)``.

    For a verifier, positive = supported; recall on supported is the paper's safety axis (do not
    drop genuine citations), specificity is the share of unsupported ones it rejects. NaN for an
    absent class.
    """
    pairs = _pairs([bool(x) for x in labels], [bool(p) for p in predicted])
    pos = [p for y, p in pairs if y]
    neg = [p for y, p in pairs if not y]
    recall = sum(pos) / len(pos) if pos else math.nan
    spec = sum(not p for p in neg) / len(neg) if neg else math.nan
    return recall, spec


def matched_catch_frontier(
    labels: Sequence[object], scores: Sequence[float], catch_rates: Sequence[float]
) -> list[tuple[float, float, float]]:
    """For each target catch rate, the smallest threshold reaching it and its review cost.

    Why: comparing verifiers at one fixed threshold mixes separation with calibration of the
    score scale; comparing the flag rate on supported items at *matched catch* isolates
    separation (the paper's verifier frontier). For target ``c`` with ``m`` unsupported items,
    ``tau`` is the ``ceil(c*m)``-th smallest unsupported score (``-inf`` when that is 0), and the
    row is ``(c, tau, share of supported items with score <= tau)``.
    """
    ys = [bool(v) for v in labels]
    ss = _finite_floats(scores, "scores")
    if len(ys) != len(ss):
        raise ValueError(f"labels and scores differ in length: {len(ys)} != {len(ss)}")
    neg = sorted(s for y, s in zip(ys, ss, strict=True) if not y)
    pos = [s for y, s in zip(ys, ss, strict=True) if y]
    if not neg:
        raise ValueError("matched_catch_frontier needs at least one unsupported item")
    out: list[tuple[float, float, float]] = []
    for c in catch_rates:
        if not 0.0 <= c <= 1.0:
            raise ValueError(f"catch rate must be in [0, 1], got {c}")
        k = math.ceil(_exact(c) * len(neg))
        tau = -math.inf if k == 0 else neg[k - 1]
        fr = sum(s <= tau for s in pos) / len(pos) if pos else math.nan
        out.append((float(c), tau, fr))
    return out


# --------------------------------------------------------------------------- intervals


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion, as an :class:`Interval`.

    Delegates to :func:`pytest_citebench.metrics.stats.wilson_ci` so the whole plugin reports one
    Wilson implementation (imported here, not at module top, to keep the guard importable on its
    own). ``n == 0`` has no estimate: all three fields are NaN.
    """
    from pytest_citebench.metrics.stats import wilson_ci

    low, high = wilson_ci(successes, n, level)
    estimate = successes / n if n else math.nan
    return Interval(estimate, low, high, level, "wilson")


def recall_at_k(ranks: Sequence[int | None], k: int, level: float = 0.95) -> Interval:
    """Share of items whose gold passage is ranked within the top ``k`` (1-based ranks; ``None``
    = not retrieved), with a Wilson interval, as in the paper's re-attribution table."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    hits = sum(1 for r in ranks if r is not None and 1 <= r <= k)
    return wilson_interval(hits, len(ranks), level)


def bootstrap_ci(
    fn: Callable[..., float],
    *arrays: Sequence[Any],
    B: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Paired item bootstrap of any statistic ``fn(*arrays)``, as an :class:`Interval`.

    The resampling lives in :func:`pytest_citebench.metrics.stats.paired_bootstrap_ci` (one
    bootstrap implementation for the plugin); replicates where ``fn`` is not finite are dropped
    and counted in ``n_invalid``.
    """
    from pytest_citebench.metrics.stats import paired_bootstrap_ci

    estimate, low, high, invalid = paired_bootstrap_ci(fn, *arrays, B=B, seed=seed, level=level)
    return Interval(estimate, low, high, level, "percentile bootstrap", invalid)
