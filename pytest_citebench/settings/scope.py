"""Which items a run keeps, as asked: ``--citebench-shard I/N`` (:class:`Shard`) and
``--citebench-id``/``--citebench-ids``/``--citebench-sample``/``--citebench-seed``
(:class:`Selection`), parsed and checked once when the settings are resolved, so a bad value is
a usage error before collection.

Only the values live here; ``run/sharding.py`` and ``run/selection.py`` apply them to the
collected items (and say why a hash decides).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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


class SelectionError(ValueError):
    """An id list or sample setting that cannot be used; the message says what to do."""


@dataclass(frozen=True)
class Selection:
    """The ids asked for (in the order given, each once) and the sample size and seed."""

    ids: tuple[str, ...] = ()
    sample: int | None = None
    seed: int = 0

    @property
    def active(self) -> bool:
        return bool(self.ids) or self.sample is not None


def read_ids_file(path: Path) -> list[str]:
    """One id a line; blank lines and ``#`` comments are skipped. A file that cannot be read is
    a ``SelectionError`` naming it. A UTF-8 byte-order mark (Notepad, Excel's "CSV UTF-8") is
    not part of the first line: read with it, the first id (or comment) was not found."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SelectionError(
            f"--citebench-ids {path}: cannot read it ({exc}); give a UTF-8 file, one item id a line"
        ) from None
    ids = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            ids.append(line)
    if not ids:
        raise SelectionError(f"--citebench-ids {path}: the file names no item id (one a line)")
    return ids


def make_selection(
    ids: Sequence[str], ids_file: Path | None, sample: int | None, seed: int | None
) -> Selection:
    """The options checked together: a sample of at least 1, a seed only with a sample."""
    wanted = [i.strip() for i in ids]
    if any(not i for i in wanted):
        raise SelectionError("--citebench-id: an empty id; give an item id from items.jsonl")
    if ids_file is not None:
        wanted += read_ids_file(ids_file)
    if sample is not None and sample < 1:
        raise SelectionError(
            f"--citebench-sample {sample}: give at least 1 (items per suite x task)"
        )
    if seed is not None and sample is None:
        raise SelectionError("--citebench-seed needs --citebench-sample N (it seeds the sample)")
    return Selection(tuple(dict.fromkeys(wanted)), sample, seed if seed is not None else 0)
