"""pytest's view of suites: a suite manifest is a File, each task a Collector, each
(item, model) a test whose id reads ``suites/reasons/nlp/suite.toml::indirect::<item>[<model>]``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from pytest_citebench import api, jsonl, registry
from pytest_citebench.errors import CitebenchError
from pytest_citebench.suites import (
    GOLD_FLAGS,
    GOLD_VERIFIED,
    Manifest,
    Suite,
    SuiteError,
    load_suite,
)

if TYPE_CHECKING:
    from pytest_citebench.results.record import ItemResult
    from pytest_citebench.run.runner import Job
    from pytest_citebench.run.session import CitebenchSession

PROPERTY = "citebench"


def case_record(report: pytest.TestReport) -> tuple[dict[str, Any], str] | None:
    """The record a case's report carries, and the same as one JSON line; None for any other.

    The record travels as that line, not as a dict: xdist ships every report through execnet's
    pure-Python serializer, which took ~155 us a case for the record as a dict (both ends
    together) and takes ~70 us for the text, JSON's dumps and loads included; the results file
    writes the line as it is, and JUnit XML shows it as JSON, not as a Python repr.
    """
    for name, value in report.user_properties:
        if name == PROPERTY and isinstance(value, str):
            record = _parsed(value)
            return (record, value) if isinstance(record, dict) else None
    return None


# The last line parsed, and what it parsed to. The controller asks twice for each report (its
# status letter, then its record), with the same string object both times: the two parses took
# ~1 s of the controller's CPU in a 14,848-case run. The line is held here, so its identity
# cannot pass to another string.
_LAST_PARSED: tuple[str, Any] = ("", None)


def _parsed(line: str) -> Any:
    global _LAST_PARSED
    if _LAST_PARSED[0] is not line:
        record = json.loads(line)
        _LAST_PARSED = (line, compact(record) if isinstance(record, dict) else record)
    return _LAST_PARSED[1]


# Key and short value strings shared by every record the controller keeps (``outcome``,
# ``model``, a metric's name): ``json.loads`` makes a fresh string of each for every record.
_SHARED: dict[str, str] = {}
_SHARED_MAX = 65536
_SHORT = 40


def _pooled(pool: dict[str, str], text: str) -> str:
    """The pool's copy of ``text``, added while the pool holds fewer than ``_SHARED_MAX``."""
    found = pool.get(text)
    if found is None:
        if len(pool) >= _SHARED_MAX:
            return text
        found = pool[text] = text
    return found


def _shared(text: str) -> str:
    return _pooled(_SHARED, text)


def compact(record: dict[str, Any]) -> dict[str, Any]:
    """An equal record that takes a third of the memory: the controller keeps every record
    until the end of the run (4.4 KB each as ``json.loads`` makes them, 1.4 KB compacted, on
    the IR suite). Keys and short strings are shared across records; a long string that the
    record repeats (the answer, its raw text, each stage's) is one object."""
    seen: dict[str, str] = {}
    out: dict[str, Any] = {}
    for key, value in record.items():
        if value.__class__ is str:
            value = _shared(value) if len(value) <= _SHORT else seen.setdefault(value, value)
        elif value.__class__ is list:
            value = [_compact_stage(v, seen) if v.__class__ is dict else v for v in value]
        elif value.__class__ is dict:
            value = {_shared(k): v for k, v in value.items()}
        out[_shared(key)] = value
    return out


def _compact_stage(stage: dict[str, Any], seen: dict[str, str]) -> dict[str, Any]:
    return {
        _shared(k): seen.setdefault(v, v) if v.__class__ is str else _nested(v, seen)
        for k, v in stage.items()
    }


# Strings inside a stage's nested details (a tool-using task's trajectory: the ids and titles
# each search showed, issue 45) recur across records: the same corpus papers are shown to item
# after item. Shared up to this length, in a pool of their own, bounded like ``_SHARED``.
_NESTED: dict[str, str] = {}
_NESTED_LONGEST = 200


def _nested(value: Any, seen: dict[str, str]) -> Any:
    """An equal value, its dict keys and strings shared: a tool-using task's record took 7.4 KB
    compacted at its top level only, against 1.4 KB for a one-answer task's (IR suite)."""
    cls = value.__class__
    if cls is str:
        if len(value) > _NESTED_LONGEST:
            return seen.setdefault(value, value)
        return _pooled(_NESTED, value)
    if cls is dict:
        return {_shared(k): _nested(v, seen) for k, v in value.items()}
    if cls is list:
        return [_nested(v, seen) for v in value]
    return value


