"""The bytes on the wire for the stub server: HTTP/1.1 framing on asyncio streams, chunked SSE,
deliberate connection aborts, and OpenAI-style error bodies.

Hand-written rather than taken from an HTTP framework because only raw sockets let the stub
inject low-level faults (a TCP RST, a hung connection, a ``Content-Length`` that lies), and
because it keeps the stub stdlib-only. Internal to ``pytest_citebench.testing.stubserver``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, NoReturn

MAX_HEADER_BYTES = 64 * 1024
SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "Transfer-Encoding": "chunked",
}


@dataclass
class Request:
    """One parsed HTTP/1.1 request; the body is read whole because chat requests are small."""

    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        """HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 only when asked to."""
        conn = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return conn == "keep-alive"
        return conn != "close"


class Aborted(Exception):
    """Raised inside a handler once the connection has been torn down on purpose."""


def error_type(status: int) -> tuple[str, str]:
    """Map an HTTP status to OpenAI's (type, code) so SDKs classify the error the usual way."""
    if status == 429:
        return "rate_limit_error", "rate_limit_exceeded"
    if status == 401:
        return "authentication_error", "invalid_api_key"
    if status == 404:
        return "invalid_request_error", "not_found"
    if 400 <= status < 500:
        return "invalid_request_error", "invalid_request"
    return "server_error", "server_error"


def error_body(status: int, message: str) -> dict[str, Any]:
    """An OpenAI-shaped error, so SDKs raise the same exception class as against the real API."""
    etype, code = error_type(status)
    return {"error": {"message": message, "type": etype, "code": code, "param": None}}


def format_seconds(value: float) -> str:
    """A ``Retry-After`` value as a server writes it: whole seconds without a decimal point."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    """Parse one HTTP/1.1 request; ``None`` when the client closed the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, path, version = lines[0].split(" ", 2)
    except ValueError:
        await send(writer, 400, error_body(400, "bad request line"), keep_alive=False)
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0") or 0)
        except ValueError:
            length = -1
        if length < 0:
            err = error_body(400, "bad Content-Length")
            await send(writer, 400, err, keep_alive=False)
            return None
        body = await reader.readexactly(length) if length else b""
    return Request(method.upper(), path.split("?", 1)[0], version.strip(), headers, body)


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    """A chunked request body: some clients stream the JSON they send."""
    parts: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            # Skip optional trailers up to the blank line.
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def response_head(
    status: int,
    headers: dict[str, str],
    *,
    keep_alive: bool,
) -> bytes:
    """Status line and headers without a ``Date``, so recorded responses stay byte-stable."""
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Connection: {'keep-alive' if keep_alive else 'close'}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send(
    writer: asyncio.StreamWriter,
    status: int,
    payload: dict[str, Any] | bytes,
    *,
    keep_alive: bool,
    extra_headers: dict[str, str] | None = None,
) -> bool:
    """Send a complete JSON response; returns whether the connection may be reused."""
    body = payload if isinstance(payload, bytes) else dumps(payload)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    headers.update(extra_headers or {})
    writer.write(response_head(status, headers, keep_alive=keep_alive) + body)
    await writer.drain()
    return keep_alive


def abort(writer: asyncio.StreamWriter, *, rst: bool) -> NoReturn:
    """Tear the connection down on purpose (``rst``: the peer sees a TCP reset, not a close)."""
    if rst:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
    raise Aborted


def dumps(obj: Any) -> bytes:
    """Compact JSON, so equal payloads give equal bytes in cassettes.

    A lone surrogate (``"\\ud800"``, which UTF-8 cannot encode) goes out as the JSON escape
    ``\\ud800``, as any JSON server sends it, instead of killing the connection: tests can
    then script the odd text a real model does return."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8", "backslashreplace"
    )


def http_chunk(data: bytes) -> bytes:
    """One chunk of chunked transfer encoding, which keeps a streamed response keep-alive."""
    return f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n"


def split_words(text: str) -> list[str]:
    """Split into word-ish pieces that concatenate back to ``text`` exactly."""
    pieces: list[str] = []
    current = ""
    for ch in text:
        current += ch
        if ch.isspace():
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces
