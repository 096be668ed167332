"""What a run cost, per model: calls, tokens in and out, USD, and call latency (p50/p95).

Item records carry ``usage = {"calls", "prompt_tokens", "completion_tokens", "cost",
"latencies"}`` when a remote model answered them; built-in baselines have none, and a report of
a run without any usage shows no usage table at all. A cost litellm's local price map does not
know is ``None``: it is reported as "n/a", never as $0, and a total over items some of which are
unpriced is a lower bound and says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class UsageRow:
    """One model's usage; ``unpriced`` is kept so a cost total never passes for complete."""

    model: str
    items: int  # items with a usage record
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # USD over the priced items; None when no item was priced
    unpriced: int  # items whose cost is unknown
    p50: float  # seconds per call; NaN without latencies
    p95: float
    replayed: int = 0  # calls played from cassettes: their latency is the replay's
    # Items whose token counts are unknown (the server's counts were not believed): the token
    # totals are then lower bounds and say so.
    unknown_tokens: int = 0


def quantile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), NaN when empty."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    pos = (len(ordered) - 1) * q
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def usage_rows(records: Sequence[Mapping[str, Any]]) -> list[UsageRow]:
    """One row per model with at least one usage record, models sorted."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        usage = r.get("usage")
        if isinstance(usage, Mapping):
            groups[str(r.get("model", ""))].append(usage)
    rows = []
    for model in sorted(groups):
        usages = groups[model]
        costs = [u.get("cost") for u in usages]
        priced = [float(c) for c in costs if isinstance(c, int | float) and not isinstance(c, bool)]
        latencies = [
            float(x)
            for u in usages
            for x in (u.get("latencies") or [])
            if isinstance(x, int | float) and not isinstance(x, bool)
        ]
        rows.append(
            UsageRow(
                model,
                len(usages),
                sum(_int(u.get("calls")) for u in usages),
                sum(_int(u.get("prompt_tokens")) for u in usages),
                sum(_int(u.get("completion_tokens")) for u in usages),
                sum(priced) if priced else None,
                len(usages) - len(priced),
                quantile(latencies, 0.5),
                quantile(latencies, 0.95),
                sum(_int(u.get("replayed")) for u in usages),
                sum(
                    u.get("prompt_tokens") is None or u.get("completion_tokens") is None
                    for u in usages
                ),
            )
        )
    return rows


def fmt_cost(row: UsageRow) -> str:
    """An unknown cost reads "n/a", never $0; a total missing some items reads "≥"."""
    if row.cost is None:
        return "n/a"
    text = f"${row.cost:.4f}"
    return f"≥ {text} ({row.unpriced} item(s) unpriced)" if row.unpriced else text


def fmt_seconds(value: float) -> str:
    """A dash for a model with no recorded latency, rather than "nan s"."""
    return "-" if math.isnan(value) else f"{value:.2f} s"


HEADER = ("model", "items", "calls", "tokens in", "tokens out", "cost (USD)", "p50", "p95")


def cells(row: UsageRow) -> list[str]:
    """One row in ``HEADER``'s order, shared by the terminal, Markdown and HTML tables."""
    return [
        row.model,
        str(row.items),
        str(row.calls),
        _tokens(row.prompt_tokens, row),
        _tokens(row.completion_tokens, row),
        fmt_cost(row),
        fmt_seconds(row.p50) + _replay_note(row),
        fmt_seconds(row.p95) + _replay_note(row),
    ]


def _tokens(total: int, row: UsageRow) -> str:
    """A token total missing some items' unknown counts reads "≥", like a cost total."""
    return f"≥ {total}" if row.unknown_tokens else str(total)


def _replay_note(row: UsageRow) -> str:
    """Latency of replayed calls times reading a cassette, not the provider: say so."""
    if not row.replayed or math.isnan(row.p50):
        return ""
    return (
        " (replay)" if row.replayed >= row.calls else f" ({row.replayed} of {row.calls} replayed)"
    )


def usage_lines(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The usage table as text; empty when no record has usage."""
    rows = usage_rows(records)
    if not rows:
        return []
    from pytest_citebench.reports.headline import columns_text

    return columns_text([list(HEADER)] + [cells(r) for r in rows], 1)
