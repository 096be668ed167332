"""The state of one ``pytest --citebench`` run, kept in ``config.stash`` (never module globals).

It only wires the rooms that do the work: start-up checks (``startup``), the models
(``run.models``), collection (``collection``), the scheduler (``scheduler``), the ledger of
records (``ledger``) and the end of the run (``reports.conclude``), whose
``Conclusion`` the reports read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_citebench.results.gates import Gate, gates_from
from pytest_citebench.run import sources, startup
from pytest_citebench.run.collection import Collection
from pytest_citebench.run.ledger import Ledger
from pytest_citebench.run.models import plain_models, with_rag, worker_options
from pytest_citebench.run.scheduler import Scheduler
from pytest_citebench.settings import Options, project_root

if TYPE_CHECKING:
    from pytest_citebench.reports.conclude import Conclusion

SESSION_KEY = pytest.StashKey["CitebenchSession"]()


class CitebenchSession:
    """One per process (controller and each xdist worker); the usage checks run in ``__init__``,
    so a bad option or gate fails the run before any model call."""

    def __init__(self, config: pytest.Config) -> None:
        from pytest_citebench.recording.scrub import snapshot_secrets

        self.config = config
        # This run's keys, read now on the main thread (before models add their parameter
        # secrets): a run that records nothing (an answers file) must not scrub with the keys of
        # an earlier in-process run.
        snapshot_secrets()
        options = Options.from_config(config)
        self.is_worker = hasattr(config, "workerinput")
        if not self.is_worker:
            startup.check_workers(config, options)
        self.options, budget = worker_options(config, options)
        plain = plain_models(config, self.options, budget)
        startup.check_keys(self.options, plain)
        if not self.is_worker:
            startup.check_prices(self.options, plain)
            startup.check_model_options(self.options, plain)
            startup.check_tool_use(self.options, plain, str(config.option.markexpr or ""))
        self.models = with_rag(plain, self.options)
        # Which suite folders this run collects (the project's, installed packages', given).
        self.sources = sources.plan(config, self.options)
        self.gates: list[Gate] = gates_from(self.options.gates, "--citebench-gate") + gates_from(
            self.options.pyproject_gates, "pyproject.toml [tool.citebench]"
        )
        if not self.is_worker:
            startup.check_gates(self.sources.paths, self.options, self.gates)
            startup.check_ids(self.sources.paths, self.options)
            startup.check_environment()
        self.collection = Collection(self.options, self.gates, project_root(config))
        self.scheduler = Scheduler(config, self.options, self.models, is_worker=self.is_worker)
        self.ledger = Ledger(
            self.options, is_worker=self.is_worker, collect_only=bool(config.option.collectonly)
        )
        # --citebench-baseline: item records of the baseline (controller only).
        self.baseline_records = startup.load_baseline(self.options, is_worker=self.is_worker)
        self.session: pytest.Session | None = None
        # A signal held while the summary is written (plugin._hold_sigterm): the run exits 2.
        self.held_signal: int | None = None
        self.conclusion: Conclusion | None = None
        self.written_reports: list[tuple[str, Path]] = []
        if not self.is_worker:
            startup.check_output_paths(
                self.options, self.models, pyproject=project_root(config) / "pyproject.toml"
            )
            # Last: nothing after it may fail, or the file would stay locked for nothing.
            self.ledger.open()

    def finish(self) -> int:
        """The end of the run: conclude, close the results file with the aggregates, write the
        reports; returns the failed gates plus the regressions (they fail the run)."""
        from pytest_citebench.reports.conclude import Baseline, conclude
        from pytest_citebench.reports.output import write_requested
        from pytest_citebench.reports.run_settings import report_settings

        opts = self.options
        baseline = None
        if opts.baseline is not None:
            baseline = Baseline(
                self.baseline_records, str(opts.baseline), opts.tolerance, opts.correction
            )
        conclusion = conclude(
            self.ledger.records, self.gates, baseline, include_suspect=opts.include_suspect
        )
        self.conclusion = conclusion
        self.ledger.finish(conclusion.aggregates)
        written, errors = write_requested(
            conclusion,
            opts.reports,
            settings=lambda: report_settings(opts, self.models),
            show=opts.show,
        )
        self.written_reports += written
        self.ledger.output_errors += errors
        return conclusion.failed_gates + conclusion.regressions
