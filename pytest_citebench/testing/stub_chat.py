"""How the stub server answers one chat-completions request: the completion or SSE stream a
real OpenAI-compatible API would send, bent by the request's scripted fault.

Kept apart from the server's connection and bookkeeping code so the response shapes (what
clients parse, and what cassettes record) can be read in one place. Internal to
``pytest_citebench.testing.stubserver``, which re-exports ``CREATED``.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
from collections.abc import Callable
from typing import Any

from pytest_citebench.testing.stub_faults import Fault
from pytest_citebench.testing.stub_wire import (
    SSE_HEADERS,
    Request,
    abort,
    dumps,
    error_body,
    format_seconds,
    http_chunk,
    response_head,
    send,
    split_words,
)

__all__ = ["CREATED", "MODELS", "respond"]

#: Fixed ``created`` timestamp so recorded responses are byte-stable across runs.
CREATED = 1_700_000_000

#: The ``GET /v1/models`` answer: one model, ``stub``, for clients that list models first.
MODELS: dict[str, Any] = {
    "object": "list",
    "data": [{"id": "stub", "object": "model", "created": CREATED, "owned_by": "stub"}],
}

_MALFORMED = b'{"id": "x", "choices": ['


def _count_tokens(text: str) -> int:
    # A whitespace word count: deterministic, dependency-free and good enough for usage fields.
    return len(text.split())


def _prompt_text(payload: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in payload.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # multi-part content: [{"type": "text", "text": ...}]
            parts.extend(
                str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
            )
    return "\n".join(parts)


def assistant_message(said: Any) -> dict[str, Any]:
    """An answer callback's value as the response's message: a string is the text; a mapping is
    an assistant turn, ``{"content": str | None, "tool_calls": [{"id"?, "name", "arguments"}]}``
    (``arguments`` a JSON string or an object; a call may also be in the API's own shape,
    ``{"id", "type": "function", "function": {"name", "arguments"}}``). Ids left out are
    ``call_<n>``."""
    if isinstance(said, str):
        return {"role": "assistant", "content": said}
    if not isinstance(said, dict):
        raise TypeError(f"an answer must be text or an assistant message, not {type(said)}")
    calls = []
    for index, call in enumerate(said.get("tool_calls") or []):
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": str(call.get("id") or f"call_{index}"),
                "type": "function",
                "function": {"name": str(function["name"]), "arguments": arguments},
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": said.get("content")}
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    return message


async def respond(
    request: Request,
    payload: dict[str, Any],
    fault: Fault | None,
    writer: asyncio.StreamWriter,
    keep: bool,
    *,
    answer: Callable[[dict[str, Any]], Any],
    latency: float,
    usage: Callable[[dict[str, Any]], Any] | None = None,
) -> bool:
    """Answer one chat-completions call as ``fault`` scripts it; returns whether the connection
    may be reused. ``answer``, ``latency`` and ``usage`` are the server's, passed in so this
    stays a pure function of the request."""
    kind = fault.kind if fault is not None else None
    if fault is not None and kind == "reset":
        abort(writer, rst=True)
    if fault is not None and kind == "timeout":
        await asyncio.sleep(fault.delay)
        abort(writer, rst=False)
    if latency:
        await asyncio.sleep(latency)
    if fault is not None and kind == "slow_first_byte":
        await asyncio.sleep(fault.delay)
    if fault is not None and kind == "status":
        extra: dict[str, str] = {}
        if fault.retry_after is not None:
            extra["Retry-After"] = format_seconds(fault.retry_after)
        message = f"stub fault: HTTP {fault.status}"
        err = error_body(fault.status, message)
        return await send(writer, fault.status, err, keep_alive=keep, extra_headers=extra)
    if kind == "malformed_json":
        if payload.get("stream"):
            # The streaming analogue: a well-framed SSE response whose event is broken JSON.
            head = response_head(200, SSE_HEADERS, keep_alive=keep)
            events = http_chunk(b"data: " + _MALFORMED + b"\n\n")
            events += http_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
            writer.write(head + events)
            await writer.drain()
            return keep
        return await send(writer, 200, _MALFORMED, keep_alive=keep)

    try:
        said = answer(payload)
        if inspect.isawaitable(said):  # the relay waits for a reply file without blocking
            said = await said
        turn = assistant_message(said)
    except Exception as exc:  # surface bugs in user callbacks as a visible 500
        err = error_body(500, f"stub answer callback failed: {exc!r}")
        return await send(writer, 500, err, keep_alive=keep)
    text = str(turn.get("content") or "") + "".join(
        str(c["function"]["arguments"]) for c in turn.get("tool_calls") or []
    )

    model = str(payload.get("model") or "stub")
    cid = "chatcmpl-" + hashlib.sha256(request.body).hexdigest()[:12]
    prompt_tokens = _count_tokens(_prompt_text(payload))
    completion_tokens = _count_tokens(text)
    counted: Any = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if usage is not None:
        try:
            counted = usage(payload)
        except Exception as exc:  # a buggy usage callback: a visible 500, like ``answer``
            err = error_body(500, f"stub usage callback failed: {exc!r}")
            return await send(writer, 500, err, keep_alive=keep)
    if payload.get("stream"):
        return await stream(payload, cid, model, text, counted, fault, writer, keep)

    completion: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": turn,
                "finish_reason": "tool_calls" if turn.get("tool_calls") else "stop",
                "logprobs": None,
            }
        ],
        "usage": counted,
        "system_fingerprint": None,
    }
    if kind == "empty_choices":
        completion["choices"] = []
    body = dumps(completion)
    if kind == "drip":
        head = response_head(
            200,
            {"Content-Type": "application/json", "Content-Length": str(len(body))},
            keep_alive=False,
        )
        writer.write(head)
        await writer.drain()
        for index in range(len(body)):
            writer.write(body[index : index + 1])
            await writer.drain()
            await asyncio.sleep(fault.delay if fault is not None else 0.0)
        return False
    if kind == "truncated_stream":
        head = response_head(
            200,
            {"Content-Type": "application/json", "Content-Length": str(len(body))},
            keep_alive=False,
        )
        writer.write(head + body[: len(body) // 2])
        await writer.drain()
        return False
    return await send(writer, 200, body, keep_alive=keep)


async def stream(
    payload: dict[str, Any],
    cid: str,
    model: str,
    text: str,
    usage: Any,
    fault: Fault | None,
    writer: asyncio.StreamWriter,
    keep: bool,
) -> bool:
    """Send the answer as SSE over chunked transfer encoding so keep-alive still works."""
    kind = fault.kind if fault is not None else None

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": []
            if kind == "empty_choices"
            else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    pieces = split_words(text)
    events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""}, None)]
    events += [chunk({"content": p}, None) for p in pieces]
    events.append(chunk({}, "stop"))
    options = payload.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        events.append({**chunk({}, None), "choices": [], "usage": usage})

    head = response_head(200, SSE_HEADERS, keep_alive=keep and kind != "truncated_stream")
    if kind == "truncated_stream":
        # One full content-bearing event, then a close with no terminating chunk or [DONE].
        first = chunk({"role": "assistant", "content": pieces[0] if pieces else ""}, None)
        writer.write(head + http_chunk(b"data: " + dumps(first) + b"\n\n"))
        await writer.drain()
        return False
    # One write for the whole stream: the stub has no reason to pace events, and a single
    # send avoids small-packet interactions (Nagle / delayed ACK) skewing latency numbers.
    frames = [http_chunk(b"data: " + dumps(event) + b"\n\n") for event in events]
    frames.append(http_chunk(b"data: [DONE]\n\n"))
    writer.write(head + b"".join(frames) + b"0\r\n\r\n")
    await writer.drain()
    return keep
