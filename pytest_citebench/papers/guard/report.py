"""The guard's report section: tau(alpha), held-out catch and flag rates per calibration set.

Why a report section and not only the terminal table: the conformal guarantee is a curve (catch
should stay at or above the target 1 - alpha for every alpha), and a reader judges a curve
faster than a column of numbers. The core draws the charts and tables (``Paper.sections``);
this module only computes them. The guard's own terminal summary already prints the conformal
table, so this section is for the Markdown and HTML reports.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.api import Aggregate, Chart, Records, Section, Stat
from pytest_citebench.errors import CitebenchError
from pytest_citebench.reports.format import fmt

# The grid of the chart. Held-out rates use the calibration settings (n_cal, trials, seed) of
# the guard's terminal table, so at a shared alpha the chart and the table show the same number.
GUARD_ALPHAS = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)

TITLE = "Guard calibration: τ, catch and flag rates"
NOTE = (
    "τ(α) is the split-conformal threshold from all unsupported scores; catch and flag rates are "
    "means over seeded calibration/held-out splits, as in the terminal's conformal table. "
    "Catch should stay at or above the dashed target 1−α; the flag rate is the share of "
    'supported citations sent to review. "too few": fewer unsupported points than α needs '
    "(n ≥ (1−α)/α), so τ is +∞ (flag everything), which is no rule; catch and flag rate are "
    "left out (-) where the held-out calibration sets are that small."
)
HEADERS = ("suite", "model", "n", "α", "τ(α)", "catch", "flag rate")


@dataclass(frozen=True)
class GuardCurve:
    """tau(alpha), held-out catch and flag rates over a grid of alpha, for one model x suite."""

    model: str
    suite: str
    n_unsupported: int
    n_supported: int
    alphas: tuple[float, ...]
    tau: tuple[float, ...]  # inf when too few calibration points for that alpha
    # NaN when there is no held-out split, or its calibration sets are too few for that alpha
    # (their tau is +inf: flagging everything catches all, which says nothing)
    catch: tuple[float, ...]
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
    from pytest_citebench.papers.guard.setstats import n_cal_for
    from pytest_citebench.papers.guard.settings import SEED, calibration_settings
    from pytest_citebench.papers.guard.stats import conformal_threshold, conformal_trials, too_few

    settings = calibration_settings()

    curves = []
    for (model, suite), rows in sorted(groups.items()):
        rows = sorted(rows, key=lambda r: str(r["item_id"]))
        unsupported = [float(r["metrics"]["score"]) for r in rows if not r["metrics"]["label"]]
        supported = [float(r["metrics"]["score"]) for r in rows if r["metrics"]["label"]]
        if not unsupported:
            continue
        taus, catches, flags = [], [], []
        n_cal = n_cal_for(len(unsupported), settings["n_cal"])
        for alpha in GUARD_ALPHAS:
            taus.append(conformal_threshold(unsupported, alpha))
            if n_cal is not None and too_few(n_cal, alpha) is None:
                run = conformal_trials(
                    unsupported,
                    supported,
                    alpha,
                    n_cal=n_cal,
                    trials=settings["trials"],
                    seed=SEED,
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


def _cell(value: float, metric: str, n: int) -> str:
    """One number as every report writes it (``reports.data.fmt``): rates in %, tau raw."""
    return fmt(Stat(value, value, value, n), metric)


def _tau_cell(tau: float, alpha: float, n: int) -> str:
    """tau, or for +inf (too few points for alpha) what that means instead of "inf"."""
    if math.isinf(tau):
        from pytest_citebench.papers.guard.stats import min_calibration_n

        return f"too few (need n ≥ {min_calibration_n(alpha)})"
    return _cell(tau, "tau", n)


def _rows(curve: GuardCurve) -> list[tuple[str, ...]]:
    n = curve.n_unsupported + curve.n_supported
    return [
        (
            curve.suite,
            curve.model,
            str(n),
            f"{alpha:g}",
            _tau_cell(tau, alpha, curve.n_unsupported),
            _cell(catch, "catch_rate", curve.n_unsupported),
            _cell(flag, "flag_rate", curve.n_supported),
        )
        for alpha, tau, catch, flag in zip(
            curve.alphas, curve.tau, curve.catch, curve.flag, strict=True
        )
    ]


def _chart(curve: GuardCurve) -> Chart:
    """The curve as ``svg.line_chart`` draws it: tau, catch and flag rate against the target."""
    target = tuple(1 - a for a in curve.alphas)
    return Chart(
        "line_chart",
        {
            "title": f"{curve.suite} [{curve.model}] n={curve.n_unsupported}+{curve.n_supported}",
            "x_label": "α (target miss rate)",
            "xs": curve.alphas,
            "lines": [
                ("τ(α)", curve.tau, ""),
                ("catch (held-out)", curve.catch, ""),
                ("flag rate", curve.flag, ""),
                ("target 1−α", target, "5 4"),
            ],
        },
    )


def sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    """The paper's ``sections`` hook: one section when calibration records exist, else none.

    Odd calibration data (a score the conformal rule rejects, numpy missing) must not lose the
    rest of the report, so it becomes a section holding only the reason.
    """
    try:
        curves = guard_curves(records)
    except (ValueError, ImportError, CitebenchError) as exc:  # CitebenchError: bad settings
        return [
            Section(
                key="guard",
                title="Guard calibration",
                headers=(),
                rows=(),
                note=str(exc),
                terminal=False,
            )
        ]
    if not curves:
        return []
    return [
        Section(
            key="guard",
            title=TITLE,
            headers=HEADERS,
            rows=tuple(row for curve in curves for row in _rows(curve)),
            note=NOTE,
            charts=tuple(_chart(curve) for curve in curves),
            numeric_from=2,
            terminal=False,
        )
    ]
