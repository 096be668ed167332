"""Confidence intervals for benchmark scores.

A benchmark result without its uncertainty invites over-reading a difference of a few items, so
every reported rate or mean gets an interval. numpy is imported inside the bootstrap only: the
plugin is loaded by every pytest run, and most runs never compute an interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

__all__ = ["bootstrap_mean_ci", "wilson_ci"]

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
