"""The plain values every model shares (sampling settings, retry policy) and the helpers that
need no provider SDK; what a run spends is counted apart (``usage`` per item, ``budget`` per
process).

They live apart from ``Model`` so that the litellm backend can use them without importing the
package that imports it: the dependency runs one way, ``models`` -> ``litellm_backend`` ->
``models.types``.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any

from pytest_citebench.api import Hint
from pytest_citebench.errors import ProviderError

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
