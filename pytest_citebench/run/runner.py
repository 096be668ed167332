"""Running items concurrently while pytest runs tests one by one.

pytest calls ``runtest`` in sequence; a model call takes hundreds of milliseconds. So the session
submits items ahead of time to an asyncio loop in a background thread (at most ``concurrency``
in flight), and each test only waits for its own item's future. The work per item (all its model
calls, its cassette, its score) is one coroutine, ``run_item``, which never raises: failures come
back as an ``error`` result so they are reported, counted and never mistaken for a pass.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pytest_citebench.api import (
    Attempt,
    Hint,
    Message,
    Outcome,
    Reply,
    Sample,
    Task,
    ToolCall,
    ToolSpec,
)
from pytest_citebench.errors import CassetteMiss, CassetteNotSaved, CitebenchError
from pytest_citebench.models import Model, track_usage, usage_summary
from pytest_citebench.recording import Recorder, cassette_path, scrub_decoded
from pytest_citebench.recording.notes import drop_note, save_note
from pytest_citebench.results.record import ItemResult
from pytest_citebench.safetext import safe_text
from pytest_citebench.suites import gold_suspect


@dataclass(frozen=True)
class Job:
    """Everything needed to run one (item, task, model) away from pytest."""

    nodeid: str
    item: Sample
    task: Task
    model: Model
    suite_version: int
    corpus: str | None
    cassette_root: Path

    @property
    def cassette(self) -> Path:
        """Keyed by suite version too: bumping a suite's version makes its old answers miss."""
        return cassette_path(
            self.cassette_root,
            self.model.name,
            self.item.suite,
            self.suite_version,
            self.task.name,
            self.item.id,
        )


async def run_item(job: Job, recorder: Recorder | None) -> ItemResult:
    """Solve and score one job; never raises: any failure is an ``error`` result, keys scrubbed."""
    started = time.perf_counter()
    calls = track_usage()

    generate = ItemGenerate(job)

    def result(outcome: Outcome, **kw: Any) -> ItemResult:
        return ItemResult(
            model=job.model.name,
            suite=job.item.suite,
            suite_version=job.suite_version,
            task=job.task.name,
            item_id=job.item.id,
            outcome=outcome,
            duration=round(time.perf_counter() - started, 6),
            nodeid=job.nodeid,
            usage=usage_summary(calls),
            answers_file=job.model.provenance(),
            scorer_version=job.task.scorer_version,
            gold_suspect=gold_suspect(job.item.fields),
            **kw,
        )

    recording = recorder is not None and (
        job.model.traits.records_cassettes or job.task.makes_requests()
    )
    attempt: Attempt | None = None
    try:
        if recorder is not None and recording:
            command = f"pytest --citebench --citebench-model {job.model.name} '{job.nodeid}'"
            with recorder.use(job.cassette, command):
                attempt = await job.task.solve(job.item, generate, suite_corpus=job.corpus)
        else:
            attempt = await job.task.solve(job.item, generate, suite_corpus=job.corpus)
        score = job.task.score(job.item, attempt)
    except CassetteNotSaved as exc:
        # The answer was paid for: it stays in the record (an error all the same, since no
        # replay can reproduce it), with what it would have scored.
        return _unsaved(job, attempt, exc, result)
    except CitebenchError as exc:
        # Provider errors quote requests and URLs; keys in them are scrubbed like cassettes.
        error = scrub_decoded(safe_text(str(exc)))
        if recording and recorder is not None:
            error = _note_recording_error(recorder, job.cassette, exc, error)
        return result(
            "error",
            answer="",
            expected="",
            metrics={},
            error=error,
            reason="the model call or the scoring failed",
        )
    except Exception as exc:  # a bug or an unexpected provider failure: still an error, with trace
        trace = "".join(traceback.format_exception(exc, limit=-6))
        error = scrub_decoded(safe_text(f"{type(exc).__name__}: {exc}\n{trace}"))
        if recording and recorder is not None:
            error = _note_recording_error(recorder, job.cassette, exc, error)
        return result(
            "error",
            answer="",
            expected="",
            metrics={},
            error=error,
            reason=f"unexpected {type(exc).__name__}",
        )
    if recording and recorder is not None and recorder.mode != "none":
        drop_note(job.cassette)
    stages = [asdict(s) for s in attempt.stages]
    return result(
        score.outcome,
        answer=attempt.final.answer if score.answer is None else score.answer,
        expected=score.expected,
        metrics=dict(score.metrics),
        raw_answer=attempt.final.raw,
        stages=stages,
        reason=score.reason or DEFAULT_REASONS.get(score.outcome, score.outcome),
        kind=score.kind,
    )


