"""xdist from inside a worker: which slot this process is, and its share of run-wide budgets.

Concurrency and cost are budgets of the whole run: a provider's rate limit must not double
because two workers run. Each worker takes its exact share (the shares add up to the total).
"""

from __future__ import annotations

from typing import Any

import pytest


def worker_slot(config: pytest.Config) -> tuple[int, int] | None:
    """(index, count) of this xdist worker; None in the controller or without xdist."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    count = int(workerinput.get("workercount", 1))
    workerid = str(workerinput.get("workerid", "gw0"))
    index = int(workerid[2:]) if workerid[2:].isdigit() else 0
    return index, max(1, count)


def share(total: int, index: int, count: int) -> int:
    """This worker's part of a run-wide budget of ``total`` slots: the parts add up to
    ``total`` exactly, so ``-n 2`` never doubles what a provider sees in flight."""
    return total // count + (1 if index < total % count else 0)


def xdist_workers(config: pytest.Config) -> int:
    """Workers this (controller) run will start: 0 without xdist or with ``-n 0``."""
    if getattr(config, "workerinput", None) is not None:
        return 0
    try:
        count = config.getoption("numprocesses")
        dist = config.getoption("dist")
    except ValueError:  # xdist not installed
        return 0
    return count if isinstance(count, int) and dist != "no" else 0


def xdist_queue(config: pytest.Config) -> Any:
    """The worker's queue of test indices (xdist internals; None if not there)."""
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None
