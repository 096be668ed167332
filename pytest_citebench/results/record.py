"""The record schema: one finished item, as the results file, the test report and resume hold
it. It lives beside the results that read it, not in the runner that makes it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_citebench.api import LEGACY_SCORER_VERSION, Outcome


@dataclass(frozen=True)
class ItemResult:
    """One finished item; this is the record in the results file and on the test report."""

    model: str
    suite: str
    suite_version: int
    task: str
    item_id: str
    outcome: Outcome
    answer: str
    expected: str
    metrics: dict[str, float]
    raw_answer: str = ""
    stages: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    duration: float = 0.0
    nodeid: str = ""
    # Remote calls only: {"calls", "prompt_tokens", "completion_tokens", "cost", "latencies"}.
    usage: dict[str, Any] | None = None
    # One line saying why this outcome (see docs/outcomes.md).
    reason: str = ""
    # The version of the task's scoring rules the outcome and metrics were computed under
    # (``Task.scorer_version``; "1" for records from before versions were stamped).
    scorer_version: str = LEGACY_SCORER_VERSION
    # Answers read from a file (``answers:FILE``): {"file", "sha256"}; None for a model's own.
    answers_file: dict[str, str] | None = None
    # The item's gold is suspect (the suite flags it, docs/audit.md): {"flags": [...], "reason"}.
    # Such a record is kept and reported, but left out of the headline numbers and gates unless
    # the run includes suspect golds (``--citebench-include-suspect``).
    gold_suspect: dict[str, Any] | None = None
    # A hallucinated item's kind of wrong citation ("misattributed", "fabricated",
    # "unverified"), when its task tells them apart (the evidence is in ``reason``); None for
    # every other outcome and task, and for records written before kinds existed.
    kind: str | None = None

    def to_record(self) -> dict[str, Any]:
        """``type: item`` tells it from the aggregate lines that share the results file.

        ``dataclasses.asdict``'s result, built directly: asdict's generic recursion was ~8% of
        pytest's own thread in a live run (tests/results/test_results_record.py holds the two
        equal)."""
        record: dict[str, Any] = {"type": "item"}
        for name in _FIELD_NAMES:
            record[name] = _plain(getattr(self, name))
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ItemResult:
        """Also reads records written before ``reason``, ``scorer_version`` or ``usage`` existed
        (scored by scorer "1"), and ignores fields it does not know."""
        known = {f.name for f in dataclasses.fields(cls)}
        fields = {k: v for k, v in record.items() if k in known}
        fields.setdefault("scorer_version", LEGACY_SCORER_VERSION)
        return cls(**fields)


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(ItemResult))
_IMMUTABLE = (str, int, float, bool, type(None))


def is_suspect(record: Mapping[str, Any]) -> bool:
    """Whether a record's item has a gold its suite flags as suspect."""
    return bool(record.get("gold_suspect"))


def _plain(value: Any) -> Any:
    """What ``asdict`` makes of a field's value: containers copied all the way down."""
    if isinstance(value, _IMMUTABLE):
        return value
    if type(value) is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    if type(value) is list:
        return [_plain(v) for v in value]
    # Anything else (a tuple, a dataclass, another object): asdict's own treatment of it.
    return asdict(_Holder(value))["value"]


@dataclass(frozen=True)
class _Holder:
    value: Any
