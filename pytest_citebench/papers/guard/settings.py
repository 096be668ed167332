"""The citation-guard protocol's constants and its ``CITEBENCH_GUARD_*`` environment settings.

Why environment variables: calibration (the alpha grid, n_cal, trials) and the guard's verifier
and tau are properties of a deployment, not of a suite or a model, so they are set once per run
and checked once at its start (:func:`environment_problems`, the paper's ``environment_problems``
hook) rather than failing item by item.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from pytest_citebench.api import Sample
from pytest_citebench.errors import ResponseError

# Every interval of the protocol: item bootstrap, B = 2000, seed 0, 2.5/97.5 percentiles.
B = 2000
SEED = 0
DEFAULT_THRESHOLD = 0.5
FRONTIER_CATCH = (0.80, 0.90, 0.95)
DEFAULT_ALPHAS = (0.02, 0.10, 0.20, 0.30)
DEFAULT_ALPHA = 0.10
DEFAULT_TRIALS = 1000
SMALL_N_CAL = 25  # the paper's Table S4: the naive quantile under-covers here


def _env_float(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ResponseError(f"{name}={text!r} is not a number") from None


def _env_int(name: str, default: int | None) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise ResponseError(f"{name}={text!r} is not an integer") from None


def calibration_settings() -> dict[str, Any]:
    """alpha grid, primary alpha, n_cal and trials, from ``CITEBENCH_GUARD_*`` or the defaults.

    Environment variables because calibration is a property of the deployment, not of a suite
    or a model: ``CITEBENCH_GUARD_ALPHAS=0.05,0.1``, ``CITEBENCH_GUARD_ALPHA=0.1``,
    ``CITEBENCH_GUARD_N_CAL=100`` (default: half the unsupported points),
    ``CITEBENCH_GUARD_TRIALS=1000``. Splits always use seed 0.
    """
    text = os.environ.get("CITEBENCH_GUARD_ALPHAS", "").strip()
    try:
        alphas = tuple(float(a) for a in text.split(",")) if text else DEFAULT_ALPHAS
    except ValueError:
        raise ResponseError(f"CITEBENCH_GUARD_ALPHAS={text!r}: expected e.g. 0.02,0.1") from None
    alpha = _env_float("CITEBENCH_GUARD_ALPHA", DEFAULT_ALPHA)
    for a in (*alphas, alpha):
        if not 0 < a < 1:
            raise ResponseError(f"alpha {a} must be in (0, 1)")
    trials = _env_int("CITEBENCH_GUARD_TRIALS", DEFAULT_TRIALS) or DEFAULT_TRIALS
    return {
        "alphas": alphas,
        "alpha": alpha,
        "n_cal": _env_int("CITEBENCH_GUARD_N_CAL", None),
        "trials": trials,
    }


GUARD_ENV = (
    "CITEBENCH_GUARD_ALPHAS",
    "CITEBENCH_GUARD_ALPHA",
    "CITEBENCH_GUARD_N_CAL",
    "CITEBENCH_GUARD_TRIALS",
    "CITEBENCH_GUARD_VERIFIER",
    "CITEBENCH_GUARD_TAU",
)


def environment_problems() -> list[str]:
    """Every problem with the ``CITEBENCH_GUARD_*`` variables, checked once at start.

    Why here and not only where they are read: they are read per item, so one bad value used to
    come back as a provider error on every guard item (and a misspelt name was ignored).
    """
    problems = [
        f"{name} is not a citebench setting; known: {', '.join(GUARD_ENV)}"
        for name in sorted(os.environ)
        if name.startswith("CITEBENCH_GUARD_") and name not in GUARD_ENV
    ]
    checks: list[Callable[[], Any]] = [calibration_settings, _env_guard_config]
    for check in checks:
        try:
            check()
        except ResponseError as exc:
            problems.append(str(exc))
    for name in ("CITEBENCH_GUARD_N_CAL", "CITEBENCH_GUARD_TRIALS"):
        try:
            value = _env_int(name, None)
        except ResponseError:
            continue  # reported above
        if value is not None and value < 1:
            problems.append(f"{name}={value}: must be at least 1")
    verifier = os.environ.get("CITEBENCH_GUARD_VERIFIER", "").strip()
    if verifier:
        from pytest_citebench.papers.guard.verifiers import available_verifiers

        if verifier not in available_verifiers():
            problems.append(
                f"CITEBENCH_GUARD_VERIFIER={verifier!r}: unknown verifier; available: "
                f"{', '.join(available_verifiers())}"
            )
    return problems


def guard_config(item: Sample) -> tuple[str, float, float | None]:
    """(verifier name, tau, alpha) for a guard item.

    From the item (``verifier``, default ``lexical``; ``tau``; optional ``alpha`` for the
    record), or from ``CITEBENCH_GUARD_VERIFIER`` + ``CITEBENCH_GUARD_TAU``, which must be set
    together: a tau is only meaningful on the scale of the verifier it was calibrated for.
    """
    env = _env_guard_config()
    if env is not None:
        return env
    tau = item.fields.get("tau")
    if isinstance(tau, bool) or not isinstance(tau, int | float):
        raise ResponseError(
            f"item {item.id!r}: a guard item needs 'tau' (the verifier's flag threshold)"
        )
    alpha = item.fields.get("alpha")
    return (
        str(item.fields.get("verifier", "lexical")),
        float(tau),
        float(alpha) if isinstance(alpha, int | float) else None,
    )


def _env_guard_config() -> tuple[str, float, None] | None:
    env_verifier = os.environ.get("CITEBENCH_GUARD_VERIFIER", "").strip()
    env_tau = os.environ.get("CITEBENCH_GUARD_TAU", "").strip()
    if bool(env_verifier) != bool(env_tau):
        raise ResponseError(
            "set CITEBENCH_GUARD_VERIFIER and CITEBENCH_GUARD_TAU together: tau is calibrated "
            "on one verifier's score scale"
        )
    if env_verifier:
        return env_verifier, _env_float("CITEBENCH_GUARD_TAU", math.nan), None
    return None
