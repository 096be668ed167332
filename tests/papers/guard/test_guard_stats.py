"""Statistics of the citation-guard protocol: golden values (arithmetic shown), properties, and the
paper's conformal-vs-naive claim on the real QASA calibration scores."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.papers.guard.stats import (
    Interval,
    bootstrap_ci,
    cohen_kappa,
    conformal_k,
    conformal_threshold,
    conformal_trials,
    flag,
    gwet_ac1,
    matched_catch_frontier,
    naive_threshold,
    psa_nsa,
    recall_at_k,
    recall_specificity,
    roc_auc,
    wilson_interval,
)
from tests.conftest import REPO

QASA = REPO / "fixtures" / "guard" / "qasa_calibration_scores.json"


@pytest.fixture(scope="module")
def qasa() -> dict[str, list[float]]:
    data = json.loads(QASA.read_text())
    return {
        "unsupported": data["unsupported_p_attr_scores"],
        "supported": data["supported_p_attr_scores"],
    }


def table(a: int, b: int, c: int, d: int) -> tuple[list[int], list[int]]:
    """Two raters from a 2x2 table: a = both 1, b = r1 1 / r2 0, c = r1 0 / r2 1, d = both 0."""
    r1 = [1] * a + [1] * b + [0] * c + [0] * d
    r2 = [1] * a + [0] * b + [1] * c + [0] * d
    return r1, r2


# --------------------------------------------------------------------------- conformal: golden


@pytest.mark.parametrize(
    ("n", "alpha", "k"),
    [
        (25, 0.1, 24),  # (25+1)*0.9 = 23.4 -> ceil 24
        (9, 0.1, 9),  # (9+1)*0.9 = 9.0 exactly -> 9 (float 10*0.9 must not round up to 10)
        (99, 0.3, 70),  # 100*0.7 = 70.0 exactly -> 70
        (500, 0.02, 491),  # 501*0.98 = 490.98 -> 491
        (500, 0.1, 451),  # 501*0.9 = 450.9 -> 451
        (8, 0.1, 9),  # 9*0.9 = 8.1 -> 9 > n = 8: flag everything (n + 1)
        (0, 0.5, 1),  # no calibration data: n + 1 = 1, tau = +inf
    ],
)
def test_conformal_k_golden(n: int, alpha: float, k: int) -> None:
    assert conformal_k(n, alpha) == k


def test_conformal_threshold_golden() -> None:
    scores = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6]  # n = 9, sorted 0.1 .. 0.9
    # alpha = 0.2: k = ceil(10 * 0.8) = 8 -> 8th smallest = 0.8
    assert conformal_threshold(scores, 0.2) == 0.8
    # alpha = 0.05: k = ceil(10 * 0.95) = ceil(9.5) = 10 > 9 -> +inf (flag everything)
    assert conformal_threshold(scores, 0.05) == math.inf


def test_qasa_tau_matches_upstream_tau_curve(qasa: dict[str, list[float]]) -> None:
    """tau(alpha) and calibration catch on n = 500 reproduce the upstream file's tau_curve
    (GooTec/citation-guard reproduce/data/qasa_calibration_scores.json, key dropped in our copy)."""
    upstream = {
        0.02: (0.6290456904940799, 0.982),
        0.10: (0.43181831437397894, 0.902),
        0.20: (0.3110655759076547, 0.802),
        0.30: (0.2454303201766196, 0.702),
        0.42: (0.1897366245021956, 0.584),
    }
    u = qasa["unsupported"]
    for alpha, (tau, cal_catch) in upstream.items():
        got = conformal_threshold(u, alpha)
        assert got == tau
        assert sum(flag(u, got)) / len(u) == pytest.approx(cal_catch)


def test_naive_threshold_golden() -> None:
    # 11 points 0..10; numpy linear quantile at 0.9: position 0.9 * (11 - 1) = 9 -> value 9.0
    assert naive_threshold(list(range(11)), 0.1) == 9.0
    # position 0.75 * 10 = 7.5 -> 7 + 0.5 * (8 - 7) = 7.5
    assert naive_threshold(list(range(11)), 0.25) == 7.5


def test_flag_ties_are_flagged() -> None:
    assert flag([0.2, 0.3, 0.4], 0.3) == [True, True, False]
    assert flag([0.99], math.inf) == [True]


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5])
def test_conformal_k_refuses_an_alpha_outside_zero_one(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        conformal_k(10, alpha)


# --------------------------------------------------------------------------- conformal: properties


@given(st.integers(0, 5000), st.floats(0.001, 0.999))
def test_conformal_k_is_the_smallest_valid_rank(n: int, alpha: float) -> None:
    k = conformal_k(n, alpha)
    assert 1 <= k <= n + 1
    # validity: k / (n + 1) >= 1 - alpha; minimality: (k - 1) / (n + 1) < 1 - alpha
    assert k >= (n + 1) * (1 - alpha) - 1e-9
    assert k - 1 < (n + 1) * (1 - alpha) + 1e-9


@given(st.integers(1, 500), st.floats(0.01, 0.5), st.floats(0.01, 0.5))
def test_conformal_k_monotone_in_alpha(n: int, a1: float, a2: float) -> None:
    lo, hi = sorted((a1, a2))
    assert conformal_k(n, hi) <= conformal_k(n, lo)


@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=200),
    st.floats(0.01, 0.99),
)
def test_conformal_threshold_covers_calibration(scores: list[float], alpha: float) -> None:
    tau = conformal_threshold(scores, alpha)
    k = conformal_k(len(scores), alpha)
    if k > len(scores):
        assert tau == math.inf
    else:
        assert tau in scores
        assert sum(flag(scores, tau)) >= k  # at least k calibration points at or below tau


# --------------------------------------------------------------------------- the paper's claim


def test_conformal_holds_where_naive_undercovers_at_n25(qasa: dict[str, list[float]]) -> None:
    """Paper (Table S4): at n_cal = 25, alpha = 0.1, conformal holds ~0.92 while the naive
    quantile under-covers (~0.85); here 200 random splits of the 500 QASA distractor scores."""
    r = conformal_trials(qasa["unsupported"], qasa["supported"], 0.1, n_cal=25, trials=200, seed=0)
    assert r["k"] == 24
    conf, naive = r["conformal"]["catch"]["mean"], r["naive"]["catch"]["mean"]
    # Expected k/(n+1) = 24/26 = 0.923 for the conformal rule; slack 0.02 for 200 trials.
    assert conf >= 0.9 - 0.02
    assert naive < 0.9 < conf
    assert conf - naive > 0.02
    # The price of validity is review budget: a higher tau flags more supported citations.
    assert r["conformal"]["flag_rate"]["mean"] > r["naive"]["flag_rate"]["mean"]


def test_gap_closes_at_n200(qasa: dict[str, list[float]]) -> None:
    r = conformal_trials(qasa["unsupported"], qasa["supported"], 0.1, n_cal=200, trials=200, seed=0)
    assert abs(r["conformal"]["catch"]["mean"] - r["naive"]["catch"]["mean"]) < 0.02
    assert r["conformal"]["catch"]["mean"] >= 0.9 - 0.02


def test_conformal_trials_deterministic_and_validated(qasa: dict[str, list[float]]) -> None:
    args = (qasa["unsupported"][:100], qasa["supported"][:100], 0.2)
    assert conformal_trials(*args, n_cal=20, trials=10, seed=3) == conformal_trials(
        *args, n_cal=20, trials=10, seed=3
    )
    with pytest.raises(ValueError, match="n_cal"):
        conformal_trials(*args, n_cal=100, trials=10)


# --------------------------------------------------------------------------- agreement: golden


def test_kappa_ac1_psa_nsa_golden() -> None:
    r1, r2 = table(a=20, b=5, c=10, d=15)  # n = 50
    # p_o = (20 + 15) / 50 = 0.7
    # rater 1 says 1 in (20 + 5) / 50 = 0.5, rater 2 in (20 + 10) / 50 = 0.6
    # kappa: p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert cohen_kappa(r1, r2) == pytest.approx(0.4)
    # AC1: pi_1 = (0.5 + 0.6) / 2 = 0.55, p_e = 2 * 0.55 * 0.45 / (Q - 1 = 1) = 0.495
    #      -> (0.7 - 0.495) / (1 - 0.495) = 0.205 / 0.505 = 0.40594...
    assert gwet_ac1(r1, r2) == pytest.approx(0.205 / 0.505)
    # PSA = 2*20 / (40 + 5 + 10) = 40/55 = 0.7273; NSA = 2*15 / (30 + 15) = 30/45 = 0.6667
    psa, nsa = psa_nsa(r1, r2)
    assert psa == pytest.approx(40 / 55)
    assert nsa == pytest.approx(30 / 45)


def test_kappa_paradox_ac1_and_nsa_expose_it() -> None:
    """High raw agreement, skewed prevalence: kappa looks poor, AC1 high, NSA shows the flags
    disagree; the paper's pattern (PSA ~0.9, NSA ~0.3)."""
    r1, r2 = table(a=90, b=4, c=4, d=2)  # n = 100, p_o = 0.92
    # kappa: marginals 0.94/0.94 -> p_e = 0.94^2 + 0.06^2 = 0.8872 -> (0.92-0.8872)/0.1128 = 0.2908
    assert cohen_kappa(r1, r2) == pytest.approx(0.0328 / 0.1128)
    # AC1: pi = 0.94 -> p_e = 2 * 0.94 * 0.06 = 0.1128 -> (0.92 - 0.1128) / 0.8872 = 0.9098
    assert gwet_ac1(r1, r2) == pytest.approx(0.8072 / 0.8872)
    # PSA = 180 / 188 = 0.957; NSA = 4 / 12 = 0.333
    assert psa_nsa(r1, r2) == pytest.approx((180 / 188, 4 / 12))


