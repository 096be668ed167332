"""The fault model of the stub server: what can go wrong with one chat-completions call.

A ``Fault`` says what a single call does instead of answering (an HTTP error, a TCP reset, a hung
connection, a broken or truncated body, a slow first byte); a fault script picks one per call.
It is separate from the server so a test can build and check its script without a socket.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

FaultKind = Literal[
    "status",
    "reset",
    "timeout",
    "malformed_json",
    "empty_choices",
    "truncated_stream",
    "slow_first_byte",
    "drip",
]
_FAULT_KINDS: frozenset[str] = frozenset(get_args(FaultKind))


@dataclass
class Fault:
    """One scripted fault for a single chat-completions call.

    Kinds and what the client observes:

    * ``status`` -- an OpenAI-style JSON error body with HTTP ``status`` (and ``Retry-After``
      when ``retry_after`` is set), e.g. 429 to exercise back-off.
    * ``reset`` -- the socket is closed with ``SO_LINGER 0`` so the peer gets a TCP RST and no
      response at all (connection-reset errors).
    * ``timeout`` -- the connection is held open without a byte of response for ``delay``
      seconds, then closed; a client whose timeout is shorter than ``delay`` times out.
    * ``malformed_json`` -- HTTP 200 whose body is the invalid JSON ``{"id": "x", "choices": [``.
    * ``empty_choices`` -- HTTP 200 with a valid completion object but ``"choices": []``.
    * ``truncated_stream`` -- for ``stream`` requests one SSE chunk is sent and the connection is
      closed without the terminating chunk or ``[DONE]``; for non-stream requests the
      ``Content-Length`` promises more bytes than are sent before the close.
    * ``slow_first_byte`` -- wait ``delay`` seconds (on top of ``latency``), then answer
      normally; models a slow time-to-first-byte that still succeeds.
    * ``drip`` -- a normal 200 whose head comes at once and whose body comes one byte every
      ``delay`` seconds: no single wait is long, the whole answer takes minutes (a client timeout
      that bounds each read only never fires).

    ``latency`` is applied before every kind except ``reset`` and ``timeout``, whose timing is
    their whole point.
    """

    kind: FaultKind
    status: int = 500
    retry_after: float | None = None
    delay: float = 0.0

    def __post_init__(self) -> None:
        # Literal is not enforced at runtime; a typo would otherwise silently answer normally.
        if self.kind not in _FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {_FAULT_KINDS}")
        if not 100 <= self.status <= 599:
            raise ValueError(f"status must be an HTTP status code, got {self.status}")
        if self.delay < 0 or (self.retry_after is not None and self.retry_after < 0):
            raise ValueError("delay and retry_after must be non-negative")


FaultScript = Callable[[int, dict[str, Any]], Fault | None] | Sequence[Fault | None]


def fault_for(script: FaultScript | None, index: int, payload: dict[str, Any]) -> Fault | None:
    """The fault for chat call ``index`` (0-based): the script is a callable or a list consumed
    one entry per call, so a test states exactly which attempt fails and how."""
    if script is None:
        return None
    if callable(script):
        return script(index, payload)
    return script[index] if index < len(script) else None
