"""Models: anything that turns chat messages into text. Remote ones go through litellm (any
provider); ``citebench/*`` ones are local baselines that need no key, no network and no cassette.

litellm costs seconds to import, so nothing here imports it until a remote model is asked for.

May import: errors, safetext, jsonl, api, registry, retrieval (the built-in baselines
search a corpus), recording (remote calls go through a cassette).
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from pytest_citebench.api import Hint, Message, Reply, ToolSpec
from pytest_citebench.errors import CassetteMiss, ProviderError, ResponseError
from pytest_citebench.models.budget import Budget
from pytest_citebench.models.types import (
    DEFAULT_MODEL,
    LOCAL_PREFIX,
    REPLAY_API_KEY,
    RetryPolicy,
    SamplingParams,
    fold_system,
    local_answer,
    offline_environment,
)
from pytest_citebench.models.usage import CallUsage, current_calls, track_usage, usage_summary

if TYPE_CHECKING:
    from pytest_citebench.models.litellm_backend import Completion


@dataclass(frozen=True)
class Traits:
    """What a model is, each asked by the code that needs it (instead of one "local" flag that
    meant all of these at once)."""

    # Recording needs the provider's key in the environment (a local server's profile says no).
    needs_key: bool
    # Its calls cost money: litellm prices them, and --citebench-max-cost caps them.
    priced: bool
    # Its calls go through vcrpy: recorded into cassettes, replayed from them, answers scrubbed.
    records_cassettes: bool
    # It runs in this process (encoders that release the GIL): cases keep the engine's thread.
    runs_in_process: bool
    # It reads the sampling settings (temperature, top_p, max_tokens).
    samples: bool
    # Its answers are text from outside this process (a provider, a file someone wrote): keys
    # in them are scrubbed before they are scored, stored or printed. False only for the
    # built-in baselines, whose answers are the suite's own corpus.
    scrubs_answers: bool = False
    # It answers the prompt it is given, so a wrapper that changes the prompt (RAG) changes what
    # it answers; an answers file answers each item by id, whatever the prompt.
    reads_prompt: bool = True


# A ``citebench/*`` baseline or an answers file: no key, no cost, no cassette, no sampling.
IN_PROCESS = Traits(
    needs_key=False, priced=False, records_cassettes=False, runs_in_process=True, samples=False
)


R = TypeVar("R")

# Whether this process runs one case at a time (a child of run/offload.py): then there is no other
# case for the event loop to serve while blocking work runs, and handing that work to a thread
# only adds the hand-off (2.1 of 15.5 s of the IR suite's solve and score, 16,388 hand-offs).
_ONE_CASE_AT_A_TIME = False


def one_case_at_a_time() -> None:
    """Called by a process that runs its cases one after another: ``blocking`` runs inline."""
    global _ONE_CASE_AT_A_TIME
    _ONE_CASE_AT_A_TIME = True


async def blocking(func: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
    """``func(*args, **kwargs)`` off the event loop (``asyncio.to_thread``, in this context) where
    other cases share the loop; inline where the process runs one case at a time."""
    if _ONE_CASE_AT_A_TIME:
        return func(*args, **kwargs)
    return await asyncio.to_thread(func, *args, **kwargs)


def on_loopback(api_base: str | None) -> bool:
    """An endpoint on this machine (127.0.0.0/8, ::1, localhost): a self-hosted server, which
    needs no provider key to be reached."""
    if not api_base:
        return False
    try:
        host = urlsplit(api_base).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: only "localhost" is known to be this machine
        return False


@dataclass
class Model:
    """A named model with its settings; ``complete`` is the one thing tasks call.

    ``name`` is what reports, node ids and cassette paths say: the profile's name when a profile
    was used. ``litellm_model`` is what litellm is asked for (the name itself by default).
    """

    name: str
    params: SamplingParams = field(default_factory=SamplingParams)
    api_base: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    # Replay never reaches the provider, so CI needs no key: a placeholder satisfies SDKs that
    # refuse to build a client without one (the header is filtered from cassettes anyway).
    replay_only: bool = False
    litellm_model: str | None = None
    system_role: str = "system"
    concurrency: int | None = None
    needs_key: bool = True
    budget: Budget | None = None
    _loopback_keyless: bool | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def traits(self) -> Traits:
        """A ``citebench/*`` baseline (by name or profile) runs in-process; any other name is a
        provider's model, called through litellm."""
        if (self.litellm_model or self.name).startswith(LOCAL_PREFIX):
            return IN_PROCESS
        return Traits(
            needs_key=self.needs_key and not on_loopback(self.api_base),
            priced=True,
            records_cassettes=True,
            runs_in_process=False,
            samples=True,
            scrubs_answers=True,
        )

    async def complete(self, messages: Sequence[Message], *, hint: Hint) -> str:
        """Local models answer from the hint; remote ones get the messages, with retries and the
        budget checked before each paid call."""
        if self.traits.runs_in_process:
            return local_answer(self.litellm_model or self.name, hint, dict(self.params.extra))
        return await self._complete_remote(messages)

    async def answer_item(
        self, messages: Sequence[Message], *, hint: Hint, task: str, item_id: str
    ) -> str:
        """What a task's ``generate`` calls: the model's answer to this item's prompt. Only an
        answers file (``answers:FILE``) needs the task and item; every other model completes."""
        return await self.complete(messages, hint=hint)

    def provenance(self) -> dict[str, str] | None:
        """Where answers came from when not from the model itself (an answers file's path and
        sha256), kept in every item record; None for a model."""
        return None

    def input_files(self) -> tuple[tuple[str, Path], ...]:
        """The files this model reads its answers from, each with the option that named it, so
        that no output of the run may overwrite one (an answers file); none for a model."""
        return ()

    def _keyless_loopback(self, model: str) -> bool:
        """A server on this machine with no provider key in the environment: it gets the
        placeholder key, as the SDK will not build a client without one. With the key set, the
        key is sent (a local proxy in front of a provider may need it). Decided once per model:
        litellm's environment check costs a lookup per call otherwise."""
        if not on_loopback(self.api_base):
            return False
        if self._loopback_keyless is None:
            from pytest_citebench.models.litellm_backend import missing_key

            self._loopback_keyless = missing_key(model, self.api_base) is not None
        return self._loopback_keyless

    async def converse(
        self, messages: Sequence[Message], *, hint: Hint, tools: Sequence[ToolSpec]
    ) -> Reply:
        """One turn of a tool-using conversation: the built-in models run the deterministic
        agent (``models.agent``); remote ones get the messages with the tools, through the same
        retries, budget and cassette as every call (each turn is one recorded request)."""
        if self.traits.runs_in_process:
            from pytest_citebench.models.agent import agent_turn

            return agent_turn(messages, tools=tools, hint=hint, options=dict(self.params.extra))
        extra = {"tools": [t.to_openai() for t in tools]} if tools else {}
        done = await self._call_remote(messages, extra)
        tokens = None
        if done.prompt_tokens is not None and done.completion_tokens is not None:
            tokens = done.prompt_tokens + done.completion_tokens
        return Reply(done.text, done.tool_calls, tokens)

    async def _complete_remote(self, messages: Sequence[Message]) -> str:
        return (await self._call_remote(messages, {})).text

    async def _call_remote(self, messages: Sequence[Message], extra: dict[str, Any]) -> Completion:
        from pytest_citebench import recording
        from pytest_citebench.models.litellm_backend import acompletion, completion, retryable

        kwargs = {**self.params.as_kwargs(), **extra}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        model = self.litellm_model or self.name
        if self.replay_only or not self.needs_key or self._keyless_loopback(model):
            kwargs.setdefault("api_key", REPLAY_API_KEY)
        payload = [message_payload(m) for m in messages]
        if self.system_role == "user":
            payload = fold_system(payload)
        calls = current_calls()
        for attempt in range(self.retry.retries + 1):
            miss_before = recording.miss_count()
            mark = recording.recorded_count()
            if self.budget is not None and not self.replay_only:
                self.budget.check(self.name)
            started = time.perf_counter()
            played = recording.played_count()
            try:
                if self.replay_only:
                    # Nothing can reach the network: the call is pure CPU, and sync is cheaper.
                    done = completion(model, payload, timeout=self.retry.timeout, **kwargs)
                else:
                    done = await acompletion(model, payload, timeout=self.retry.timeout, **kwargs)
            except ResponseError:
                raise
            except Exception as exc:
                # A 200 the client could not read (fractional token counts make litellm refuse
                # the body) was still served, and may be billed: the budget counts its most.
                answered = recording.answered_since(mark)
                # A failed attempt's recording (a malformed 200) is never saved or replayed.
                recording.forget_since(mark)
                if answered and self.budget is not None and not self.replay_only:
                    from pytest_citebench.models.litellm_backend import upper_bound_cost

                    self.budget.add(
                        upper_bound_cost(model, payload, kwargs),
                        self.name,
                        why="the answer could not be read",
                    )
                if recording.played_count() > played:
                    # A recorded response was served and could not be used (a body edited after
                    # recording): replay is deterministic, so retrying would only turn it into a
                    # miss of the same request, reported as "no recording".
                    raise recording.unusable_error(exc) from None
                if recording.miss_count() > miss_before:
                    raise recording.miss_error() from None
                can_retry, retry_after = retryable(exc)
                if not can_retry or attempt == self.retry.retries:
                    raise ProviderError(
                        f"{self.name}: {type(exc).__name__}: {_without_traceback(exc)}".strip()
                        + (
                            "; the server answered, but with a body the client could not read"
                            if answered
                            else ""
                        )
                        + (f" (after {attempt + 1} attempts)" if attempt else "")
                    ) from exc
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
                continue
            if calls is not None:
                calls.append(
                    CallUsage(
                        done.prompt_tokens,
                        done.completion_tokens,
                        done.cost,
                        time.perf_counter() - started,
                        replayed=recording.played_count() > played,
                        untrusted=done.untrusted,
                    )
                )
            if self.budget is not None and recording.played_count() == played:  # a paid call
                self.budget.add(done.charged, self.name, why=done.untrusted)
            return done
        raise AssertionError("unreachable")


def message_payload(message: Message) -> dict[str, Any]:
    """A message as the chat-completions API takes it: a tool-using turn carries its calls, a
    tool's result the id of the call it answers."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    return out


def _without_traceback(exc: BaseException) -> str:
    """The exception's message without the Python traceback litellm pastes into some of them
    ("Invalid response object Traceback (most recent call last): ..."): an item's error is one
    readable reason, never a traceback."""
    text = str(exc)
    cut = text.find("Traceback (most recent call last)")
    return text if cut < 0 else text[:cut].rstrip() + " (litellm's traceback left out)"


__all__ = [
    "DEFAULT_MODEL",
    "LOCAL_PREFIX",
    "REPLAY_API_KEY",
    "Budget",
    "CallUsage",
    "CassetteMiss",
    "Model",
    "ProviderError",
    "ResponseError",
    "RetryPolicy",
    "SamplingParams",
    "fold_system",
    "local_answer",
    "offline_environment",
    "track_usage",
    "usage_summary",
]
