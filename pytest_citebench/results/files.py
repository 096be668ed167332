"""The results file: written one flushed line per finished item during a run, read back by
resume, merge, compare and rescore; an item's identity, deduplication, the atomic rewrite, and
the shard record a ``--citebench-shard`` run leaves.

One module for every reader and writer, so ``merge`` (many shard files into one) and
``baseline promote`` (a run into the baseline) handle files the same way without importing each
other.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ItemKey = tuple[str, str, str, str]  # model, suite, task, item_id
_VOLATILE = ("duration",)


class FileUsageError(ValueError):
    """Files given that cannot work together (an output that is also an input, a file another run
    is still writing): a usage error, reported before anything is read or written."""


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same path once resolved, or one file by two names
    (a hard link)."""
    import os

    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_files(
    inputs: Sequence[tuple[str, Path | None]],
    outputs: Sequence[tuple[str, Path | None]],
    *,
    allow: Collection[tuple[str, str]] = (),
    reads: Sequence[tuple[str, Path | None]] = (),
) -> None:
    """``FileUsageError`` when an output would overwrite an input or another output, or an input
    is still being written by a run (its lock is held: it may be half written). ``allow``:
    (output flag, input flag) pairs that may name one file (a run resuming into its own results
    file keeps it whole). ``reads``: the other files the run reads (an answers file, a suite's
    items, corpus and manifest, pyproject.toml), each with what named it: no output may be one
    either, but they are not results files, so no run's lock is looked for on them."""
    from pytest_citebench.jsonl import is_locked

    for flag, path in inputs:
        if path is not None and is_locked(path):
            raise FileUsageError(
                f"{flag} {path}: a pytest --citebench run is still writing it; wait for that run "
                "to end, then try again"
            )
    named = [(f, p) for f, p in (*inputs, *reads) if p is not None]
    for flag, path in outputs:
        if path is None:
            continue
        for other, source in named:
            if (flag, other) not in allow and same_file(path, source):
                raise FileUsageError(
                    f"{flag} {path} is also {other}: it would be overwritten; pass another path "
                    f"for {flag}"
                )
        named.append((flag, path))


def record_key(record: Mapping[str, Any]) -> ItemKey:
    """An item's identity across files: two records with the same key describe one result."""
    return (
        str(record["model"]),
        str(record["suite"]),
        str(record["task"]),
        str(record["item_id"]),
    )


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    strip = lambda r: {k: v for k, v in r.items() if k not in _VOLATILE}  # noqa: E731
    return bool(strip(a) == strip(b))


def dedupe(
    records: Iterable[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], int, list[ItemKey]]:
    """(records sorted by key, duplicates dropped, keys recorded twice with different results).

    A finished record beats an error for the same item (a shard re-run after a provider outage
    wins over the outage); between two different finished records the first is kept and the key is
    reported, never silently picked.
    """
    kept: dict[ItemKey, dict[str, Any]] = {}
    duplicates = 0
    conflicts: list[ItemKey] = []
    for record in records:
        if record.get("type", "item") != "item":
            continue
        key = record_key(record)
        if key not in kept:
            kept[key] = dict(record)
            continue
        duplicates += 1
        old = kept[key]
        if old["outcome"] == "error" and record["outcome"] != "error":
            kept[key] = dict(record)
        elif not _same(old, record) and old["outcome"] != "error" and record["outcome"] != "error":
            conflicts.append(key)
    return [kept[k] for k in sorted(kept)], duplicates, conflicts


