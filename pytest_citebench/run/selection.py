"""``--citebench-id``/``--citebench-ids`` and ``--citebench-sample``: which items a run keeps.

Why not ``-k``: ``-k 2001.00001-s1`` is a substring match, so it also runs ``2001.00001-s10``
and anything else that contains it, and a mistyped id silently runs nothing. Ids here match a
suite item's ``id`` (or ``SUITE::ID``) exactly, and an id no collected item has is a usage error
naming it. A sample is a cheap first run: N items per suite x task, picked by a hash of the
seed, suite and item id, so it is the same on every machine for the same seed, every model and
RAG variant of a picked item runs (paired comparisons stay paired), and the tasks of a suite pick
the same items where they can.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

# The options are checked with the other settings (settings/scope.py); importable from here as
# before.
from pytest_citebench.settings import Selection, SelectionError, make_selection, read_ids_file

__all__ = ["Selection", "SelectionError", "make_selection", "read_ids_file", "select"]


def _job(item: Any) -> Any:
    return getattr(item, "job", None)


def _rank(seed: int, suite: str, item_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\0{suite}\0{item_id}".encode()).digest()


def unknown_ids(unknown: Sequence[str]) -> str:
    """The usage error for ids no collected item has (at start-up and at collection alike)."""
    return (
        f"--citebench-id: no collected item has the id {', '.join(map(repr, unknown))}; "
        "ids match a suite item's id (or SUITE::ID) exactly, among the suites and tasks "
        "this run collects"
    )


def select(items: Sequence[Any], selection: Selection) -> tuple[list[Any], list[Any]]:
    """(kept, deselected), each in collection order. Items that are not citebench cases (an
    invalid suite's failing test, the user's own tests) are always kept; skipped adversarial
    swaps are dropped, as they name no item that was asked for.

    Raises ``SelectionError`` for an id no collected item has."""
    keep = [_job(item) is not None or type(item).__name__ != "SkippedSwap" for item in items]
    if selection.ids:
        wanted = set(selection.ids)
        seen: set[str] = set()
        for n, item in enumerate(items):
            job = _job(item)
            if job is None:
                continue
            names = {job.item.id, f"{job.item.suite}::{job.item.id}"} & wanted
            seen |= names
            keep[n] = bool(names)
        unknown = [i for i in selection.ids if i not in seen]
        if unknown:
            raise SelectionError(unknown_ids(unknown))
    if selection.sample is not None:
        strata: dict[tuple[str, str], set[str]] = defaultdict(set)
        for n, item in enumerate(items):
            job = _job(item)
            if job is not None and keep[n]:
                strata[(job.item.suite, job.task.name)].add(job.item.id)
        picked = {
            (suite, task): set(sorted(ids, key=lambda i: _rank(selection.seed, suite, i))[:n])
            for (suite, task), ids in strata.items()
            for n in (selection.sample,)
        }
        for n, item in enumerate(items):
            job = _job(item)
            if job is not None and keep[n]:
                keep[n] = job.item.id in picked[(job.item.suite, job.task.name)]
    kept = [item for n, item in enumerate(items) if keep[n]]
    dropped = [item for n, item in enumerate(items) if not keep[n]]
    return kept, dropped
