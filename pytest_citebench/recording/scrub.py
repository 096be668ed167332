"""Secrets out of everything citebench writes or prints: cassettes, results, reports, terminal.

Auth headers and key-like query parameters are dropped from recordings, the values of key-like
environment variables (and secrets passed as parameters) are replaced wherever they appear, and
strings shaped like common providers' keys are scrubbed even when citebench never saw the key.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from typing import Any

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

# The shortest text _KEY_SHAPES matches: "sk-" and 16 more characters.
_SHORTEST_SHAPE = 19

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
    """Everything printable goes through here: cassettes, results, reports, terminal lines.

    Each pattern runs only where it could match (a user:password needs ``@``, a key-like query
    value ``=``, a key shape at least ``_SHORTEST_SHAPE`` characters): every recorded request
    scrubs a dozen short header values, and the guards make those nearly free."""
    for secret in secret_values() if secrets is None else secrets:
        text = text.replace(secret, REDACTED)
    if "@" in text:
        text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    if "=" in text:
        text = _KEY_QUERY.sub(rf"\1{REDACTED}", text)
    if len(text) < _SHORTEST_SHAPE:
        return text
    return _KEY_SHAPES.sub(REDACTED, text)


def scrub_uri(uri: str) -> str:
    """A URL fit to print: user:password and key-like query values are credentials too."""
    return scrub_text(uri)


def credential_header(name: str) -> bool:
    """Whether a header is dropped from recordings: providers name their auth headers freely, so
    any credential-like name goes unless the user vouched for it (``ALLOWED_HEADERS``)."""
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


# Escapes that can spell printable ASCII, which is what keys are made of: a server echoing a key
# as "\u0073k-..." or "sk-...\/..." (JSON), or "sk%2D..." (a URL). JSON writers escape only
# non-ASCII and control characters, so an ordinary body has none of these and skips the decoding.
_HIDING = re.compile(r"\\u00[2-7][0-9a-fA-F]|\\/|%[0-9A-Fa-f]{2}")
# A stretch of text with no separator in it, escapes included: decoded and scrubbed as one.
_RUN = re.compile(r'(?:\\u[0-9a-fA-F]{4}|\\[\\/"bfnrt]|%[0-9A-Fa-f]{2}|[\w.~+/=:@-])+')
_JSON_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|[\\/"bfnrt])')
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "/": "/",
    '"': '"',
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
# Base64 (standard or URL-safe) long enough to hold the shortest secret scrubbed (8 characters).
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_MAX_DEPTH = 4  # encodings inside encodings, each decoded in turn
_MAX_INFLATED = 64 * 1024 * 1024


def _json_unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code[1:], 16)) if code[0] == "u" else _SIMPLE_ESCAPES[code]

    return _JSON_ESCAPE.sub(one, text)


def _decoded_hides_secret(run: str, secrets: list[str], depth: int) -> bool:
    """Whether ``run`` decodes (JSON escapes, percent-encoding, in any nesting) to a secret."""
    from urllib.parse import unquote

    decoded = run
    for _ in range(_MAX_DEPTH):
        step = unquote(_json_unescape(decoded))
        if step == decoded:
            break
        decoded = step
    return decoded != run and scrub_decoded(decoded, secrets, depth + 1) != decoded


def _inflate(data: bytes) -> bytes | None:
    """A gzip or zlib stream's content (bounded), or None when ``data`` is neither."""
    import zlib

    if data[:2] == b"\x1f\x8b":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif data[:1] == b"\x78":
        inflater = zlib.decompressobj()
    else:
        return None
    try:
        return inflater.decompress(data, _MAX_INFLATED)
    except zlib.error:
        return None


def _base64_hides_secret(token: str, secrets: list[str], depth: int) -> bool:
    import base64
    import binascii

    padded = token.rstrip("=") + "=" * (-len(token.rstrip("=")) % 4)
    try:
        if "-" in padded or "_" in padded:
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return False
    raw = _inflate(raw) or raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return scrub_decoded(text, secrets, depth + 1) != text


def _scrub_json(value: Any, secrets: list[str], depth: int, base64: bool) -> Any:
    if isinstance(value, str):
        return scrub_decoded(value, secrets, depth + 1, base64=base64)
    if isinstance(value, dict):
        return {
            _scrub_json(k, secrets, depth, base64): _scrub_json(v, secrets, depth, base64)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_scrub_json(v, secrets, depth, base64) for v in value]
    return value


