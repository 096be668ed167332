"""pytest hooks, and nothing else. With ``--citebench`` off every hook returns after one check and
nothing heavy is imported: this module's top imports only the standard library, pytest and the
settings table (itself standard library only)."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.settings import FLAG, add_flags

# Items --citebench-shard deselected: an empty shard is fine only if it had items to give away.
_SHARD_DESELECTED = pytest.StashKey[int]()
_RESUMED_KEY = "citebench_resumed"  # in an xdist worker's workeroutput: nodeids it resumed
_RESUMED_COUNT = pytest.StashKey[int]()
_LOG_SCRUBBER = pytest.StashKey[Any]()  # removes the log record scrubber at unconfigure
_SIGTERM_BEFORE = pytest.StashKey[Any]()  # SIGTERM's handler before this run, put back after it
_STALE_KEY = "citebench_stale"  # in workeroutput: resumed nodeids run again, and why
_SHARD_EXPECTED_KEY = "citebench_shard_expected"  # in workeroutput: the item records it owes
# Outcomes other than correct get their own summary category and letter; none of them fails the
# run (only errors do, and hallucinated under --citebench-strict).
_CATEGORIES = {
    "hallucinated": ("hallucinated", "H", "HALLUCINATED"),
    "abstained": ("abstained", "A", "ABSTAINED"),
    "partial": ("partial", "P", "PARTIAL"),
    "unanswered": ("unanswered", "U", "UNANSWERED"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declared whether or not ``--citebench`` is given (pytest parses before any hook could
    check); each paper adds its own options to the same group."""
    add_flags(parser)


def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Each paper's own options, added once ``--citebench`` is known to be on: loading the
    papers costs ~0.25 s, which a pytest run without ``--citebench`` must not pay. The command
    line is parsed again after this hook, so the options read like the core's."""
    if not getattr(early_config.known_args_namespace, "citebench", False):
        return
    from pytest_citebench import registry
    from pytest_citebench.errors import CitebenchError

    try:
        papers = registry.papers()
    except CitebenchError as exc:
        raise pytest.UsageError(str(exc)) from None
    group = parser.getgroup("citebench")
    for paper in papers:
        if paper.add_options is not None:
            paper.add_options(group)


def _active(config: pytest.Config) -> bool:
    return bool(config.getoption(FLAG, default=False))


def pytest_configure(config: pytest.Config) -> None:
    """The ``citebench`` marker always (``--strict-markers`` runs accept it); the session, the
    papers' settings and the controller's hooks only with ``--citebench``."""
    config.addinivalue_line("markers", "citebench: a citation benchmark case (pytest-citebench)")
    if not _active(config):
        return
    from pytest_citebench import registry
    from pytest_citebench.results.gates import GateError
    from pytest_citebench.run.session import SESSION_KEY, CitebenchSession

    for task in registry.names():
        config.addinivalue_line("markers", f"{task}: citebench task {task}")
    config.addinivalue_line(
        "markers", "gold_verified: a case whose gold readers checked blind (docs/audit.md)"
    )
    config.addinivalue_line(
        "markers", "gold_suspect: a case whose gold the suite flags as suspect (docs/audit.md)"
    )
    if (
        config.option.collectonly
        and config.getoption("citebench_estimate")
        and -2 < config.option.verbose <= 0
    ):
        # The estimate is a table; pytest's listing (default or -q) would print every case
        # first (49,209 lines for the committed suites). Counts per suite file instead, as -qq
        # prints them; -v still chooses pytest's own listing.
        config.option.verbose = -2
    try:
        session = CitebenchSession(config)
    except GateError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SESSION_KEY] = session
    from pytest_citebench.recording.scrub import install_log_scrubber

    config.stash[_LOG_SCRUBBER] = install_log_scrubber()
    _stop_on_sigterm(config)
    for paper in registry.papers():  # each paper reads its own options (workers too)
        if paper.configure is not None:
            paper.configure(config)
    if not session.is_worker:
        config.pluginmanager.register(_ControllerHooks(session), "citebench-controller")
    if not getattr(config.option, "xmlpath", None):
        config.pluginmanager.register(_DropRecordLines(), "citebench-drop-lines")
    if session.sources.args is not None:
        # No paths given: the suites are the tests (not the project's own tests/ folder): the
        # project's suite folders and the installed suite packages (run/sources.py).
        config.args = session.sources.args


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _stop_on_sigterm(config: pytest.Config) -> None:
    """SIGTERM (a CI timeout, ``kill``) ends the run the way Ctrl-C does: pytest unwinds, the
    results file keeps every finished item, and ``--citebench-resume`` picks up from there.
    The handler found is kept, and put back at unconfigure (``_restore_sigterm``): a run inside
    another process (pytester's in-process runs) must not leave its own behind."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        config.stash[_SIGTERM_BEFORE] = signal.SIG_DFL
        signal.signal(signal.SIGTERM, _interrupt)


def _restore_sigterm(config: pytest.Config) -> None:
    """SIGTERM's handler as it was before ``_stop_on_sigterm`` (``_interrupt``, or ``_held``)."""
    import signal
    import threading

    before = config.stash.get(_SIGTERM_BEFORE, None)
    if before is None or threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGTERM, before)
    del config.stash[_SIGTERM_BEFORE]


