"""What each item's model calls cost (tokens, dollars, latency), counted per item even when
items run concurrently: the runner gives each item its own list in a context variable, and every
call appends to the list of the item it runs for.

Token counts come from the server, and a server can be wrong or hostile: negative counts became a
negative cost, which ``--citebench-max-cost`` counted as credit. ``usage_problem`` says when a
count cannot be believed; such a call's usage is unknown (None, never 0), and the budget counts
an upper bound on its price instead (``models.litellm_backend``).
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: More tokens than any model reads or writes in one call (context windows are at most a few
#: million): a count above it is not believed.
MAX_TOKENS_PER_CALL = 100_000_000


@dataclass(frozen=True)
class CallUsage:
    """One model call as the item record keeps it (see ``usage_summary``). ``prompt_tokens``,
    ``completion_tokens`` and ``cost`` are None when unknown; ``untrusted`` says why the
    server's counts were not believed."""

    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    latency: float
    # Played from a cassette: the latency is replay's, not the provider's.
    replayed: bool = False
    untrusted: str | None = None


def usage_problem(
    prompt_tokens: Any, completion_tokens: Any, cost: Any, *, prompt: str, answer: str
) -> str | None:
    """Why a server's usage for one call cannot be believed, or None.

    Counts must be whole numbers from 0 to :data:`MAX_TOKENS_PER_CALL`; a non-empty prompt or
    answer is at least one token (a count of 0 for one is a server that does not count, and
    would make the call free); a cost must be a finite number >= 0.
    """
    for name, value in (("prompt_tokens", prompt_tokens), ("completion_tokens", completion_tokens)):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{name} {value!r} is not a whole number"
        if value < 0:
            return f"{name} {value} is negative"
        if value > MAX_TOKENS_PER_CALL:
            return f"{name} {value} is more than any model reads or writes in one call"
    if prompt.strip() and prompt_tokens == 0:
        return "prompt_tokens 0 for a prompt that is not empty"
    if answer.strip() and completion_tokens == 0:
        return "completion_tokens 0 for an answer that is not empty"
    if cost is not None and (
        isinstance(cost, bool)
        or not isinstance(cost, int | float)
        or not math.isfinite(cost)
        or cost < 0
    ):
        return f"cost {cost!r} is not a finite number >= 0"
    return None


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
        # Unknown when a call's counts were not believed: a sum of the rest would pass for all.
        "prompt_tokens": _total([c.prompt_tokens for c in calls]),
        "completion_tokens": _total([c.completion_tokens for c in calls]),
        "cost": None if any(c is None for c in costs) else round(sum(costs), 10),  # type: ignore[arg-type]
        "latencies": [round(c.latency, 4) for c in calls],
        # Calls played from cassettes: their latencies time the replay, not the provider.
        **({"replayed": n} if (n := sum(c.replayed for c in calls)) else {}),
        # Calls whose server-reported usage was not believed (``usage_problem``), and why.
        **(
            {"untrusted": n, "untrusted_reason": next(c.untrusted for c in calls if c.untrusted)}
            if (n := sum(c.untrusted is not None for c in calls))
            else {}
        ),
    }


def _total(values: Sequence[int | None]) -> int | None:
    """The sum, or None when any part is unknown."""
    known = [v for v in values if v is not None]
    return sum(known) if len(known) == len(values) else None


def current_calls() -> list[CallUsage] | None:
    """The list of the item this call runs for (None outside an item: nothing is counted)."""
    return _USAGE.get()