@functools.cache
def _mark(name: str) -> pytest.MarkDecorator:
    """One marker object per name, shared by every case: ``add_marker("x")`` makes a new one
    each call (three or four a case; 124,000 of them took 7 MB on the IR suite). A mark is
    immutable, so sharing it changes nothing pytest sees (issue 46)."""
    return getattr(pytest.mark, name)


def citebench_session(config: pytest.Config) -> CitebenchSession:
    """The run's state, kept in ``config.stash`` (never a module global)."""
    from pytest_citebench.run.session import SESSION_KEY

    return config.stash[SESSION_KEY]


class SuiteFile(pytest.File):
    """A ``suite.toml``: one collector per selected task, plus the variants a paper derives."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        session = citebench_session(self.config)
        try:
            suite = load_suite(self.path)
            session.collection.add_suite(suite)
        except SuiteError as exc:
            # One failing test for a bad suite; a collection error would stop every other suite.
            yield BadSuite.from_parent(self, name="invalid-suite", error=exc)
            return
        self.config.addinivalue_line("markers", f"{suite.manifest.marker}: suite {suite.name}")
        for task in suite.manifest.tasks:
            if session.collection.wants_task(task):
                yield TaskGroup.from_parent(self, name=task, suite=suite)
        for paper in registry.papers():
            for variant in paper.variants:
                # A paper's derived suites (REASONS: adversarial swaps), where they apply.
                if variant.applies(suite.items):
                    yield DerivedSuite.from_parent(
                        self, name=variant.name, suite=suite, variant=variant
                    )


class DerivedSuite(pytest.Collector):
    """The suite a paper's :class:`~pytest_citebench.api.Variant` derives; it reports as suite
    ``<name>+<variant>``. (Not named ``Variant``: that is the paper's declaration, this the
    collector of its items.)"""

    def __init__(self, *, suite: Suite, variant: api.Variant, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite
        self.variant = variant

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        session = citebench_session(self.config)
        name = f"{self.suite.name}+{self.name}"
        derived = session.collection.derive(self.suite, self.variant)
        items = [replace(d.item, suite=name) for d in derived if d.item is not None]
        for skipped in (d for d in derived if d.item is None):
            yield SkippedSwap.from_parent(self, name=skipped.original.id, reason=skipped.reason)
        if items:
            variant = Suite(replace(self.suite.manifest, name=name), items)
            # Its own marker (reasons_nlp_swap_title), registered so --strict-markers accepts it.
            self.config.addinivalue_line(
                "markers", f"{variant.manifest.marker}: suite {name} ({self.name})"
            )
            for task in self.suite.manifest.tasks:
                if session.collection.wants_task(task):
                    yield TaskGroup.from_parent(self, name=task, suite=variant)


class SkippedSwap(pytest.Item):
    """An item a variant could not derive: skipped, with the reason, and counted."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason
        self.add_marker("citebench")

    def runtest(self) -> None:
        pytest.skip(self.reason)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return (
            self.path,
            None,
            f"{self.name} ({self.parent.name if self.parent else 'variant'} skipped)",
        )


