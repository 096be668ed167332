"""What collection asks of the run: which tasks to collect, the suites seen so far (names must
be unique, their gates join the run's), derived suites computed once, and each case's job."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_citebench.run.runner import Job

if TYPE_CHECKING:
    from pytest_citebench.api import Derived, Sample, Task, Variant
    from pytest_citebench.models import Model
    from pytest_citebench.results.gates import Gate
    from pytest_citebench.settings import Options
    from pytest_citebench.suites import Manifest, Suite


class Collection:
    """The suites and jobs of one process's collection; ``gates`` is the run's list, shared."""

    def __init__(self, options: Options, gates: list[Gate], rootpath: Path) -> None:
        self.options = options
        self.gates = gates
        self.suites: dict[str, Suite] = {}
        self._rootpath = rootpath
        self._derived: dict[tuple[str, str], Sequence[Derived]] = {}

    def add_suite(self, suite: Suite) -> None:
        """A duplicate name or a bad gate is a ``SuiteError``: it fails that suite, not the run."""
        from pytest_citebench.results.gates import GateError, add_manifest_gates
        from pytest_citebench.suites import SuiteError

        if (
            suite.name in self.suites
            and self.suites[suite.name].manifest.directory != suite.manifest.directory
        ):
            raise SuiteError(
                suite.manifest.manifest_file,
                f"suite name {suite.name!r} is already used by "
                f"{self.suites[suite.name].manifest.manifest_file}; rename one of them",
                field="name",
            )
        self.suites[suite.name] = suite
        try:
            add_manifest_gates(self.gates, suite.manifest)
        except GateError as exc:
            raise SuiteError(suite.manifest.manifest_file, str(exc), field="gates") from None

    def wants_task(self, task: str) -> bool:
        """``--citebench-task`` filters at collection, so unwanted tasks make no test at all."""
        return not self.options.tasks or task in self.options.tasks

    def derive(self, suite: Suite, variant: Variant) -> Sequence[Derived]:
        """A derived suite, computed once per run (a paper may cache it on disk too)."""
        key = (suite.name, variant.name)
        if key not in self._derived:
            cache = self._rootpath / ".citebench" / "cache"
            self._derived[key] = variant.derive(suite.items, cache)
        return self._derived[key]

    def make_job(
        self, nodeid: str, item: Sample, task: Task, model: Model, manifest: Manifest
    ) -> Job:
        """Built at collection so ``--collect-only --citebench-estimate`` can dry-run it."""
        corpus = str(manifest.corpus_file) if manifest.corpus_file else None
        return Job(nodeid, item, task, model, manifest.version, corpus, self.options.cassettes)
