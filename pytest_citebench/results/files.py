"""The results file: written one flushed line per finished item during a run, read back by
resume, merge, compare and rescore; an item's identity, deduplication, the atomic rewrite, and
the shard record a ``--citebench-shard`` run leaves.

One module for every reader and writer, so ``merge`` (many shard files into one) and
``compare.promote`` (a run into the baseline) handle files the same way without importing each
other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ItemKey = tuple[str, str, str, str]  # model, suite, task, item_id
_VOLATILE = ("duration",)


def record_key(record: Mapping[str, Any]) -> ItemKey:
    """An item's identity across files: two records with the same key describe one result."""
    return (
        str(record["model"]),
        str(record["suite"]),
        str(record["task"]),
        str(record["item_id"]),
    )


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    strip = lambda r: {k: v for k, v in r.items() if k not in _VOLATILE}  # noqa: E731
    return bool(strip(a) == strip(b))


def dedupe(
    records: Iterable[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], int, list[ItemKey]]:
    """(records sorted by key, duplicates dropped, keys recorded twice with different results).

    A finished record beats an error for the same item (a shard re-run after a provider outage
    wins over the outage); between two different finished records the first is kept and the key is
    reported, never silently picked.
    """
    kept: dict[ItemKey, dict[str, Any]] = {}
    duplicates = 0
    conflicts: list[ItemKey] = []
    for record in records:
        if record.get("type", "item") != "item":
            continue
        key = record_key(record)
        if key not in kept:
            kept[key] = dict(record)
            continue
        duplicates += 1
        old = kept[key]
        if old["outcome"] == "error" and record["outcome"] != "error":
            kept[key] = dict(record)
        elif not _same(old, record) and old["outcome"] != "error" and record["outcome"] != "error":
            conflicts.append(key)
    return [kept[k] for k in sorted(kept)], duplicates, conflicts


def write_results(path: Path, records: Sequence[Mapping[str, Any]], aggregates: Any) -> None:
    """Items then aggregates, in the plugin's results format; atomic (temp file + rename)."""
    from pytest_citebench import jsonl

    jsonl.write(path, [*records, *(agg.to_record() for agg in aggregates)])


def read_shard(path: Path) -> dict[str, Any] | None:
    """The ``{"type": "shard", ...}`` record a ``--citebench-shard`` run writes last, or None."""
    from pytest_citebench import jsonl

    found = None
    for _, record in jsonl.iter_objects(path, torn_tail_ok=True):
        if record.get("type") == "shard":
            found = record
    return found


class ResultsWriter:
    """Appends one JSON line per finished item and flushes it, so an interrupted run keeps every
    item that finished; aggregates are appended at the end."""

    def __init__(self, path: Path) -> None:
        from pytest_citebench.jsonl import Appender

        self.path = path
        self._appender = Appender(path)

    def write(self, record: Mapping[str, Any]) -> None:
        """One line, flushed before returning."""
        self._appender.write(record)

    def write_line(self, line: str) -> None:
        """``write``, for a record already written as ``jsonl.dumps`` writes it."""
        self._appender.write_line(line)

    def close(self) -> None:
        """Idempotent; a record written after it is dropped."""
        self._appender.close()


def read_results(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(items, aggregates) from a results file; a torn last line (killed mid-write) is ignored.

    Raises ``ValueError`` naming ``file:line`` for any other bad line."""
    from pytest_citebench import jsonl

    items: list[dict[str, Any]] = []
    aggregates: list[dict[str, Any]] = []
    for _, record in jsonl.iter_objects(path, torn_tail_ok=True):
        kind = record.get("type", "item")
        if kind == "item":
            items.append(record)
        elif kind == "aggregate":
            aggregates.append(record)
        # other records (a shard's "shard" line) are for read_shard
    return items, aggregates
