"""Confidence intervals and tests for benchmark scores: every statistic the plugin reports.

A benchmark result without its uncertainty invites over-reading a difference of a few items, so
every reported rate or mean gets an interval. numpy is imported inside the bootstrap only: the
plugin is loaded by every pytest run, and most runs never compute an interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import Any

__all__ = [
    "adjust_p_values",
    "benjamini_hochberg",
    "bootstrap_mean_ci",
    "holm",
    "mcnemar_exact",
    "paired_bootstrap_ci",
    "percentile_interval",
    "ratio_ci",
    "roc_auc",
    "roc_auc_arrays",
    "sign_flip_p",
    "wilson_ci",
]

# Cap on the number of resampled indices held at once, so that B x n never allocates more than
# about 8 MiB of int64 however large the suite is.
_CHUNK_ELEMENTS = 1 << 20


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")


def wilson_ci(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Preferred over the normal (Wald) interval because benchmark rates sit near 0 or 1 (a model
    that never invents a DOI, one that always does) where Wald collapses to zero width or leaves
    [0, 1]; Wilson stays inside [0, 1] and keeps near-nominal coverage for small n. The closed form
    is exact at the ends, so the bound at an observed 0 or 1 is set to exactly 0.0 or 1.0 instead
    of a rounding error away from it. ``n == 0`` has no estimate: (nan, nan).
    """
    _check_level(level)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    z2 = z * z
    p = successes / n
    denominator = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half_width = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denominator
    lower = 0.0 if successes == 0 else max(0.0, center - half_width)
    upper = 1.0 if successes == n else min(1.0, center + half_width)
    return (lower, upper)


def bootstrap_mean_ci(
    values: Sequence[float], *, B: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of per-item scores.

    Item-level resampling makes no distributional assumption about scores such as F1 or BLEU,
    which are bounded, skewed and often piled up at 0. The values are sorted before resampling so
    that the interval depends only on the multiset of scores and the seed: the order in which
    parallel workers finished must not move a reported number. Empty input has no mean:
    (nan, nan); a single value has no spread: (v, v).
    """
    _check_level(level)
    if B < 1:
        raise ValueError(f"B must be at least 1, got {B}")
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    if n == 0:
        return (math.nan, math.nan)
    if n == 1:
        return (ordered[0], ordered[0])

    import numpy as np

    data = np.asarray(ordered, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = np.empty(B, dtype=np.float64)
    # The chunk size depends only on n, so the random stream, and hence the result, is fixed by
    # (multiset, B, seed, level).
    rows = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, B, rows):
        stop = min(B, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[idx].mean(axis=1)
    alpha = 1.0 - level
    lower, upper = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lower), float(upper))


# -- tests of paired differences and their correction for many comparisons ---------------------

CORRECTIONS = ("none", "holm", "bh")
# Up to this many non-zero differences the sign-flip distribution is enumerated exactly
# (2**16 sums); above it, PERMUTATIONS random sign patterns (seed 0) estimate it.
_EXACT_SIGN_FLIPS = 16
PERMUTATIONS = 10_000


def sign_flip_p(diffs: Sequence[float], *, B: int = PERMUTATIONS, seed: int = 0) -> float:
    """Two-sided paired randomization (sign-flip) p-value for "mean difference = 0".

    Under the null each paired difference is as likely to have either sign, so the 2**n sign
    patterns are equally likely and p = P(|sum of flipped diffs| >= |observed sum|). On yes/no
    outcomes (diffs in {-1, 0, 1}) this *is* the exact McNemar test, so shares and per-item means
    are tested the same way. Exact when every non-zero difference has one size (the binomial
    tail) or there are at most 16 of them; otherwise ``B`` random patterns with the usual +1 so
    that an estimated p is never 0. No non-zero difference: p = 1.
    """
    values = sorted(float(d) for d in diffs if d != 0 and not math.isnan(float(d)))
    if not values:
        return 1.0
    n = len(values)
    magnitudes = {abs(v) for v in values}
    if len(magnitudes) == 1:
        k = min(sum(v < 0 for v in values), sum(v > 0 for v in values))
        return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)
    observed = abs(sum(values))
    # Sums equal up to rounding must count as "as extreme": compare with a relative slack.
    slack = 1e-9 * sum(abs(v) for v in values)

    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if n <= _EXACT_SIGN_FLIPS:
        patterns = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        sums = ((2 * patterns - 1) * data).sum(axis=1)
        return float(np.mean(np.abs(sums) >= observed - slack))
    rng = np.random.default_rng(seed)
    extreme = 0
    rows = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, B, rows):
        signs = rng.integers(0, 2, size=(min(rows, B - start), n), dtype=np.int8) * 2 - 1
        extreme += int(np.sum(np.abs(signs @ data) >= observed - slack))
    return (extreme + 1) / (B + 1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error), in the input order.

    The k-th smallest p (k from 0) is multiplied by (m - k), made non-decreasing along the sorted
    order and capped at 1; rejecting where the adjusted p < alpha controls the chance of *any*
    false alarm at alpha, for any dependence between the tests.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg step-up adjusted p-values (false discovery rate), in the input order:
    p * m / rank, made non-increasing from the largest p down, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, float(p_values[i]) * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def adjust_p_values(p_values: Sequence[float], method: str) -> list[float]:
    """``method`` one of CORRECTIONS: none (as given), holm, bh."""
    if method == "none":
        return [float(p) for p in p_values]
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    raise ValueError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")


# -- other intervals and exact tests, one home for every statistic the plugin reports -----------


def ratio_ci(
    pairs: Sequence[tuple[int, int]], *, B: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of sum(numerators) / sum(denominators), resampling items.

    DOIs of one answer are not independent (a model that invents one tends to invent both), so
    the item, not the DOI, is the unit resampled. Pairs are sorted first so the interval does not
    depend on the order records arrived in. No denominator: (nan, nan).
    """
    data = sorted((int(a), int(b)) for a, b in pairs)
    if not data or sum(b for _, b in data) == 0:
        return (math.nan, math.nan)
    import numpy as np

    nums = np.asarray([a for a, _ in data], dtype=np.float64)
    dens = np.asarray([b for _, b in data], dtype=np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(data), size=(B, len(data)))
    top, bottom = nums[idx].sum(axis=1), dens[idx].sum(axis=1)
    ratios = np.divide(top, bottom, out=np.full(B, np.nan), where=bottom > 0)
    ratios = ratios[~np.isnan(ratios)]
    alpha = 1.0 - level
    lower, upper = np.percentile(ratios, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lower), float(upper))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p: P(at least this lopsided) under Binomial(b + c, 1/2).

    ``b`` and ``c`` are the discordant counts (base right / new wrong, and the reverse). No
    discordant pairs means no evidence of any change: p = 1.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got {b}, {c}")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1))
    # Exact integer arithmetic up to the last division: no underflow for large n.
    return min(1.0, 2 * tail / 2**n)


