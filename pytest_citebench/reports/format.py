"""How a metric reads in a report: its column label, and its value with its CI.

Shared by every report (the terminal headline, Markdown, HTML) and by papers' own sections, so
a number is never formatted two ways. Percent for shares, three decimals for raw numbers.
"""

from __future__ import annotations

import math

from pytest_citebench.api import Stat


def label(metric: str) -> str:
    """The column header a metric's declaration gives (``hr_paper`` -> ``HR paper %``), else its
    name."""
    from pytest_citebench import registry

    return registry.metric_spec(metric).label or metric


def is_raw(metric: str) -> bool:
    """Metrics not on a 0-1 scale are printed as they are, not as percentages."""
    from pytest_citebench import registry

    return registry.metric_spec(metric).scale != "share"


def fmt(stat: Stat | None, metric: str, *, ci: bool = True) -> str:
    """``12.5 [8.1, 17.9]`` for a share, ``0.412 [...]`` for a raw number, ``-`` for none."""
    if stat is None or stat.value is None or math.isnan(stat.value):
        return "-"
    from pytest_citebench import registry

    if registry.metric_spec(metric).scale == "count":
        return str(int(stat.value))
    scale, digits = (1.0, 3) if is_raw(metric) else (100.0, 1)
    text = f"{stat.value * scale:.{digits}f}"
    if ci and not math.isnan(stat.lo) and not math.isnan(stat.hi) and stat.lo != stat.hi:
        text += f" [{stat.lo * scale:.{digits}f}, {stat.hi * scale:.{digits}f}]"
    return text


__all__ = ["fmt", "is_raw", "label"]