def _hold_sigterm(cb: Any) -> None:
    """Once the items are done, SIGTERM is held until the summary is written: raised inside a
    summary hook it printed a raw KeyboardInterrupt traceback and no verdict, though every item
    had finished. The run then exits 2 (interrupted); a second SIGTERM ends it at once."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not _interrupt:
        return

    def _held(signum: int, frame: Any) -> None:
        cb.held_signal = signum
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    signal.signal(signal.SIGTERM, _held)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Keep the items ``--citebench-id``/``-ids``/``-sample`` chose, deselect other shards'
    items, then the ones ``--citebench-resume`` already finished;
    both show as deselected, so the counts stay honest."""
    cb = _session(config) if _active(config) else None
    if cb is None:
        return
    if cb.options.selection.active:
        # First: an id is checked against every collected item, before shards split them.
        from pytest_citebench.run.selection import SelectionError, select

        try:
            chosen, unchosen = select(items, cb.options.selection)
        except SelectionError as exc:
            raise pytest.UsageError(str(exc)) from None
        if unchosen:
            items[:] = chosen
            config.hook.pytest_deselected(items=unchosen)
    if cb.options.shard is not None:
        # Before --citebench-resume: a resumed shard skips only its own finished items.
        from pytest_citebench.run.sharding import split

        kept, dropped = split(items, cb.options.shard)
        config.stash[_SHARD_DESELECTED] = len(dropped)
        if dropped:
            items[:] = kept
            config.hook.pytest_deselected(items=dropped)
    ledger = cb.ledger
    if not ledger.resumed:
        return
    done = []
    for item in items:
        record = ledger.resumed.get(item.nodeid)
        job = getattr(item, "job", None)
        if record is None:
            continue
        stale = cb.ledger.stale_reason(record, job) if job is not None else None
        if stale is None:
            done.append(item)
        else:  # scored against other golds or rules: run again, and said in the summary
            ledger.stale_resumed[item.nodeid] = stale
    if cb.is_worker and ledger.stale_resumed:
        config.workeroutput[_STALE_KEY] = dict(ledger.stale_resumed)  # type: ignore[attr-defined]
    config.stash[_RESUMED_COUNT] = len(done)
    if done:
        # Same file, same decision on every xdist worker, so they all collect the same items.
        resumed = {item.nodeid for item in done}
        items[:] = [item for item in items if item.nodeid not in resumed]
        config.hook.pytest_deselected(items=done)
        if cb.is_worker:
            # Under xdist the controller collects nothing, so it cannot know which resumed
            # items this run selected: the workers tell it (pytest_testnodedown below).
            config.workeroutput[_RESUMED_KEY] = [item.nodeid for item in done]  # type: ignore[attr-defined]
        else:
            ledger.replay_resumed([item.nodeid for item in done])


