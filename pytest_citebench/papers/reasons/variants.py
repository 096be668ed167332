"""The REASONS adversarial test as derived suites: ``<suite>+swap-title`` / ``+swap-abstract``.

The paper owns its two options (``--citebench-adversarial KIND``, repeatable, and
``--citebench-adversarial-threshold R``; ``adversarial`` / ``adversarial_threshold`` in
``[tool.citebench]``) and one :class:`~pytest_citebench.api.Variant` per kind of swap. The core
adds the options, calls :func:`configure` once the run is configured (on xdist workers too), and
runs a variant on every suite where it applies (the kind was asked for and every item has
the field); the swap itself is :func:`pytest_citebench.papers.reasons.swaps.swap`. Nothing heavy
is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_citebench.api import Derived, Sample, Variant
from pytest_citebench.papers.reasons.swaps import DEFAULT_THRESHOLD, SWAPS, swap

if TYPE_CHECKING:
    import pytest


@dataclass
class Settings:
    """The swaps this run asked for and their similarity threshold (set by :func:`configure`).

    One object per process, overwritten whole by every configure, so an in-process pytester
    run never inherits the kinds of the run before it.
    """

    kinds: list[str] = field(default_factory=list)
    threshold: float = DEFAULT_THRESHOLD


SETTINGS = Settings()


def add_options(group: pytest.OptionGroup) -> None:
    """The paper's pytest options, added to the core's ``citebench`` group."""
    group.addoption(
        "--citebench-adversarial",
        action="append",
        choices=tuple(SWAPS),
        help="also run every suite with the citing title (or cited abstract) swapped for the "
        "most similar other one in the suite (REASONS adversarial test); repeatable",
    )
    group.addoption(
        "--citebench-adversarial-threshold",
        type=float,
        metavar="R",
        help="minimum Ratcliff-Obershelp similarity of a swap (0.70)",
    )


def configure(config: pytest.Config) -> None:
    """Read the options (the command line, then ``[tool.citebench]``) for this run's variants;
    ``settings/checks.py`` checks both (a kind that is not a swap, a threshold out of 0-1) as one
    usage error, as for every core setting."""
    from pytest_citebench.settings import setting

    SETTINGS.kinds = list(
        dict.fromkeys(setting(config, "citebench_adversarial", "adversarial", []))
    )
    SETTINGS.threshold = setting(
        config, "citebench_adversarial_threshold", "adversarial_threshold", DEFAULT_THRESHOLD
    )


def _applies(kind: str) -> Callable[[Sequence[Sample]], bool]:
    def applies(samples: Sequence[Sample]) -> bool:
        # Only suites whose items carry the swapped field (REASONS-style suites) get a variant.
        return kind in SETTINGS.kinds and all(SWAPS[kind] in s.fields for s in samples)

    return applies


def _derive(kind: str) -> Callable[[Sequence[Sample], Path], Sequence[Derived]]:
    def derive(samples: Sequence[Sample], cache_dir: Path) -> Sequence[Derived]:
        return swap(samples, kind, threshold=SETTINGS.threshold, cache_dir=cache_dir)

    return derive


#: One derived suite per kind of swap, named ``swap-<kind>`` (the suite reports as
#: ``<suite>+swap-<kind>``, which gates, rescore and the Table 3 section look for).
VARIANTS: tuple[Variant, ...] = tuple(
    Variant(name=f"swap-{kind}", applies=_applies(kind), derive=_derive(kind)) for kind in SWAPS
)
