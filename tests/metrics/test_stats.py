"""Tests of the interval helpers: closed-form golden values and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.metrics import bootstrap_mean_ci, wilson_ci

fast = settings(deadline=None, max_examples=60)

_finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


# --- Wilson ----------------------------------------------------------------------------------


def test_wilson_golden_8_of_10() -> None:
    # z = Φ⁻¹(0.975) = 1.959963984540054, z² = 3.841458820694124, n = 10, p̂ = 0.8
    # denominator = 1 + z²/n = 1.3841458820694124
    # center      = (p̂ + z²/(2n)) / denominator = (0.8 + 0.1920729410347062) / 1.38414588
    #             = 0.9920729410347062 / 1.3841458820694124 = 0.71674...
    # half width  = z * sqrt(p̂(1-p̂)/n + z²/(4n²)) / denominator
    #             = 1.95996398 * sqrt(0.016 + 0.0096036470517) / 1.38414588
    #             = 1.95996398 * 0.16001139657 / 1.38414588 = 0.22658...
    # interval    = (0.49016247..., 0.94331784...)
    lower, upper = wilson_ci(8, 10)
    assert lower == pytest.approx(0.4901624715, abs=1e-9)
    assert upper == pytest.approx(0.9433178485, abs=1e-9)


def test_wilson_ends_are_exact() -> None:
    # k = 0: lower is exactly 0 and upper = z²/(n + z²) = 3.841458820694124 / 13.8414588 = 0.27753
    assert wilson_ci(0, 10) == (0.0, pytest.approx(3.841458820694124 / 13.841458820694124))
    assert wilson_ci(10, 10) == (pytest.approx(1 - 3.841458820694124 / 13.841458820694124), 1.0)


def test_wilson_no_trials_is_nan() -> None:
    lower, upper = wilson_ci(0, 0)
    assert math.isnan(lower) and math.isnan(upper)


@pytest.mark.parametrize(
    ("successes", "n", "level"), [(-1, 10, 0.95), (11, 10, 0.95), (1, -1, 0.95), (5, 10, 1.0)]
)
def test_wilson_rejects_impossible_input(successes: int, n: int, level: float) -> None:
    with pytest.raises(ValueError):
        wilson_ci(successes, n, level)


@st.composite
def _counts(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(min_value=1, max_value=10_000))
    return draw(st.integers(min_value=0, max_value=n)), n


@fast
@given(_counts(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_contains_estimate_within_unit_interval(
    counts: tuple[int, int], level: float
) -> None:
    successes, n = counts
    lower, upper = wilson_ci(successes, n, level)
    assert 0.0 <= lower <= successes / n <= upper <= 1.0


@fast
@given(_counts(), st.integers(min_value=2, max_value=50))
def test_wilson_narrows_with_more_trials_at_the_same_rate(
    counts: tuple[int, int], factor: int
) -> None:
    successes, n = counts
    lower, upper = wilson_ci(successes, n)
    big_lower, big_upper = wilson_ci(successes * factor, n * factor)
    assert big_upper - big_lower < upper - lower


@fast
@given(_counts())
def test_wilson_widens_with_level(counts: tuple[int, int]) -> None:
    lo90, hi90 = wilson_ci(*counts, level=0.90)
    lo99, hi99 = wilson_ci(*counts, level=0.99)
    assert lo99 <= lo90 and hi90 <= hi99
    assert hi99 - lo99 > hi90 - lo90


# --- bootstrap -------------------------------------------------------------------------------


def test_bootstrap_degenerate_inputs() -> None:
    lower, upper = bootstrap_mean_ci([])
    assert math.isnan(lower) and math.isnan(upper)
    assert bootstrap_mean_ci([0.3]) == (0.3, 0.3)


def test_bootstrap_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError):
        bootstrap_mean_ci([1.0, 2.0], B=0)
    with pytest.raises(ValueError):
        bootstrap_mean_ci([1.0, 2.0], level=0.0)


def test_bootstrap_agrees_with_normal_theory_on_a_large_sample() -> None:
    # 30 successes in 100 items: normal-theory 95% CI of the mean is
    # 0.3 ± 1.96 * sqrt(0.3 * 0.7 / 100) = 0.3 ± 0.0898 = (0.210, 0.390).
    # 2000 percentile-bootstrap replicates land within ~0.01 of that.
    lower, upper = bootstrap_mean_ci([1.0] * 30 + [0.0] * 70)
    assert lower == pytest.approx(0.210, abs=0.015)
    assert upper == pytest.approx(0.390, abs=0.015)


def test_bootstrap_seed_matters_and_repeats() -> None:
    values = [0.1, 0.5, 0.2, 0.9, 0.4, 0.7, 0.3]
    assert bootstrap_mean_ci(values, seed=1) == bootstrap_mean_ci(values, seed=1)
    assert bootstrap_mean_ci(values, seed=1) != bootstrap_mean_ci(values, seed=2)


def test_bootstrap_large_sample_is_order_invariant() -> None:
    # n = 3000 exceeds one resampling chunk, exercising the chunked path.
    values = [((i * 7919) % 1000) / 1000 for i in range(3000)]
    forward = bootstrap_mean_ci(values, B=300)
    assert forward == bootstrap_mean_ci(values[::-1], B=300)
    assert forward[0] <= sum(values) / len(values) <= forward[1]


@fast
@given(st.lists(_finite, min_size=2, max_size=40), st.data())
def test_bootstrap_is_order_invariant(values: list[float], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(values))
    assert bootstrap_mean_ci(values, B=200, seed=7) == bootstrap_mean_ci(shuffled, B=200, seed=7)


@fast
@given(st.lists(_finite, min_size=2, max_size=40))
def test_bootstrap_interval_brackets_the_mean_within_the_data_range(values: list[float]) -> None:
    lower, upper = bootstrap_mean_ci(values, B=200)
    sample_mean = math.fsum(values) / len(values)
    tol = 1e-9 * (1.0 + max(abs(v) for v in values))
    assert min(values) - tol <= lower <= upper <= max(values) + tol
    assert lower - tol <= sample_mean <= upper + tol


@fast
@given(_finite, st.integers(min_value=2, max_value=30))
def test_bootstrap_of_constant_values_has_no_width(value: float, n: int) -> None:
    lower, upper = bootstrap_mean_ci([value] * n, B=100)
    assert lower == pytest.approx(value, rel=1e-12, abs=1e-12)
    assert upper == pytest.approx(value, rel=1e-12, abs=1e-12)
