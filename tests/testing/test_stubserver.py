"""Tests for the loopback OpenAI-compatible stub server.

They drive the stub through the same clients the plugin uses (litellm, the ``openai`` SDK and
httpx) so a fault is proven to surface as the client-side failure the runner must handle, not
merely as bytes on the wire.
"""

from __future__ import annotations

import os

# litellm fetches its model-cost map over the network at import unless told otherwise; this must
# happen before the first ``import litellm`` anywhere in the process.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import litellm
import openai
import pytest

from pytest_citebench.testing.stubserver import CREATED, HOST, Fault, StubServer
from tests.conftest import default_signals

litellm.suppress_debug_info = True

# litellm's pydantic models trigger import-time UserWarnings that are noise for these tests.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:pydantic.*")

# Typed as Any: the openai SDK wants TypedDict message params, which is noise for a test.
MESSAGES: Any = [{"role": "user", "content": "Cite one paper on BM25."}]


@pytest.fixture
def server() -> Iterator[StubServer]:
    with StubServer() as srv:
        yield srv


def acomplete(srv: StubServer, **kwargs: Any) -> Any:
    """Run one litellm call exactly the way the plugin does (no retries, stub api_base)."""
    kwargs.setdefault("messages", MESSAGES)
    kwargs.setdefault("timeout", 5)
    return asyncio.run(
        litellm.acompletion(
            model="openai/stub", api_base=srv.url, api_key="sk-test", max_retries=0, **kwargs
        )
    )


def astream_text(srv: StubServer, **kwargs: Any) -> str:
    async def run() -> str:
        stream = await litellm.acompletion(
            model="openai/stub",
            api_base=srv.url,
            api_key="sk-test",
            max_retries=0,
            messages=MESSAGES,
            stream=True,
            timeout=5,
            **kwargs,
        )
        parts = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        return "".join(parts)

    return asyncio.run(run())


def sdk(srv: StubServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.url, api_key="sk-test", max_retries=0)