def version_mix(sources: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """One line per model x suite x task whose item records, across ``sources`` (a label, such
    as a file name, -> its item records), were made under more than one scorer or suite
    version; [] when every group is of one version.

    Why: aggregates, gates and the baseline comparison treat a group as one measurement. A shard
    scored under scorer 3 merged with one under scorer 4 gives shares that neither scorer would
    give, and the same answer can have another outcome under each, so such a merge used to pass
    its gates on numbers that mean nothing. Error records carry no outcome, so their scorer
    version does not count (``rescore`` keeps them as they were); their suite version does (the
    items themselves may differ).
    """
    from pytest_citebench.api import LEGACY_SCORER_VERSION

    # (model, suite, task) -> kind -> version -> source -> records
    seen: dict[tuple[str, str, str], dict[str, dict[str, dict[str, int]]]] = {}
    for source, records in sources.items():
        for record in records:
            if record.get("type", "item") != "item":
                continue
            group = seen.setdefault(record_key(record)[:3], {"scorer": {}, "suite": {}})
            suite_version = record.get("suite_version")
            versions = {"suite": "unrecorded" if suite_version is None else f"v{suite_version}"}
            if record.get("outcome") != "error":
                versions["scorer"] = str(record.get("scorer_version") or LEGACY_SCORER_VERSION)
            for kind, version in versions.items():
                counts = group[kind].setdefault(version, {})
                counts[source] = counts.get(source, 0) + 1
    lines = []
    for (model, suite, task), kinds in sorted(seen.items()):
        for kind, by_version in kinds.items():
            if len(by_version) < 2:
                continue
            parts = "; ".join(
                f"{kind} {version} in "
                + ", ".join(
                    f"{src} ({n} record(s))" for src, n in sorted(by_version[version].items())
                )
                for version in sorted(by_version, key=_version_order)
            )
            lines.append(f"{model} {suite}:{task} mixes {kind} versions: {parts}")
    return lines


def _version_order(version: str) -> tuple[int, str]:
    """Versions oldest first: scorer 3 before scorer 10 (as text, "10" sorts first)."""
    return (int(version), "") if version.isdigit() else (1 << 62, version)


def write_results(path: Path, records: Sequence[Mapping[str, Any]], aggregates: Any) -> None:
    """Items then aggregates, in the plugin's results format; atomic (temp file + rename)."""
    from pytest_citebench import jsonl

    jsonl.write(path, [*records, *(agg.to_record() for agg in aggregates)])


def read_shard(path: Path) -> dict[str, Any] | None:
    """The ``{"type": "shard", ...}`` record a ``--citebench-shard`` run writes last, or None."""
    return read_all(path)[2]


# What the readers (resume, aggregate, compare, merge, reports, rescore) index without a check.
# A record written by hand or by another tool that lacks one of these used to pass start-up and
# raise a KeyError or TypeError mid-run; now it is one error naming its line, before anything runs.
_REQUIRED_TEXT = ("model", "suite", "task", "item_id")
_OPTIONAL_TEXT = ("answer", "expected", "raw_answer", "reason", "nodeid", "scorer_version")
_KNOWN_TYPES = ("item", "aggregate", "shard")
WHAT_TO_DO = (
    "fix or delete that line (results files are written by pytest --citebench "
    "--citebench-results), or pass another file"
)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def record_problem(record: Mapping[str, Any]) -> str | None:
    """Why a results-file record cannot be read as what its ``type`` says, or None."""
    from pytest_citebench.api import OUTCOMES
    from pytest_citebench.safetext import control_problem

    kind = record.get("type", "item")
    if kind not in _KNOWN_TYPES:
        return f"unknown record type {kind!r} (expected one of {', '.join(_KNOWN_TYPES)})"
    if kind == "shard":
        for name in ("index", "total", "expected"):
            if not isinstance(record.get(name), int) or isinstance(record.get(name), bool):
                return f"shard record: {name!r} must be an integer, got {record.get(name)!r}"
        if not 1 <= record["index"] <= record["total"] or record["expected"] < 0:
            return "shard record: index must be 1..total and expected >= 0"
        return None
    if kind != "item":
        return None  # aggregates are recomputed from the items by every reader
    for name in _REQUIRED_TEXT:
        if name not in record:
            return f"item record without {name!r}"
        if not isinstance(record[name], str) or not record[name]:
            return f"item record: {name!r} must be a non-empty string, got {record[name]!r}"
        if (problem := control_problem(record[name])) is not None:
            # Printed on report lines: a newline in a model name forged the verdict line.
            return f"item record: {name!r} {record[name]!r:.80} {problem}"
    if "outcome" not in record:
        return "item record without 'outcome'"
    if record["outcome"] not in OUTCOMES:
        return (
            f"item record: 'outcome' must be one of {', '.join(OUTCOMES)}, "
            f"got {record.get('outcome')!r}"
        )
    for name in _OPTIONAL_TEXT:
        if name in record and not isinstance(record[name], str):
            return f"item record: {name!r} must be a string, got {record[name]!r}"
    if "error" in record and not isinstance(record["error"], str | None):
        return f"item record: 'error' must be a string or null, got {record['error']!r}"
    version = record.get("suite_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        return f"item record: 'suite_version' must be an integer, got {version!r}"
    metrics = record.get("metrics", {})
    if not isinstance(metrics, dict) or not all(_number(v) for v in metrics.values()):
        return f"item record: 'metrics' must be an object of numbers, got {metrics!r}"[:300]
    stages = record.get("stages", [])
    if not isinstance(stages, list) or not all(isinstance(s, dict) for s in stages):
        return "item record: 'stages' must be a list of objects"
    if not isinstance(record.get("usage"), dict | None):
        return "item record: 'usage' must be an object or null"
    if "duration" in record and not _number(record["duration"]):
        return f"item record: 'duration' must be a number, got {record['duration']!r}"
    return None


def _checked_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every record of a results file with its line number, each checked by
    ``record_problem``; the first bad one is a ``JsonlError`` naming ``file:line`` and what to
    do. Text is read writable (a lone surrogate becomes U+FFFD): every reader of a results file
    may write what it read again (merge, promote, rescore, resume)."""
    from pytest_citebench import jsonl

    for number, record in jsonl.iter_objects(path, torn_tail_ok=True, writable=True):
        problem = record_problem(record)
        if problem is not None:
            raise jsonl.JsonlError(path, number, f"{problem}; {WHAT_TO_DO}")
        yield number, record


def read_item_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The item records of a results file, each with its line number: for a reader whose own
    checks (``rescore``'s) must name ``file:line`` too."""
    return [
        (number, record)
        for number, record in _checked_records(path)
        if record.get("type", "item") == "item"
    ]


class ResultsWriteError(OSError):
    """The results file could not be written (disk full, a device that refuses writes): the run
    stops with this message instead of an INTERNALERROR."""


class ResultsWriter:
    """Appends one JSON line per finished item and flushes it, so an interrupted run keeps every
    item that finished; aggregates are appended at the end.

    Opened when the run starts, and locked while open: a second run given the same file is a
    usage error then, not two runs' lines interleaved (``jsonl.FileBusy``). ``keep``: the file is
    also the one being resumed, so what it holds stays until ``finish`` rewrites it whole; a run
    killed before that leaves the old records and the new ones, and resuming it again loses
    nothing.
    """

    def __init__(
        self, path: Path, *, keep: bool = False, kept: Sequence[Mapping[str, Any]] | None = None
    ) -> None:
        from pytest_citebench.jsonl import Appender

        self.path = path
        self.keep = keep
        # keep: the item records the file held, rewritten at finish unless this run superseded
        # them; ``kept``: those records, when the caller has read them already (the resume).
        if not keep:
            self._kept: list[Mapping[str, Any]] = []
        elif kept is not None:
            self._kept = list(kept)
        else:
            self._kept = list(read_results(path)[0]) if path.is_file() else []
        self._appender = Appender(path, keep=keep)

    def _failed(self, exc: OSError) -> ResultsWriteError:
        self._appender.close()
        reason = exc.strerror or str(exc)
        return ResultsWriteError(
            f"cannot write --citebench-results {self.path}: {reason}; the records that "
            "finished so far stay in it (free space or pass another path, then "
            f"--citebench-resume {self.path})"
        )

    def start(self) -> None:
        """The run's items begin: the file is emptied (unless ``keep``); until then a run that
        stops early leaves it as it was."""
        try:
            self._appender.start()
        except OSError as exc:
            raise self._failed(exc) from None

    def write(self, record: Mapping[str, Any]) -> None:
        """One line, flushed before returning."""
        try:
            self._appender.write(record)
        except OSError as exc:
            raise self._failed(exc) from None

    def write_line(self, line: str) -> None:
        """``write``, for a record already written as ``jsonl.dumps`` writes it."""
        try:
            self._appender.write_line(line)
        except OSError as exc:
            raise self._failed(exc) from None

    def finish(
        self, records: Sequence[Mapping[str, Any]], tail: Sequence[Mapping[str, Any]]
    ) -> None:
        """The run is over: ``tail`` (aggregates, the shard record) appended, or with ``keep``
        the whole file rewritten atomically as this run's records, the resumed file's records
        this run did not redo, then ``tail``."""
        if not self.keep:
            self.start()  # a run that wrote no item still leaves only its own lines
            for record in tail:
                self.write(record)
            self.close()
            return
        from pytest_citebench import jsonl

        done = {record_key(r) for r in records}
        others = [r for r in self._kept if record_key(r) not in done]
        try:
            jsonl.write(self.path, [*records, *others, *tail])
        except OSError as exc:
            raise self._failed(exc) from None
        finally:
            self.close()

    def close(self) -> None:
        """Idempotent; a record written after it is dropped."""
        self._appender.close()


def read_results(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(items, aggregates) from a results file; a torn last line (killed mid-write) is ignored.

    Raises ``ValueError`` (a ``JsonlError``) naming ``file:line`` for any other bad line, a
    record missing what the readers need among them (``record_problem``)."""
    items, aggregates, _ = read_all(path)
    return items, aggregates


def read_all(
    path: Path,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
    """(items, aggregates, the last shard record or None) in one pass: ``merge`` needs all three
    of every shard file."""
    items: list[dict[str, Any]] = []
    aggregates: list[dict[str, Any]] = []
    shard = None
    for _, record in _checked_records(path):
        kind = record.get("type", "item")
        if kind == "item":
            items.append(record)
        elif kind == "aggregate":
            aggregates.append(record)
        elif kind == "shard":
            shard = record
    return items, aggregates, shard
