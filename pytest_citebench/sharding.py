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
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(ValueError):
    """A shard spec that cannot be used; the message says what form is expected."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based, as CI matrices count) of ``total``."""

    index: int
    total: int

    @property
    def spec(self) -> str:
        """``I/N`` as given on the command line; the results file records it for ``merge``."""
        return f"{self.index}/{self.total}"

    def owns(self, key: str) -> bool:
        """Decided by the key's hash alone, so every machine agrees without talking."""
        return shard_of(key, self.total) == self.index


def parse_shard(spec: str) -> Shard:
    """``"2/4"`` -> ``Shard(2, 4)``; 1 <= I <= N, so a matrix of ``1..N`` covers every item."""
    match = _SPEC.match(spec or "")
    if not match:
        raise ShardError(
            f"--citebench-shard {spec!r}: expected I/N, e.g. 1/4 (shards count from 1)"
        )
    index, total = int(match[1]), int(match[2])
    if total < 1 or not 1 <= index <= total:
        raise ShardError(f"--citebench-shard {spec!r}: need 1 <= I <= N, e.g. 1/4 .. 4/4")
    return Shard(index, total)


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
        (kept if key is None or shard.owns(key) else dropped).append(item)
    return kept, dropped
