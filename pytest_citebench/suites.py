"""Suites: a folder of data (a ``suite.toml`` manifest plus jsonlines items) becomes typed records.

A contributor adds a domain without writing Python, so everything a contributor can get wrong must
come back as one message naming the file, the line and the field, with what to do about it. The
loader never skips a bad line silently: the first problem stops *that* suite, and the caller decides
whether other suites go on (the collector reports the bad suite as one error and keeps the rest).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_citebench import registry
from pytest_citebench.api import Sample
from pytest_citebench.jsonl import value_kind

MANIFEST_NAME = "suite.toml"
_MANIFEST_KEYS = {
    "name": str,
    "version": int,
    "description": str,
    "tasks": list,
    "items": str,
    "corpus": str,
    "gates": list,
    "source": dict,
}
_REQUIRED_MANIFEST_KEYS = ("name", "version", "description", "tasks", "source")
_REQUIRED_SOURCE_KEYS = ("paper", "url", "licence")
CORPUS_FIELDS: Mapping[str, type | tuple[type, ...]] = {
    "id": str,
    "title": str,
    "abstract": str,
    "authors": str,
}


#: Optional item fields any suite may carry about its own gold (written by an audit, e.g.
#: ``import-reasons``; docs/audit.md): an item with ``gold_flags`` is *gold suspect*, run and
#: recorded but set apart from the headline numbers unless the run includes it; an item with
#: ``gold_verified: true`` was read blind and found good (the ``+verified`` variant runs those).
GOLD_FLAGS = "gold_flags"
GOLD_REASON = "gold_reason"
GOLD_VERIFIED = "gold_verified"
_FLAG_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def gold_problem(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, what is wrong) with an item's gold-audit fields, or None when they are fine or
    absent. A flag without a reason would put an unexplained item apart from every number."""
    flags = obj.get(GOLD_FLAGS)
    if GOLD_FLAGS in obj:
        if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
            return GOLD_FLAGS, f"expected a list of flag names, got {value_kind(flags)}"
        bad = [f for f in flags if not _FLAG_NAME.fullmatch(f)]
        if bad:
            return GOLD_FLAGS, f"{bad[0]!r} is not a flag name (lower-case letters, digits, '_')"
        if len(set(flags)) != len(flags):
            return GOLD_FLAGS, "a flag is listed twice"
    reason = obj.get(GOLD_REASON)
    if GOLD_REASON in obj and not isinstance(reason, str):
        return GOLD_REASON, f"expected string, got {value_kind(reason)}"
    if flags and not (reason or "").strip():
        return GOLD_REASON, "missing: a flagged item needs a one-line reason"
    if reason and not flags:
        return GOLD_FLAGS, "missing: 'gold_reason' is given but no flag"
    if reason and ("\n" in reason or name_problem(reason, limit=2000)):
        return GOLD_REASON, "must be one line of printable text (at most 2,000 characters)"
    verified = obj.get(GOLD_VERIFIED)
    if GOLD_VERIFIED in obj and not isinstance(verified, bool):
        return GOLD_VERIFIED, f"expected true or false, got {value_kind(verified)}"
    if verified and flags:
        return GOLD_VERIFIED, "an item cannot be both verified and flagged; drop one"
    return None


