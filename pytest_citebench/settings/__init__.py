"""The run's settings, one concept in one folder: declared, resolved and checked.

- ``declare.py``: the core's command-line flags, declared whether or not ``--citebench`` is given
  (standard library, pytest and the checks table only).
- ``resolve.py``: :class:`Options`, every run setting resolved once (the command line, then
  ``[tool.citebench]`` in pyproject.toml, then defaults), and :func:`setting`, the same lookup
  for a paper's own option.
- ``checks.py``: what each setting may be (``SETTINGS``) and the one :func:`check` every source
  goes through (command line, pyproject.toml, a model profile, a paper's option).
- ``profiles.py``: model profiles, named sets of settings (``[tool.citebench.models."NAME"]``
  and the built-in ones).
- ``scope.py``: which items a run keeps, as asked (``--citebench-shard``, ``--citebench-id``,
  ``--citebench-sample``), parsed; ``run/`` applies them.

This package is the entry point: ``from pytest_citebench.settings import Options, setting``.
Importing it loads ``checks.py`` only (pure, standard library); every other name is imported on
first use, so a pytest run without ``--citebench`` reads nothing more than its flags.

May import: safetext, models (sampling and retry types, the default model), reports (the report
formats, which each get a flag).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_citebench.settings.checks import SETTINGS, SettingError, Spec, check

if TYPE_CHECKING:
    from pytest_citebench.settings.declare import FLAG, RECORD_MODES, add_flags
    from pytest_citebench.settings.profiles import (
        BUILTIN_PROFILES,
        Profile,
        ProfileError,
        load_profiles,
        parse_profile,
    )
    from pytest_citebench.settings.resolve import Options, project_root, setting, tool_table
    from pytest_citebench.settings.scope import (
        Selection,
        SelectionError,
        Shard,
        ShardError,
        make_selection,
        parse_shard,
        read_ids_file,
    )

# name -> the module of this package that defines it, imported on first use.
_LAZY = {
    **dict.fromkeys(("FLAG", "RECORD_MODES", "add_flags"), "declare"),
    **dict.fromkeys(("Options", "project_root", "setting", "tool_table"), "resolve"),
    **dict.fromkeys(
        ("BUILTIN_PROFILES", "Profile", "ProfileError", "load_profiles", "parse_profile"),
        "profiles",
    ),
    **dict.fromkeys(
        (
            *("Selection", "SelectionError", "make_selection", "read_ids_file"),
            *("Shard", "ShardError", "parse_shard"),
        ),
        "scope",
    ),
}

__all__ = [
    "BUILTIN_PROFILES",
    "FLAG",
    "RECORD_MODES",
    "SETTINGS",
    "Options",
    "Profile",
    "ProfileError",
    "Selection",
    "SelectionError",
    "SettingError",
    "Shard",
    "ShardError",
    "Spec",
    "add_flags",
    "check",
    "load_profiles",
    "make_selection",
    "parse_profile",
    "parse_shard",
    "project_root",
    "read_ids_file",
    "setting",
    "tool_table",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