class ItemGenerate:
    """A task's ``generate`` for one job: a plain answer when called, one turn of a tool-using
    conversation through ``converse``. Every model's text enters the run here."""

    def __init__(self, job: Job) -> None:
        self.job = job

    def _clean(self, text: str) -> str:
        # A lone surrogate (JSON's "\ud800") is made U+FFFD, or the results file, the terminal
        # and the error note could not write it. A remote answer is scored as replay will see
        # it: scrubbed like its cassette (decoded too: a key echoed base64- or
        # percent-encoded), so a model (or a proxy) that echoes a key puts it in neither the
        # results nor the report; an answers file's text is scrubbed the same.
        text = safe_text(text)
        return scrub_decoded(text) if self.job.model.traits.scrubs_answers else text

    async def __call__(self, messages: Sequence[Message], *, hint: Hint) -> str:
        job = self.job
        return self._clean(
            await job.model.answer_item(
                messages, hint=hint, task=job.task.name, item_id=job.item.id
            )
        )

    async def converse(
        self, messages: Sequence[Message], *, hint: Hint, tools: Sequence[ToolSpec]
    ) -> Reply:
        reply = await self.job.model.converse(messages, hint=hint, tools=tools)
        calls = tuple(
            ToolCall(self._clean(c.id), self._clean(c.name), self._clean(c.arguments))
            for c in reply.tool_calls
        )
        return Reply(self._clean(reply.text), calls, reply.tokens)


def _unsaved(
    job: Job, attempt: Attempt | None, exc: CassetteNotSaved, result: Callable[..., ItemResult]
) -> ItemResult:
    """The error record of an item whose cassette was not saved, keeping the answer it got."""
    error = scrub_decoded(safe_text(str(exc)))
    if attempt is None:
        return result("error", answer="", expected="", metrics={}, error=error, reason=exc.reason)
    answer = attempt.final.answer
    try:
        score = job.task.score(job.item, attempt)
    except Exception:  # the answer is what matters here; a scoring failure must not hide it
        expected, metrics = "", {}
    else:
        expected, metrics = score.expected, dict(score.metrics)
        answer = answer if score.answer is None else score.answer
        error += f" (it scored {score.outcome})"
    return result(
        "error",
        answer=answer,
        expected=expected,
        metrics=metrics,
        raw_answer=attempt.final.raw,
        stages=[asdict(s) for s in attempt.stages],
        error=error,
        reason=exc.reason,
    )


#: The reason of an outcome when a task has nothing more specific to say.
DEFAULT_REASONS: dict[str, str] = {
    "correct": "judged correct by the task's rule",
    "partial": "nothing invented, but incomplete",
    "abstained": "the model declined",
    "unanswered": "the reply names no citation",
    "hallucinated": "judged wrong by the task's rule",
}


def _note_recording_error(recorder: Recorder, cassette: Path, exc: Exception, error: str) -> str:
    """A recording run whose item failed saves no cassette; the error is kept beside where the
    cassette would be, so a later replay reports this cause and not a bare "no cassette".
    Returns the item's error, which says so when the note was refused (a link planted there)."""
    if recorder.mode == "none" or isinstance(exc, CassetteMiss):
        return error
    from pytest_citebench.recording.cassettes import NotPlainFile

    try:
        save_note(cassette, error)
    except NotPlainFile as refused:
        return f"{error}\n  its error note was not written: {refused}"
    except OSError:
        pass  # the item is an error either way; the note only explains a later replay
    return error


