"""xdist: which slot a worker is, its share of run-wide budgets, and how cases reach it.

Concurrency and cost are budgets of the whole run: a provider's rate limit must not double
because two workers run. Each worker takes its exact share (the shares add up to the total).

A worker starts its cases' calls ahead of pytest (``Scheduler``), but only cases the controller
has sent it. xdist's ``load`` scheduling refills a worker's queue only once it is nearly empty
when a test took 0.1 s or more ("long-running tests"), and ours always do (a test waits for
its answer): a worker then had two cases to start, not the dozens of calls its share of
``--citebench-concurrency`` allows, and in the last third of a live run its calls in flight
fell from 32 to a handful while its core idled. ``deep_load_scheduling`` keeps every queue at
least a prefetch window deep while cases remain.
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


def prefetch_window(concurrency: int) -> int:
    """Cases a process starts ahead of pytest: enough to keep ``concurrency`` calls in flight
    while some cases wait for their later stages or are being scored."""
    return max(64, 4 * concurrency)


def deep_load_scheduling(config: pytest.Config, log: Any, concurrency: int, workers: int) -> Any:
    """xdist's ``load`` scheduling, keeping each worker's queue at least its prefetch window
    deep (``concurrency``: the run's, split over ``workers``) while cases remain; the rest
    (the first batch, the end, a crashed worker's cases) is xdist's own."""
    from xdist.scheduler import LoadScheduling

    low = prefetch_window(share(concurrency, 0, max(1, workers)))  # the largest share
    top_up = low + max(2, low // 4)  # refilled a chunk at a time, not a case at a time

    class DeepLoadScheduling(LoadScheduling):
        def check_schedule(self, node: Any, duration: float = 0) -> None:
            queued = self.node2pending.get(node)
            if not node.shutting_down and self.pending and queued is not None and len(queued) < low:
                self._send_tests(node, top_up - len(queued))
                return
            super().check_schedule(node, duration)

    return DeepLoadScheduling(config, log)


def xdist_queue(config: pytest.Config) -> Any:
    """The worker's queue of test indices (xdist internals; None if not there)."""
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None
