"""Import paths survive the layout (issue 38): every old path of a module that moved still
imports, with a ``DeprecationWarning``, as the module at its new place; every import path the
README, CONTRIBUTING.md, docs/ and the suites' READMEs name resolves, with no warning."""

from __future__ import annotations

import importlib
import re
import sys
import warnings

import pytest

from pytest_citebench import MOVED
from tests.conftest import REPO

#: Dotted names in the docs that are not import paths.
NOT_MODULES = {"pytest_citebench.tasks"}  # the entry-point group of papers


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_gives_the_module_at_its_new_place(
    old: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = importlib.import_module(MOVED[old])
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(
        DeprecationWarning, match=f"^{re.escape(old)} moved to {re.escape(MOVED[old])}"
    ):
        module = importlib.import_module(old)
    assert module is new
    # The module keeps its own identity: pickles, tracebacks and reloads name the new place.
    assert module.__spec__ is not None
    assert module.__name__ == module.__spec__.name == MOVED[old]
    assert sys.modules[old] is new


def test_names_that_moved_within_a_module_are_still_found_at_the_old_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for old in (
        "pytest_citebench.sharding",
        "pytest_citebench.selection",
        "pytest_citebench.options",
    ):
        monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning):
        from pytest_citebench.options import Options, setting
        from pytest_citebench.selection import SelectionError, make_selection, select
        from pytest_citebench.sharding import ShardError, parse_shard, split
    from pytest_citebench import settings

    assert (Options, setting) == (settings.Options, settings.setting)
    assert (
        parse_shard("2/4").spec == "2/4" and callable(split) and issubclass(ShardError, ValueError)
    )
    assert make_selection(["a"], None, None, None).ids == ("a",) and callable(select)
    assert issubclass(SelectionError, ValueError)
    # The old settings module is the settings package now: its names are the entry point's.
    assert {"SETTINGS", "SettingError", "Spec", "check"} <= set(settings.__all__)


def test_an_unknown_path_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pytest_citebench.no_such_module")


def _documented_paths() -> set[str]:
    docs = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
    docs += sorted((REPO / "suites").rglob("README.md"))
    found = set()
    for doc in docs:
        found |= set(re.findall(r"\bpytest_citebench(?:\.[A-Za-z_]\w*)+", doc.read_text("utf-8")))
    return found - NOT_MODULES


def test_the_docs_name_import_paths_that_resolve_without_a_warning() -> None:
    paths = _documented_paths()
    assert len(paths) >= 5  # the api, metrics, a paper's tasks, the stub server ...
    unresolved = []
    with warnings.catch_warnings():
        # Our own warning only: a library's deprecation on import is not the docs' fault.
        warnings.filterwarnings("error", "pytest_citebench", DeprecationWarning)
        for path in sorted(paths):
            parts = path.split(".")
            for n in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:n]))
                    break
                except ModuleNotFoundError:
                    continue
            try:
                for attr in parts[n:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                unresolved.append(path)
    assert unresolved == []
