"""Secrets out of everything citebench writes or prints: cassettes, results, reports, terminal.

Auth headers and key-like query parameters are dropped from recordings, the values of key-like
environment variables (and secrets passed as parameters) are replaced wherever they appear, and
strings shaped like common providers' keys are scrubbed even when citebench never saw the key.
"""

from __future__ import annotations

import os
import re
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
