"""The litellm side of models: one async call, the retry classification, and the ``citebench``
custom provider so the built-in baselines are reachable as ``litellm.completion("citebench/bm25")``.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from pytest_citebench.errors import ResponseError
from pytest_citebench.models import LOCAL_PREFIX, local_answer, offline_environment
from pytest_citebench.tasks.base import Hint

_RETRYABLE = (
    "RateLimitError",
    "APIConnectionError",
    "Timeout",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "APIError",
)


@functools.cache
def litellm() -> Any:
    """Import litellm once, offline-safe, with the citebench provider registered."""
    offline_environment()
    # litellm builds pydantic schemas for provider modules it imports lazily, mid-run, and each
    # warns about TypedDict ReadOnly items; they say nothing about the user's run.
    warnings.filterwarnings("ignore", message=r".*ReadOnly. qualifier", category=UserWarning)
    import litellm as _litellm

    _litellm.suppress_debug_info = True
    _litellm.telemetry = False
    provider: Any = {"provider": "citebench", "custom_handler": _make_provider(_litellm)}
    if not any(p.get("provider") == "citebench" for p in _litellm.custom_provider_map):
        _litellm.custom_provider_map = [*_litellm.custom_provider_map, provider]
    return _litellm


def _make_provider(_litellm: Any) -> Any:
    class CitebenchProvider(_litellm.CustomLLM):
        """``citebench/<baseline>``: pass the structured query as metadata={"citebench_hint":
        {"task", "query", "suite", "corpus"}}; the baselines answer from it, not the prompt."""

        def _answer(self, model: str, kwargs: dict[str, Any]) -> Any:
            metadata = (kwargs.get("litellm_params") or {}).get("metadata") or {}
            raw = metadata.get("citebench_hint")
            if not raw:
                raise ValueError(
                    "citebench/* models answer from metadata={'citebench_hint': {...}}; "
                    "run them through pytest --citebench"
                )
            name = model if model.startswith(LOCAL_PREFIX) else LOCAL_PREFIX + model
            text = local_answer(name, Hint(**raw), dict(kwargs.get("optional_params") or {}))
            response = kwargs["model_response"]
            response.choices[0].message.content = text
            response.model = name
            return response

        def completion(self, model: str, *args: Any, **kwargs: Any) -> Any:
            return self._answer(model, kwargs)

        async def acompletion(self, model: str, *args: Any, **kwargs: Any) -> Any:
            return self._answer(model, kwargs)

    return CitebenchProvider()


async def acompletion(
    model: str, messages: list[dict[str, str]], *, timeout: float, **kwargs: Any
) -> str:
    """One chat completion; litellm's own retries are off because ours know about cassettes."""
    lib = litellm()
    response = await lib.acompletion(
        model=model, messages=messages, timeout=timeout, max_retries=0, num_retries=0, **kwargs
    )
    choices = getattr(response, "choices", None)
    if not choices:
        raise ResponseError(f"{model}: the response has no choices")
    content = choices[0].message.content
    if content is None or not str(content).strip():
        raise ResponseError(f"{model}: the response's message content is empty")
    return str(content)


def retryable(exc: BaseException) -> tuple[bool, float | None]:
    """(worth another try?, the server's Retry-After in seconds if it sent one)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "BadRequestError" in names or "AuthenticationError" in names or "NotFoundError" in names:
        return False, None
    retry_after = None
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None)
    if headers is not None:
        value = headers.get("retry-after") or headers.get("Retry-After")
        try:
            retry_after = float(value) if value is not None else None
        except (TypeError, ValueError):
            retry_after = None
    return bool(names.intersection(_RETRYABLE)), retry_after