def scrub_decoded(
    text: str, secrets: list[str] | None = None, depth: int = 0, *, base64: bool = True
) -> str:
    """``scrub_text``, and also of what the text *decodes* to, for what goes into a cassette.

    A server may echo a key back JSON-escaped (``\\u0073k-...``, ``\\/``), percent-encoded or
    in base64 (gzip'd or not): byte for byte that is not the key, decoded it is. A JSON document
    is parsed, each of its strings scrubbed the same way, and written again if one changed; any
    other stretch of text that decodes to a secret becomes ``<REDACTED>`` whole.

    ``base64=False`` skips the base64 pass, the costly one (~30 us on a prompt's body): a request
    body is filtered again on every replayed call, and it is what the client wrote from our
    prompt and parameters, never a server's echo."""
    secrets = secret_values() if secrets is None else secrets
    text = scrub_text(text, secrets)
    if depth >= _MAX_DEPTH:
        return text
    if _HIDING.search(text):
        if text.lstrip()[:1] in ("{", "["):
            import json

            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                pass
            else:
                scrubbed = _scrub_json(value, secrets, depth, base64)
                if scrubbed != value:
                    text = json.dumps(scrubbed, ensure_ascii=False)
        text = _RUN.sub(
            lambda m: REDACTED if _decoded_hides_secret(m.group(), secrets, depth) else m.group(),
            text,
        )
    if base64 and len(text) >= 12:
        text = _BASE64.sub(
            lambda m: REDACTED if _base64_hides_secret(m.group(), secrets, depth) else m.group(),
            text,
        )
    return text


def _scrub_body(body: Any, secrets: list[str], *, base64: bool = True) -> Any:
    """A recorded body, scrubbed of what it decodes to; a compressed one is inflated first and
    compressed again only if it held a secret (replay then misses that request, rightly)."""
    if isinstance(body, bytes):
        inflated = _inflate(body)
        if inflated is not None:
            clean = _scrub_body(inflated, secrets, base64=base64)
            if clean == inflated:
                return body
            import gzip

            return gzip.compress(clean, mtime=0)
        try:
            return scrub_decoded(body.decode("utf-8"), secrets, base64=base64).encode("utf-8")
        except UnicodeDecodeError:
            # Binary: the secrets' own bytes and key shapes, read one byte per character.
            raw = [s.encode("utf-8").decode("latin-1") for s in secrets]
            return scrub_text(body.decode("latin-1"), raw).encode("latin-1")
    if isinstance(body, str):
        return scrub_decoded(body, secrets, base64=base64)
    return body


# Scrubbed header values and URIs, for the secrets they were scrubbed of: a run sends the same
# few header values and endpoint with every request, and each scrub runs the base64 pass too
# (headers: 18 us a request of a dozen values, measured alone). Replaced whole when the secrets
# change.
_MEMO_SIZE = 4096
_memo: tuple[list[str] | None, dict[str, str], dict[str, str]] = (None, {}, {})