class _TrackingExecutor(concurrent.futures.ThreadPoolExecutor):
    """The engine loop's default executor, remembering what it ran.

    Why: ``litellm.acompletion`` runs the synchronous ``completion()`` through
    ``loop.run_in_executor``, and for OpenAI-style providers that call only *builds* the request
    coroutine (``OpenAIChatCompletion.acompletion``) and returns it to be awaited. When the engine
    cancels an item mid-call (``--citebench-max-errors``, Ctrl-C), the executor's result is
    dropped, and that coroutine was garbage-collected unawaited: "coroutine ... was never
    awaited" at the end of the run. ``close_orphans`` closes such coroutines once the loop has
    stopped and nothing can await them any more.
    """

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="citebench-call")
        # Strong references: a dropped future would free its coroutine, unawaited, before
        # close_orphans could close it. Pruned as calls are consumed, so this stays small.
        self._held: set[concurrent.futures.Future[Any]] = set()
        self._prune_at = 64
        self._lock = threading.Lock()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        with self._lock:
            self._held.add(future)
            if len(self._held) > self._prune_at:
                self._held = {f for f in self._held if _may_be_orphaned(f)}
                self._prune_at = max(64, 2 * len(self._held))
        return future

    def close_orphans(self) -> None:
        """The loop has stopped: close every coroutine a call returned that never started,
        now or (for calls still running) when they return."""
        with self._lock:
            held, self._held = self._held, set()
        for future in held:
            future.add_done_callback(_close_unstarted)
        self.shutdown(wait=False, cancel_futures=True)


def _may_be_orphaned(future: concurrent.futures.Future[Any]) -> bool:
    """Still running, or returned a coroutine nobody has started yet."""
    if not future.done():
        return True
    if future.cancelled() or future.exception() is not None:
        return False
    result = future.result()
    return inspect.iscoroutine(result) and inspect.getcoroutinestate(result) == inspect.CORO_CREATED


def _close_unstarted(future: concurrent.futures.Future[Any]) -> None:
    if future.cancelled() or future.exception() is not None:
        return
    result = future.result()
    if inspect.iscoroutine(result) and inspect.getcoroutinestate(result) == inspect.CORO_CREATED:
        result.close()


class Engine:
    """An asyncio loop in a daemon thread with a concurrency limit."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)
        self._loop = asyncio.new_event_loop()
        self._executor = _TrackingExecutor()
        self._loop.set_default_executor(self._executor)
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="citebench-engine", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._semaphore = asyncio.Semaphore(self.concurrency)
        self._per_model: dict[str, asyncio.Semaphore] = {}
        self._loop.call_soon(self._ready.set)
        self._loop.run_forever()

    async def _limited(
        self, factory: Callable[[], Awaitable[ItemResult]], key: str | None, limit: int | None
    ) -> ItemResult:
        if key is None or limit is None:
            async with self._semaphore:
                return await factory()
        # A model's own limit (a profile's concurrency: a one-slot local server) inside the
        # run's: waiting for the model's slot holds no slot of the run's budget.
        if key not in self._per_model:
            self._per_model[key] = asyncio.Semaphore(max(1, limit))
        async with self._per_model[key], self._semaphore:
            return await factory()

    def submit(
        self,
        factory: Callable[[], Awaitable[ItemResult]],
        key: str | None = None,
        limit: int | None = None,
    ) -> concurrent.futures.Future[ItemResult]:
        """Callable from pytest's thread; ``limit`` caps the ``key`` model inside the run's cap."""
        return asyncio.run_coroutine_threadsafe(self._limited(factory, key, limit), self._loop)

    def close(self) -> None:
        """Cancel whatever has not finished (an interrupted run) and stop the thread."""

        def _cancel_all() -> None:
            for task in asyncio.all_tasks(self._loop):
                task.cancel()
            self._loop.call_soon(self._loop.stop)

        if self._loop.is_running():
            self._loop.call_soon_threadsafe(_cancel_all)
            self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._executor.close_orphans()
