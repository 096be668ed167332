"""Tasks by name. Built-in task modules are light (no model or numpy imports), so loading them
all on first use is cheap, and a suite manifest can be validated against the full list."""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_citebench.tasks.base import Task

_BUILTIN_MODULES = (
    "pytest_citebench.tasks.reasons",
    "pytest_citebench.tasks.arxeval",
    "pytest_citebench.tasks.guard",
)
_TASKS: dict[str, Task] = {}
_loaded = False


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _same_definition(a: Task, b: Task) -> bool:
    """The same class re-imported: pytester's in-process runs drop modules imported during a run
    from ``sys.modules`` but keep this registry, so the next run re-executes the task module."""
    return (type(a).__module__, type(a).__qualname__) == (type(b).__module__, type(b).__qualname__)


def register(task: Task) -> Task:
    # Task names end up in test ids, gate specs, cassette paths and report rows: plain only.
    if not _NAME.fullmatch(task.name):
        raise ValueError(f"task name {task.name!r}: use 1-64 letters, digits, '.', '-' or '_'")
    existing = _TASKS.get(task.name)
    if existing is not None and existing is not task and not _same_definition(existing, task):
        raise ValueError(f"task {task.name!r} is registered twice")
    _TASKS[task.name] = task
    return task


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in _BUILTIN_MODULES:
            importlib.import_module(module)


def get(name: str) -> Task:
    _load()
    try:
        return _TASKS[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known: {', '.join(names())}") from None


def names() -> list[str]:
    _load()
    return sorted(_TASKS)


def all_tasks() -> list[Task]:
    _load()
    return [_TASKS[name] for name in sorted(_TASKS)]