def test_agreement_degenerate_cases() -> None:
    ones = [1, 1, 1]
    assert math.isnan(cohen_kappa(ones, ones))  # p_e = 1: 0/0
    assert gwet_ac1(ones, ones) == 1.0
    assert cohen_kappa([1, 0], [0, 1]) == -1.0  # p_o = 0, p_e = 0.5 -> -0.5 / 0.5
    psa, nsa = psa_nsa(ones, ones)
    assert psa == 1.0 and math.isnan(nsa)
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([1], [1, 0])


labels_pair = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


@given(labels_pair)
def test_agreement_properties(pair: tuple[list[int], list[int]]) -> None:
    a, b = pair
    k = cohen_kappa(a, b)
    if not math.isnan(k):
        assert -1.0 - 1e-12 <= k <= 1.0 + 1e-12
        assert k == pytest.approx(cohen_kappa(b, a))
    ac1 = gwet_ac1(a, b)
    assert -1.0 - 1e-12 <= ac1 <= 1.0 + 1e-12
    assert ac1 == pytest.approx(gwet_ac1(b, a))
    assert gwet_ac1(a, a) == pytest.approx(1.0)
    psa, nsa = psa_nsa(a, b)
    for v in (psa, nsa):
        assert math.isnan(v) or 0.0 <= v <= 1.0
    # flipping both raters' labels swaps the positive and negative agreement
    flipped = psa_nsa([1 - x for x in a], [1 - x for x in b])
    assert flipped == pytest.approx((nsa, psa), nan_ok=True)


