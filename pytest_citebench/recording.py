"""Recording: every remote model call goes through vcrpy, one small cassette per item.

vcrpy patches HTTP libraries globally, and a cassette normally applies to whatever runs while it
is open. We issue many items' calls concurrently, so we open vcrpy's patches once with a *router*
cassette that forwards each request to the cassette of the item whose asyncio task made it (a
context variable, which every asyncio task carries separately). One cassette per item keeps replay
fast (vcrpy scans a cassette linearly) and means two xdist workers never write the same file.

Nothing secret reaches a cassette: auth headers and key-like query parameters are dropped, and
the values of key-like environment variables are replaced wherever they appear.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_citebench.errors import CassetteMiss, CitebenchError

RECORD_MODES = ("none", "once", "new_episodes", "all")
MATCH_ON = ("method", "uri", "body")
FILTER_HEADERS = (
    "authorization",
    "api-key",
    "x-api-key",
    "x-goog-api-key",
    "anthropic-api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
    "proxy-authorization",
    "user-agent",  # Crossref's polite pool puts the contact address here
)
FILTER_QUERY = (
    "key",
    "api_key",
    "api-key",
    "apikey",
    "access_token",
    "token",
    "sig",
    "signature",
    "mailto",
    "email",
)
REDACTED = "<REDACTED>"
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$", re.IGNORECASE)
# Shapes of keys from common providers, scrubbed even when the key is not in our environment.
_KEY_SHAPES = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}|gsk_[A-Za-z0-9]{20,}"
    r"|xai-[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|r8_[A-Za-z0-9]{20,}|pplx-[A-Za-z0-9]{20,}"
    r"|AKIA[0-9A-Z]{16}|Bearer\s+[A-Za-z0-9._\-]{16,})"
)
# What a cassette path segment may hold as it is: lower case (case-insensitive file systems fold
# case), digits and a few separators, never leading with a dot ("." and ".." walk the tree).
_SAFE_SEGMENT = re.compile(r"[a-z0-9_+-][a-z0-9._+-]*")
_UNSAFE_CHAR = re.compile(r"[^a-z0-9._+-]+")
# Names Windows refuses whatever the extension (CON.yaml is the console, not a file).
_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)")
SEGMENT_READABLE = 80  # characters of readable prefix kept before the hash
HASH_DIGITS = 16  # hex digits of sha256: 64 bits, collisions are not a practical concern


def safe_segment(text: str) -> str:
    """One path segment for ``text``, distinct for distinct texts and always a plain file name.

    A name that is already safe (``1806.07722v3-s4``, ``indirect``) is used as it is, so a person
    finds a cassette from its test id. Any other name, one whose sanitising would change or
    truncate it (``openai/gpt-4o``, ``A``, ``..``, ``a:b``, NUL, 300 characters), becomes a
    readable prefix plus ``~`` and a hash of the full unsanitised name. ``~`` never occurs in a
    safe name, so a hashed segment cannot equal a plain one, and two names never share a file:
    the scheme that replaced ``/`` by ``--`` put ``a/b`` and ``a--b`` in one cassette.
    """
    if (
        len(text) <= SEGMENT_READABLE
        and _SAFE_SEGMENT.fullmatch(text)
        and not _RESERVED.match(text)
        and not text.endswith(".")
    ):
        return text
    readable = _UNSAFE_CHAR.sub("-", text.replace("/", "--").lower()).strip(".-")
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    return f"{readable[:SEGMENT_READABLE]}~{digest}" if readable else f"~{digest}"


def cassette_path(
    root: Path, model: str, suite: str, version: int, task: str, item_id: str
) -> Path:
    """``<root>/<model>/<suite parts>/v<version>/<task>/<item>.yaml``: a pure function that never
    maps two keys to one file and never leaves ``root`` (see ``safe_segment``)."""
    suite_parts = [safe_segment(p) for p in suite.split("/")]
    return root.joinpath(
        safe_segment(model),
        *suite_parts,
        f"v{int(version)}",
        safe_segment(task),
        f"{safe_segment(item_id)}.yaml",
    )


_SECRETS: list[str] | None = None


def snapshot_secrets() -> list[str]:
    """Read the key-like environment variables once, on the main thread.

    Iterating ``os.environ`` from the engine thread races pytest, which deletes
    ``PYTEST_CURRENT_TEST`` between test phases (a KeyError mid-iteration); reading it for every
    request also cost ~6% of a replay. ``Recorder.activate`` takes the snapshot.
    """
    global _SECRETS
    values = {v for k, v in dict(os.environ).items() if _SECRET_ENV.search(k) and v and len(v) >= 8}
    _SECRETS = sorted(values, key=len, reverse=True)
    return _SECRETS


def secret_values() -> list[str]:
    """Values of key-like environment variables, longest first so overlapping ones all go."""
    return _SECRETS if _SECRETS is not None else snapshot_secrets()


def scrub_text(text: str, secrets: list[str] | None = None) -> str:
    for secret in secret_values() if secrets is None else secrets:
        text = text.replace(secret, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)


# Names whose values are secrets wherever they are printed: api_key, x-api-key, Authorization,
# aws_session_token, vertex_credentials ... (but not max_tokens).
_SECRET_NAME = re.compile(
    r"(^|[_-])(key|token|secret|password|credentials?|authorization|auth|signature|cookie)$",
    re.IGNORECASE,
)


def redact_params(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` (litellm parameters, say) fit to print: values under key-like names replaced,
    key-shaped and key-valued strings scrubbed anywhere else."""
    secrets = secret_values() if secrets is None else secrets
    if isinstance(value, dict):
        return {
            k: REDACTED
            if isinstance(k, str) and _SECRET_NAME.search(k)
            else redact_params(v, secrets)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(redact_params(v, secrets) for v in value)
    if isinstance(value, str):
        return scrub_text(value, secrets)
    return value


def _scrub_body(body: Any, secrets: list[str]) -> Any:
    if isinstance(body, bytes):
        try:
            return scrub_text(body.decode("utf-8"), secrets).encode("utf-8")
        except UnicodeDecodeError:
            return body
    if isinstance(body, str):
        return scrub_text(body, secrets)
    return body


def _before_record_request(request: Any) -> Any:
    secrets = secret_values()
    request.uri = scrub_text(request.uri, secrets)
    request.body = _scrub_body(request.body, secrets)
    for name in list(request.headers):
        value = request.headers[name]
        if isinstance(value, str):
            request.headers[name] = scrub_text(value, secrets)
    return request


def _before_record_response(response: dict[str, Any]) -> dict[str, Any] | None:
    status = (response.get("status") or {}).get("code", 200)
    if status == 429 or status >= 500:
        return None  # a transient failure is retried, never replayed as the provider's answer
    secrets = secret_values()
    headers = response.get("headers") or {}
    for name in list(headers):
        if name.lower() in FILTER_HEADERS:
            del headers[name]
    body = response.get("body") or {}
    if "string" in body:
        body["string"] = _scrub_body(body["string"], secrets)
    return response


@dataclass
class ItemCassette:
    """The cassette of the item running in this asyncio task, and the misses it saw."""

    path: Path
    cassette: Any
    record_command: str
    misses: list[Any] = field(default_factory=list)


_CURRENT: contextvars.ContextVar[ItemCassette | None] = contextvars.ContextVar(
    "citebench_cassette", default=None
)


def recorded_count() -> int:
    """Interactions in the current item's cassette: a mark for ``forget_since``."""
    current = _CURRENT.get()
    return len(current.cassette.data) if current else 0


def forget_since(mark: int) -> None:
    """Drop what the current item recorded after ``mark``. A failed attempt that got a 200 (a
    malformed body, a truncated one) must not be saved: replay would serve it as the answer."""
    current = _CURRENT.get()
    if current is not None and len(current.cassette.data) > mark:
        del current.cassette.data[mark:]


def _interaction_problem(request: Any, response: Any) -> str | None:
    """Why a loaded interaction is not recorded HTTP that replay can serve, or None."""
    if not isinstance(getattr(request, "uri", None), str) or not isinstance(
        getattr(request, "method", None), str
    ):
        return "the request has no method or URI"
    if not isinstance(response, dict):
        return f"the response is a {type(response).__name__}, not a mapping"
    status = response.get("status")
    code = status.get("code") if isinstance(status, dict) else None
    if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 599:
        return "the response has no HTTP status code"
    if not isinstance(response.get("headers", {}), dict):
        return "the response headers are not a mapping"
    body = response.get("body", {})
    if not isinstance(body, dict) or not isinstance(body.get("string", b""), (bytes, str)):
        return "the response body is not a string"
    return None


def miss_count() -> int:
    current = _CURRENT.get()
    return len(current.misses) if current else 0


def miss_error() -> CassetteMiss:
    current = _CURRENT.get()
    if current is None:
        return CassetteMiss("a request was made outside any citebench item; nothing recorded it")
    request = current.misses[-1]
    exists = current.path.is_file()
    why = (
        "has no recording of this exact request (the prompt, model or parameters changed)"
        if exists
        else "does not exist"
    )
    mode = "all" if exists else "once"
    return CassetteMiss(
        f"cassette miss: {current.path} {why}.\n"
        f"  request: {request.method} {request.uri}\n"
        f"  record it (needs the provider's key and network):\n"
        f"    {current.record_command} --citebench-record {mode}"
    )


def _router_class() -> type:
    from vcr.cassette import Cassette

    class RouterCassette(Cassette):
        """Forwards vcrpy's questions to the current item's cassette; with none, refuses."""

        def _item(self) -> Any:
            current = _CURRENT.get()
            return current.cassette if current else None

        def can_play_response_for(self, request: Any) -> bool:
            item = self._item()
            return bool(item is not None and item.can_play_response_for(request))

        def play_response(self, request: Any) -> Any:
            return self._item().play_response(request)

        def append(self, request: Any, response: Any) -> None:
            self._item().append(request, response)

        @property
        def write_protected(self) -> bool:
            item = self._item()
            return True if item is None else bool(item.write_protected)

        def filter_request(self, request: Any) -> Any:
            # Called on the refuse path (write-protected) and before recording; only the first
            # is a miss, which we note so the item's error can say exactly what to do.
            current = _CURRENT.get()
            item = self._item()
            filtered = item.filter_request(request) if item is not None else request
            if current is not None and filtered and item.write_protected:
                current.misses.append(request)
            return filtered

        def find_requests_with_most_matches(self, request: Any) -> list[Any]:
            item = self._item()
            return item.find_requests_with_most_matches(request) if item is not None else []

    return RouterCassette


class Recorder:
    """Owns vcrpy for a session: patches on ``activate``, one cassette per item in ``use``."""

    def __init__(self, root: Path, mode: str = "none") -> None:
        if mode not in RECORD_MODES:
            raise ValueError(f"record mode {mode!r}: choose one of {', '.join(RECORD_MODES)}")
        self.root = root
        self.mode = mode
        self._exit: contextlib.ExitStack | None = None
        self._config: dict[str, Any] | None = None

    def _cassette_config(self) -> dict[str, Any]:
        if self._config is None:
            import vcr

            config = vcr.VCR(
                record_mode=self.mode,
                match_on=MATCH_ON,
                filter_headers=list(FILTER_HEADERS),
                filter_query_parameters=list(FILTER_QUERY),
                before_record_request=_before_record_request,
                before_record_response=_before_record_response,
                decode_compressed_response=True,
            ).get_merged_config()
            for key in ("path_transformer", "func_path_generator", "record_on_exception"):
                config.pop(key, None)
            self._config = config
        return self._config

    def activate(self) -> None:
        if self._exit is not None:
            return
        from vcr.patch import CassettePatcherBuilder

        snapshot_secrets()

        router = _router_class()(path="<citebench-router>", record_mode="none")
        stack = contextlib.ExitStack()
        for patcher in CassettePatcherBuilder(router).build():
            stack.enter_context(patcher)
        self._exit = stack

    def deactivate(self) -> None:
        if self._exit is not None:
            self._exit.close()
            self._exit = None

    def load_cassette(self, path: Path, record_command: str) -> Any:
        """vcrpy's cassette at ``path`` (empty when there is none yet).

        Cassettes are untrusted input: anyone can commit one. vcrpy parses them with a safe YAML
        loader, so no tag runs code; anything that does not load as recorded HTTP is a
        CitebenchError that names the file and says what to do, never a traceback mid-replay.
        """
        from vcr.cassette import Cassette

        def broken(reason: str) -> CitebenchError:
            reason = " ".join(reason.split())
            return CitebenchError(
                f"cassette {path} could not be loaded: {reason[:300]}\n"
                f"  delete it and record it again (needs the provider's key and network):\n"
                f"    {record_command} --citebench-record once"
            )

        if path.is_file():
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise broken(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
            except OSError as exc:
                raise broken(str(exc)) from None
        try:
            cassette = Cassette.load(path=str(path), **self._cassette_config())
        except Exception as exc:  # malformed YAML, a refused tag, a wrong shape: all the same
            raise broken(f"{type(exc).__name__}: {exc}") from None
        for number, (request, response) in enumerate(cassette.data, start=1):
            problem = _interaction_problem(request, response)
            if problem:
                raise broken(f"interaction {number}: {problem}")
        return cassette

    @contextlib.contextmanager
    def use(self, path: Path, record_command: str) -> Iterator[ItemCassette]:
        """Route this task's requests to ``path``; save it if the item finished and recorded."""
        cassette = self.load_cassette(path, record_command)
        state = ItemCassette(path, cassette, record_command)
        token = _CURRENT.set(state)
        try:
            yield state
        finally:
            _CURRENT.reset(token)
        # Saved only when the item finished: a half-recorded conversation would replay as a miss.
        if cassette.dirty:
            path.parent.mkdir(parents=True, exist_ok=True)
            cassette._save()