def pytest_collection_finish(session: pytest.Session) -> None:
    """A shard's item count, once -k, -m and resume have deselected what they deselect: the
    controller writes it into the results (an xdist worker sends it to the controller)."""
    config = session.config
    cb = _session(config) if _active(config) else None
    if cb is None or cb.options.shard is None:
        return
    expected = sum(getattr(item, "job", None) is not None for item in session.items)
    expected += config.stash.get(_RESUMED_COUNT, 0)
    if cb.is_worker:
        config.workeroutput[_SHARD_EXPECTED_KEY] = expected  # type: ignore[attr-defined]
    else:
        cb.ledger.shard_expected = expected


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A ``suite.toml`` is a test file only under ``--citebench``; plain pytest never sees it."""
    if file_path.name != "suite.toml" or not _active(parent.config):
        return None
    from pytest_citebench.run.items import SuiteFile

    # An installed suite (site-packages) is named from its package: ENTRY/path/suite.toml.
    nodeid = _session(parent.config).sources.nodeid(file_path, parent.config.rootpath)
    if nodeid is not None:
        return SuiteFile.from_parent(parent, path=file_path, nodeid=nodeid)
    return SuiteFile.from_parent(parent, path=file_path)


def _session(config: pytest.Config) -> Any:
    from pytest_citebench.run.session import SESSION_KEY

    return config.stash.get(SESSION_KEY, None)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Cases are submitted ahead of their tests and run concurrently (a test only waits for its
    result); failed gates and regressions then count as failed tests, so they set the exit code."""
    cb = _session(session.config) if _active(session.config) else None
    if cb is None or session.config.option.collectonly:
        return (yield)  # --collect-only must never call a model
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        return (yield)  # collection errors: pytest runs no test, and the results file stays
    cb.ledger.start()
    _drop_per_test_log_capture(session)
    cb.scheduler.tune_gc()
    cb.scheduler.prefetch(session)
    try:
        result = yield
    finally:
        # Stop the engine before anything else runs: leftover prefetched calls (after -x or
        # Ctrl-C) must not race the rest of the session.
        cb.scheduler.close()
    if not cb.is_worker:
        # Only once the items ended normally: an interrupted run unwinds with SIGTERM as it was,
        # so a second one still stops it.
        _hold_sigterm(cb)
        # Gates and baseline regressions fail the run through testsfailed: by sessionfinish it
        # is too late to change it. The reports are written then too.
        failed = cb.finish()
        # A shard sees a share of the items: its gates and deltas are printed, and the merge
        # of all shards decides (python -m pytest_citebench merge).
        if cb.options.shard is None:
            session.testsfailed += failed
        # A results file or report that could not be written fails any run, a shard's too.
        session.testsfailed += len(cb.ledger.output_errors)
    return result


_LOG_OPTIONS = ("log_level", "log_cli_level", "log_file", "log_file_level")


def _drop_per_test_log_capture(session: pytest.Session) -> None:
    """pytest's log capture walks every logger in the process three times per test phase; once
    litellm and torch are imported that is ~500 loggers and 1.5 ms a test: 70 s of a 46,000-case
    run, more than the cases themselves. A citebench case logs nothing a reader needs (its
    record says what happened), so when every collected test is one and no ``--log-*`` option
    or ``log_cli`` asks for logs, the logging plugin is unregistered for the run."""
    from pytest_citebench.run.items import BadSuite, CaseItem, SkippedSwap

    config = session.config
    if not session.items or not all(
        isinstance(item, (CaseItem, BadSuite, SkippedSwap)) for item in session.items
    ):
        return
    if any(config.getoption(name, None) for name in _LOG_OPTIONS) or config.getini("log_cli"):
        return
    if any(config.getini(name) for name in ("log_level", "log_file", "log_cli_level")):
        return
    plugin = config.pluginmanager.get_plugin("logging-plugin")
    if plugin is not None:
        config.pluginmanager.unregister(plugin)


