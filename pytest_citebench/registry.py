"""Papers and their tasks, by name, found through the entry-point group ``pytest_citebench.tasks``;
and the installed suite packages, through ``pytest_citebench.suites`` (:func:`installed_suites`).

The built-in papers are registered exactly like a third-party one, in this project's
``pyproject.toml``; the core never imports a paper by name. Each entry point names a
:class:`~pytest_citebench.api.Paper` object (``"package.module:PAPER"``). Paper modules are light
(no model or numpy imports), so loading them all on first use is cheap, and a suite manifest can
be validated against the full list of tasks.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from pytest_citebench.api import CORE_METRICS, MetricSpec, Paper, Task
from pytest_citebench.errors import CitebenchError

GROUP = "pytest_citebench.tasks"
#: Suite packages: each entry point names a folder of suites (a ``Path`` or a string, or a module
#: whose folder holds them). The built-in suites are registered so, in this project's pyproject.
SUITES_GROUP = "pytest_citebench.suites"
#: Set to 0 (or false/no/off) to run without installed suites: only the project's own folders.
INSTALLED_ENV = "CITEBENCH_INSTALLED_SUITES"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PAPERS: dict[str, Paper] = {}
_TASKS: dict[str, Task] = {}
_OWNER: dict[str, str] = {}
# Every declared metric by name (core ones included), with the task that declared it first.
_METRICS: dict[str, MetricSpec] = dict(CORE_METRICS)
_METRIC_OWNER: dict[str, str] = {}
_loaded = False


def _same_definition(a: object, b: object) -> bool:
    """The same class re-imported: pytester's in-process runs drop modules imported during a run
    from ``sys.modules`` but keep this registry, so the next run re-executes the paper module."""
    return (type(a).__module__, type(a).__qualname__) == (type(b).__module__, type(b).__qualname__)


def register(paper: Paper) -> Paper:
    """Add a paper and its tasks; a name taken by another paper's task is an error."""
    if not isinstance(paper, Paper):
        raise CitebenchError(f"{paper!r} is not a pytest_citebench.api.Paper")
    for task in paper.tasks:
        # Task names end up in test ids, gate specs, cassette paths and report rows: plain only.
        if not _NAME.fullmatch(task.name):
            raise CitebenchError(
                f"paper {paper.name!r}: task name {task.name!r}: use 1-64 letters, digits, '.', "
                "'-' or '_'"
            )
        existing = _TASKS.get(task.name)
        if existing is not None and existing is not task and not _same_definition(existing, task):
            raise CitebenchError(
                f"task {task.name!r} is registered twice (papers {_OWNER[task.name]!r} and "
                f"{paper.name!r}); rename one of them"
            )
    declared = _declared_metrics(paper)
    for task in paper.tasks:
        _TASKS[task.name] = task
        _OWNER[task.name] = paper.name
    for name, (spec, task_name) in declared.items():
        _METRICS[name] = spec
        _METRIC_OWNER[name] = task_name
    _PAPERS[paper.name] = paper
    return paper