def paired_bootstrap_ci(
    fn: Callable[..., float],
    *arrays: Sequence[Any],
    B: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float, int]:
    """Paired item bootstrap of any statistic ``fn(*arrays)``: (estimate, low, high, invalid).

    Items (rows across all ``arrays``) are resampled together, so paired quantities such as
    (label, score) stay aligned. Deterministic for a given ``seed``; ``fn`` receives numpy
    arrays. Replicates where ``fn`` is not finite are dropped and counted in ``invalid``; with
    none left, the bounds are NaN.
    """
    import numpy as np

    if not arrays:
        raise ValueError("bootstrap_ci needs at least one array")
    if B < 1:
        raise ValueError(f"B must be >= 1, got {B}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0])
    if n == 0 or any(len(a) != n for a in arrs):
        raise ValueError("arrays must be non-empty and of equal length")
    estimate = float(fn(*arrs))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(B, n))
    reps = np.array([float(fn(*(a[row] for a in arrs))) for row in idx])
    low, high, invalid = percentile_interval(reps, level)
    return (estimate, low, high, invalid)


def percentile_interval(replicates: Any, level: float = 0.95) -> tuple[float, float, int]:
    """(low, high, invalid): the percentile interval of bootstrap replicates, those that are not
    finite dropped and counted; NaN bounds when none is left. Every bootstrap of the plugin ends
    here, so all intervals are read off the same way."""
    import numpy as np

    reps = np.asarray(replicates, dtype=float)
    ok = np.isfinite(reps)
    if not ok.any():
        return (math.nan, math.nan, len(reps))
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(reps[ok], [tail, 100.0 - tail])
    return (float(low), float(high), int((~ok).sum()))


def roc_auc(labels: Sequence[object], scores: Sequence[float]) -> float:
    """ROC-AUC as the Mann-Whitney probability ``P(s_pos > s_neg) + 0.5 P(s_pos == s_neg)``.

    Computed from average ranks in ``O(n log n)``; NaN when one class is absent (useful inside
    a bootstrap, which drops such replicates). The one ROC-AUC of the plugin: the guard's
    verifiers and HALLMARK's detectors are ranked by it.
    """
    import numpy as np

    y = np.asarray([bool(v) for v in labels])
    values = [float(v) for v in scores]
    if any(math.isnan(v) for v in values):
        raise ValueError("scores contain NaN")
    s = np.asarray(values)
    if len(y) != len(s):
        raise ValueError(f"labels and scores differ in length: {len(y)} != {len(s)}")
    return roc_auc_arrays(y, s)


def roc_auc_arrays(y: Any, s: Any) -> float:
    """:func:`roc_auc` of a boolean ``y`` and a float ``s`` numpy array, without the checks and
    list conversions (a bootstrap calls it once per replicate)."""
    import numpy as np

    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    avg_rank = np.cumsum(counts) - (counts - 1) / 2.0  # mean of ranks (upper - count + 1) .. upper
    u_stat = float(avg_rank[inverse.reshape(-1)][y].sum()) - n_pos * (n_pos + 1) / 2.0
    return u_stat / (n_pos * n_neg)
