"""The plain values every model shares (sampling settings, retry policy, usage, budget) and the
helpers that need no provider SDK.

They live apart from ``Model`` so that the litellm backend can use them without importing the
package that imports it: the dependency runs one way, ``models`` -> ``litellm_backend`` ->
``models.types``.
"""

from __future__ import annotations

import contextvars
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.api import Hint
from pytest_citebench.errors import BudgetExceeded, ProviderError

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
        """litellm's arguments; ``extra`` (``--citebench-param``) comes last, so it may override."""
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
        """Jitter keeps concurrent items from retrying in step; Retry-After is capped too."""
        backoff = min(self.max_delay, self.base_delay * 2**attempt) * (0.5 + random.random() / 2)
        return max(backoff, min(retry_after or 0.0, self.max_delay))


@dataclass(frozen=True)
class CallUsage:
    """One model call as the item record keeps it (see ``usage_summary``)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    latency: float
    # Played from a cassette: the latency is replay's, not the provider's.
    replayed: bool = False


# The calls of the item running in this asyncio task; the runner sets a fresh list per item.
_USAGE: contextvars.ContextVar[list[CallUsage] | None] = contextvars.ContextVar(
    "citebench_usage", default=None
)


def track_usage() -> list[CallUsage]:
    """Give the running item its own call list, so concurrent items never share usage."""
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
        # Calls played from cassettes: their latencies time the replay, not the provider.
        **({"replayed": n} if (n := sum(c.replayed for c in calls)) else {}),
    }


class Budget:
    """``--citebench-max-cost``: dollars this process may still spend on recording calls."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.spent = 0.0
        self.unpriced: str | None = None  # a paid answer litellm could not price, by model

    def check(self, model: str) -> None:
        """Before each call: the call that crosses the limit still runs, none after it does.
        A paid answer with no price also stops the run: a cap that cannot see what it is
        spent on is no cap (the start-up check refuses unpriced models; this is its net)."""
        if self.limit is not None and self.unpriced is not None:
            raise BudgetExceeded(
                f"{model}: --citebench-max-cost {self.limit:g} USD cannot be kept: litellm "
                f"could not price an answer of {self.unpriced}; no further calls are made"
            )
        if self.limit is not None and self.spent >= self.limit:
            raise BudgetExceeded(
                f"{model}: --citebench-max-cost {self.limit:g} USD reached "
                f"({self.spent:.4f} USD spent); no further calls are made"
            )

    def add(self, cost: float | None, model: str = "") -> None:
        """An unpriced call (None) adds nothing it could count, so it is remembered instead."""
        if cost:
            self.spent += cost
        elif cost is None and self.unpriced is None:
            self.unpriced = model or "a model"


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


def local_answer(name: str, hint: Hint, options: dict[str, Any]) -> str:
    """The answer of a ``citebench/*`` baseline, shared by ``Model`` and the litellm provider so
    both routes give the same text."""
    from pytest_citebench.models.baselines import all_baselines

    key = name[len(LOCAL_PREFIX) :]
    models = all_baselines()
    try:
        answer = models[key]
    except KeyError:
        raise ProviderError(
            f"unknown built-in model {name!r}; built-ins: "
            + ", ".join(LOCAL_PREFIX + k for k in sorted(models))
        ) from None
    return answer(hint, options)


def offline_environment() -> None:
    """Set litellm's offline switches; must run before litellm is first imported, or it fetches a
    price table and a background thread retries it into whatever cassette is open."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
