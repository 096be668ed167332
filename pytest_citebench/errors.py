"""Errors that end an item as *error*: never a pass, never a hallucination."""

from __future__ import annotations


class CitebenchError(Exception):
    """Base class: the message is what the user reads, so it says what to do."""


class ProviderError(CitebenchError):
    """The model provider failed (network, status, timeout) after every retry."""


class ResponseError(CitebenchError):
    """The provider answered, but with nothing we can score (no choices, empty content)."""


class CassetteMiss(CitebenchError):
    """Replay found no recording of this exact request (new item, changed prompt or params)."""


class BudgetExceeded(CitebenchError):
    """``--citebench-max-cost`` was reached: the run stops before spending more."""