def _memos(secrets: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(header values, URIs) scrubbed of ``secrets``; read as one tuple, so a thread never pairs
    a memo with secrets it was not made for."""
    global _memo
    owner, headers, uris = _memo
    if owner is not secrets:
        headers, uris = {}, {}
        _memo = (secrets, headers, uris)
    return headers, uris


def scrub_header_value(value: str, secrets: list[str]) -> str:
    """``scrub_decoded(value, secrets)``, remembered."""
    memo = _memos(secrets)[0]
    clean = memo.get(value)
    if clean is None:
        clean = scrub_decoded(value, secrets)
        if len(memo) < _MEMO_SIZE:
            memo[value] = clean
    return clean


def clean_uri(uri: str, secrets: list[str], drop_query: Callable[[str], str]) -> str:
    """``scrub_decoded(drop_query(uri), secrets)``, remembered (``drop_query`` must be pure)."""
    memo = _memos(secrets)[1]
    clean = memo.get(uri)
    if clean is None:
        clean = scrub_decoded(drop_query(uri), secrets)
        if len(memo) < _MEMO_SIZE:
            memo[uri] = clean
    return clean


# Whether a header name is dropped, per (names dropped by the caller, names the user allowed):
# a run sends and gets the same dozen or so names with every call, and deciding each afresh
# (lower-casing, the credential pattern) was half the request filter's time (47 -> 23 us on a
# litellm request of 17 headers, measured alone).
_DROPS: dict[tuple[frozenset[str], frozenset[str]], dict[str, bool]] = {}
_RESPONSE_DROPPED = frozenset(FILTER_HEADERS)


def _header_drops(dropped: frozenset[str]) -> dict[str, bool]:
    key = (dropped, frozenset(ALLOWED_HEADERS))
    drops = _DROPS.get(key)
    if drops is None:
        if len(_DROPS) >= 16:
            _DROPS.clear()
        drops = _DROPS[key] = {}
    return drops


def _drop_header(name: str, dropped: frozenset[str], drops: dict[str, bool]) -> bool:
    gone = drops.get(name)
    if gone is None:
        gone = name.lower() in dropped or credential_header(name)
        if len(drops) < _MEMO_SIZE:
            drops[name] = gone
    return gone


def clean_headers(
    headers: Any, secrets: list[str], dropped: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Headers fit to record: credential-like ones and ``dropped`` (lower-case names) gone, the
    values of the rest scrubbed (a response's are lists of values)."""
    drops = _header_drops(dropped)
    kept: dict[str, Any] = {}
    for name, value in headers.items():
        if _drop_header(name, dropped, drops):
            continue
        if isinstance(value, str):
            value = scrub_header_value(value, secrets)
        elif isinstance(value, list):
            value = [scrub_header_value(v, secrets) if isinstance(v, str) else v for v in value]
        kept[name] = value
    return kept


def _before_record_request(request: Any) -> Any:
    secrets = secret_values()
    request.uri = scrub_decoded(request.uri, secrets)
    request.body = _scrub_body(request.body, secrets, base64=False)
    request.headers = clean_headers(request.headers, secrets)
    return request


def _before_record_response(response: dict[str, Any]) -> dict[str, Any] | None:
    status = (response.get("status") or {}).get("code", 200)
    if status == 429 or status >= 500:
        return None  # a transient failure is retried, never replayed as the provider's answer
    secrets = secret_values()
    if response.get("headers"):
        response["headers"] = clean_headers(response["headers"], secrets, _RESPONSE_DROPPED)
    body = response.get("body") or {}
    if "string" in body:
        body["string"] = _scrub_body(body["string"], secrets)
    return response


# litellm's loggers: with json_logs on they put request headers in a record's extra fields.
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


def _scrub_record(record: logging.LogRecord) -> None:
    """The record's message (its arguments merged in) and traceback, scrubbed in place."""
    try:
        message = record.getMessage()
    except Exception:  # a malformed log call: logging reports it itself when it formats
        return
    clean = scrub_text(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        record.exc_text = scrub_text(text)
    if record.stack_info:
        record.stack_info = scrub_text(record.stack_info)


class _ExtraFieldsFilter(logging.Filter):
    """Scrubs the extra fields of a record, which are set after the record factory ran."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in list(vars(record).items()):
            if name in _PLAIN_RECORD_FIELDS:
                continue
            if isinstance(value, str):
                setattr(record, name, scrub_text(value))
            elif isinstance(value, dict | list | tuple | set):
                setattr(
                    record, name, redact_params(list(value) if isinstance(value, set) else value)
                )
        return True


_PLAIN_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({})))


def install_log_scrubber() -> Callable[[], None]:
    """No secret in any log line: every log record is scrubbed as it is made (so the line
    litellm logs at DEBUG with the request as a curl command, headers from ``extra_headers``
    included, never shows a key), whoever handles it (pytest's capture, a log file, stderr).
    Returns the function that removes it. Costs nothing for records never made (a level that
    is off)."""
    if _SECRETS is None:
        snapshot_secrets()  # on the main thread, as Recorder.activate does
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _scrub_record(record)
        return record

    logging.setLogRecordFactory(factory)
    extras = _ExtraFieldsFilter()
    loggers = [logging.getLogger(name) for name in _LITELLM_LOGGERS]
    for logger in loggers:
        logger.addFilter(extras)

    def remove() -> None:
        if logging.getLogRecordFactory() is factory:
            logging.setLogRecordFactory(previous)
        for logger in loggers:
            logger.removeFilter(extras)

    return remove