class TaskGroup(pytest.Collector):
    """One task of a suite: a case per (sample, model), ids shaped like parametrized tests'."""

    def __init__(self, *, suite: Suite, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    def collect(self) -> Iterator[pytest.Item]:
        session = citebench_session(self.config)
        task = registry.get(self.name)
        for item in self.suite.items:
            for model in session.models:
                name = f"{item.id}[{model.name}]"
                # An explicit nodeid lets pytest parse the [model] part as params, the way it
                # does for parametrized tests, so --lf matches ids read back from its cache.
                case = CaseItem.from_parent(
                    self, name=name, nodeid=f"{self.nodeid}::{name}", manifest=self.suite.manifest
                )
                case.job = session.collection.make_job(
                    case.nodeid, item, task, model, self.suite.manifest
                )
                # The gold audit's subsets (docs/audit.md): -m gold_verified runs the items read
                # and found good; -m "not gold_suspect" skips those set apart before any call.
                if item.fields.get(GOLD_VERIFIED):
                    case.add_marker(_mark(GOLD_VERIFIED))
                elif item.fields.get(GOLD_FLAGS):
                    case.add_marker(_mark("gold_suspect"))
                yield case


class CaseFailure(Exception):
    """Carries the result to ``repr_failure``, which prints it instead of a traceback."""

    def __init__(self, result: ItemResult, why: str) -> None:
        super().__init__(why)
        self.result = result
        self.why = why


class CaseItem(pytest.Item):
    """One (sample, task, model) test; it fails only on an error, or hallucinated under
    ``--citebench-strict``: every other outcome is a result, not a test failure."""

    job: Job

    def __init__(self, *, manifest: Manifest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.manifest = manifest
        self.add_marker(_mark("citebench"))
        self.add_marker(_mark(self.parent.name if self.parent else "citebench"))
        self.add_marker(_mark(manifest.marker))

    def runtest(self) -> None:
        session = citebench_session(self.config)
        result = session.scheduler.result_for(self)
        self.user_properties.append((PROPERTY, jsonl.dumps(result.to_record())))
        if getattr(self.config.option, "xmlpath", None):
            # Flat per-item pairs for JUnit XML: CI dashboards read <property> tags.
            self.user_properties.append((f"{PROPERTY}.outcome", result.outcome))
            if result.reason:
                self.user_properties.append((f"{PROPERTY}.reason", result.reason))
            if result.kind:
                self.user_properties.append((f"{PROPERTY}.kind", result.kind))
            for name, value in sorted(result.metrics.items()):
                self.user_properties.append((f"{PROPERTY}.{name}", value))
        if result.outcome == "error":
            raise CaseFailure(result, "error")
        if result.outcome == "hallucinated" and session.options.strict:
            raise CaseFailure(result, "hallucinated (--citebench-strict)")

    def teardown(self) -> None:
        """The call report, logged by now, carries the record line on (a copy of this list):
        the item, which pytest keeps to the end of the run, drops it, and so does the teardown
        report made from it (issue 46). JUnit XML reads the properties off that report: kept
        then."""
        if not getattr(self.config.option, "xmlpath", None):
            self.user_properties[:] = [p for p in self.user_properties if p[0] != PROPERTY]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from pytest_citebench.reports.escape import terminal

        if isinstance(excinfo.value, CaseFailure):
            return terminal(describe(excinfo.value.result, excinfo.value.why))
        if isinstance(excinfo.value, CitebenchError):
            return terminal(str(excinfo.value))
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.job.item.line - 1
        return (
            self.manifest.items_file,
            line,
            f"{self.job.item.id} {self.job.task.name} on {self.job.model.name}",
        )


def describe(result: ItemResult, why: str) -> str:
    """A failed case for a reader: expected against given, and the raw text only if it differs."""
    from pytest_citebench.reports.escape import indented, one_line

    lines = [f"{result.suite}::{result.item_id} [{result.task}] on {result.model}: {why}"]
    if result.error:
        lines.append(result.error)
    else:
        # Untrusted fields (the gold, the answer, a reason quoting a registry's title) on one
        # line each, the raw reply indented: none can print a line that reads as the run's.
        lines += [
            f"  expected: {one_line(result.expected)}",
            f"  given:    {one_line(result.answer)}",
        ]
        if result.reason:
            lines.append(f"  why:      {one_line(result.reason)}")
        if result.raw_answer and result.raw_answer.strip() != result.answer:
            raw = result.raw_answer.strip()[:500]
            lines.append(f"  raw:      {indented(raw, ' ' * 12)}")
        if result.metrics:
            metrics = ", ".join(f"{k}={v:.3f}" for k, v in sorted(result.metrics.items()))
            lines.append(f"  metrics:  {metrics}")
    return "\n".join(lines)


class BadSuite(pytest.Item):
    """An invalid suite as one failing test pointing at the bad line, so other suites still run."""

    def __init__(self, *, error: SuiteError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.add_marker("citebench")

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        hint = f"python -m pytest_citebench validate {self.path.parent}"
        return f"invalid suite: {self.error}\n(check it with: {hint})"

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.error.path, (self.error.line - 1) if self.error.line else None, "invalid suite"
