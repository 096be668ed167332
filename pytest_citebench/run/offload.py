"""The built-in models' cases solved and scored in forked processes, beside pytest's own thread.

Why: a built-in model (``citebench/*``) or an answers file calls nothing; its cases are pure
Python, so the engine's thread and pytest's thread only took turns at the GIL, and a run used one
core whatever the machine had (issue 46: the IR suite's 13,232 cases spent as long in solve and
score as in pytest's own protocol). Here the work runs in ``processes`` children forked once the
items are collected, in spans of consecutive cases; pytest's thread only runs the protocol and
takes each case's result as its test runs. A child inherits the collected jobs (nothing is
pickled but span bounds and results) and builds its own indexes; results come back in order, at
most ``window`` spans ahead of the test that needs them, so they never pile up in memory.

Never a different answer: a case runs the same ``run_item`` as on the engine, and a case whose
span cannot come back runs on pytest's thread instead: after a child died, with a warning
saying why; when pytest asks for a case whose span was not submitted yet (another plugin
reordered the items), silently, as the result is the same.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_citebench.results.record import ItemResult
    from pytest_citebench.run.runner import Job

#: Below this many cases, forking and warming a child costs more than it saves.
AUTO_MIN_CASES = 1000
#: Cases per span: one round trip to a child each (~64 results, tens of KB, pickled).
SPAN = 64
#: At most this many processes by default, whatever the machine.
AUTO_MAX_PROCESSES = 4

# The jobs of the run, set in the parent just before the children are forked: they read it from
# the memory they inherit, so no job is ever pickled.
_JOBS: Sequence[Job] = ()
_LOOP: asyncio.AbstractEventLoop | None = None


def auto_processes(cases: int) -> int:
    """How many children a run of ``cases`` gets when ``--citebench-processes`` is not set: one
    core is left to pytest's thread; none below ``AUTO_MIN_CASES`` or where fork is not the
    platform's safe default (Linux only)."""
    if cases < AUTO_MIN_CASES or not can_fork():
        return 0
    return max(0, min(AUTO_MAX_PROCESSES, usable_cpus() - 1))


def can_fork() -> bool:
    return sys.platform.startswith("linux")


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _child_init() -> None:
    from pytest_citebench.models import one_case_at_a_time

    one_case_at_a_time()
    # Ctrl-C reaches the whole process group: the parent stops the run and then its children;
    # a child that died of it first would only turn the parent's cases into fallbacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_span(start: int, stop: int) -> list[ItemResult]:
    """In a child: the cases ``start:stop`` of the inherited jobs, in order."""
    from pytest_citebench.run.runner import run_item

    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return [_LOOP.run_until_complete(run_item(job, None)) for job in _JOBS[start:stop]]


class Offload:
    """The children and the spans in flight; one per run, on the controller (or ``-n 0``)."""

    def __init__(self, jobs: Sequence[Job], processes: int, *, window: int | None = None) -> None:
        self.jobs = jobs
        self.processes = processes
        self.window = window or 4 * processes
        self._index = {job.nodeid: i for i, job in enumerate(jobs)}
        self._spans: dict[int, concurrent.futures.Future[list[ItemResult]]] = {}
        self._done: dict[int, list[ItemResult | None]] = {}
        self._next_span = 0
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.fallbacks = 0
        self.broken: str | None = None

    def start(self) -> None:
        global _JOBS
        _JOBS = self.jobs
        context = multiprocessing.get_context("fork")
        self._pool = concurrent.futures.ProcessPoolExecutor(
            self.processes, mp_context=context, initializer=_child_init
        )
        self._fill()

    def _fill(self) -> None:
        spans = (len(self.jobs) + SPAN - 1) // SPAN
        while (
            self._pool is not None
            and self._next_span < spans
            and (len(self._spans) + len(self._done) < self.window)
        ):
            start = self._next_span * SPAN
            stop = min(start + SPAN, len(self.jobs))
            self._spans[self._next_span] = self._pool.submit(_run_span, start, stop)
            self._next_span += 1

    def result(self, nodeid: str) -> ItemResult | None:
        """The case's result, waiting for its span; None when it must run here instead (not one
        of the jobs, its span never submitted or lost): the caller runs it inline."""
        index = self._index.get(nodeid)
        if index is None or self.broken is not None:
            self._fallback()
            return None
        span, offset = divmod(index, SPAN)
        if span not in self._done:
            future = self._spans.pop(span, None)
            if future is None:
                self._fallback()
                return None
            try:
                self._done[span] = list(future.result())
            except Exception as exc:  # a child died (killed, out of memory), a bug outside run_item
                self._break(f"{type(exc).__name__}: {exc}")
                self._fallback()
                return None
        results = self._done[span]
        found = results[offset]
        results[offset] = None
        if found is None:  # asked twice (a rerun plugin): run it again, here
            self._fallback()
            return None
        if all(r is None for r in results):
            del self._done[span]
        self._fill()
        return found

    def _fallback(self) -> None:
        """A case the caller runs here, counted."""
        self.fallbacks += 1

    def _break(self, why: str) -> None:
        self.broken = why
        warnings.warn(
            f"citebench: the process solving cases beside pytest failed ({why}); the remaining "
            "cases run in pytest's own process (--citebench-processes 0 does so from the start)",
            RuntimeWarning,
            stacklevel=2,
        )
        self.close()

    def close(self) -> None:
        global _JOBS
        pool, self._pool = self._pool, None
        for future in self._spans.values():
            future.cancel()
        self._spans.clear()
        self._done.clear()
        _JOBS = ()
        if pool is not None:
            # A child busy with a span would finish it before exiting: end it now.
            children = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in children:
                if process.is_alive():
                    process.terminate()
            # Gone before the run goes on: a child holds copies of the parent's descriptors
            # (the results file's lock among them) for as long as it lives.
            for process in children:
                process.join(timeout=5)
