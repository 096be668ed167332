"""When each case runs: ahead of its test on the engine's thread, inline on pytest's thread
(a replay), or in forked children (the built-in models, ``offload``), with the collector tuned
and litellm, vcrpy and nltk prepared once, before the first. On an xdist worker it peeks at the
worker's queue so the cases it will run next start early."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import gc
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_citebench.run.offload import Offload, auto_processes, can_fork
from pytest_citebench.run.runner import Engine, Job, run_item
from pytest_citebench.run.workers import prefetch_window, xdist_queue

if TYPE_CHECKING:
    from pytest_citebench.models import Model
    from pytest_citebench.recording import Recorder
    from pytest_citebench.results.record import ItemResult
    from pytest_citebench.settings import Options

# The collector's thresholds while cases run. A replayed call allocates thousands of objects
# (litellm's request, logging and response models), so at CPython's default (700, 10, 10) the
# young generation is collected every few calls and the whole heap, which grows with every
# record, every few hundred cases: 1.8 s of a 4,000-case replay's ~24 s of CPU, against 1.0 s
# with these (measured with gc.callbacks; peak RSS 411 against 413 MB). Cycles are still
# collected, only in larger batches; the process's own thresholds come back when the run ends.
GC_THRESHOLDS = (50_000, 20, 10)


class Scheduler:
    """One per process; starts nothing until the first case asks."""

    def __init__(
        self, config: pytest.Config, options: Options, models: Sequence[Model], *, is_worker: bool
    ) -> None:
        self.config = config
        self.options = options
        self.models = models
        self.is_worker = is_worker
        self._engine: Engine | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._prepared = False
        self._gc_thresholds: tuple[int, int, int] | None = None
        self._recorder: Recorder | None = None
        self._futures: dict[str, concurrent.futures.Future[ItemResult]] = {}
        self._queue_owner: Any = None
        self._queue_checked = False
        self._offload: Offload | None = None
        if options.processes and not is_worker and not self._offloadable():
            raise pytest.UsageError(
                f"--citebench-processes {options.processes}: only the built-in models "
                "(citebench/*) and answers files are solved in other processes; a provider's "
                "calls run concurrently on one thread (--citebench-concurrency)"
            )

    def _offloadable(self) -> bool:
        """Every model is pure Python in this process and no task sends requests of its own
        (those need the recorder, which lives in this process)."""
        return all(m.traits.runs_in_process for m in self.models) and not _tasks_make_requests()

    def _processes(self, cases: int) -> int:
        if self.is_worker or not cases or not self._offloadable():
            return 0  # under xdist the workers are the other processes
        if self.options.processes is None:
            return auto_processes(cases)
        return self.options.processes if can_fork() else 0

    @functools.cached_property
    def runs_inline(self) -> bool:
        """Replay of remote models only: each case runs on pytest's thread when its test runs.

        Why: nothing in a replay waits on the network (vcrpy refuses what it has not recorded),
        so running cases ahead on the engine thread overlaps nothing; it only made two threads
        take turns at the GIL and hand every result across. Models that run in-process keep
        the engine: their encoders release the GIL."""
        return self.options.record == "none" and not any(
            m.traits.runs_in_process for m in self.models
        )

    def _run_inline(self, job: Job) -> ItemResult:
        self._prepare()
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        task = self._loop.create_task(run_item(job, self._recorder))
        try:
            return self._loop.run_until_complete(task)
        except BaseException:  # Ctrl-C mid-case: leave no task pending on the loop
            task.cancel()
            with contextlib.suppress(BaseException):
                self._loop.run_until_complete(task)
            raise

    def _prepare(self) -> None:
        """Once, before the first case: litellm imported, vcrpy patched, nltk loaded."""
        if self._prepared:
            return
        self._prepared = True
        if any(m.traits.records_cassettes for m in self.models) or _tasks_make_requests():
            from pytest_citebench.models.litellm_backend import litellm
            from pytest_citebench.recording import Recorder

            litellm()  # import once, here, not inside the first timed call
            self._recorder = Recorder(self.options.cassettes, self.options.record)
            self._recorder.activate()
            from pytest_citebench.recording import add_secrets, secret_param_values

            # Keys passed as parameters (an api_key, a token in extra_headers) are scrubbed
            # from every printed text like keys in the environment.
            add_secrets([s for m in self.models for s in secret_param_values(dict(m.params.extra))])
        from pytest_citebench.metrics.text import tokenize

        tokenize("warm up")  # imports nltk here, not on the engine thread mid-run
        # Everything imported so far lives until exit: keep the collector from walking it
        # again and again (it cost ~2 s at shutdown of a 1,000-item live run).
        gc.collect()
        gc.freeze()

    def _start(self) -> Engine:
        if self._engine is None:
            self._prepare()
            self._engine = Engine(self.options.concurrency)
        return self._engine

    def submit(self, items: Sequence[pytest.Item]) -> None:
        """Start our cases not yet started (others are ignored); the engine starts on the first."""
        if self.runs_inline:
            return
        engine = None
        for item in items:
            # Our cases carry their job (items.CaseItem); other tests in the run do not.
            job = getattr(item, "job", None)
            if isinstance(job, Job) and item.nodeid not in self._futures:
                engine = engine or self._start()
                model = job.model
                self._futures[item.nodeid] = engine.submit(
                    functools.partial(run_item, job, self._recorder),
                    key=model.name,
                    limit=model.concurrency,
                )

    def prefetch(self, session: pytest.Session) -> None:
        """Submit every item this process will run: all of them, or on an xdist worker, the ones
        already queued for it (refreshed as each test starts); or, for the built-in models, hand
        them to forked children (``offload``) that solve them beside pytest's thread."""
        if self.is_worker:
            return
        jobs = [j for j in (getattr(i, "job", None) for i in session.items) if isinstance(j, Job)]
        processes = self._processes(len(jobs))
        if processes:
            self._prepare()  # before the fork: the children inherit nltk and a frozen heap
            self._offload = Offload(jobs, processes)
            self._offload.start()
            return
        self.submit(session.items)

    def _prefetch_worker_queue(self, session: pytest.Session) -> None:
        if not self._queue_checked:
            self._queue_checked = True
            self._queue_owner = xdist_queue(self.config)
        owner = self._queue_owner
        if owner is None:
            return
        window = prefetch_window(self.options.concurrency)
        try:
            with owner.torun.lock() as queue:
                indices = [i for i in itertools.islice(queue, window) if isinstance(i, int)]
        except Exception:  # xdist internals changed: fall back to one item at a time
            self._queue_owner = None
            return
        next_index = getattr(owner, "nextitem_index", None)
        if isinstance(next_index, int):
            indices.insert(0, next_index)
        self.submit([session.items[i] for i in indices if 0 <= i < len(session.items)])

    def result_for(self, item: pytest.Item) -> ItemResult:
        """Block on the case's result, submitting it (and a worker's queue) if not yet running."""
        job = getattr(item, "job", None)
        if self._offload is not None and isinstance(job, Job):
            found = self._offload.result(item.nodeid)
            return found if found is not None else self._run_inline(job)
        if self.runs_inline and isinstance(job, Job):
            return self._run_inline(job)
        if self.is_worker:
            self._prefetch_worker_queue(item.session)
        self.submit([item])
        return self._futures.pop(item.nodeid).result()

    def tune_gc(self) -> None:
        """``GC_THRESHOLDS`` from here until ``close``; on every process, the controller too (it
        keeps every record and parses every report)."""
        if self._gc_thresholds is None:
            self._gc_thresholds = gc.get_threshold()
            gc.set_threshold(*GC_THRESHOLDS)

    def close(self) -> None:
        """Stop the engine and vcrpy (the results file is the ledger's)."""
        if self._gc_thresholds is not None:
            gc.set_threshold(*self._gc_thresholds)
            self._gc_thresholds = None
        if self._offload is not None:
            self._offload.close()
            self._offload = None
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        if self._recorder is not None:
            self._recorder.deactivate()
            self._recorder = None


def _tasks_make_requests() -> bool:
    """A task whose settings make it send requests of its own (a live search) needs the
    recorder even when every model runs in-process."""
    from pytest_citebench import registry

    return any(task.makes_requests() for task in registry.all_tasks())
