"""Models: anything that turns chat messages into text. Remote ones go through litellm (any
provider); ``citebench/*`` ones are local baselines that need no key, no network and no cassette.

litellm costs seconds to import, so nothing here imports it until a remote model is asked for.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_citebench.api import Hint, Message
from pytest_citebench.errors import BudgetExceeded, CassetteMiss, ProviderError, ResponseError

LOCAL_PREFIX = "citebench/"
DEFAULT_MODEL = "citebench/bm25"
REPLAY_API_KEY = "citebench-replay-placeholder"


@dataclass(frozen=True)
class SamplingParams:
    """The paper's defaults (temperature 1.0, top_p 0.95, max_tokens 256); use temperature 0 for
    a gate that should give the same answer twice."""

    temperature: float = 1.0
    max_tokens: int = 256
    top_p: float = 0.95
    extra: tuple[tuple[str, Any], ...] = ()

    def as_kwargs(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            **dict(self.extra),
        }


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter; Retry-After wins when it is longer."""

    retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 30.0
    timeout: float = 120.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.max_delay, self.base_delay * 2**attempt) * (0.5 + random.random() / 2)
        return max(backoff, min(retry_after or 0.0, self.max_delay))


@dataclass(frozen=True)
class CallUsage:
    """One model call as the item record keeps it (see ``usage_summary``)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency: float


# The calls of the item running in this asyncio task; the runner sets a fresh list per item.
_USAGE: contextvars.ContextVar[list[CallUsage] | None] = contextvars.ContextVar(
    "citebench_usage", default=None
)


def track_usage() -> list[CallUsage]:
    calls: list[CallUsage] = []
    _USAGE.set(calls)
    return calls


def usage_summary(calls: Sequence[CallUsage]) -> dict[str, Any] | None:
    """The item record's ``usage``: None for items that made no remote call."""
    if not calls:
        return None
    costs = [c.cost for c in calls]
    return {
        "calls": len(calls),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cost": None if any(c is None for c in costs) else round(sum(costs), 10),  # type: ignore[arg-type]
        "latencies": [round(c.latency, 4) for c in calls],
    }


class Budget:
    """``--citebench-max-cost``: dollars this process may still spend on recording calls."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent = 0.0

    def check(self, model: str) -> None:
        if self.limit is not None and self.spent >= self.limit:
            raise BudgetExceeded(
                f"{model}: --citebench-max-cost {self.limit:g} USD reached "
                f"({self.spent:.4f} USD spent); no further calls are made"
            )

    def add(self, cost: float | None) -> None:
        if cost:
            self.spent += cost


def fold_system(payload: list[dict[str, str]]) -> list[dict[str, str]]:
    """System text put at the start of the first user turn, for servers whose chat template
    drops the system role (so the model would never see the paper it is asked about)."""
    system = [m["content"] for m in payload if m["role"] == "system"]
    rest = [dict(m) for m in payload if m["role"] != "system"]
    if not system:
        return rest
    text = "\n\n".join(system)
    for message in rest:
        if message["role"] == "user":
            message["content"] = f"{text}\n\n{message['content']}"
            return rest
    return [{"role": "user", "content": text}, *rest]


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

    @property
    def is_local(self) -> bool:
        return (self.litellm_model or self.name).startswith(LOCAL_PREFIX)

    async def complete(self, messages: Sequence[Message], *, hint: Hint) -> str:
        if self.is_local:
            return local_answer(self.litellm_model or self.name, hint, dict(self.params.extra))
        return await self._complete_remote(messages)

    async def _complete_remote(self, messages: Sequence[Message]) -> str:
        from pytest_citebench import recording
        from pytest_citebench.models.litellm_backend import acompletion, retryable

        kwargs = self.params.as_kwargs()
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.replay_only or not self.needs_key:
            kwargs.setdefault("api_key", REPLAY_API_KEY)
        payload = [{"role": m.role, "content": m.content} for m in messages]
        if self.system_role == "user":
            payload = fold_system(payload)
        model = self.litellm_model or self.name
        calls = _USAGE.get()
        for attempt in range(self.retry.retries + 1):
            miss_before = recording.miss_count()
            mark = recording.recorded_count()
            if self.budget is not None and not self.replay_only:
                self.budget.check(self.name)
            started = time.perf_counter()
            played = recording.played_count()
            try:
                done = await acompletion(model, payload, timeout=self.retry.timeout, **kwargs)
            except ResponseError:
                raise
            except Exception as exc:
                # A failed attempt's recording (a malformed 200) is never saved or replayed.
                recording.forget_since(mark)
                if recording.miss_count() > miss_before:
                    raise recording.miss_error() from None
                can_retry, retry_after = retryable(exc)
                if not can_retry or attempt == self.retry.retries:
                    raise ProviderError(
                        f"{self.name}: {type(exc).__name__}: {exc}".strip()
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
                    )
                )
            if self.budget is not None and recording.played_count() == played:  # a paid call
                self.budget.add(done.cost)
            return done.text
        raise AssertionError("unreachable")


def local_answer(name: str, hint: Hint, options: dict[str, Any]) -> str:
    from pytest_citebench.models.baselines import BASELINES

    key = name[len(LOCAL_PREFIX) :]
    try:
        answer = BASELINES[key]
    except KeyError:
        raise ProviderError(
            f"unknown built-in model {name!r}; built-ins: "
            + ", ".join(LOCAL_PREFIX + k for k in sorted(BASELINES))
        ) from None
    return answer(hint, options)


def offline_environment() -> None:
    """Set litellm's offline switches; must run before litellm is first imported, or it fetches a
    price table and a background thread retries it into whatever cassette is open."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


__all__ = [
    "DEFAULT_MODEL",
    "Budget",
    "CallUsage",
    "CassetteMiss",
    "Model",
    "ProviderError",
    "ResponseError",
    "RetryPolicy",
    "SamplingParams",
    "local_answer",
    "offline_environment",
]
