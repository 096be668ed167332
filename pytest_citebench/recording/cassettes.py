"""Cassette files as untrusted input: vcrpy's YAML read with size and alias bounds, every
interaction checked to be recorded HTTP that replay can serve, and the client versions written
beside the recording so a cassette that stops matching after an upgrade explains itself.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import stat
from json.encoder import encode_basestring as _encode_string
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_citebench.errors import CassetteNotSaved
from pytest_citebench.recording.scrub import scrub_uri

MAX_CASSETTE_BYTES = 32 * 1024 * 1024
MAX_CASSETTE_NODES = 2_000_000  # YAML nodes after alias expansion
CLIENT_PACKAGES = ("litellm", "openai", "httpx", "vcrpy")
#: The reason of an item whose exchange was too big (or otherwise unfit) to replay: that item
#: alone is an error; the run goes on.
TOO_LARGE_REASON = "the answer cannot be recorded: replay would refuse its cassette"


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


def cassette_format(text: str) -> str:
    """``json`` or ``yaml``: what a cassette's text was written as. Both live at ``.yaml``
    paths: the JSON written here is YAML too (see ``cassette_text``)."""
    return "json" if text.lstrip()[:1] == "{" else "yaml"


def _load_json(text: str) -> Any:
    """The JSON document, or ``_NOT_JSON`` when the text is YAML that happens to start with
    ``{`` (a flow mapping): the YAML loader then reads it."""
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


_NOT_JSON = object()


class CassetteSerializer:
    """vcrpy's cassette layout, written as JSON, read from JSON or vcrpy's YAML, checked.

    JSON because replay reads every cassette once: libyaml's C loader took 0.3 ms a cassette,
    the JSON parser 0.03 ms, and JSON has no aliases to bound. Cassettes written as YAML (every
    one recorded before, and vcrpy's default) still load, and ``python -m pytest_citebench
    cassettes convert`` rewrites them. A body that is not text cannot be JSON; that cassette is
    written as YAML, as before.

    Cassettes are untrusted input (anyone can commit one): the size and YAML alias expansion are
    capped, every interaction must be recorded HTTP, and a recorded 429/5xx is refused by name
    instead of being dropped by the response filter on load, which made the replay a miss that
    blamed a changed prompt."""

    @staticmethod
    def deserialize(text: str) -> Any:
        """Raises ValueError saying what is wrong; the recorder names the file around it."""
        if len(text) > MAX_CASSETTE_BYTES:
            raise ValueError(f"larger than {MAX_CASSETTE_BYTES} bytes")
        data = _load_json(text) if cassette_format(text) == "json" else _NOT_JSON
        if data is _NOT_JSON:
            import yaml

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
    def serialize(data: dict[str, Any], fmt: str = "json") -> str:
        """Stamped with the client versions; keys sorted and one value a line, so a diff of a
        re-recorded cassette shows what changed."""
        return cassette_text({**data, "recorded_with": client_versions()}, fmt)


# Characters YAML refuses in a document (C1 controls, U+FFFE/FFFF) or reads as a line break
# inside a quoted string (NEL, U+2028/2029), and the BOM: JSON may hold them raw, so they are
# written as \u escapes, which both read alike.
_NOT_YAML = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def cassette_text(data: dict[str, Any], fmt: str = "json") -> str:
    """``data`` as cassette text in ``fmt``, falling back to YAML for a body that is bytes.

    The JSON keeps non-ASCII text as it is (an author's name stays readable in a diff) except
    for the characters in ``_NOT_YAML``, so that the document is YAML too and reads the same
    with any YAML loader, vcrpy's own included."""
    if fmt == "json":
        try:
            text = indented_json(data)
        except TypeError:  # bytes: a body that is not text, which only YAML can hold
            return _yaml_text(data)
        return _NOT_YAML.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"
    return _yaml_text(data)


class _NotPlain(Exception):
    """A value ``indented_json`` leaves to ``json.dumps``."""


def indented_json(data: Any) -> str:
    """``json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)``, the same text.

    Why: with ``indent`` json runs its pure-Python encoder, a generator per container; this
    plain recursion into one list of parts takes about half the time, and a cassette is written
    for every recorded item (tests/recording/test_cassette_format.py holds the two equal). What it
    does not handle (a dict key that is not a string) goes to ``json.dumps``; a value json cannot
    encode (bytes) raises TypeError, as there."""
    parts: list[str] = []
    try:
        _emit_json(data, parts, "\n")
    except _NotPlain:
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
    return "".join(parts)


def _emit_json(value: Any, parts: list[str], newline: str) -> None:
    if isinstance(value, str):
        parts.append(_encode_string(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(_encode_float(value))
    elif isinstance(value, list | tuple):
        if not value:
            parts.append("[]")
            return
        inner = newline + "  "
        parts.append("[")
        for index, item in enumerate(value):
            parts.append("," + inner if index else inner)
            _emit_json(item, parts, inner)
        parts.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        if not all(isinstance(key, str) for key in value):
            raise _NotPlain
        inner = newline + "  "
        parts.append("{")
        for index, key in enumerate(sorted(value)):
            parts.append(("," + inner if index else inner) + _encode_string(key) + ": ")
            _emit_json(value[key], parts, inner)
        parts.append(newline + "}")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _encode_float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _yaml_text(data: dict[str, Any]) -> str:
    """Without YAML aliases: a diff shows every value."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class NoAliases(dumper):  # type: ignore[valid-type,misc]
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return str(yaml.dump(data, Dumper=NoAliases))


class CassettePersister:
    """vcrpy's filesystem persister, reading a cassette once and at most its size cap.

    Why: checking the size and the encoding before vcrpy read the file again cost a stat, a
    second read and a decode per item, about a tenth of an item's replay."""

    @staticmethod
    def load_cassette(cassette_path: str | Path, serializer: Any) -> Any:
        """Missing or blank is "not found" (vcrpy records it); too big, not UTF-8, a symbolic
        link or not a regular file is refused (``read_plain``)."""
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.serialize import deserialize

        try:
            raw = read_plain(Path(cassette_path), MAX_CASSETTE_BYTES)
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
        """As UTF-8 whatever the locale (vcrpy writes in the locale's encoding, and JSON keeps
        non-ASCII titles as they are), through a temporary file so that an interrupted save
        leaves the old cassette or none, never half of one.

        What is recorded must replay: the text is put through the checks replay makes (the size
        cap first) before it is written, so a cassette replay would refuse is never saved and
        the item says why at record time (``CassetteNotSaved``)."""
        from vcr.serialize import serialize

        text = serialize(cassette_dict, serializer)
        data = text.encode("utf-8")
        if len(data) > MAX_CASSETTE_BYTES:
            raise CassetteNotSaved(
                f"the recorded exchange is {len(data) / 1e6:.1f} MB, more than the "
                f"{MAX_CASSETTE_BYTES} bytes (32 MiB) a cassette may hold, so replay would "
                f"refuse it; not saved to {cassette_path}. Ask for a shorter answer "
                "(--citebench-max-tokens); the answer is kept in this item's record",
                reason=TOO_LARGE_REASON,
            )
        try:
            CassetteSerializer.deserialize(text)
        except Exception as exc:
            raise CassetteNotSaved(
                f"the recorded exchange would not replay ({' '.join(str(exc).split())[:200]}); "
                f"not saved to {cassette_path}; the answer is kept in this item's record",
                reason=TOO_LARGE_REASON,
            ) from None
        write_bytes_atomic(Path(cassette_path), data)


class NotPlainFile(OSError):
    """A file beside the cassettes (a cassette, an item's error note) that is a symbolic link or
    not a regular file: refused, never followed. ``str()`` names the file and what to do."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(
            f"{path} is {what}; files beside cassettes are read and written only as plain files, "
            "never through a link (it may point anywhere, at a key say): refused, nothing read "
            "or written through it. Delete it (and record the item again)"
        )
        self.path = path


_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_plain(path: Path, flags: int) -> int:
    """``os.open`` that refuses a symbolic link as the last component (``NotPlainFile``).

    Why: a committed ``<item>.error.txt`` that was a link to ``~/.ssh/id_rsa`` was written
    through when recording and printed into the terminal, the results and the report on replay.
    """
    try:
        return os.open(path, flags | _NO_FOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise NotPlainFile(path, "a symbolic link") from None
        raise


def _check_regular(path: Path, fd: int) -> os.stat_result:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise NotPlainFile(path, "not a regular file")
    return info


def read_plain(path: Path, limit: int, *, regular: bool = False) -> bytes:
    """At most ``limit + 1`` bytes of ``path``, never through a symbolic link (``NotPlainFile``;
    a missing file is ``FileNotFoundError``). ``regular``: refuse anything but a regular file,
    opened without blocking so that a FIFO planted there cannot hang the run (a note); a
    cassette may still be read from a pipe."""
    fd = _open_plain(path, os.O_RDONLY | (os.O_NONBLOCK if regular else 0))
    with os.fdopen(fd, "rb") as handle:
        # Sized by fstat: read(limit + 1) had Python allocate 32 MB for every cassette of a few
        # kB (~25 us a case). A size of 0 (a pipe) or one past the limit reads up to the limit;
        # a file that grew since fstat is read on to it.
        info = _check_regular(path, handle.fileno()) if regular else os.fstat(handle.fileno())
        size = info.st_size
        limit += 1
        raw = handle.read(size + 1 if 0 < size < limit else limit)
        if len(raw) == size + 1 and len(raw) < limit:
            raw += handle.read(limit - len(raw))
    return raw


def write_plain(path: Path, data: bytes) -> None:
    """``path`` holds ``data``, written in place, never through a symbolic link and only into a
    regular file (``NotPlainFile``): an error note, or the temporary file of an atomic write."""
    fd = _open_plain(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK)
    with os.fdopen(fd, "wb") as handle:
        _check_regular(path, handle.fileno())
        handle.write(data)


def write_text_atomic(path: Path, text: str) -> None:
    """``path`` holds ``text`` (UTF-8) or what it held before, never a mix."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` or what it held before, never a mix (a full disk mid-write
    leaves no partial file behind either)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        # A link planted at the temporary name is refused, never written through; the rename
        # then replaces whatever ``path`` was (a link too) rather than writing into it.
        write_plain(partial, data)
        os.replace(partial, path)
    except BaseException:  # after a replace there is nothing to remove: one syscall a cassette
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise


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
        head = read_plain(path, MAX_CASSETTE_BYTES).decode("utf-8")
        data = CassetteSerializer.deserialize(head)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    except Exception:  # a YAML error: the load itself reports it
        return {}
    versions = data.get("recorded_with")
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


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
