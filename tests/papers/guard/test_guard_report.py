"""The guard's report section (``PAPER.sections``): tau(alpha), catch and flag rate per alpha,
checked against numbers worked out by hand on a calibration set small enough to do so."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_citebench.papers.guard import PAPER
from pytest_citebench.papers.guard.report import GUARD_ALPHAS, NOTE, guard_curves, sections


def calibration_records(unsupported: list[float], supported: list[float]) -> list[dict[str, Any]]:
    rows = [(s, 0.0) for s in unsupported] + [(s, 1.0) for s in supported]
    return [
        {
            "task": "calibrate",
            "suite": "guard/tiny",
            "model": "citebench/verifier-lexical",
            "item_id": f"i{i:02d}",
            "outcome": "correct",
            "metrics": {"score": score, "label": label, "precomputed": 1.0},
        }
        for i, (score, label) in enumerate(rows)
    ]


def test_section_numbers_match_a_hand_computed_case() -> None:
    # Four identical unsupported scores make every random split the same, so the held-out
    # columns are exact. tau(alpha) on all four: k = ceil(5 (1 - alpha)), +inf when k > 4
    # (alpha < 0.2), else the 0.2 they all share. Held-out (n_cal = 2): k = ceil(3 (1 - alpha))
    # > 2 for alpha <= 0.3 (tau = inf: every citation flagged, catch = flag rate = 100%, which
    # says nothing, so since issue 36 those cells are "-" and tau = inf reads "too few (need
    # n >= (1 - alpha) / alpha)", never "inf" beside a catch of 100%); for alpha 0.4 and 0.5,
    # k = 2, tau = 0.2: both held-out negatives caught, and 1 of the 3 supported scores (0.1)
    # is <= 0.2, a flag rate of 33.3%.
    records = calibration_records([0.2, 0.2, 0.2, 0.2], [0.1, 0.5, 0.9])
    (section,) = sections([], records)
    assert PAPER.sections is sections
    assert (section.key, section.numeric_from, section.terminal) == ("guard", 2, False)
    assert section.headers == ("suite", "model", "n", "α", "τ(α)", "catch", "flag rate")
    assert section.note == NOTE
    expected = {
        0.01: ("too few (need n ≥ 99)", "-", "-"),
        0.02: ("too few (need n ≥ 49)", "-", "-"),
        0.05: ("too few (need n ≥ 19)", "-", "-"),
        0.1: ("too few (need n ≥ 9)", "-", "-"),
        0.15: ("too few (need n ≥ 6)", "-", "-"),
        0.2: ("0.200", "-", "-"),
        0.3: ("0.200", "-", "-"),
        0.4: ("0.200", "100.0", "33.3"),
        0.5: ("0.200", "100.0", "33.3"),
    }
    assert section.rows == tuple(
        ("guard/tiny", "citebench/verifier-lexical", "7", f"{a:g}", *expected[a])
        for a in GUARD_ALPHAS
    )
    (chart,) = section.charts
    assert chart.kind == "line_chart"
    assert chart.data["title"] == "guard/tiny [citebench/verifier-lexical] n=4+3"
    assert chart.data["x_label"] == "α (target miss rate)"
    assert chart.data["xs"] == GUARD_ALPHAS
    names = [(name, dash) for name, _, dash in chart.data["lines"]]
    assert names == [
        ("τ(α)", ""),
        ("catch (held-out)", ""),
        ("flag rate", ""),
        ("target 1−α", "5 4"),
    ]
    tau, catch, flag, target = (values for _, values, _ in chart.data["lines"])
    assert [math.isinf(t) for t in tau] == [a < 0.2 for a in GUARD_ALPHAS]
    assert [math.isnan(c) for c in catch] == [a <= 0.3 for a in GUARD_ALPHAS]
    assert catch[-2:] == (1.0, 1.0)
    assert flag[-2:] == pytest.approx((1 / 3, 1 / 3))
    assert target == tuple(1 - a for a in GUARD_ALPHAS)


def test_no_calibration_records_no_section_and_bad_scores_only_a_note() -> None:
    assert sections([], [{"task": "guard", "metrics": {}}]) == []
    (section,) = sections([], calibration_records([math.nan, 0.2], [0.9]))
    assert section.title == "Guard calibration"
    assert (section.headers, section.rows, section.charts) == ((), (), ())
    assert "NaN" in section.note


def test_chart_and_terminal_table_use_the_same_splits(monkeypatch: pytest.MonkeyPatch) -> None:
    # The HTML chart and the terminal's conformal table once ran different trial counts and
    # calibration sizes, so the same alpha could read two ways. Both now take n_cal, trials and
    # the seed from the guard's calibration settings: the chart's held-out catch at alpha 0.1 is
    # the terminal table's (same call, same splits), and it moves when the settings move.
    from pytest_citebench.papers.guard.setstats import n_cal_for
    from pytest_citebench.papers.guard.settings import SEED, calibration_settings
    from pytest_citebench.papers.guard.stats import conformal_trials
    from pytest_citebench.papers.guard.summary import calibrate_summary

    unsupported = [i / 40 for i in range(40)]
    supported = [0.5 + i / 40 for i in range(20)]
    records = calibration_records(unsupported, supported)

    def chart_catch() -> float:
        (curve,) = guard_curves(records)
        return curve.catch[GUARD_ALPHAS.index(0.1)]

    def table_catch() -> float:
        settings = calibration_settings()
        n_cal = n_cal_for(len(unsupported), settings["n_cal"])
        assert n_cal is not None
        run = conformal_trials(
            unsupported, supported, 0.1, n_cal=n_cal, trials=settings["trials"], seed=SEED
        )
        return float(run["conformal"]["catch"]["mean"])

    assert chart_catch() == table_catch()
    line = next(x for x in calibrate_summary(records) if x.lstrip().startswith("0.1 "))
    assert f" {table_catch():.3f} [" in line  # the terminal prints the same mean
    monkeypatch.setenv("CITEBENCH_GUARD_N_CAL", "10")  # >= 9: alpha 0.1 has a finite tau
    monkeypatch.setenv("CITEBENCH_GUARD_TRIALS", "7")
    assert chart_catch() == table_catch()


def test_the_terminal_table_says_too_few_instead_of_an_infinite_tau() -> None:
    """Issue 36: a tau of +inf (too few unsupported points for alpha) printed as "inf" beside a
    catch of 1.000; now "too few" with a line saying how many alpha needs, in the terminal
    table as in the report section, and the calibrate metrics are undefined, not 1.0."""
    from pytest_citebench.papers.guard.setstats import calibration_stats
    from pytest_citebench.papers.guard.summary import calibrate_summary

    records = calibration_records([0.1, 0.2, 0.3, 0.4, 0.5], [0.6, 0.7])
    lines = calibrate_summary(records)
    text = "\n".join(lines)
    assert " inf " not in text and not any(x.rstrip().endswith("inf") for x in lines)
    row = next(x for x in lines if x.lstrip().startswith("0.1 "))
    assert "too few" in row and "1.000" not in row
    assert "alpha 0.1: too few items for alpha=0.1: need n >= 9, have 5 unsupported points" in text
    assert "alpha 0.1, held-out (n_cal = 2): too few items for alpha=0.1: need n >= 9" in text
    stats = calibration_stats(records)  # primary alpha 0.1: undefined, so a gate fails
    assert math.isnan(stats["tau"].value) and math.isnan(stats["catch_rate"].value)