class _DropRecordLines:
    """Once every plugin has seen a case's call report (the ledger, the terminal's status
    letter, xdist sending it to the controller), its record line leaves the report's
    ``user_properties``: pytest keeps every report to the end of the run, and the line was the
    largest thing a case left there (1.9 KB a case on the IR suite). The item drops its own
    copy at teardown (``CaseItem.teardown``). Not registered when JUnit XML is written: it
    reads the properties at teardown."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(
        self, report: pytest.TestReport
    ) -> Generator[None, object, object]:
        result = yield
        if report.when == "call" and report.user_properties:
            from pytest_citebench.run.items import PROPERTY

            report.user_properties[:] = [p for p in report.user_properties if p[0] != PROPERTY]
        return result


class _ControllerHooks:
    """Hooks that need the session; registered only when --citebench is on, on the controller."""

    #: Cassette misses shown in full in pytest's FAILURES section; the rest are one line each
    #: in the short test summary, and counted per reason under "citebench cassette misses".
    MISSES_SHOWN = 3

    def __init__(self, cb: Any) -> None:
        self.cb = cb
        self.misses = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        from pytest_citebench.run.items import case_record

        found = case_record(report)
        if found is not None:
            self.cb.ledger.add(*found)
            self._compact_miss(report, found[0])
            reason = self.cb.ledger.should_stop()
            if reason:
                self._stop(report, reason)

    def _compact_miss(self, report: pytest.TestReport, record: dict[str, Any]) -> None:
        """A replay whose cassettes do not match misses every item alike: 1,092 misses printed
        ~7,700 lines of FAILURES before the summary. Past the first ``MISSES_SHOWN``, a miss is
        left out of that section (unless ``-v``): pytest leaves out a report marked
        ``_pdbshown`` (its mark for "already shown"), and still counts it and lists it in the
        short test summary. The misses section counts them per reason and prints the fix."""
        from pytest_citebench.recording import MISS_PREFIX

        if record.get("outcome") != "error" or MISS_PREFIX not in str(record.get("error") or ""):
            return
        self.misses += 1
        if self.misses > self.MISSES_SHOWN and self.cb.config.get_verbosity() <= 0:
            report._pdbshown = True  # type: ignore[attr-defined]

    @property
    def misses_hidden(self) -> int:
        """Misses left out of the FAILURES section."""
        if self.cb.config.get_verbosity() > 0:
            return 0
        return max(0, self.misses - self.MISSES_SHOWN)

    def _stop(self, report: pytest.TestReport, reason: str) -> None:
        session = self.cb.session
        if session is not None:
            session.shouldstop = reason
        dsession = self.cb.config.pluginmanager.getplugin("dsession")
        if dsession is not None:  # under xdist the controller's loop watches its own flag
            dsession.shouldstop = reason

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.cb.session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist load`` (what ``-n`` gives): queues deep enough for each worker's calls."""
        if config.getvalue("dist") != "load":
            return None
        from pytest_citebench.run.workers import deep_load_scheduling, xdist_workers

        return deep_load_scheduling(config, log, self.cb.options.concurrency, xdist_workers(config))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: count the resumed items it deselected, once (every worker
        collects the same items and so deselects the same ones)."""
        output = getattr(node, "workeroutput", None) or {}
        nodeids = output.get(_RESUMED_KEY)
        if nodeids is not None and not self.cb.ledger.resumed_replayed:
            self.cb.ledger.replay_resumed(list(nodeids))
        stale = output.get(_STALE_KEY)
        if isinstance(stale, dict):
            self.cb.ledger.stale_resumed.update(stale)
        expected = output.get(_SHARD_EXPECTED_KEY)
        if isinstance(expected, int):
            self.cb.ledger.shard_expected = expected  # every worker collects the same items


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """A passed case that was not correct shows its outcome's letter and count, not a dot."""
    if report.when != "call" or not report.passed or not _active(config):
        return None
    from pytest_citebench.run.items import case_record

    found = case_record(report)
    return _CATEGORIES.get(str(found[0].get("outcome"))) if found else None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Controller only: under ``--collect-only`` just the estimate, if asked (no model is
    called); otherwise the summary, slow-model warnings and cassette misses."""
    cb = _session(config) if _active(config) else None
    if cb is None or cb.is_worker:
        return
    for note in cb.sources.notes:  # a project's suite replaced an installed one of its name
        terminalreporter.write_line(f"citebench: {note}", yellow=True)
    if config.option.collectonly:
        if config.getoption("citebench_estimate"):
            from pytest_citebench.run.estimate import estimate, lines
            from pytest_citebench.run.items import CaseItem

            session = terminalreporter._session
            jobs = [i.job for i in (session.items if session else []) if isinstance(i, CaseItem)]
            terminalreporter.write_sep("-", "citebench estimate (no model was called)")
            for line in lines(estimate(jobs)):
                terminalreporter.write_line(line)
        return
    from pytest_citebench.reports.conclude import interrupted
    from pytest_citebench.reports.run_settings import command_settings, sampling_line
    from pytest_citebench.reports.summary import RunFacts, write_summary
    from pytest_citebench.run.diagnostics import latency_warnings, miss_report, usage_warnings

    ledger, opts = cb.ledger, cb.options
    facts = RunFacts(
        models=opts.models,
        record=opts.record,
        sampling=sampling_line(opts, cb.models),
        show=opts.show,
        tables=opts.tables,
        shard=opts.shard.spec if opts.shard is not None else None,
        results=opts.results,
        written=cb.written_reports,
    )
    conclusion = cb.conclusion or interrupted(
        ledger.records, cb.gates, include_suspect=opts.include_suspect
    )
    write_summary(terminalreporter, conclusion, facts)
    if ledger.stale_resumed:
        from collections import Counter

        why = Counter(ledger.stale_resumed.values())
        terminalreporter.write_line(
            f"citebench: ran {len(ledger.stale_resumed)} item(s) of --citebench-resume "
            f"{cb.options.resume} again: recorded under another version ("
            + "; ".join(f"{reason}: {n}" for reason, n in sorted(why.items()))
            + ")",
            yellow=True,
        )
    for error in ledger.output_errors:
        terminalreporter.write_line(f"ERROR {error}", red=True)
    for line in latency_warnings(cb.models, ledger.records):
        terminalreporter.write_line(line, yellow=True)
    for line in usage_warnings(ledger.records):
        terminalreporter.write_line(line, yellow=True)
    from pytest_citebench.recording import rerun_for

    hooks = config.pluginmanager.get_plugin("citebench-controller")
    misses = miss_report(
        ledger.records,
        [str(a) for a in cb.config.invocation_params.args],
        command_settings(opts),
        rerun_for(cb.config, str(opts.results) if opts.results is not None else None),
        hidden=hooks.misses_hidden if isinstance(hooks, _ControllerHooks) else 0,
    )
    if misses:
        terminalreporter.write_sep("-", "citebench cassette misses")
        for line in misses:
            terminalreporter.write_line(line)
    if cb.held_signal is not None:
        terminalreporter.write_line(
            f"citebench: signal {cb.held_signal} arrived after the last item; it was held until "
            "this summary was complete (exit 2: interrupted)",
            yellow=True,
        )
        session = terminalreporter._session
        if session is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A shard that the hash left empty ran nothing wrong: exit 0, not 5 (no tests), so a CI
    matrix wider than a small suite stays green. Nor did a resumed run whose items were all
    done (a CI retry of a finished shard): its gates were read on the resumed records, and
    "gates passed" with exit 5 failed the retry."""
    config = session.config
    cb = _session(config) if _active(config) else None
    if cb is None or exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
        return
    empty_shard = cb.options.shard is not None and config.stash.get(_SHARD_DESELECTED, 0) > 0
    if empty_shard or cb.ledger.resumed_replayed:
        session.exitstatus = pytest.ExitCode.OK


def pytest_unconfigure(config: pytest.Config) -> None:
    """Reached even when the run stopped early and ``finish`` never closed the results file."""
    cb = _session(config)
    if cb is not None:
        cb.scheduler.close()
        cb.ledger.close()
    remove = config.stash.get(_LOG_SCRUBBER, None)
    if remove is not None:
        remove()
        del config.stash[_LOG_SCRUBBER]
    _restore_sigterm(config)