def gold_suspect(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """An item record's ``gold_suspect`` from the item's audit fields; None for a trusted gold."""
    flags = fields.get(GOLD_FLAGS)
    if not flags:
        return None
    return {"flags": list(flags), "reason": str(fields.get(GOLD_REASON, ""))}


MAX_ID_LENGTH = 200
"""Longest item id or suite name accepted. Ids become test ids, result keys and (hashed when
long) cassette names; 200 leaves room for the rest of a node id in a terminal line and for
file-name limits (255 bytes) after the model and task are added."""


def name_problem(text: str, *, limit: int = MAX_ID_LENGTH) -> str | None:
    """Why ``text`` cannot be an item id or a suite name, or None when it can.

    Control characters (NUL, ESC, ``\\r``), format characters, line or paragraph separators and
    lone surrogates are refused at any length: they corrupt terminal output and Markdown tables,
    and NUL or a surrogate cannot reach a file name or a UTF-8 results file at all (the run would
    pay for the call and then fail to save it).
    """
    import unicodedata

    if not text:
        return "is empty"
    if len(text) > limit:
        return f"is {len(text)} characters long; the limit is {limit}"
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            return f"holds the control character U+{ord(char):04X}"
    return None


class SuiteError(Exception):
    """A suite that cannot be used, located as precisely as we can (file, line, field)."""

    def __init__(
        self, path: Path | str, message: str, *, line: int | None = None, field: str | None = None
    ) -> None:
        self.path = Path(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
        what = f"field '{self.field}': " if self.field else ""
        return f"{where}: {what}{self.message}"


@dataclass(frozen=True)
class Manifest:
    """What a suite declares about itself; the version keys cassettes so old recordings can't
    silently score a changed suite."""

    name: str
    version: int
    description: str
    tasks: tuple[str, ...]
    source: Mapping[str, str]
    directory: Path
    items_file: Path
    corpus_file: Path | None = None
    gates: tuple[str, ...] = ()

    @property
    def manifest_file(self) -> Path:
        """The ``suite.toml`` path: errors and merge name it."""
        return self.directory / MANIFEST_NAME

    @property
    def marker(self) -> str:
        """A pytest marker name for ``-m``: ``reasons/nlp`` -> ``reasons_nlp``."""
        return "".join(c if c.isalnum() else "_" for c in self.name).strip("_")


@dataclass(frozen=True)
class Paper:
    """A corpus entry: what retrieval baselines search over."""

    id: str
    title: str
    abstract: str
    authors: str
    extra: Mapping[str, Any] = field(default_factory=dict)


def _type_name(expected: type | tuple[type, ...]) -> str:
    names = {str: "string", int: "integer", list: "list", dict: "table", float: "number"}
    if isinstance(expected, tuple):
        return " or ".join(names.get(t, t.__name__) for t in expected)
    return names.get(expected, expected.__name__)


def _check_type(value: Any, expected: type | tuple[type, ...]) -> bool:
    if isinstance(value, bool):  # bool is an int subclass; a boolean is never a valid count
        return expected is bool
    return isinstance(value, expected)


def manifest_text(fields: Mapping[str, Any], *, comments: Sequence[str] = ()) -> str:
    """A ``suite.toml``: ``comments`` as ``#`` lines on top, then ``fields`` written by tomli-w.

    The one TOML writer of the package (the scaffold, the importer and the builders all call
    it), so quoting and escaping are tomli-w's and every manifest reads back as written.
    """
    import tomli_w

    head = "".join(
        (f"# {line}" if line else "#") + "\n"
        for comment in comments
        for line in comment.split("\n")
    )
    return head + tomli_w.dumps(dict(fields))


def write_manifest(
    directory: Path, fields: Mapping[str, Any], *, comments: Sequence[str] = ()
) -> Path:
    """Write ``directory/suite.toml`` (see :func:`manifest_text`); returns its path."""
    path = directory / MANIFEST_NAME
    path.write_text(manifest_text(fields, comments=comments), encoding="utf-8", newline="\n")
    return path


def load_manifest(path: Path | str) -> Manifest:
    """Read and validate ``suite.toml`` (or the folder holding it)."""
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST_NAME
    if not path.is_file():
        raise SuiteError(
            path, f"no {MANIFEST_NAME} here; a suite folder needs one (see CONTRIBUTING.md)"
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteError(
            path, f"not UTF-8 ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's TOMLDecodeError has no lineno attribute; the line is in its message.
        found = re.search(r"at line (\d+)", str(exc))
        line = getattr(exc, "lineno", None) or (int(found.group(1)) if found else None)
        raise SuiteError(path, f"invalid TOML: {exc}", line=line) from None
    except (ValueError, RecursionError) as exc:  # a 5000-digit integer, arrays nested 10^5 deep
        raise SuiteError(path, f"invalid TOML: {_value_problem(exc)}") from None
    for key in _REQUIRED_MANIFEST_KEYS:
        if key not in data:
            raise SuiteError(path, "missing; every suite.toml needs it", field=key)
    for key, value in data.items():
        if key not in _MANIFEST_KEYS:
            raise SuiteError(
                path, f"unknown key; expected one of {sorted(_MANIFEST_KEYS)}", field=key
            )
        expected = _MANIFEST_KEYS[key]
        if not _check_type(value, expected):
            raise SuiteError(
                path, f"expected {_type_name(expected)}, got {value_kind(value)}", field=key
            )
    name = data["name"]
    if not name or name != name.strip() or any(c in name for c in " \t\n:[]"):
        raise SuiteError(path, "must be non-empty with no spaces, ':' or brackets", field="name")
    problem = name_problem(name)
    if problem:
        raise SuiteError(path, f"{name[:60]!r} {problem}; rename the suite", field="name")
    tasks = data["tasks"]
    if not tasks:
        raise SuiteError(path, "empty; list at least one task", field="tasks")
    for task in tasks:
        if not isinstance(task, str) or task not in registry.names():
            raise SuiteError(
                path,
                f"unknown task {task!r}; known tasks: {', '.join(registry.names())} (a task of "
                "another paper needs that paper's package installed: entry-point group "
                f"{registry.GROUP!r})",
                field="tasks",
            )
    seen_tasks: set[str] = set()
    for task in tasks:
        if task in seen_tasks:
            # Twice in the list would collect, run and count every item of the task twice.
            raise SuiteError(
                path,
                f"{task!r} is listed twice; list each task once",
                line=_value_line(text, "tasks", task, nth=2),
                field="tasks",
            )
        seen_tasks.add(task)
    source = data["source"]
    for key in _REQUIRED_SOURCE_KEYS:
        if not isinstance(source.get(key), str) or not source[key]:
            raise SuiteError(path, "missing or not a string", field=f"source.{key}")
    gates = data.get("gates", [])
    from pytest_citebench.results.gates import GateError, parse_gate

    for gate in gates:
        if not isinstance(gate, str):
            raise SuiteError(path, f"gate {gate!r} must be a string", field="gates")
        try:  # the run's own parser: validate accepts exactly the gates a run accepts
            parse_gate(gate, source=str(path), suite=name)
        except GateError as exc:
            raise SuiteError(
                path,
                str(exc).removeprefix(f"{path}: "),
                field="gates",
                line=_value_line(text, "gates", gate),
            ) from None
    for key in ("items", "corpus"):
        if key in data:
            problem = "is empty" if not data[key].strip() else name_problem(data[key])
            relative = Path(data[key])
            if not problem and (relative.is_absolute() or ".." in relative.parts):
                # A suite is a self-contained folder: it is copied, symlinked and published
                # as one, and its items must not read whatever file a path can reach.
                problem = "is outside the suite folder"
            if problem:
                raise SuiteError(
                    path,
                    f"{data[key][:60]!r} {problem}; name a file in the suite folder",
                    field=key,
                )
    directory = path.parent
    corpus = data.get("corpus")
    return Manifest(
        name=name,
        version=data["version"],
        description=data["description"],
        tasks=tuple(tasks),
        source=dict(source),
        directory=directory,
        items_file=directory / data.get("items", "items.jsonl"),
        corpus_file=directory / corpus if corpus else None,
        gates=tuple(gates),
    )


def _value_line(text: str, key: str, value: str, *, nth: int = 1) -> int | None:
    """The line of the ``nth`` quoted ``value`` after the line that sets ``key``, for errors
    that tomllib cannot locate (it returns values, not positions); None when not found."""
    lines = text.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if re.match(rf"\s*{re.escape(key)}\s*=", line)), None
    )
    if start is None:
        return None
    quoted = re.compile(rf"([\"']){re.escape(value)}\1")
    count = 0
    for i in range(start, len(lines)):
        count += len(quoted.findall(lines[i].split("#", 1)[0]))
        if count >= nth:
            return i + 1
    return None


def _value_problem(exc: ValueError | RecursionError) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return " ".join(str(exc).split())[:200]  # e.g. an integer longer than Python converts


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object); blank lines are allowed, anything else must be an object."""
    from pytest_citebench import jsonl

    if not path.is_file():
        raise SuiteError(path, "file not found; the manifest names it")
    raw = path.read_bytes()
    try:  # the whole file first: a bad byte on line 9 is reported before a bad object on line 3
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SuiteError(
            path, f"not UTF-8 ({exc.reason} at byte {exc.start}); save it as UTF-8", line=line
        ) from None
    try:
        yield from jsonl.iter_objects(path)
    except jsonl.JsonlError as exc:
        raise SuiteError(path, exc.problem, line=exc.line) from None


def _check_fields(
    path: Path, line: int, obj: Mapping[str, Any], spec: Mapping[str, type | tuple[type, ...]]
) -> None:
    for name, expected in spec.items():
        if name not in obj:
            raise SuiteError(path, "missing", line=line, field=name)
        if not _check_type(obj[name], expected):
            raise SuiteError(
                path,
                f"expected {_type_name(expected)}, got {value_kind(obj[name])}",
                line=line,
                field=name,
            )


def _check_text(path: Path, line: int, obj: Mapping[str, Any]) -> None:
    """A lone surrogate (a JSON escape ``\\ud800``-``\\udfff`` without its pair) decodes to
    text no UTF-8 file can hold: the first record written with it (the item's gold, its
    ``expected``) was an INTERNALERROR with no record. Refused here, naming the field."""
    from pytest_citebench.safetext import holds_lone_surrogate

    for key, value in obj.items():
        if holds_lone_surrogate(key) or holds_lone_surrogate(value):
            raise SuiteError(
                path,
                "holds a lone surrogate (a JSON escape \\ud800-\\udfff without its pair), "
                "which no UTF-8 file can hold; write the character itself, or drop it",
                line=line,
                field=key.encode("utf-8", "backslashreplace").decode("utf-8"),
            )


def load_items(manifest: Manifest) -> list[Sample]:
    """Every item of the suite, validated against the fields its tasks need."""
    spec: dict[str, type | tuple[type, ...]] = {"id": str}
    for task_name in manifest.tasks:
        spec.update(registry.get(task_name).fields)
    items: list[Sample] = []
    seen: dict[str, int] = {}
    for line, obj in _read_jsonl(manifest.items_file):
        _check_fields(manifest.items_file, line, obj, spec)
        item_id = obj["id"]
        problem = name_problem(item_id)
        if problem:
            raise SuiteError(
                manifest.items_file,
                f"{item_id[:60]!r} {problem}; use printable ids (letters, digits, '.', '-', '_')",
                line=line,
                field="id",
            )
        if any(c in item_id for c in " \t\n[]") or "::" in item_id:
            raise SuiteError(
                manifest.items_file,
                f"{item_id!r} must be non-empty without spaces, brackets or '::'",
                line=line,
                field="id",
            )
        if item_id in seen:
            raise SuiteError(
                manifest.items_file,
                f"duplicate id {item_id!r} (first on line {seen[item_id]}); ids must be unique",
                line=line,
                field="id",
            )
        gold = gold_problem(obj)
        if gold:
            raise SuiteError(
                manifest.items_file,
                f"{gold[1]}; see docs/audit.md for the gold-audit fields",
                line=line,
                field=gold[0],
            )
        _check_text(manifest.items_file, line, obj)
        seen[item_id] = line
        items.append(Sample(suite=manifest.name, id=item_id, fields=obj, line=line))
    if not items:
        raise SuiteError(manifest.items_file, "empty suite: no items; add at least one line")
    return items


def load_corpus(manifest: Manifest) -> list[Paper]:
    """The suite's retrieval corpus; suites without one get an empty list."""
    if manifest.corpus_file is None:
        return []
    papers: list[Paper] = []
    seen: set[str] = set()
    for line, obj in _read_jsonl(manifest.corpus_file):
        _check_fields(manifest.corpus_file, line, obj, CORPUS_FIELDS)
        _check_text(manifest.corpus_file, line, obj)
        if obj["id"] in seen:
            raise SuiteError(
                manifest.corpus_file, f"duplicate id {obj['id']!r}", line=line, field="id"
            )
        seen.add(obj["id"])
        extra = {k: v for k, v in obj.items() if k not in CORPUS_FIELDS}
        papers.append(Paper(obj["id"], obj["title"], obj["abstract"], obj["authors"], extra))
    return papers


@dataclass(frozen=True)
class Suite:
    """A validated manifest and its samples, ready to collect."""

    manifest: Manifest
    items: list[Sample]

    @property
    def name(self) -> str:
        """The suite name from the manifest (also the results' ``suite`` field)."""
        return self.manifest.name


def load_suite(path: Path | str) -> Suite:
    """Manifest, items and (when declared) corpus, all validated; raises the first SuiteError."""
    manifest = load_manifest(path)
    items = load_items(manifest)
    load_corpus(manifest)  # validated now so a bad corpus fails at collection, not mid-run
    return Suite(manifest, items)


def suite_files_around(path: Path) -> list[tuple[str, Path]]:
    """The files of every suite whose folder holds ``path`` (as given and as resolved): its
    manifest, items and corpus, each with a label that names it.

    Why: an output (``--citebench-results``, a report) given a suite's ``items.jsonl`` silently
    replaced the suite with a results file. A suite's files live inside its folder (the
    manifest refuses paths that leave it), so the folders above the output are all that need
    looking at, whichever suites the run collects."""
    found: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for start in (path.absolute(), path.resolve()):
        for folder in start.parents:
            manifest_path = folder / MANIFEST_NAME
            if manifest_path in seen or not manifest_path.is_file():
                continue
            seen.add(manifest_path)
            try:
                manifest = load_manifest(manifest_path)
            except SuiteError:  # unreadable: its usual files are the suite's all the same
                found.append((f"the suite manifest {manifest_path}", manifest_path))
                found.append((f"the items of the suite at {folder}", folder / "items.jsonl"))
                continue
            what = f"suite {manifest.name}'s"
            found.append((f"{what} manifest ({manifest.manifest_file})", manifest.manifest_file))
            found.append((f"{what} items ({manifest.items_file})", manifest.items_file))
            if manifest.corpus_file is not None:
                found.append((f"{what} corpus ({manifest.corpus_file})", manifest.corpus_file))
    return found


def discover(root: Path | str) -> list[Path]:
    """Every suite manifest under ``root`` (a suite folder or a folder of suites), sorted.

    Symlinked folders are followed, as pytest's collection follows them: the gate check at
    start-up, ``validate`` and ``merge --suites`` all find suites here, so a suite that pytest
    runs but this walk missed had its manifest gates applied at ``-n 0`` only (``Path.rglob``
    does not follow links before Python 3.13). Each real folder is walked once (no link loop).
    The paths keep the links (they are the paths pytest reports)."""
    import os

    root = Path(root)
    if root.is_file():
        return [root] if root.name == MANIFEST_NAME else []
    found: list[Path] = []
    seen: set[str] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        if MANIFEST_NAME in files:
            found.append(Path(folder) / MANIFEST_NAME)
    return sorted(found)
