"""The litellm side of models: one async call, the retry classification, and the ``citebench``
custom provider so the built-in baselines are reachable as ``litellm.completion("citebench/bm25")``.
"""

from __future__ import annotations

import asyncio
import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any

from pytest_citebench.api import Hint, ToolCall
from pytest_citebench.errors import ResponseError
from pytest_citebench.models.types import LOCAL_PREFIX, local_answer, offline_environment

_RETRYABLE = (
    "CallTimeout",
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


@dataclass(frozen=True)
class Completion:
    """The answer text and what it cost: tokens as the provider counted them, dollars from
    litellm's local cost map (None when the model is not in it: unknown is not free).

    ``untrusted``: why the provider's counts were not believed (``usage.usage_problem``); the
    tokens and cost are then None, and ``charged`` is an upper bound on the price instead."""

    text: str
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0
    cost: float | None = None
    untrusted: str | None = None
    bound: float | None = None
    # The tools the model called, in order (a tool-using turn; empty for a plain answer).
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def charged(self) -> float | None:
        """What ``--citebench-max-cost`` counts: the cost, or for counts not believed their
        upper bound (None: not even that could be priced, so no further call is paid)."""
        return self.bound if self.untrusted is not None else self.cost


def _cost(lib: Any, response: Any) -> float | None:
    # litellm prices every response as it builds it; asking again costs a cost-map search per
    # call (a few percent of a replay), so its own figure is used when it is there.
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        value = hidden["response_cost"]
        return float(value) if value else None
    try:
        value = lib.completion_cost(completion_response=response)
    except Exception:  # litellm raises for models missing from its cost map
        return None
    return float(value) if value else None


# Models litellm has no price for, learnt from their first answer. For such a model litellm
# searches its fallback generalizations on every call to find no price again: ~0.2 ms, about 4%
# of a replayed call's CPU (5.41 against 5.21 ms a case, interleaved). Told a price instead, it
# skips the search. The price is nominal, not zero: litellm runs a "zero-cost diagnostic" on
# every answer priced at 0, which searches the cost map again (~7% of a live call's CPU here).
# Whatever litellm computes from it, the answer's cost is reported as unknown (None), never as
# free or as that figure. Keyed by the model string litellm gets.
_UNPRICED: set[str] = set()
_PRICE_PARAMS = frozenset(
    {
        "input_cost_per_token",
        "output_cost_per_token",
        "input_cost_per_second",
        "output_cost_per_second",
        "cost_per_second",
    }
)
_NOMINAL_PRICE = 1e-300
_SKIP_PRICING = {"input_cost_per_token": _NOMINAL_PRICE, "output_cost_per_token": _NOMINAL_PRICE}


def _pricing(model: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The kwargs for litellm: with the nominal price only for a model already found unpriced,
    and never over prices the user passed (the caller reads the cost as unknown when the kwargs
    it gets back are not the ones it gave)."""
    if model in _UNPRICED and _PRICE_PARAMS.isdisjoint(kwargs):
        return {**kwargs, **_SKIP_PRICING}
    return kwargs


def _learn_pricing(model: str, kwargs: dict[str, Any], done: Completion) -> None:
    # An answer whose counts were not believed has no cost either: that says nothing of the price.
    if done.cost is None and done.untrusted is None and _PRICE_PARAMS.isdisjoint(kwargs):
        _UNPRICED.add(model)


#: Tokens a chat template may add around each message (role markers, separators), for the bound.
_TEMPLATE_TOKENS = 16


def upper_bound_cost(
    model: str, messages: list[dict[str, str]], kwargs: dict[str, Any], answer: str = ""
) -> float | None:
    """The most one call can have cost, for a call whose usage cannot be believed: every byte
    of the prompt a token (a token is never less than a byte) plus a chat template's markers,
    and the whole ``max_tokens`` (or the answer's bytes, if more) spent on the answer, at the
    model's price (the run's ``input_cost_per_token`` / ``output_cost_per_token`` when given).
    None when it cannot be priced or there is no ``max_tokens`` to bound the answer."""
    max_tokens = kwargs.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        return None
    prompt = sum(len(str(m.get("content") or "").encode()) for m in messages)
    prompt += _TEMPLATE_TOKENS * (len(messages) + 1)
    completion = max(max_tokens, len(answer.encode()) + 1)
    custom = {
        k: kwargs[k] for k in ("input_cost_per_token", "output_cost_per_token") if k in kwargs
    }
    try:
        prompt_cost, completion_cost = litellm().cost_per_token(
            model=model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            custom_cost_per_token=custom if len(custom) == 2 else None,
        )
        total = float(prompt_cost) + float(completion_cost)
    except Exception:  # not in the local cost map, or a price that is not a number
        return None
    return total if math.isfinite(total) and total > 0 else None


class CallTimeout(TimeoutError):
    """The whole call outlived ``--citebench-timeout``: retried like any other timeout."""


async def acompletion(
    model: str, messages: list[dict[str, str]], *, timeout: float, **kwargs: Any
) -> Completion:
    """One chat completion; litellm's own retries are off because ours know about cassettes.

    ``timeout`` is a deadline for the whole call. litellm hands it to httpx, where it bounds each
    wait for the next bytes only: a server that drips a byte every quarter second never trips it,
    and a 2 s timeout took minutes. So the call is also cancelled once ``timeout`` has passed."""
    lib = litellm()
    sent = _pricing(model, kwargs)
    try:
        # asyncio.timeout, not wait_for: the same deadline without a second task for every call.
        async with asyncio.timeout(timeout):
            response = await lib.acompletion(
                model=model,
                messages=messages,
                timeout=timeout,
                max_retries=0,
                num_retries=0,
                **sent,
            )
    except TimeoutError:
        raise CallTimeout(
            f"no complete answer within --citebench-timeout {timeout:g} s (a deadline for the "
            "whole call, however slowly the answer arrives)"
        ) from None
    done = _completion(
        lib, model, response, priced=sent is kwargs, messages=messages, kwargs=kwargs
    )
    _learn_pricing(model, kwargs, done)
    return done


def completion(
    model: str, messages: list[dict[str, str]], *, timeout: float, **kwargs: Any
) -> Completion:
    """``acompletion``, synchronously: for replay, where no call waits on the network.

    Why: litellm's async path builds each request on a thread-pool worker and parses the reply
    through aiohttp; with nothing to wait for, that hand-off is pure cost (about a sixth of a
    replayed call's CPU here), and the loop has nothing else to run in the meantime."""
    lib = litellm()
    sent = _pricing(model, kwargs)
    response = lib.completion(
        model=model, messages=messages, timeout=timeout, max_retries=0, num_retries=0, **sent
    )
    done = _completion(
        lib, model, response, priced=sent is kwargs, messages=messages, kwargs=kwargs
    )
    _learn_pricing(model, kwargs, done)
    return done


def _completion(
    lib: Any,
    model: str,
    response: Any,
    *,
    priced: bool = True,
    messages: list[dict[str, str]] | None = None,
    kwargs: dict[str, Any] | None = None,
) -> Completion:
    """``priced=False``: litellm was given the nominal price, so its figure means nothing.

    A response without usage keeps the old reading (0 tokens, cost None: unknown); usage that is
    there but cannot be believed (negative, fractional or absurd counts, a count of 0 for a
    prompt, a negative cost) is unknown, never a credit: ``untrusted`` says why and ``bound``
    is what the budget counts instead."""
    from pytest_citebench.models.usage import usage_problem

    choices = getattr(response, "choices", None)
    if not choices:
        raise ResponseError(f"{model}: the response has no choices")
    # An empty message is the model's reply (a small model often stops at once): the task scores
    # it as naming nothing. Only a response with no choice at all is unusable.
    content = str(choices[0].message.content or "")
    calls = tool_calls_of(choices[0].message)
    usage = getattr(response, "usage", None)
    cost = _cost(lib, response) if priced else None
    if usage is None:
        return Completion(content, 0, 0, cost, tool_calls=calls)
    prompt_tokens = getattr(usage, "prompt_tokens", None)
    completion_tokens = getattr(usage, "completion_tokens", None)
    prompt = "".join(str(m.get("content") or "") for m in messages or [])
    problem = usage_problem(prompt_tokens, completion_tokens, cost, prompt=prompt, answer=content)
    if problem is None:
        return Completion(content, prompt_tokens, completion_tokens, cost, tool_calls=calls)
    bound = upper_bound_cost(model, list(messages or []), dict(kwargs or {}), content)
    return Completion(content, None, None, None, untrusted=problem, bound=bound, tool_calls=calls)


def tool_calls_of(message: Any) -> tuple[ToolCall, ...]:
    """The tool calls of a response's message, as litellm parsed them (none for plain text); a
    call's arguments stay the raw text the model wrote, malformed or not."""
    calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or ()):
        function = getattr(call, "function", None)
        name = str(getattr(function, "name", "") or "")
        arguments = getattr(function, "arguments", "")
        if not isinstance(arguments, str):
            import json

            arguments = json.dumps(arguments)
        calls.append(ToolCall(str(getattr(call, "id", "") or f"call_{index}"), name, arguments))
    return tuple(calls)


def priced(model: str, params: dict[str, Any]) -> bool:
    """Whether litellm can put a dollar figure on this model's answers: it is in litellm's
    local cost map, or the run passes its price (``input_cost_per_token`` and
    ``output_cost_per_token``, or a per-second price) among the model's parameters."""
    if {"input_cost_per_token", "output_cost_per_token"} <= set(params) or not (
        {"input_cost_per_second", "output_cost_per_second", "cost_per_second"}.isdisjoint(params)
    ):
        return True
    try:
        prompt, completion = litellm().cost_per_token(
            model=model, prompt_tokens=1000, completion_tokens=1000
        )
    except Exception:  # not in the local cost map
        return False
    return bool(prompt + completion)


def calls_tools(model: str) -> bool | None:
    """Whether litellm's model map says the model has function calling; None when the map does
    not know the model (a server of your own: it is asked, and a refusal is reported then)."""
    lib = litellm()
    # "openai/gpt-3.5-turbo-instruct" is in the map as "gpt-3.5-turbo-instruct".
    for name in dict.fromkeys([model, model.split("/", 1)[-1]]):
        try:
            lib.get_model_info(name)
        except Exception:  # not in the local map under this name
            continue
        try:
            return bool(lib.supports_function_calling(model=name))
        except Exception:
            return None
    return None


def missing_key(model: str, api_base: str | None) -> str | None:
    """The environment variable a model's provider needs and does not have, or None.

    Without this check litellm sends the request anyway and the SDK's "missing credentials"
    comes back as a server error, retried three times before anyone reads it."""
    lib = litellm()
    try:
        env = lib.validate_environment(model=model, api_base=api_base)
    except Exception:  # an unknown provider: let the call itself say what is wrong
        return None
    missing = env.get("missing_keys") or []
    return ", ".join(str(k) for k in missing) or None


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
