"""Every JSON-lines file citebench reads or writes (suite items and corpora, results, baselines,
registries, shard files) goes through here, on top of the ``jsonlines`` package.

Why one module: five hand-written readers used to split lines five ways, and the ones using
``str.splitlines()`` broke a record in two wherever a model answer held U+2028, U+0085 or a form
feed (``json.dumps(ensure_ascii=False)`` writes those as they are). Here a file is opened in
binary and split at ``b"\\n"`` only, so a line number is the number of ``\\n`` before it plus one,
the same number an editor shows; errors name ``file:line``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, cast

import jsonlines


class JsonlError(ValueError):
    """A line that is not what the file promises; ``str()`` is ``file:line: problem``."""

    def __init__(self, path: Path | str, line: int | None, problem: str) -> None:
        self.path = Path(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {problem}")


def dumps(record: Any, *, sort_keys: bool = True) -> str:
    """One line of JSON, without its newline: keys sorted (unless a suite file keeps the order
    its author wrote), non-ASCII kept (readable diffs)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=sort_keys)


def _value_problem(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return " ".join(str(exc).split())[:200]  # e.g. an integer longer than Python converts


def _open_binary(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def _writable_loads(line: str | bytes) -> Any:
    from pytest_citebench.safetext import safe_line

    text = line.decode("utf-8") if isinstance(line, bytes) else line  # jsonlines passes str
    return safe_line(text, json.loads(text))


def iter_values(
    path: Path | str, *, torn_tail_ok: bool = False, writable: bool = False
) -> Iterator[tuple[int, Any]]:
    """(line number, value) for every non-blank line of ``path`` (``.gz`` is decompressed).

    ``torn_tail_ok``: a malformed *last* line is dropped instead of raised; a results file whose
    writer was killed mid-line ends that way, and every finished record before it still counts.
    ``writable``: a lone surrogate a line spells (``"\\ud800"``) comes back as U+FFFD
    (``safetext``), for readers that write what they read again (results files).
    """
    path = Path(path)
    if not path.is_file():
        raise JsonlError(path, None, "file not found")
    with _open_binary(path) as handle:
        lines = _Lines(handle)
        reader = jsonlines.Reader(lines, loads=_writable_loads if writable else json.loads)
        while True:
            try:
                value = reader.read(skip_empty=True, allow_none=True)
            except EOFError:
                return
            except jsonlines.InvalidLineError as exc:
                cause = exc.__cause__
                if isinstance(cause, UnicodeDecodeError):
                    problem = f"not UTF-8 ({cause.reason} at byte {cause.start} of the line)"
                    problem += "; save it as UTF-8"
                else:
                    problem = f"malformed JSON ({_value_problem(cause or exc)})"
                if torn_tail_ok and all(not rest.strip() for rest in lines):
                    return
                raise JsonlError(path, exc.lineno, problem) from None
            except RecursionError:
                raise JsonlError(path, lines.number, "malformed JSON (nested too deeply)") from None
            yield lines.number, value


class _Lines:
    """The file's lines (split at b"\\n" only, as binary files are), counted as they are read."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self.number = 0

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        line = next(self._handle)
        self.number += 1
        return line


def iter_objects(
    path: Path | str, *, torn_tail_ok: bool = False, writable: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Like ``iter_values`` but every line must be a JSON object."""
    for number, value in iter_values(path, torn_tail_ok=torn_tail_ok, writable=writable):
        if not isinstance(value, dict):
            raise JsonlError(path, number, f"expected a JSON object, got {value_kind(value)}")
        yield number, value


def read_objects(path: Path | str, *, torn_tail_ok: bool = False) -> list[dict[str, Any]]:
    """``iter_objects`` as a list, without line numbers (errors still name ``file:line``)."""
    return [obj for _, obj in iter_objects(path, torn_tail_ok=torn_tail_ok)]


def value_kind(value: Any) -> str:
    """A JSON value's type as an error message names it ("string", "null", "object"), for every
    "expected X, got Y" about a file's contents (suites, results, answers)."""
    return {
        str: "string",
        int: "integer",
        bool: "boolean",
        float: "number",
        list: "list",
        dict: "object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _writer(handle: IO[str], *, flush: bool = False, sort_keys: bool = True) -> jsonlines.Writer:
    return jsonlines.Writer(handle, dumps=lambda r: dumps(r, sort_keys=sort_keys), flush=flush)


def write(
    path: Path | str,
    records: Iterable[Mapping[str, Any]],
    *,
    atomic: bool = True,
    sort_keys: bool = True,
) -> int:
    """Write ``records`` one per line; atomic (temp file + rename) unless told otherwise, so a
    killed job never leaves half a baseline. Returns the number of lines written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not atomic:
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            return _write_all(handle, records, sort_keys)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            count = _write_all(handle, records, sort_keys)
        with contextlib.suppress(OSError):  # mkstemp makes it 0600: a rewrite keeps the old mode
            os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def _write_all(handle: IO[str], records: Iterable[Mapping[str, Any]], sort_keys: bool) -> int:
    writer = _writer(handle, sort_keys=sort_keys)
    count = 0
    for record in records:
        writer.write(record)
        count += 1
    return count


class FileBusy(OSError):
    """Another process holds the file's write lock: two writers would interleave their lines."""


def _lock(handle: IO[Any]) -> None:
    """An exclusive, non-blocking lock on ``handle``'s file, released when it is closed (or the
    process dies); ``FileBusy`` when another process holds it. No-op where ``fcntl`` is missing."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; one writer per file is then up to the user
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise FileBusy(f"{handle.name}: another process is writing this file") from None
    except OSError:
        return  # a file system without locks (some network mounts): write unlocked, as before


def is_locked(path: Path | str) -> bool:
    """Whether another process holds the write lock of ``path`` (a run still writing it)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        with open(path, "rb") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            except OSError:
                return False
    except OSError:
        return False
    return False


_TAIL_CHUNK = 64 * 1024


def _drop_torn_tail(handle: IO[str], path: Path) -> None:
    """A file a killed writer left ending mid-line gets that line removed (it is not JSON and
    never counted), so the next line appended does not glue onto it. Reads only the last line:
    the file may hold a long run's records."""
    with path.open("rb") as raw:
        end = raw.seek(0, os.SEEK_END)
        start, tail = end, b""
        while start > 0 and b"\n" not in tail:
            step = min(_TAIL_CHUNK, start)
            start -= step
            raw.seek(start)
            tail = raw.read(step) + tail
    if not tail or tail.endswith(b"\n"):
        return
    last = tail.rfind(b"\n") + 1
    cut = start + last
    try:
        json.loads(tail[last:])
    except ValueError:
        handle.truncate(cut)
    else:
        handle.write("\n")  # a whole record written without its newline: keep it
        handle.flush()


class Appender:
    """One JSON line per ``write``, flushed at once and thread-safe: an interrupted run keeps
    every record that finished.

    The file is locked for as long as it is open, so a second process writing the same file
    fails at once (``FileBusy``) instead of interleaving its lines with ours. ``keep``: append to
    what the file holds (a run resuming into its own results file) instead of emptying it at
    ``start`` or the first write.
    """

    def __init__(self, path: Path | str, *, keep: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        handle = self.path.open("a", encoding="utf-8", newline="\n")
        try:
            _lock(handle)
            if keep:
                _drop_torn_tail(handle, self.path)
        except BaseException:
            handle.close()
            raise
        # Emptied by ``start`` or the first write, not here: a run that stops before either
        # (a usage error, a collection error) leaves the file as it found it.
        self._empty = not keep and self.path.is_file()
        self._handle: IO[str] | None = handle
        self._writer: jsonlines.Writer | None = _writer(handle, flush=True)

    def start(self) -> None:
        """Empty the file now (unless ``keep``); idempotent, and implied by the first write."""
        with self._lock:
            self._start()

    def _start(self) -> None:
        if self._empty and self._handle is not None:
            self._handle.truncate(0)
            self._empty = False

    def write(self, record: Mapping[str, Any]) -> None:
        """Under the lock, so concurrent writers never interleave; after ``close`` it is a no-op."""
        with self._lock:
            if self._writer is not None:
                self._start()
                self._writer.write(record)

    def write_line(self, line: str) -> None:
        """``write`` for a record already dumped by ``dumps``: one line, so no newline in it."""
        if "\n" in line:
            raise ValueError("a JSON line holds no newline")
        with self._lock:
            if self._handle is not None:
                self._start()
                self._handle.write(line + "\n")
                self._handle.flush()

    def close(self) -> None:
        """Idempotent, so every shutdown path may call it; a failed write's buffered bytes are
        dropped (the write already raised), so closing never raises."""
        with self._lock:
            if self._handle is not None:
                handle, self._handle, self._writer = self._handle, None, None
                with contextlib.suppress(OSError):
                    handle.close()
