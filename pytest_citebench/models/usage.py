"""What each item's model calls cost (tokens, dollars, latency), counted per item even when
items run concurrently: the runner gives each item its own list in a context variable, and every
call appends to the list of the item it runs for."""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallUsage:
    """One model call as the item record keeps it (see ``usage_summary``)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency: float
    # Played from a cassette: the latency is replay's, not the provider's.
    replayed: bool = False


# The calls of the item running in this asyncio task; the runner sets a fresh list per item.
_USAGE: contextvars.ContextVar[list[CallUsage] | None] = contextvars.ContextVar(
    "citebench_usage", default=None
)


def track_usage() -> list[CallUsage]:
    """Give the running item its own call list, so concurrent items never share usage."""
    calls: list[CallUsage] = []
    _USAGE.set(calls)
    return calls


def usage_summary(calls: Sequence[CallUsage]) -> dict[str, Any] | None:
    """The item record's ``usage``: None for items that made no remote call."""
    if not calls:
        return None
    costs = [c.cost for c in calls]
    return {
        "calls": len(calls),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cost": None if any(c is None for c in costs) else round(sum(costs), 10),  # type: ignore[arg-type]
        "latencies": [round(c.latency, 4) for c in calls],
        # Calls played from cassettes: their latencies time the replay, not the provider.
        **({"replayed": n} if (n := sum(c.replayed for c in calls)) else {}),
    }


def current_calls() -> list[CallUsage] | None:
    """The list of the item this call runs for (None outside an item: nothing is counted)."""
    return _USAGE.get()
