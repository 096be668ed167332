"""Keys echoed back in any encoding a body or header can carry never reach a cassette, and no key
reaches a log line.

A hostile (or merely verbose) server may echo a key JSON-escaped (``\\u0073k-...``, ``\\/``),
percent-encoded, in base64, gzip'd inside base64, or in a gzip'd body. Byte for byte that is not
the key; decoded it is. A raw loopback server sends exactly the bytes each example asks for, and
the cassette is then decoded every way the test knows (its own decoders, not the scrubber's) and
searched for every key.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import re
import string
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_citebench.recording.scrub import install_log_scrubber
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import stub_args
from tests.recording.test_secrets import GENERIC, SHAPES, env_name, record_one, strings
from tests.run.test_interrupt import write_suite

AWS_SECRET = st.text(
    alphabet=string.ascii_letters + string.digits + "/+", min_size=40, max_size=40
).filter(lambda s: "/" in s)
ENCODINGS = (
    "json-u",
    "json-slash",
    "json-nested",
    "percent",
    "base64",
    "gzip-base64",
    "gzip-body",
)
Respond = Callable[[bytes], tuple[int, dict[str, str], bytes]]


class RawServer:
    """A loopback HTTP server answering every POST with the exact bytes ``respond`` returns."""

    def __init__(self) -> None:
        self.respond: Respond = lambda body: (200, {}, b"{}")
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, data = outer.respond(body)
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(data))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def u_escape(text: str, mask: list[bool]) -> str:
    """``text`` with the characters the mask picks written as JSON \\u escapes (one at least)."""
    picks = [m for m, _ in zip(mask * len(text), text, strict=False)] or [True]
    if not any(picks):
        picks[0] = True
    out = []
    for pick, char in zip(picks, text, strict=False):
        if pick:
            out.append(f"\\u{ord(char):04x}")
        elif char in '"\\':
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def completion(content_json: str) -> bytes:
    """A chat completion whose content is ``content_json``, a JSON string literal as written."""
    return (
        '{"id": "x", "object": "chat.completion", "created": 1, "model": "stub", "choices": '
        '[{"index": 0, "message": {"role": "assistant", "content": ' + content_json + "}, "
        '"finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, '
        '"total_tokens": 2}}'
    ).encode()


def encoded(key: str, how: str, mask: list[bool]) -> tuple[dict[str, str], bytes]:
    """(headers, body) echoing ``key`` the way ``how`` says."""
    headers = {"Content-Type": "application/json"}
    if how == "json-u":
        return headers, completion(f'"echo {u_escape(key, mask)}"')
    if how == "json-slash":
        return headers, completion('"echo ' + key.replace("/", "\\/").replace('"', '\\"') + '"')
    if how == "json-nested":
        inner = json.dumps({"echo": u_escape(key, mask)})  # the escapes escaped again
        return headers, completion(json.dumps(inner))
    if how == "percent":
        quoted = "".join(
            f"%{b:02X}" if pick else chr(b)
            for pick, b in zip(mask * len(key), key.encode(), strict=False)
        )
        headers["X-Echo"] = "a=1&echo=" + quoted
        return headers, completion(json.dumps("see the header"))
    if how == "base64":
        token = base64.b64encode(f"user:{key}".encode()).decode()
        headers["X-Echo"] = f"Basic-ish {token}"
        return headers, completion(json.dumps(f"echo {base64.urlsafe_b64encode(key.encode())!r}"))
    if how == "gzip-base64":
        token = base64.b64encode(gzip.compress(key.encode())).decode()
        return headers, completion(json.dumps(f"blob {token}"))
    assert how == "gzip-body"
    headers["Content-Encoding"] = "gzip"
    return headers, gzip.compress(completion(f'"echo {u_escape(key, mask)}"'))


_B64_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")


def views(text: str, depth: int = 0) -> set[str]:
    """``text`` and everything it decodes to: JSON escapes, percent-encoding, base64 tokens
    (gunzipped when gzip), nested; the test's own decoders, not the scrubber's."""
    seen = {text}
    if depth > 4:
        return seen
    steps = {
        re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
        .replace("\\/", "/")
        .replace('\\"', '"')
        .replace("\\\\", "\\"),
        urllib.parse.unquote(text),
        urllib.parse.unquote_plus(text),
    }
    for token in _B64_TOKEN.findall(text):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                raw = decode(token + "=" * (-len(token) % 4))
                if raw[:2] == b"\x1f\x8b":
                    raw = gzip.decompress(raw)
                steps.add(raw.decode("utf-8"))
            except Exception:
                continue
    for step in steps - {text}:
        seen |= views(step, depth + 1)
    return seen


def _texts(value: Any) -> Iterator[str]:
    """Every string of a loaded cassette; a binary body gunzipped when it is gzip."""
    if isinstance(value, bytes):
        if value[:2] == b"\x1f\x8b":
            value = gzip.decompress(value)
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(k)
            yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)
    else:
        yield from strings(value)


def cassette_leaks(keys: dict[str, str], path: Path) -> list[str]:
    from pytest_citebench.recording import CassetteSerializer

    texts = list(_texts(CassetteSerializer.deserialize(path.read_text(encoding="utf-8"))))
    found = []
    for shape, key in keys.items():
        if any(key in view for text in texts for view in views(text)):
            found.append(shape)
    return found


KEYS = st.fixed_dictionaries({**SHAPES, "aws_secret": AWS_SECRET}).filter(
    lambda keys: len(set(keys.values())) == len(keys)
)


@given(
    keys=KEYS,
    how=st.sampled_from(ENCODINGS),
    mask=st.lists(st.booleans(), min_size=1, max_size=8),
    shape=st.sampled_from(sorted({*SHAPES, "aws_secret"})),
)
@settings(
    max_examples=80,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_a_key_echoed_in_any_encoding_is_scrubbed_from_the_cassette(
    tmp_path_factory: pytest.TempPathFactory,
    keys: dict[str, str],
    how: str,
    mask: list[bool],
    shape: str,
) -> None:
    root = tmp_path_factory.mktemp("cassettes")
    key = keys[shape]
    headers, body = encoded(key, how, mask)
    request_body = b'{"model": "stub", "note": "' + u_escape(key, mask).encode() + b'"}'
    sent = {"Content-Type": "application/json"}
    if how == "gzip-body":  # the request compressed too
        request_body = gzip.compress(request_body)
        sent["Content-Encoding"] = "gzip"
    env = {env_name(generic): keys[generic] for generic in GENERIC}
    env["AWS_SECRET_ACCESS_KEY"] = keys["aws_secret"]
    sent["X-Trace"] = base64.b64encode(f"t:{key}".encode()).decode()
    with RawServer() as server:
        server.respond = lambda _body: (200, headers, body)
        response = record_one(root, server.url, env, content=request_body, headers=sent)
    assert response.status_code == 200
    assert cassette_leaks({shape: key}, root / "c.yaml") == []


@pytest.mark.parametrize("how", ["base64", "percent"])
def test_an_answer_echoing_an_encoded_key_is_scrubbed_in_the_results_as_in_the_cassette(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The recording run scores the live answer, replay the cassette's: both must be scrubbed
    alike (decoded too), or the results file and the reports keep what the cassette redacts."""
    key = "sk-proj-CITEBENCHanswerECHO0123456789abcdef"
    echoed = {
        "base64": base64.b64encode(key.encode()).decode(),
        "percent": "".join(f"%{b:02X}" for b in key.encode()),
    }[how]
    monkeypatch.setenv("OPENAI_API_KEY", key)
    write_suite(pytester.path, n=1)
    with StubServer(lambda request: f"Paper number 0, key {echoed}") as server:
        result = pytester.runpytest(
            *stub_args(server.url, "--citebench-record", "all", "--citebench-results", "r.jsonl")
        )
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, out
    text = (pytester.path / "r.jsonl").read_text()
    (record,) = [r for r in map(json.loads, text.splitlines()) if r["type"] == "item"]
    assert "<REDACTED>" in record["raw_answer"], record
    assert echoed not in text and echoed not in out
    cassettes = list((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 1 and cassette_leaks({"key": key}, cassettes[0]) == []


def test_plain_and_harmless_escapes_are_left_alone() -> None:
    from pytest_citebench.recording.scrub import scrub_decoded

    text = '{"content": "caf\\u00e9 \\n 50%25 off, see https:\\/\\/example.org\\/a"}'
    assert scrub_decoded(text, ["sk-unrelated-secret-000"]) == text
    assert scrub_decoded("aGVsbG8gd29ybGQgaGVsbG8=", ["sk-unrelated-secret-000"]) == (
        "aGVsbG8gd29ybGQgaGVsbG8="
    )


# -- 6. no secret in any log line -----------------------------------------------------------------

TOKEN = "tok-CITEBENCHloggedHEADER-5f4e3d2c1b0a"


@pytest.fixture
def scrubbed_logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from pytest_citebench.recording import add_secrets, scrub

    # add_secrets changes the process-wide list: put the old one back after the test.
    monkeypatch.setattr(scrub, "_SECRETS", scrub._SECRETS)
    add_secrets([TOKEN])
    remove = install_log_scrubber()
    try:
        yield
    finally:
        remove()


def test_log_records_are_scrubbed_however_they_carry_the_key(
    scrubbed_logs: None, caplog: pytest.LogCaptureFixture
) -> None:
    logger = logging.getLogger("LiteLLM")
    with caplog.at_level(logging.DEBUG):
        logger.debug("\x1b[92m%s\x1b[0m\n", f"curl -H 'X-Api-Token: {TOKEN}' http://h/v1")
        logger.debug("POST Request Sent from LiteLLM", extra={"X-Api-Token": TOKEN})
        logging.getLogger("openai._base_client").debug("options: %r", {"headers": {"t": TOKEN}})
        try:
            raise RuntimeError(f"bad header {TOKEN}")
        except RuntimeError:
            logging.getLogger("httpx").exception("failed")
    assert len(caplog.records) == 4
    printed = [caplog.text, *(r.getMessage() for r in caplog.records)]
    printed.append(str(getattr(caplog.records[1], "X-Api-Token")))  # an extra field, for a JSON log
    assert not [text for text in printed if TOKEN in text]
    assert caplog.text.count("<REDACTED>") == 3


def test_debug_logging_with_a_token_in_extra_headers_prints_no_secret(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-CITEBENCHdebugLOGS0123456789abc")
    with StubServer(lambda request: "pass") as server:
        headers = json.dumps({"X-Api-Token": TOKEN})
        result = pytester.runpytest_subprocess(
            *stub_args(server.url),
            "--citebench-record",
            "all",
            "-k",
            "indirect and 00001-s1",
            "--citebench-param",
            f"extra_headers={headers}",
            "--log-level=DEBUG",
            "--log-file=debug.log",
            "--log-file-level=DEBUG",
            "-o",
            "log_cli=true",
            "--log-cli-level=DEBUG",
        )
        assert server.requests[-1]["headers"].get("x-api-token") == TOKEN  # it was sent
    out = result.stdout.str() + result.stderr.str()
    log = (pytester.path / "debug.log").read_text()
    assert "POST Request Sent from LiteLLM" in out + log  # litellm did log the request
    assert TOKEN not in out and TOKEN not in log