def _declared_metrics(paper: Paper) -> dict[str, tuple[MetricSpec, str]]:
    """The paper's metrics with the task declaring each, checked: reports and gates read a
    metric by name, so one name must mean one thing. Typed, not a core metric again, and
    declared alike (its doc aside) by every task that has it, in this paper or another."""
    out: dict[str, tuple[MetricSpec, str]] = {}
    for task in paper.tasks:
        for name, spec in {**task.metrics, **task.set_metric_specs}.items():
            where = f"paper {paper.name!r}, task {task.name!r}: metric {name!r}"
            if not isinstance(spec, MetricSpec):
                raise CitebenchError(
                    f"{where}: declare it as pytest_citebench.api.MetricSpec(doc, ...), "
                    f"not {type(spec).__name__}"
                )
            if name in CORE_METRICS:
                raise CitebenchError(f"{where}: the core computes it for every task; rename it")
            known, owner = out.get(name) or (_METRICS.get(name), _METRIC_OWNER.get(name, ""))
            # A task registered again (pytester re-imports paper modules) may redeclare its own.
            rival = owner and owner != task.name and (owner in _TASKS or name in out)
            if known is not None and rival and replace(known, doc="") != replace(spec, doc=""):
                raise CitebenchError(
                    f"{where} is declared differently by task {owner!r}; reports read a metric "
                    "by name, so declare it the same way or rename one"
                )
            out.setdefault(name, (spec, task.name))
    return out


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in sorted(entry_points(group=GROUP), key=lambda ep: ep.name):
        try:
            paper = ep.load()
        except Exception as exc:  # a broken third-party paper names itself, not a traceback
            raise CitebenchError(
                f"entry point {ep.name!r} = {ep.value!r} in group {GROUP!r} failed to load: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        register(paper)


def papers() -> list[Paper]:
    """Every registered paper, by name."""
    _load()
    return [_PAPERS[name] for name in sorted(_PAPERS)]


def get(name: str) -> Task:
    """The task called ``name``; a KeyError lists the known ones."""
    _load()
    try:
        return _TASKS[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known: {', '.join(names())}") from None


_UNKNOWN = Task()


def find(name: str) -> Task:
    """The task called ``name``, or a bare :class:`Task` (every hook at its default) for a task
    no installed paper provides: a results file from elsewhere still aggregates and renders."""
    _load()
    return _TASKS.get(name, _UNKNOWN)


def paper_of(task: str) -> Paper:
    """The paper that registered ``task``."""
    _load()
    return _PAPERS[_OWNER[task]]


def variant_names() -> list[str]:
    """Every registered derived-suite name (``swap-title`` ...)."""
    return sorted({v.name for paper in papers() for v in paper.variants})


def split_variant(suite: str) -> tuple[str, str | None]:
    """``reasons/nlp+swap-title`` -> (``reasons/nlp``, ``swap-title``); a suite that is no
    registered variant -> (suite, None)."""
    base, sep, tail = suite.rpartition("+")
    if sep and tail in variant_names():
        return base, tail
    return suite, None


def names() -> list[str]:
    """Every task name of every installed paper, sorted, for markers and "known:" messages."""
    _load()
    return sorted(_TASKS)


def all_tasks() -> list[Task]:
    """Every registered task, in name order, so what is built from them is stable across runs."""
    _load()
    return [_TASKS[name] for name in sorted(_TASKS)]


def metric_spec(name: str) -> MetricSpec:
    """How the metric called ``name`` reads: the core's declaration or a registered task's; a
    name nothing declares (a results file from elsewhere, an outcome) reads as a share."""
    _load()
    return _METRICS.get(name) or MetricSpec("")


@dataclass(frozen=True)
class InstalledSuites:
    """One entry point of ``pytest_citebench.suites``: a folder of suites a distribution installed.

    ``name`` (the entry point's name) starts the test ids of its suites
    (``pytest-citebench/reasons/nlp/suite.toml::indirect::...``): a path in site-packages would
    say nothing, and two packages' folders may hold the same relative paths."""

    name: str
    distribution: str
    version: str
    path: Path


def installed_suites_enabled() -> bool:
    """``CITEBENCH_INSTALLED_SUITES=0`` turns the installed suites off (a project that runs only
    its own folders; this repository's tests, which run their fixture suites alone)."""
    value = os.environ.get(INSTALLED_ENV, "").strip().lower()
    return value not in ("0", "false", "no", "off")


def installed_suites_wanted() -> list[InstalledSuites]:
    """The installed suites a run with no path collects: all of them, none
    (``CITEBENCH_INSTALLED_SUITES=0``), or the entry points it names, comma-separated (a CI job
    that runs one package's suites; an entry point it names that is not installed is an error)."""
    if not installed_suites_enabled():
        return []
    value = os.environ.get(INSTALLED_ENV, "").strip()
    every = installed_suites()
    if value.lower() in ("", "1", "true", "yes", "on", "all"):
        return every
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in {root.name for root in every}]
    if unknown:
        raise CitebenchError(
            f"{INSTALLED_ENV}={value}: no installed suite package registers "
            f"{', '.join(map(repr, unknown))}; installed: "
            f"{', '.join(root.name for root in every) or 'none'} "
            "(python -m pytest_citebench suites lists them)"
        )
    return [root for root in every if root.name in names]


def _folder(target: object) -> Path | None:
    if isinstance(target, ModuleType):
        where = getattr(target, "__file__", None)
        return Path(where).resolve().parent if where else None
    if isinstance(target, str | os.PathLike):
        return Path(target)
    return None


def installed_suites() -> list[InstalledSuites]:
    """Every registered suite folder, by entry-point name; the first distribution wins a name
    two register (importlib lists each distribution once). Loading one imports only its module:
    suite packages are data, with no model or numpy imports.

    Raises ``CitebenchError`` naming the distribution for an entry point that fails to load or
    names no folder: a broken suite package must say which package to fix, not vanish."""
    found: dict[str, InstalledSuites] = {}
    for ep in sorted(entry_points(group=SUITES_GROUP), key=lambda ep: ep.name):
        dist = ep.dist
        dist_name, version = (dist.name, dist.version) if dist is not None else ("?", "?")
        where = (
            f"entry point {ep.name!r} = {ep.value!r} in group {SUITES_GROUP!r} "
            f"(distribution {dist_name} {version})"
        )
        try:
            target = ep.load()
        except Exception as exc:
            raise CitebenchError(
                f"{where} failed to load: {type(exc).__name__}: {exc}; reinstall or uninstall "
                f"{dist_name}"
            ) from exc
        folder = _folder(target)
        if folder is None or not folder.is_dir():
            raise CitebenchError(
                f"{where} names {target!r}, not a folder of suites; point it at a module (its "
                f"folder holds the suites) or a pathlib.Path, or uninstall {dist_name}"
            )
        if not _NAME.fullmatch(ep.name):
            raise CitebenchError(
                f"{where}: the name {ep.name!r} starts test ids: use 1-64 letters, digits, '.', "
                "'-' or '_'"
            )
        found.setdefault(ep.name, InstalledSuites(ep.name, dist_name, version, folder))
    return list(found.values())