@settings(deadline=None)  # first call imports sklearn
@given(labels_pair)
def test_kappa_matches_sklearn(pair: tuple[list[int], list[int]]) -> None:
    skm = pytest.importorskip("sklearn.metrics")
    a, b = pair
    k = cohen_kappa(a, b)
    if not math.isnan(k):
        assert k == pytest.approx(skm.cohen_kappa_score(a, b))


# --------------------------------------------------------------------------- separation


def test_roc_auc_golden() -> None:
    # pos {0.9, 0.4} vs neg {0.4, 0.1}: pairs 1 + 1 + 0.5 (tie) + 1 = 3.5 of 4 = 0.875
    assert roc_auc([1, 1, 0, 0], [0.9, 0.4, 0.4, 0.1]) == 0.875
    assert roc_auc([1, 0], [0.2, 0.8]) == 0.0
    assert math.isnan(roc_auc([1, 1], [0.2, 0.8]))


scored = st.integers(2, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.integers(0, 6), min_size=n, max_size=n),  # small range: many ties
    )
)


@given(scored)
def test_roc_auc_equals_pairwise_mann_whitney(data: tuple[list[bool], list[int]]) -> None:
    y, s = data
    pos = [v for t, v in zip(y, s, strict=True) if t]
    neg = [v for t, v in zip(y, s, strict=True) if not t]
    auc = roc_auc(y, [float(v) for v in s])
    if not pos or not neg:
        assert math.isnan(auc)
        return
    brute = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg) / (len(pos) * len(neg))
    assert auc == pytest.approx(brute)
    assert roc_auc(y, [-float(v) for v in s]) == pytest.approx(1.0 - auc)
    assert roc_auc(y, [3.0 * v + 7.0 for v in s]) == pytest.approx(auc)  # rank-invariant


@settings(deadline=None)
@given(scored)
def test_roc_auc_matches_sklearn(data: tuple[list[bool], list[int]]) -> None:
    skm = pytest.importorskip("sklearn.metrics")
    y, s = data
    if 0 < sum(y) < len(y):
        assert roc_auc(y, [float(v) for v in s]) == pytest.approx(skm.roc_auc_score(y, s))


def test_recall_specificity_golden() -> None:
    # positives: predicted T, T, F -> recall 2/3; negatives: predicted F, T -> specificity 1/2
    assert recall_specificity([1, 1, 1, 0, 0], [1, 1, 0, 0, 1]) == pytest.approx((2 / 3, 0.5))
    rec, spec = recall_specificity([1, 1], [1, 0])
    assert rec == 0.5 and math.isnan(spec)


