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


class CassetteUnusable(CitebenchError):
    """Replay found the recording of this request and served it, but its response could not be
    used (a body edited or damaged after recording): not a miss, and no retry can fix it."""


class BudgetExceeded(CitebenchError):
    """``--citebench-max-cost`` was reached: the run stops before spending more."""


#: The ``reason`` of an item whose answer came but whose cassette could not be written (a full
#: or read-only folder), and of an item not run because of that: the run stops on the first one,
#: since every further paid answer would be lost the same way.
UNSAVED_REASON = "the answer came but its cassette could not be saved"
NOT_RUN_REASON = "not run: the cassette folder cannot be written"
STOPPING_REASONS = (UNSAVED_REASON, NOT_RUN_REASON)


class CassetteNotSaved(CitebenchError):
    """Recording: the cassette of an answered call could not be written (a full or read-only
    folder) or would not replay (over the size cap). The answer is kept in the item's record;
    ``reason`` is the record's reason, and says whether the run stops (``STOPPING_REASONS``)."""

    def __init__(self, message: str, reason: str = UNSAVED_REASON) -> None:
        super().__init__(message)
        self.reason = reason