def post(srv: StubServer, body: dict[str, Any], **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{srv.url}/chat/completions", json=body, timeout=5, **kwargs)


# ---------------------------------------------------------------------------- happy path


def test_litellm_round_trip_and_recording() -> None:
    def answer(req: dict[str, Any]) -> str:
        return "echo: " + req["messages"][-1]["content"]

    with StubServer(answer) as srv:
        assert srv.url.startswith(f"http://{HOST}:") and srv.url.endswith("/v1")
        resp = acomplete(srv)
        assert resp.choices[0].message.content == "echo: Cite one paper on BM25."
        assert resp.choices[0].finish_reason == "stop"
        assert resp.id.startswith("chatcmpl-")
        assert resp.usage.prompt_tokens == 5  # whitespace words of the prompt
        assert resp.usage.completion_tokens == 6
        assert resp.usage.total_tokens == 11
        assert srv.calls == 1
        (rec,) = srv.requests
        assert rec["path"] == "/v1/chat/completions"
        assert rec["method"] == "POST"
        assert rec["headers"]["authorization"] == "Bearer sk-test"
        assert rec["json"]["model"] == "stub"
        assert rec["json"]["messages"] == MESSAGES


def test_default_answer_is_pass_and_sdk_works(server: StubServer) -> None:
    out = sdk(server).chat.completions.create(model="gpt-x", messages=MESSAGES)
    assert out.choices[0].message.content == "pass"
    assert out.model == "gpt-x"  # echoes the requested model
    assert out.created == CREATED


def test_responses_are_byte_stable(server: StubServer) -> None:
    body = {"model": "m", "messages": MESSAGES}
    first, second = post(server, body), post(server, body)
    other = post(server, {"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert first.content == second.content
    assert first.json()["id"] != other.json()["id"]
    assert "date" not in first.headers  # cassettes must not churn
    assert first.json()["object"] == "chat.completion"


def test_streaming_through_litellm() -> None:
    with StubServer(lambda _r: "Robertson and Zaragoza 2009") as srv:
        assert astream_text(srv) == "Robertson and Zaragoza 2009"
        assert srv.requests[0]["json"]["stream"] is True


def test_streaming_wire_format(server: StubServer) -> None:
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    body["stream_options"] = {"include_usage": True}
    resp = post(server, body)
    assert resp.headers["content-type"] == "text/event-stream"
    events = [line for line in resp.text.split("\n\n") if line]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[-1]["usage"]["completion_tokens"] == 1
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_models_and_unknown_routes(server: StubServer) -> None:
    models = httpx.get(f"{server.url}/models").json()
    assert models["object"] == "list" and models["data"][0]["id"] == "stub"
    assert httpx.get(f"http://{HOST}:{server.port}/nope").status_code == 404
    bad = httpx.post(f"{server.url}/chat/completions", content=b"{not json")
    assert bad.status_code == 400 and "error" in bad.json()
    assert server.calls == 0  # only well-formed chat-completions calls count
    assert len(server.requests) == 3


def test_answer_callback_errors_surface_as_500() -> None:
    def boom(_req: dict[str, Any]) -> str:
        raise RuntimeError("bad answer fn")

    with StubServer(boom) as srv:
        resp = post(srv, {"model": "m", "messages": MESSAGES})
        assert resp.status_code == 500
        assert "bad answer fn" in resp.json()["error"]["message"]


def test_keep_alive_serves_several_requests_per_connection(server: StubServer) -> None:
    body = json.dumps({"model": "m", "messages": MESSAGES}).encode()
    req = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    with socket.create_connection((HOST, server.port), timeout=5) as sock:
        sock.sendall(req + req)  # pipelined on one connection
        data = b""
        while data.count(b"HTTP/1.1 200 OK") < 2 or not data.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, "server closed a keep-alive connection"
            data += chunk
    assert server.calls == 2


# ---------------------------------------------------------------------------- faults


@pytest.mark.parametrize(
    ("status", "exc"),
    [
        (429, litellm.RateLimitError),
        (500, litellm.InternalServerError),
        (502, litellm.BadGatewayError),
        (503, litellm.ServiceUnavailableError),
    ],
)
def test_status_faults_map_to_litellm_exceptions(status: int, exc: type[Exception]) -> None:
    with StubServer(faults=[Fault("status", status=status)]) as srv:
        with pytest.raises(exc) as info:
            acomplete(srv)
        assert getattr(info.value, "status_code", None) == status
        assert acomplete(srv).choices[0].message.content == "pass"  # script exhausted


def test_status_fault_body_and_retry_after(server: StubServer) -> None:
    server.faults = [Fault("status", status=429, retry_after=2), Fault("status", retry_after=0.5)]
    first = post(server, {"model": "m", "messages": MESSAGES})
    assert first.status_code == 429
    assert first.headers["retry-after"] == "2"
    err = first.json()["error"]
    assert set(err) >= {"message", "type", "code"}
    assert err["code"] == "rate_limit_exceeded"
    second = post(server, {"model": "m", "messages": MESSAGES})
    assert (second.status_code, second.headers["retry-after"]) == (500, "0.5")


def test_retry_after_reaches_sdk_exception(server: StubServer) -> None:
    server.faults = [Fault("status", status=429, retry_after=3)]
    with pytest.raises(openai.RateLimitError) as info:
        sdk(server).chat.completions.create(model="m", messages=MESSAGES)
    assert info.value.response.headers["retry-after"] == "3"


def test_reset_sends_rst(server: StubServer) -> None:
    server.faults = [Fault("reset"), Fault("reset")]
    body = json.dumps({"model": "m", "messages": MESSAGES}).encode()
    with socket.create_connection((HOST, server.port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % len(body)
        )
        sock.sendall(body)
        with pytest.raises(ConnectionResetError):
            sock.recv(1024)
    with pytest.raises(openai.APIConnectionError) as info:
        sdk(server).chat.completions.create(model="m", messages=MESSAGES)
    assert not isinstance(info.value, openai.APITimeoutError)


def test_reset_through_litellm(server: StubServer) -> None:
    server.faults = [Fault("reset")]
    with pytest.raises(openai.APIError, match="Connection error"):
        acomplete(server)


def test_timeout_fault_times_out_and_stop_does_not_wait(server: StubServer) -> None:
    server.faults = [Fault("timeout", delay=30), Fault("timeout", delay=30)]
    t0 = time.perf_counter()
    with pytest.raises(litellm.Timeout):
        acomplete(server, timeout=0.3)
    with pytest.raises(openai.APITimeoutError):
        sdk(server).chat.completions.create(model="m", messages=MESSAGES, timeout=0.3)
    assert time.perf_counter() - t0 < 3
    t1 = time.perf_counter()
    server.stop()  # hung connections from the faults above must not block shutdown
    assert time.perf_counter() - t1 < 2


def test_timeout_fault_closes_after_delay(server: StubServer) -> None:
    server.faults = [Fault("timeout", delay=0.2)]
    with pytest.raises(httpx.RemoteProtocolError):
        post(server, {"model": "m", "messages": MESSAGES})


def test_malformed_json(server: StubServer) -> None:
    server.faults = [Fault("malformed_json"), Fault("malformed_json")]
    raw = post(server, {"model": "m", "messages": MESSAGES})
    assert raw.status_code == 200
    assert raw.text == '{"id": "x", "choices": ['
    with pytest.raises(json.JSONDecodeError):
        raw.json()
    with pytest.raises(openai.APIError):
        acomplete(server)


def test_malformed_json_stream(server: StubServer) -> None:
    server.faults = [Fault("malformed_json")]
    with pytest.raises(openai.APIError):
        astream_text(server)


def test_empty_choices(server: StubServer) -> None:
    server.faults = [Fault("empty_choices")]
    resp = acomplete(server)
    assert resp.choices == []  # the caller, not litellm, must notice there is no answer
    assert resp.id.startswith("chatcmpl-")


def test_truncated_stream(server: StubServer) -> None:
    server.faults = [Fault("truncated_stream")]
    with pytest.raises(openai.APIError):
        astream_text(server)


def test_truncated_non_stream_body(server: StubServer) -> None:
    server.faults = [Fault("truncated_stream")]
    with pytest.raises(httpx.RemoteProtocolError):
        post(server, {"model": "m", "messages": MESSAGES})
    assert post(server, {"model": "m", "messages": MESSAGES}).status_code == 200


def test_slow_first_byte_then_normal_answer(server: StubServer) -> None:
    server.faults = [Fault("slow_first_byte", delay=0.3)]
    t0 = time.perf_counter()
    assert acomplete(server).choices[0].message.content == "pass"
    assert time.perf_counter() - t0 >= 0.3


def test_fault_callable_gets_call_index_and_request() -> None:
    seen: list[tuple[int, str]] = []

    def script(index: int, req: dict[str, Any]) -> Fault | None:
        seen.append((index, req["model"]))
        return Fault("status", status=503) if index % 2 == 0 else None

    with StubServer(faults=script) as srv:
        codes = [post(srv, {"model": f"m{i}", "messages": MESSAGES}).status_code for i in range(4)]
    assert codes == [503, 200, 503, 200]
    assert seen == [(0, "m0"), (1, "m1"), (2, "m2"), (3, "m3")]


def test_fault_sequence_none_means_normal(server: StubServer) -> None:
    server.faults = [None, Fault("status", status=500), None]
    codes = [post(server, {"model": "m", "messages": MESSAGES}).status_code for _ in range(5)]
    assert codes == [200, 500, 200, 200, 200]
    assert server.calls == 5


def test_fault_validation() -> None:
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("bogus")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Fault("status", status=42)
    with pytest.raises(ValueError):
        StubServer(latency=-1)


# ---------------------------------------------------------------------------- concurrency


def test_latency_overlaps_across_concurrent_requests() -> None:
    async def run(srv: StubServer) -> float:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=32)) as client:
            body = {"model": "m", "messages": MESSAGES}
            t0 = time.perf_counter()
            replies = await asyncio.gather(
                *(client.post(f"{srv.url}/chat/completions", json=body) for _ in range(32))
            )
            elapsed = time.perf_counter() - t0
        assert all(r.status_code == 200 for r in replies)
        return elapsed

    with StubServer(latency=0.3) as srv:
        elapsed = asyncio.run(run(srv))
        assert 0.3 <= elapsed < 1.5
        assert srv.calls == 32 and len(srv.requests) == 32


def test_concurrent_litellm_calls() -> None:
    async def run(srv: StubServer) -> list[str]:
        async def one(i: int) -> str:
            resp = await litellm.acompletion(
                model="openai/stub",
                api_base=srv.url,
                api_key="sk-test",
                max_retries=0,
                messages=[{"role": "user", "content": f"q{i}"}],
            )
            return str(resp.choices[0].message.content)

        return await asyncio.gather(*(one(i) for i in range(16)))

    with StubServer(lambda r: r["messages"][0]["content"].upper(), latency=0.2) as srv:
        t0 = time.perf_counter()
        assert asyncio.run(run(srv)) == [f"Q{i}" for i in range(16)]
        assert time.perf_counter() - t0 < 2


# ---------------------------------------------------------------------------- binding & lifecycle


def test_binds_loopback_only(server: StubServer) -> None:
    assert server.port > 0
    with socket.create_connection((HOST, server.port), timeout=2) as sock:
        assert sock.getpeername() == (HOST, server.port)
    if sys.platform.startswith("linux"):
        # All of 127/8 reaches lo on Linux, so a wildcard bind would accept this connection.
        with (
            socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
            pytest.raises(ConnectionRefusedError),
        ):
            sock.settimeout(2)
            sock.connect(("127.0.0.2", server.port))
    if socket.has_ipv6:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock6, pytest.raises(OSError):
            sock6.settimeout(2)
            sock6.connect(("::1", server.port))


def test_the_stub_has_no_url_before_start_and_starts_only_once() -> None:
    srv = StubServer()
    with pytest.raises(RuntimeError):
        _ = srv.url
    srv.start()
    try:
        with pytest.raises(RuntimeError):
            srv.start()
        assert post(srv, {"model": "m", "messages": MESSAGES}).status_code == 200
    finally:
        srv.stop()
    srv.stop()  # idempotent
    with pytest.raises(RuntimeError):
        _ = srv.port
    srv.reset()
    assert srv.calls == 0 and srv.requests == []


def test_main_serves_until_interrupted() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest_citebench.testing.stubserver",
            "--port",
            "0",
            "--latency",
            "0.05",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith(f"http://{HOST}:") and url.endswith("/v1")
        resp = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": MESSAGES})
        assert resp.json()["choices"][0]["message"]["content"] == "pass"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_buggy_fault_script_answers_500() -> None:
    def script(_index: int, _req: dict[str, Any]) -> Fault | None:
        raise KeyError("oops")

    with StubServer(faults=script) as srv:
        resp = post(srv, {"model": "m", "messages": MESSAGES})
        assert resp.status_code == 500
        assert "fault script" in resp.json()["error"]["message"]


def test_start_surfaces_bind_errors() -> None:
    with socket.socket() as busy:
        busy.bind((HOST, 0))
        busy.listen()
        srv = StubServer(port=busy.getsockname()[1])
        with pytest.raises(OSError):
            srv.start()
        srv.stop()  # nothing running; still safe


def test_in_flight_counts_the_requests_being_answered_now() -> None:
    """What bench_live samples: the calls a client keeps busy, not the most ever seen."""
    import threading

    with StubServer(latency=0.5) as srv:
        assert srv.in_flight == 0
        body = {"model": "stub", "messages": [{"role": "user", "content": "hi"}]}
        callers = [threading.Thread(target=post, args=(srv, body)) for _ in range(3)]
        for caller in callers:
            caller.start()
        deadline = time.monotonic() + 5
        while srv.in_flight < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.in_flight == 3
        for caller in callers:
            caller.join()
        # The client holds its reply a moment before the server's handler leaves its
        # `finally`: on a loaded 2-core CI runner one call was still counted (1 == 0).
        deadline = time.monotonic() + 5
        while srv.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.in_flight == 0 and srv.peak_in_flight == 3