def test_matched_catch_frontier_golden() -> None:
    labels = [0, 0, 0, 0, 1, 1, 1, 1]
    scores = [0.1, 0.2, 0.3, 0.6, 0.25, 0.5, 0.7, 0.9]
    rows = matched_catch_frontier(labels, scores, [0.0, 0.5, 0.75, 1.0])
    # m = 4 negatives sorted 0.1 0.2 0.3 0.6
    # c = 0.5: k = 2 -> tau 0.2, supported <= 0.2: none -> 0.0
    # c = 0.75: k = 3 -> tau 0.3, supported <= 0.3: {0.25} -> 1/4
    # c = 1.0: k = 4 -> tau 0.6, supported <= 0.6: {0.25, 0.5} -> 2/4
    assert rows == [(0.0, -math.inf, 0.0), (0.5, 0.2, 0.0), (0.75, 0.3, 0.25), (1.0, 0.6, 0.5)]


@given(scored, st.lists(st.floats(0, 1), min_size=1, max_size=5))
def test_matched_catch_frontier_properties(
    data: tuple[list[bool], list[int]], rates: list[float]
) -> None:
    y, s = data
    if all(y):
        return
    neg = [v for t, v in zip(y, s, strict=True) if not t]
    rows = matched_catch_frontier(y, [float(v) for v in s], sorted(rates))
    for c, tau, _ in rows:
        assert sum(v <= tau for v in neg) / len(neg) >= c - 1e-12  # target catch reached
    flag_rates = [fr for _, _, fr in rows]
    assert all(math.isnan(f) for f in flag_rates) or flag_rates == sorted(flag_rates)


# --------------------------------------------------------------------------- intervals


def test_wilson_golden() -> None:
    # 8/10, z = 1.959964, z^2 = 3.841459: denom = 1 + z^2/10 = 1.384146
    # centre = (0.8 + z^2/20) / denom = 0.992073 / 1.384146 = 0.716740
    # half = z * sqrt(0.8*0.2/10 + z^2/400) / denom = 1.959964 * sqrt(0.025604) / 1.384146
    #      = 1.959964 * 0.160011 / 1.384146 = 0.226578 -> [0.490162, 0.943318]
    est, low, high = wilson_interval(8, 10)
    assert est == 0.8
    assert (low, high) == pytest.approx((0.490162, 0.943318), abs=1e-6)
    # 0/10: centre = half = (z^2/20) / denom = 0.192073 / 1.384146 = 0.138766 -> [0, 0.277533]
    assert tuple(wilson_interval(0, 10))[1:] == pytest.approx((0.0, 0.277533), abs=1e-6)


@given(st.integers(0, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_properties(xn: tuple[int, int]) -> None:
    x, n = xn
    iv = wilson_interval(x, n)
    if n == 0:
        assert math.isnan(iv.low)
        return
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0


def test_recall_at_k() -> None:
    ranks: list[int | None] = [1, 2, 1, None, 5, 1, 3, 1, 2, 1]
    r1 = recall_at_k(ranks, 1)
    assert r1.estimate == 0.5  # 5 of 10 at rank 1
    assert r1.method == "wilson"
    assert recall_at_k(ranks, 3).estimate == 0.8  # ranks 1, 2, 3: 8 of 10
    assert recall_at_k(ranks, 10).estimate == 0.9  # None never counts


@given(st.lists(st.one_of(st.none(), st.integers(1, 20)), min_size=1, max_size=50))
def test_recall_at_k_monotone(ranks: list[int | None]) -> None:
    values = [recall_at_k(ranks, k).estimate for k in range(1, 22)]
    assert values == sorted(values)


def test_bootstrap_ci_deterministic_and_sane() -> None:
    import numpy as np

    values = [1] * 200 + [0] * 200  # p = 0.5, n = 400: SE = 0.025, 95% CI ~ +-0.049

    def mean(v: np.ndarray) -> float:
        return float(v.mean())

    ci = bootstrap_ci(mean, values, B=2000, seed=0)
    assert isinstance(ci, Interval)
    assert ci == bootstrap_ci(mean, values, B=2000, seed=0)
    assert ci.estimate == 0.5
    assert ci.low == pytest.approx(0.451, abs=0.01)
    assert ci.high == pytest.approx(0.549, abs=0.01)
    assert ci != bootstrap_ci(mean, values, B=2000, seed=1)


def test_bootstrap_ci_paired_auc_drops_single_class_resamples() -> None:
    labels = [1, 0, 0, 0, 0, 0]
    scores = [0.9, 0.1, 0.2, 0.3, 0.4, 0.5]
    ci = bootstrap_ci(roc_auc, labels, scores, B=500, seed=0)
    assert ci.estimate == 1.0
    assert ci.n_invalid > 0  # resamples without the single positive
    assert (ci.low, ci.high) == (1.0, 1.0)  # pairing kept: the positive always outranks


@settings(max_examples=25)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=60))
def test_bootstrap_ci_ordered(values: list[float]) -> None:
    import numpy as np

    ci = bootstrap_ci(lambda v: float(np.mean(v)), values, B=200, seed=0)
    assert ci.low <= ci.high
    assert min(values) - 1e-12 <= ci.low and ci.high <= max(values) + 1e-12
