"""The relay: an OpenAI-compatible server on 127.0.0.1 whose answers are written by someone else
(a frontier model driven by another session, or a person), one file per request.

For each chat-completions request (tools included) it writes the request, pretty, to
``SPOOL/<n>.request.json`` and waits for ``SPOOL/<n>.reply.json`` to appear; the reply is an
assistant turn, text and/or tool calls::

    {"content": "text or null",
     "tool_calls": [{"name": "search", "arguments": {"query": "..."}}]}

(``arguments`` an object or a JSON string; ``id`` optional, default ``call_<n>_<i>``; a reply
may also be a bare JSON string, the text). The relay returns it as a proper OpenAI response,
so the harness records it in the item's cassette like any provider's answer. A reply file that
cannot be read is renamed ``<n>.reply.rejected.json`` with the problem in ``<n>.error.txt``,
and the relay waits for a corrected one. The protocol, with an example session:
docs/agentic.md.

Run: ``python -m pytest_citebench relay --spool DIR --port N``. It binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.testing.stub_chat import assistant_message
from pytest_citebench.testing.stubserver import StubServer, serve_until_interrupted

#: How often the spool is looked at for a reply, in seconds.
POLL = 0.2
REQUEST = "{n}.request.json"
REPLY = "{n}.reply.json"
REJECTED = "{n}.reply.rejected.json"
ERROR = "{n}.error.txt"
_SAMPLING = ("temperature", "top_p", "max_tokens", "seed")


def _write(path: Path, text: str) -> None:
    """Atomically: a reader never sees half a file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class Relay:
    """The spool and its numbering; ``answer`` is the server's answer callback."""

    def __init__(self, spool: Path, *, timeout: float = 3600.0, quiet: bool = False) -> None:
        self.spool = spool
        self.timeout = timeout
        self.quiet = quiet
        spool.mkdir(parents=True, exist_ok=True)
        taken = [
            int(p.name.split(".")[0]) for p in spool.glob("*.request.json") if p.name[0].isdigit()
        ]
        self._next = max(taken, default=0) + 1
        self._lock = threading.Lock()

    def _number(self) -> str:
        with self._lock:
            n, self._next = self._next, self._next + 1
        return f"{n:05d}"

    async def answer(self, payload: dict[str, Any]) -> dict[str, Any]:
        n = self._number()
        turn = 1 + sum(1 for m in payload.get("messages") or [] if m.get("role") == "assistant")
        request = {
            "request": n,
            "reply_file": REPLY.format(n=n),
            "turn": turn,
            "model": payload.get("model"),
            "messages": payload.get("messages"),
            "tools": payload.get("tools"),
            "sampling": {
                k: payload[k]
                for k in ("temperature", "top_p", "max_tokens", "seed")
                if k in payload
            },
        }
        _write(self.spool / REQUEST.format(n=n), json.dumps(request, indent=2, ensure_ascii=False))
        if not self.quiet:
            print(
                f"request {n} (turn {turn}) waiting for {self.spool / REPLY.format(n=n)}",
                flush=True,
            )
        return await self._wait(n)

    async def _wait(self, n: str) -> dict[str, Any]:
        reply = self.spool / REPLY.format(n=n)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while loop.time() < deadline:
            if reply.is_file():
                try:
                    message = read_reply(reply.read_text(encoding="utf-8"), n)
                except (ValueError, KeyError, TypeError) as exc:
                    os.replace(reply, self.spool / REJECTED.format(n=n))
                    _write(self.spool / ERROR.format(n=n), f"{type(exc).__name__}: {exc}\n")
                    if not self.quiet:
                        print(f"request {n}: reply rejected ({exc}); write it again", flush=True)
                    continue
                if not self.quiet:
                    print(f"request {n} answered", flush=True)
                return message
            await asyncio.sleep(POLL)
        raise TimeoutError(f"no reply to request {n} within {self.timeout:g} s")


def read_reply(text: str, n: str) -> dict[str, Any]:
    """A reply file as the response's assistant message (``stub_chat.assistant_message``), with
    default tool call ids ``call_<n>_<i>``; raises on anything else."""
    value = json.loads(text)
    if isinstance(value, str):
        return assistant_message(value)
    if not isinstance(value, dict):
        raise TypeError("a reply is a JSON object (content, tool_calls) or a JSON string")
    unknown = set(value) - {"content", "tool_calls"}
    if unknown:
        raise KeyError(f"unknown field(s) {sorted(unknown)}: a reply has content and tool_calls")
    content = value.get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError("content must be a string or null")
    calls = value.get("tool_calls") or []
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise TypeError("tool_calls must be a list of objects")
    named = []
    for index, call in enumerate(calls):
        call = dict(call)
        inner = call.get("function")
        function: dict[str, Any] = inner if isinstance(inner, dict) else call
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise KeyError(f"tool_calls[{index}] has no name")
        call.setdefault("id", f"call_{n}_{index}")
        named.append(call)
    if content is None and not named:
        raise ValueError("a reply needs content or at least one tool call")
    return assistant_message({"content": content, "tool_calls": named})


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the relay until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench relay",
        description="An OpenAI-compatible server on 127.0.0.1 whose replies are files: each "
        "request is written to SPOOL/<n>.request.json, and SPOOL/<n>.reply.json is returned "
        "as the answer (docs/agentic.md).",
    )
    parser.add_argument(
        "--spool", type=Path, required=True, help="the folder of request/reply files"
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument(
        "--timeout", type=float, default=3600.0, help="seconds a request waits for its reply"
    )
    args = parser.parse_args(argv)
    relay = Relay(args.spool, timeout=args.timeout)
    server = StubServer(relay.answer, port=args.port).start()
    print(f"relay on {server.url}, spool {args.spool}", flush=True)
    serve_until_interrupted(server, "relayed {} request(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
