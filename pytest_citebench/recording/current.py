"""The cassette of the item running in the current asyncio task.

Many items' calls run concurrently under one set of vcrpy patches, so the item a request belongs
to is found through a context variable, which every asyncio task carries separately. Model code
uses the counters here to tell a replayed answer from a paid one and a miss from a failure.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ItemCassette:
    """The cassette of the item running in this asyncio task, and the misses it saw."""

    path: Path
    cassette: Any
    record_command: str
    misses: list[Any] = field(default_factory=list)
    played: int = 0


_CURRENT: contextvars.ContextVar[ItemCassette | None] = contextvars.ContextVar(
    "citebench_cassette", default=None
)


def current_item() -> ItemCassette | None:
    """The cassette of the item running in this asyncio task, or None outside any item: a task
    can tell a replay-only item (nothing leaves the process) from one that records."""
    return _CURRENT.get()


def recorded_count() -> int:
    """Interactions in the current item's cassette: a mark for ``forget_since``."""
    current = _CURRENT.get()
    return len(current.cassette.data) if current else 0


def forget_since(mark: int) -> None:
    """Drop what the current item recorded after ``mark``. A failed attempt that got a 200 (a
    malformed body, a truncated one) must not be saved: replay would serve it as the answer."""
    current = _CURRENT.get()
    if current is not None and len(current.cassette.data) > mark:
        del current.cassette.data[mark:]


def answered_since(mark: int) -> bool:
    """Whether the current item's cassette took a 2xx response after ``mark``: the provider
    answered (and may bill the call) even when the client then could not read the answer."""
    current = _CURRENT.get()
    if current is None:
        return False
    for entry in current.cassette.data[mark:]:
        response = entry[1] if isinstance(entry, tuple | list) and len(entry) == 2 else None
        status = response.get("status") if isinstance(response, dict) else None
        code = status.get("code") if isinstance(status, dict) else None
        if isinstance(code, int) and 200 <= code < 300:
            return True
    return False


def played_count() -> int:
    """Responses served from the current item's cassette: a call that did not raise it was
    paid for (``--citebench-max-cost`` counts only those)."""
    current = _CURRENT.get()
    return current.played if current else 0


def miss_count() -> int:
    """Requests the current item's cassette could not play: a rise across a call means the call
    failed because of a miss, which is reported as such rather than as a provider error."""
    current = _CURRENT.get()
    return len(current.misses) if current else 0
