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
import functools
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
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


# Credentials inside URLs: user:password@ and key-like query values (?token=..., &api_key=...).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")
_KEY_QUERY = re.compile(
    r"(?i)([?&][a-z0-9_.-]*(?:key|token|secret|signature|sig|password|passwd|auth|session|"
    r"credential|mailto|email)[a-z0-9_.-]*=)[^&\s#'\"<>]+"
)
# Request and response headers that carry credentials, whatever the provider calls them.
_CREDENTIAL_HEADER = re.compile(
    r"(?i)(auth|key|token|secret|signature|cookie|session|credential|password)"
)
ALLOWED_HEADERS: set[str] = set()  # --citebench-allow-header: names the user vouches for


def scrub_text(text: str, secrets: list[str] | None = None) -> str:
    """Everything printable goes through here: cassettes, results, reports, terminal lines."""
    for secret in secret_values() if secrets is None else secrets:
        text = text.replace(secret, REDACTED)
    text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    text = _KEY_QUERY.sub(rf"\1{REDACTED}", text)
    return _KEY_SHAPES.sub(REDACTED, text)


def scrub_uri(uri: str) -> str:
    return scrub_text(uri)


def credential_header(name: str) -> bool:
    return bool(_CREDENTIAL_HEADER.search(name)) and name.lower() not in ALLOWED_HEADERS


def add_secrets(values: list[str]) -> None:
    """Secrets that are not in the environment (a token in ``extra_headers``, an ``api_key``
    parameter) are scrubbed wherever they would be printed, like environment keys."""
    global _SECRETS
    current = set(secret_values())
    current.update(v for v in values if isinstance(v, str) and len(v) >= 6)
    _SECRETS = sorted(current, key=len, reverse=True)


