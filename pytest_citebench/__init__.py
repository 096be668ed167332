"""pytest-citebench: citation hallucination benchmarks as pytest cases.

The package root holds what a paper author or plugin user imports (``plugin``, ``api``,
``registry``, ``suites``) and what every layer uses (``errors``, ``safetext``, ``jsonl``,
``metricspec``); each concept has its folder (README.md, "Layout"). Modules that moved out of
the root keep their old import path for a while: importing one warns (``DeprecationWarning``)
and gives the module at its new place, the same object.

May import: nothing from the package.

PYTEST_DONT_REWRITE: this package is a pytest plugin, imported before any run a test starts
in-process (pytester). With an editable install and the tests a package, such a run found the
package on ``sys.path``, marked it for assertion rewriting too late and warned on every run
(its asserts are none: nothing is lost).
"""

from __future__ import annotations

import sys
from typing import Any

__version__ = "0.1.0"

#: Old import path -> new one, for modules that moved (issue 38). Only a name here can be
#: imported by its old path; nothing is imported until someone asks for one.
MOVED = {
    f"pytest_citebench.{old}": f"pytest_citebench.{new}"
    for old, new in {
        "session": "run.session",
        "startup": "run.startup",
        "collection": "run.collection",
        "items": "run.items",
        "scheduler": "run.scheduler",
        "runner": "run.runner",
        "workers": "run.workers",
        "sharding": "run.sharding",
        "selection": "run.selection",
        "diagnostics": "run.diagnostics",
        "estimate": "run.estimate",
        "models.build": "run.models",
        "results.ledger": "run.ledger",
        "flags": "settings.declare",
        "options": "settings.resolve",
        "models.profiles": "settings.profiles",
        "scaffold": "commands.new_suite",
        "scaffold_paper": "commands.new_paper",
        "localmodel": "commands.local_model",
        "results.merge": "commands.merge",
        "results.rescore": "commands.rescore",
        "results.conclude": "reports.conclude",
        "encoders": "retrieval.encoders",
    }.items()
}


class _MovedLoader:
    """Loads an old path as the module at its new place (imported first), with a warning."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: Any = None

    def create_module(self, spec: Any) -> Any:
        import importlib

        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: Any) -> None:
        # The import system stamped the old path's spec on the module: give it back its own.
        module.__spec__ = self.spec
        import warnings

        old = next(old for old, new in MOVED.items() if new == self.new)
        warnings.warn(
            f"{old} moved to {self.new}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )


class _MovedFinder:
    """Finds the old import paths in ``MOVED`` and nothing else (first in ``sys.meta_path``, so a
    stale file left at an old path by another install cannot answer instead)."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
        if name not in MOVED:
            return None
        from importlib.util import spec_from_loader

        return spec_from_loader(name, _MovedLoader(MOVED[name]))  # type: ignore[arg-type]


if not any(type(finder).__name__ == "_MovedFinder" for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedFinder())
