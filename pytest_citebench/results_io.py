"""Results files as ``merge`` and ``compare.promote`` both handle them: an item's identity,
deduplication, the atomic write, and the shard record a ``--citebench-shard`` run leaves.

``merge`` (many shard files into one) and ``compare.promote`` (a run into the baseline) both
write results files the same way; keeping that here lets each import it without importing the
other, so the comparison code and the merge command stay independent.
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