def secret_param_values(value: Any) -> list[str]:
    """The string values under key-like names anywhere in litellm parameters."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and (_SECRET_NAME.search(k) or _CREDENTIAL_HEADER.search(k)):
                found.extend(_strings(v))
            else:
                found.extend(secret_param_values(v))
    elif isinstance(value, list | tuple):
        for v in value:
            found.extend(secret_param_values(v))
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


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
        if credential_header(name):
            del request.headers[name]
            continue
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
        if name.lower() in FILTER_HEADERS or credential_header(name):
            del headers[name]
    body = response.get("body") or {}
    if "string" in body:
        body["string"] = _scrub_body(body["string"], secrets)
    return response


MAX_CASSETTE_BYTES = 32 * 1024 * 1024
MAX_CASSETTE_NODES = 2_000_000  # YAML nodes after alias expansion
CLIENT_PACKAGES = ("litellm", "openai", "httpx", "vcrpy")


@functools.cache
def client_versions() -> dict[str, str]:
    """The versions of the packages that build the recorded requests: a committed cassette that
    stops matching after an upgrade is explained by them."""
    from importlib import metadata

    versions = {}
    for name in CLIENT_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _expanded_size(data: Any, limit: int) -> int:
    """Nodes of ``data`` as a tree, counting a shared (aliased) node once per reference; stops
    past ``limit``. A billion-laughs cassette is a few kilobytes of aliases that expand to 10^9
    nodes: anything that walks it (a log line, a repr) hangs, so it is refused here."""
    memo: dict[int, int] = {}

    def size(node: Any) -> int:
        key = id(node)
        if key in memo:
            return memo[key]
        if isinstance(node, dict):
            total = 1 + sum(size(k) + size(v) for k, v in node.items())
        elif isinstance(node, list):
            total = 1 + sum(size(v) for v in node)
        else:
            total = 1
        memo[key] = total = min(total, limit + 1)
        return total

    return size(data)


class CassetteSerializer:
    """vcrpy's YAML format, read with bounds and checked, written with the client versions.

    Cassettes are untrusted input (anyone can commit one): the size and alias expansion are
    capped, every interaction must be recorded HTTP, and a recorded 429/5xx is refused by name
    instead of being dropped by the response filter on load, which made the replay a miss that
    blamed a changed prompt."""

    @staticmethod
    def deserialize(text: str) -> Any:
        import yaml

        if len(text) > MAX_CASSETTE_BYTES:
            raise ValueError(f"larger than {MAX_CASSETTE_BYTES} bytes")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(text, Loader=loader)
        if _expanded_size(data, MAX_CASSETTE_NODES) > MAX_CASSETTE_NODES:
            raise ValueError(
                f"expands to more than {MAX_CASSETTE_NODES} YAML nodes (aliases); refused"
            )
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise ValueError("not a vcrpy cassette (no 'interactions' list)")
        for number, interaction in enumerate(data["interactions"], start=1):
            problem = _raw_interaction_problem(interaction)
            if problem:
                raise ValueError(f"interaction {number}: {problem}")
        return data

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        import yaml

        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

        class NoAliases(dumper):  # type: ignore[valid-type,misc]
            def ignore_aliases(self, data: Any) -> bool:
                return True

        return yaml.dump({**data, "recorded_with": client_versions()}, Dumper=NoAliases)


class CassettePersister:
    """vcrpy's filesystem persister, reading a cassette once and at most its size cap.

    Why: checking the size and the encoding before vcrpy read the file again cost a stat, a
    second read and a decode per item, about a tenth of an item's replay."""

    @staticmethod
    def load_cassette(cassette_path: str | Path, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.serialize import deserialize

        try:
            with open(cassette_path, "rb") as handle:
                raw = handle.read(MAX_CASSETTE_BYTES + 1)
        except FileNotFoundError:
            raise CassetteNotFoundError() from None
        if len(raw) > MAX_CASSETTE_BYTES:
            raise ValueError(f"larger than {MAX_CASSETTE_BYTES} bytes; refused")
        text = raw.decode("utf-8")  # a UnicodeDecodeError names the byte
        if not text.strip():
            raise CassetteNotFoundError()  # as vcrpy: an empty file is recorded again
        return deserialize(text, serializer)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        from vcr.persisters.filesystem import FilesystemPersister

        FilesystemPersister.save_cassette(cassette_path, cassette_dict, serializer=serializer)


def _raw_interaction_problem(interaction: Any) -> str | None:
    """``_interaction_problem`` on the YAML as read, before vcrpy builds its objects; a recorded
    failure is refused here, where it is still visible (vcrpy's load would drop it)."""
    if not isinstance(interaction, dict):
        return "not a mapping"
    request, response = interaction.get("request"), interaction.get("response")
    if not isinstance(request, dict):
        return "the request has no method or URI"
    problem = _interaction_problem(SimpleNamespace(**request), response)
    if problem or not isinstance(response, dict):
        return problem
    code = response["status"]["code"]  # checked above: a mapping with an HTTP status
    if code == 429 or code >= 500:
        return (
            f"a recorded {code} response to {request['method']} {scrub_uri(request['uri'])}: a "
            "failure is retried, never replayed as the provider's answer"
        )
    return None


def recorded_versions(path: Path) -> dict[str, str]:
    """The client versions a cassette was recorded with ({} when unknown or unreadable)."""
    try:
        head = path.read_text(encoding="utf-8")
        data = CassetteSerializer.deserialize(head)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    except Exception:  # a YAML error: the load itself reports it
        return {}
    versions = data.get("recorded_with")
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


def error_note(path: Path) -> Path:
    """Beside a cassette: why recording the item failed, so replay reports the real cause."""
    return path.with_name(path.name[: -len(".yaml")] + ".error.txt")


@dataclass
class ItemCassette:
    """The cassette of the item running in this asyncio task, and the misses it saw."""

    path: Path
    cassette: Any
    record_command: str
    misses: list[Any] = field(default_factory=list)
    played: int = 0


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


def played_count() -> int:
    """Responses served from the current item's cassette: a call that did not raise it was
    paid for (``--citebench-max-cost`` counts only those)."""
    current = _CURRENT.get()
    return current.played if current else 0


def miss_count() -> int:
    current = _CURRENT.get()
    return len(current.misses) if current else 0


MISS_PREFIX = "cassette miss:"


def miss_error() -> CassetteMiss:
    """What replay could not find, and why: the nearest recorded request's differences, the
    client versions when they changed, and the original error when recording the item failed.
    The one command that records every miss is printed once, at the end of the run."""
    current = _CURRENT.get()
    if current is None:
        return CassetteMiss("a request was made outside any citebench item; nothing recorded it")
    request = current.misses[-1]
    path = current.path
    lines: list[str] = []
    note = error_note(path)
    if path.is_file():
        lines.append(f"{MISS_PREFIX} {path} has no recording of this exact request")
        nearest = _nearest(current.cassette, request)
        if nearest is not None:
            differences = request_differences(nearest, request)
            if differences:
                lines.append("  differs from the recording: " + "; ".join(differences))
    elif note.is_file():
        original = note.read_text(encoding="utf-8", errors="replace").strip()
        lines.append(f"{MISS_PREFIX} {path} was not saved: recording this item failed with")
        lines.append("  " + scrub_text(original)[:2000].replace("\n", "\n  "))
    else:
        lines.append(f"{MISS_PREFIX} {path} does not exist (never recorded)")
    lines.append(f"  request: {request.method} {scrub_uri(request.uri)}")
    if path.is_file():
        then, now = recorded_versions(path), client_versions()
        changed = [f"{k} {then[k]}, now {now[k]}" for k in then if k in now and then[k] != now[k]]
        if changed:
            lines.append("  recorded with " + "; ".join(changed))
    lines.append("  (the command that records every miss is printed at the end of the run)")
    return CassetteMiss("\n".join(lines))


def _nearest(cassette: Any, request: Any) -> Any:
    requests = list(getattr(cassette, "requests", []) or [])
    if not requests:
        return None
    same_path = [r for r in requests if r.method == request.method and r.path == request.path]
    return (same_path or requests)[0]


def _body_json(request: Any) -> Any:
    body = request.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except (TypeError, ValueError):
        return body


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = scrub_text(text)
    return text if len(text) <= 60 else text[:57] + "..."


def request_differences(recorded: Any, now: Any) -> list[str]:
    """What differs between two requests, as a person would say it: ``max_tokens: recorded 64,
    now 65``, ``api_base differs``, ``messages[1].content differs``."""
    out: list[str] = []
    if recorded.method != now.method:
        out.append(f"method: recorded {recorded.method}, now {now.method}")
    if recorded.uri != now.uri:
        if (recorded.host, recorded.port) != (now.host, now.port):
            out.append(
                f"api_base differs: recorded {scrub_uri(recorded.uri)}, now {scrub_uri(now.uri)}"
            )
        else:
            out.append(f"uri: recorded {scrub_uri(recorded.uri)}, now {scrub_uri(now.uri)}")
    before, after = _body_json(recorded), _body_json(now)
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            if key not in after:
                out.append(f"{key}: recorded {_short(before[key])}, now absent")
            elif key not in before:
                out.append(f"{key}: not recorded, now {_short(after[key])}")
            elif before[key] != after[key]:
                if key == "messages" and isinstance(before[key], list):
                    out.extend(_message_differences(before[key], after[key]))
                else:
                    out.append(f"{key}: recorded {_short(before[key])}, now {_short(after[key])}")
    elif before != after:
        out.append("the request body differs")
    return out


def _message_differences(before: list[Any], after: Any) -> list[str]:
    if not isinstance(after, list) or len(before) != len(after):
        n = len(after) if isinstance(after, list) else "?"
        return [f"messages: recorded {len(before)}, now {n}"]
    out = []
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        for field_name in sorted(set(a) | set(b)):
            if a.get(field_name) != b.get(field_name):
                out.append(f"messages[{i}].{field_name} differs")
    return out or ["messages differ"]


def record_command(args: list[str], nodeids: list[str]) -> str:
    """One command that records every missed item: the run's own arguments (so the endpoint,
    sampling and parameters that shaped the requests are repeated), its record mode replaced."""
    import shlex

    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--citebench-record":
            skip = True
            continue
        if arg.startswith("--citebench-record="):
            continue
        kept.append(arg)
    selection: list[str] = nodeids if len(nodeids) <= 10 else ["--lf"]
    if len(nodeids) <= 10:
        kept = [a for a in kept if "::" not in a]
    words = ["pytest", *kept, *selection, "--citebench-record", "all"]
    return scrub_text(" ".join(shlex.quote(w) for w in words))


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
            current = _CURRENT.get()
            if current is not None:
                current.played += 1
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
            config["serializer"] = CassetteSerializer
            config["persister"] = CassettePersister
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

        try:
            cassette = Cassette.load(path=str(path), **self._cassette_config())
        except UnicodeDecodeError as exc:
            raise broken(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise broken(str(exc)) from None
        except Exception as exc:  # malformed YAML, a refused tag, a wrong shape: all the same
            what = str(exc) if type(exc) is ValueError else f"{type(exc).__name__}: {exc}"
            raise broken(what) from None
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
