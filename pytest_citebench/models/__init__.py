"""Models: anything that turns chat messages into text. Remote ones go through litellm (any
provider); ``citebench/*`` ones are local baselines that need no key, no network and no cassette.

litellm costs seconds to import, so nothing here imports it until a remote model is asked for.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_citebench.errors import CassetteMiss, ProviderError, ResponseError
from pytest_citebench.tasks.base import Hint, Message

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


@dataclass
class Model:
    """A named model with its settings; ``complete`` is the one thing tasks call."""

    name: str
    params: SamplingParams = field(default_factory=SamplingParams)
    api_base: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    # Replay never reaches the provider, so CI needs no key: a placeholder satisfies SDKs that
    # refuse to build a client without one (the header is filtered from cassettes anyway).
    replay_only: bool = False

    @property
    def is_local(self) -> bool:
        return self.name.startswith(LOCAL_PREFIX)

    async def complete(self, messages: Sequence[Message], *, hint: Hint) -> str:
        if self.is_local:
            return local_answer(self.name, hint, dict(self.params.extra))
        return await self._complete_remote(messages)

    async def _complete_remote(self, messages: Sequence[Message]) -> str:
        from pytest_citebench import recording
        from pytest_citebench.models.litellm_backend import acompletion, retryable

        kwargs = self.params.as_kwargs()
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.replay_only:
            kwargs.setdefault("api_key", REPLAY_API_KEY)
        payload = [{"role": m.role, "content": m.content} for m in messages]
        for attempt in range(self.retry.retries + 1):
            miss_before = recording.miss_count()
            mark = recording.recorded_count()
            try:
                return await acompletion(self.name, payload, timeout=self.retry.timeout, **kwargs)
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
    "CassetteMiss",
    "Model",
    "ProviderError",
    "ResponseError",
    "RetryPolicy",
    "SamplingParams",
    "local_answer",
    "offline_environment",
]
