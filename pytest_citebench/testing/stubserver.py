"""OpenAI-compatible loopback stub server with controllable latency and scripted faults.

Why this exists: the plugin, its tests and its benchmarks must exercise real HTTP clients
(litellm, the ``openai`` SDK, httpx) against a server whose timing and failure modes are fully
scripted, without any network access or API key.  The server is a deliberately minimal
HTTP/1.1 implementation on asyncio streams rather than an aiohttp/uvicorn app, because only raw
sockets let us inject low-level faults (TCP RST, a hung connection, a truncated body with a lying
``Content-Length``) and because it keeps the import stdlib-only.

Safety: it binds ``127.0.0.1`` only, on an ephemeral port by default, so it is never reachable
from another host.

Example::

    from pytest_citebench.testing.stubserver import Fault, StubServer

    with StubServer(latency=0.05, faults=[Fault("status", status=429, retry_after=1)]) as srv:
        litellm.completion(model="openai/stub", api_base=srv.url, api_key="sk-test", ...)

Responses are byte-stable for a given request body (fixed ``created``, ``id`` derived from the
body, no ``Date`` header) so cassettes recorded against the stub do not churn.

This module is the public entry point (``StubServer``, ``Fault``, ``HOST``, ``CREATED``, and
``python -m pytest_citebench.testing.stubserver``). The fault model lives in ``stub_faults``, the
HTTP/1.1 framing in ``stub_wire`` and the chat-completions responses in ``stub_chat``; all are
re-exported or used from here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

from pytest_citebench.testing.stub_chat import CREATED, MODELS, respond
from pytest_citebench.testing.stub_faults import Fault, FaultKind, FaultScript, fault_for
from pytest_citebench.testing.stub_wire import (
    MAX_HEADER_BYTES,
    Aborted,
    Request,
    error_body,
    read_request,
    send,
)

__all__ = ["CREATED", "HOST", "Fault", "FaultKind", "StubServer"]

#: The only address the server ever binds; loopback keeps the stub unreachable from outside.
HOST = "127.0.0.1"

_CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
_MODELS_PATHS = frozenset({"/v1/models", "/models"})


def _default_answer(_request: dict[str, Any]) -> str:
    return "pass"


class StubServer:
    """A threaded, loopback-only, OpenAI-compatible chat-completions server for tests.

    Args:
        answer: maps the request JSON to the assistant text, or to an assistant turn with tool
            calls (``stub_chat.assistant_message``); defaults to always ``"pass"``. It runs on
            the server's event loop, so keep it fast and non-blocking (or make it a coroutine
            function: the relay awaits a reply file).
        latency: seconds to ``asyncio.sleep`` before answering; sleeping (not blocking) lets
            concurrent requests overlap, as they would against a real API.
        faults: either ``(call_index, request_json) -> Fault | None`` or a sequence consumed one
            entry per chat-completions call (``None`` = answer normally; once exhausted every
            call is answered normally).  ``call_index`` is 0-based.
        port: port to bind on ``127.0.0.1``; 0 (the default) picks a free ephemeral port.
        usage: maps the request JSON to the ``usage`` object sent (any JSON value: negative or
            fractional counts test a client's distrust); default: word counts of prompt and
            answer.

    ``requests`` records every received request (any path) and ``calls`` counts
    chat-completions requests, faulted ones included.
    """

    def __init__(
        self,
        answer: Callable[[dict[str, Any]], Any] | None = None,
        *,
        latency: float = 0.0,
        faults: FaultScript | None = None,
        port: int = 0,
        usage: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        if latency < 0:
            raise ValueError("latency must be non-negative")
        self.answer: Callable[[dict[str, Any]], Any] = answer or _default_answer
        self.usage = usage
        self.latency = latency
        self.faults = faults
        self._requested_port = port
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._calls = 0
        self._in_flight = 0
        self._peak_in_flight = 0
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._conn_tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ public API

    @property
    def port(self) -> int:
        """The bound port; only valid while running."""
        if self._port is None:
            raise RuntimeError("StubServer is not running; call start() first")
        return self._port

    @property
    def url(self) -> str:
        """Base URL to pass as ``api_base`` / ``base_url``, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot of received requests: ``{"method", "path", "headers", "json"}`` dicts.

        A copy is returned so callers can iterate while the server keeps appending.
        """
        with self._lock:
            return list(self._requests)

    @property
    def calls(self) -> int:
        """Number of chat-completions requests received so far (faulted ones included)."""
        with self._lock:
            return self._calls

    @property
    def peak_in_flight(self) -> int:
        """The most chat-completions requests this server was answering at once: what a
        provider's rate limiter would see (a client's concurrency, summed over its processes)."""
        with self._lock:
            return self._peak_in_flight

    @property
    def in_flight(self) -> int:
        """Chat-completions requests being answered now (a benchmark samples it to see whether
        the client keeps its concurrency busy)."""
        with self._lock:
            return self._in_flight

    def reset(self) -> None:
        """Forget recorded requests and restart call counting (and so the fault script)."""
        with self._lock:
            self._requests.clear()
            self._calls = 0
            self._peak_in_flight = self._in_flight

    def start(self) -> StubServer:
        """Bind and serve in a daemon thread; returns ``self`` once the port is listening."""
        if self._thread is not None:
            raise RuntimeError("StubServer already started")
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(target=self._run, name="citebench-stubserver", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise self._startup_error
        return self

    def stop(self) -> None:
        """Stop serving, dropping any open (e.g. deliberately hung) connections. Idempotent."""
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and stop_event is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(stop_event.set)
        thread.join(timeout=10)
        self._thread = None
        self._port = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._port is not None else "stopped"
        return f"<StubServer {where} latency={self.latency} calls={self.calls}>"

    # ------------------------------------------------------------------ event loop

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surface bind errors etc. to start()
            if not self._ready.is_set():
                self._startup_error = exc
                self._ready.set()
        finally:
            self._loop = None
            self._stop_event = None

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        server = await asyncio.start_server(
            self._handle_connection,
            host=HOST,
            port=self._requested_port,
            family=socket.AF_INET,
            backlog=512,
            limit=MAX_HEADER_BYTES,
        )
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stop_event.wait()
        finally:
            server.close()
            for task in list(self._conn_tasks):
                task.cancel()
            if self._conn_tasks:
                await asyncio.gather(*self._conn_tasks, return_exceptions=True)
            await server.wait_closed()

    async def _handle_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conn_tasks.add(cast("asyncio.Task[None]", task))
        aborted = False
        try:
            while True:
                request = await read_request(reader, writer)
                if request is None:
                    break
                if not await self._dispatch(request, writer):
                    break
        except Aborted:
            aborted = True
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # Only stop() cancels us.  Swallowing (instead of re-raising) is deliberate: asyncio's
            # stream protocol calls task.exception() on finished handler tasks, which would log a
            # spurious CancelledError traceback for every connection still open at shutdown.
            writer.transport.abort()
            aborted = True
        finally:
            if task is not None:
                self._conn_tasks.discard(cast("asyncio.Task[None]", task))
            if not aborted:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    # ------------------------------------------------------------------ routing

    async def _dispatch(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; returns whether the connection may be reused."""
        payload: Any = None
        bad_json = False
        if request.body:
            try:
                payload = json.loads(request.body)
            except (ValueError, UnicodeDecodeError):
                bad_json = True
        with self._lock:
            self._requests.append(
                {
                    "method": request.method,
                    "path": request.path,
                    "headers": dict(request.headers),
                    "json": payload,
                }
            )
        keep = request.keep_alive

        if request.path in _MODELS_PATHS and request.method == "GET":
            return await send(writer, 200, MODELS, keep_alive=keep)
        if request.path not in _CHAT_PATHS:
            body = error_body(404, f"no route for {request.method} {request.path}")
            return await send(writer, 404, body, keep_alive=keep)
        if request.method != "POST":
            body = error_body(405, "use POST")
            return await send(writer, 405, body, keep_alive=keep)
        if bad_json or not isinstance(payload, dict):
            body = error_body(400, "request body must be a JSON object")
            return await send(writer, 400, body, keep_alive=keep)

        with self._lock:
            index = self._calls
            self._calls += 1
        try:
            fault = fault_for(self.faults, index, payload)
        except Exception as exc:  # a buggy fault script should fail loudly, not hang the client
            err = error_body(500, f"stub fault script failed: {exc!r}")
            return await send(writer, 500, err, keep_alive=keep)
        with self._lock:
            self._in_flight += 1
            self._peak_in_flight = max(self._peak_in_flight, self._in_flight)
        try:
            return await respond(
                request,
                payload,
                fault,
                writer,
                keep,
                answer=self.answer,
                latency=self.latency,
                usage=self.usage,
            )
        finally:
            with self._lock:
                self._in_flight -= 1


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a stub on loopback until Ctrl-C, for manual demos and ad-hoc client testing."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_citebench.testing.stubserver",
        description="OpenAI-compatible loopback stub server (binds 127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = ephemeral)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per completion")
    parser.add_argument("--answer", default="pass", help="fixed assistant reply text")
    args = parser.parse_args(argv)
    reply: str = args.answer
    server = StubServer(lambda _req: reply, latency=args.latency, port=args.port).start()
    print(server.url, flush=True)
    serve_until_interrupted(server, "served {} chat completion(s)")
    return 0


def serve_until_interrupted(server: StubServer, farewell: str) -> None:
    """Block until Ctrl-C, then stop ``server`` and print ``farewell`` (``{}``: its call count)
    on stderr: the command-line servers (this stub, the relay) end the same way."""
    stop = threading.Event()
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        print(farewell.format(server.calls), file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
