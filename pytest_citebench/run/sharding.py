"""``--citebench-shard I/N``: run a deterministic share of the items, so a run too big for one
machine spreads over N machines whose results ``python -m pytest_citebench merge`` recombines.

Why a hash of the item and not its position: positions move whenever a suite, a task or a model
is added, a ``-k`` changes or collection order differs between machines; a hash of
``suite::task::item_id`` gives the same split on every machine and every run, and shards stay
balanced without anyone counting items. The model is left out of the key on purpose, so every
model of one item lands on the same shard and side-by-side comparisons of one item never need two
machines' results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

# The spec is parsed with the other settings (settings/scope.py); importable from here as before.
from pytest_citebench.settings import Shard, ShardError, parse_shard

__all__ = ["Shard", "ShardError", "item_key", "key_of", "parse_shard", "shard_of", "split"]


def item_key(suite: str, task: str, item_id: str) -> str:
    """What the split hashes: the item and its task, never the model."""
    return f"{suite}::{task}::{item_id}"


def shard_of(key: str, total: int) -> int:
    """The 1-based shard that owns ``key`` among ``total``: sha256, so it is the same in every
    process (Python's ``hash`` is salted per process)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def key_of(item: Any) -> str | None:
    """The shard key of a collected pytest item, or None for items every shard must run.

    Citebench cases hash their (suite, task, item); skipped adversarial swaps hash their node id
    (so the skip is counted once over all shards). An invalid suite and the user's own tests are
    left to every shard: an invalid suite must fail every shard that could have run it.
    """
    job = getattr(item, "job", None)
    if job is not None:
        return item_key(job.item.suite, job.task.name, job.item.id)
    if type(item).__name__ == "SkippedSwap":
        return str(item.nodeid)
    return None


def split(items: Sequence[Any], shard: Shard) -> tuple[list[Any], list[Any]]:
    """(kept, deselected), each in collection order."""
    kept: list[Any] = []
    dropped: list[Any] = []
    for item in items:
        key = key_of(item)
        # Decided by the key's hash alone, so every machine agrees without talking.
        owned = key is None or shard_of(key, shard.total) == shard.index
        (kept if owned else dropped).append(item)
    return kept, dropped
