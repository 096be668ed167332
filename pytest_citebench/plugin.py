"""pytest hooks, and nothing else. With ``--citebench`` off every hook returns after one check and
nothing heavy is imported: this module's top imports only the standard library, pytest and the
settings table (itself standard library only)."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.settings import SETTINGS

FLAG = "--citebench"
RECORD_MODES = ("none", "once", "new_episodes", "all")
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
    group = parser.getgroup("citebench", "citation benchmarks (pytest-citebench)")
    group.addoption(
        FLAG,
        action="store_true",
        help="run the citation suites as tests (with --help: also each paper's own options)",
    )
    group.addoption(
        "--citebench-model",
        action="append",
        metavar="MODEL",
        help="litellm model name, repeatable (default: the offline baseline citebench/bm25); "
        "answers:FILE scores answers produced elsewhere (JSON lines {id, answer[, task]})",
    )
    group.addoption(
        "--citebench-api-base", metavar="URL", help="API base for OpenAI-compatible servers"
    )
    group.addoption(
        "--citebench-system-role",
        choices=("system", "user"),
        help="how system text is sent: as a system message (default) or folded into the first "
        "user turn, for chat templates that drop system messages",
    )
    group.addoption(
        "--citebench-estimate",
        action="store_true",
        help="with --collect-only: print the model calls and estimated cost of the selection",
    )
    group.addoption(
        "--citebench-max-cost",
        type=float,
        metavar="USD",
        help="stop a recording run before it spends more than this (litellm's local cost map)",
    )
    group.addoption(
        "--citebench-record",
        choices=RECORD_MODES,
        default=None,
        help="vcrpy record mode for remote models (default: none = replay only, no network)",
    )
    group.addoption(
        "--citebench-cassettes", metavar="DIR", help="cassette folder (default: ./cassettes)"
    )
    group.addoption(
        "--citebench-gate",
        action="append",
        metavar="SPEC",
        help="gate 'SUITE_GLOB:TASK:METRIC<=VALUE' (or >=), repeatable",
    )
    group.addoption(
        "--citebench-strict",
        action="store_true",
        help="hallucinated items fail (partial, unanswered and abstained never do)",
    )
    group.addoption("--citebench-results", metavar="FILE", help="write JSON-lines results here")
    group.addoption(
        "--citebench-concurrency", type=int, metavar="N", help="model calls in flight (16)"
    )
    group.addoption(
        "--citebench-temperature", type=float, metavar="T", help="sampling temperature (1.0)"
    )
    group.addoption("--citebench-max-tokens", type=int, metavar="N", help="max tokens (256)")
    group.addoption(
        "--citebench-top-p", type=float, metavar="P", help="nucleus sampling top_p (0.95)"
    )
    group.addoption(
        "--citebench-param",
        action="append",
        metavar="KEY=VALUE",
        help="extra litellm completion argument (JSON value), repeatable; e.g. seed=7",
    )
    group.addoption("--citebench-retries", type=int, metavar="N", help="retries per call (2)")
    group.addoption("--citebench-timeout", type=float, metavar="S", help="per-call timeout (120)")
    group.addoption("--citebench-task", action="append", metavar="TASK", help="only these tasks")
    group.addoption(
        "--citebench-max-errors",
        type=int,
        metavar="N",
        help="stop the run once more than N items ended in an error (a provider that is down)",
    )
    group.addoption(
        "--citebench-resume",
        metavar="RESULTS",
        help="skip the items this results file already finished (errors run again) and "
        "aggregate them with the rest, as if the run had never stopped",
    )
    group.addoption(
        "--citebench-rag",
        action="append",
        choices=SETTINGS["rag"].choices,
        help="wrap every model in RAG: naive (BM25 top-2) or advanced (dense + trained "
        "cross-encoder); repeatable, 'none' keeps the plain model beside it",
    )
    group.addoption("--citebench-rag-k", type=int, metavar="K", help="papers retrieved (2 / 40)")
    group.addoption(
        "--citebench-mailto", metavar="EMAIL", help="contact for Crossref's polite pool"
    )
    group.addoption(
        "--citebench-show",
        type=int,
        metavar="N",
        help="worst answers shown per task (compact tables) or per suite x task (full tables and "
        "the reports) (2; 0: none)",
    )
    group.addoption(
        "--citebench-tables",
        choices=SETTINGS["tables"].choices,
        help="terminal tables: compact (default: one row per suite x task x model, worst answers "
        "per task) or full (per-final-stage rows, worst answers per suite x task)",
    )
    # -- reports, baseline regression, sharding (pytest_citebench.reports/compare/sharding) --
    group.addoption(
        "--citebench-html", metavar="FILE", help="write a self-contained HTML report here"
    )
    group.addoption(
        "--citebench-markdown",
        metavar="FILE",
        help="write a Markdown summary here (appends when FILE is $GITHUB_STEP_SUMMARY)",
    )
    group.addoption(
        "--citebench-baseline",
        metavar="RESULTS",
        help="compare with this results file (paired, per suite x task); a metric significantly "
        "worse by more than the tolerance fails the run",
    )
    group.addoption(
        "--citebench-tolerance",
        type=float,
        metavar="T",
        help="worsening allowed against the baseline, as a share (0.02 = 2 points; default 0)",
    )
    group.addoption(
        "--citebench-correction",
        choices=SETTINGS["correction"].choices,
        help="adjust the baseline comparison's p-values over all tested suite x task x metric: "
        "holm (default; family-wise), bh (false discovery rate) or none",
    )
    group.addoption(
        "--citebench-shard",
        metavar="I/N",
        help="run only shard I of N (1-based; items split by a hash of suite::task::item id); "
        "combine shard results with 'python -m pytest_citebench merge'",
    )


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
    from pytest_citebench.session import SESSION_KEY, CitebenchSession

    for task in registry.names():
        config.addinivalue_line("markers", f"{task}: citebench task {task}")
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
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No paths given: the suites are the tests (not the project's own tests/ folder).
        config.args = [str(p) for p in session.options.suites if p.exists()]


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
    """Deselect other shards' items, then the ones ``--citebench-resume`` already finished;
    both show as deselected, so the counts stay honest."""
    cb = _session(config) if _active(config) else None
    if cb is None:
        return
    if cb.options.shard is not None:
        # Before --citebench-resume: a resumed shard skips only its own finished items.
        from pytest_citebench.sharding import split

        kept, dropped = split(items, cb.options.shard)
        config.stash[_SHARD_DESELECTED] = len(dropped)
        if dropped:
            items[:] = kept
            config.hook.pytest_deselected(items=dropped)
    if not cb.resumed:
        return
    done = []
    for item in items:
        record = cb.resumed.get(item.nodeid)
        job = getattr(item, "job", None)
        if record is None:
            continue
        stale = cb.stale_reason(record, job) if job is not None else None
        if stale is None:
            done.append(item)
        else:  # scored against other golds or rules: run again, and said in the summary
            cb.stale_resumed[item.nodeid] = stale
    if cb.is_worker and cb.stale_resumed:
        config.workeroutput[_STALE_KEY] = dict(cb.stale_resumed)  # type: ignore[attr-defined]
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
            cb.replay_resumed([item.nodeid for item in done])


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
        cb.shard_expected = expected


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A ``suite.toml`` is a test file only under ``--citebench``; plain pytest never sees it."""
    if file_path.name != "suite.toml" or not _active(parent.config):
        return None
    from pytest_citebench.items import SuiteFile

    return SuiteFile.from_parent(parent, path=file_path)


def _session(config: pytest.Config) -> Any:
    from pytest_citebench.session import SESSION_KEY

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
    cb.start_results()
    _drop_per_test_log_capture(session)
    cb.tune_gc()
    cb.prefetch(session)
    try:
        result = yield
    finally:
        # Stop the engine before anything else runs: leftover prefetched calls (after -x or
        # Ctrl-C) must not race the rest of the session.
        cb.close()
    if not cb.is_worker:
        # Only once the items ended normally: an interrupted run unwinds with SIGTERM as it was,
        # so a second one still stops it.
        _hold_sigterm(cb)
        # Gates fail the run through testsfailed: by sessionfinish it is too late to change it.
        failed = cb.finish()
        # Baseline regressions fail it the same way; then the HTML / Markdown reports.
        failed += cb.finish_reports()
        # A shard sees a share of the items: its gates and deltas are printed, and the merge
        # of all shards decides (python -m pytest_citebench merge).
        if cb.options.shard is None:
            session.testsfailed += failed
        # A results file or report that could not be written fails any run, a shard's too.
        session.testsfailed += len(cb.output_errors)
    return result


_LOG_OPTIONS = ("log_level", "log_cli_level", "log_file", "log_file_level")


def _drop_per_test_log_capture(session: pytest.Session) -> None:
    """pytest's log capture walks every logger in the process three times per test phase; once
    litellm and torch are imported that is ~500 loggers and 1.5 ms a test: 70 s of a 46,000-case
    run, more than the cases themselves. A citebench case logs nothing a reader needs (its
    record says what happened), so when every collected test is one and no ``--log-*`` option
    or ``log_cli`` asks for logs, the logging plugin is unregistered for the run."""
    from pytest_citebench.items import BadSuite, CaseItem, SkippedSwap

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


class _ControllerHooks:
    """Hooks that need the session; registered only when --citebench is on, on the controller."""

    def __init__(self, cb: Any) -> None:
        self.cb = cb

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        from pytest_citebench.items import case_record

        found = case_record(report)
        if found is not None:
            self.cb.add_record(*found)
            reason = self.cb.should_stop()
            if reason:
                self._stop(report, reason)

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
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: count the resumed items it deselected, once (every worker
        collects the same items and so deselects the same ones)."""
        output = getattr(node, "workeroutput", None) or {}
        nodeids = output.get(_RESUMED_KEY)
        if nodeids is not None and not self.cb.resumed_replayed:
            self.cb.replay_resumed(list(nodeids))
        stale = output.get(_STALE_KEY)
        if isinstance(stale, dict):
            self.cb.stale_resumed.update(stale)
        expected = output.get(_SHARD_EXPECTED_KEY)
        if isinstance(expected, int):
            self.cb.shard_expected = expected  # every worker collects the same items


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """A passed case that was not correct shows its outcome's letter and count, not a dot."""
    if report.when != "call" or not report.passed or not _active(config):
        return None
    from pytest_citebench.items import case_record

    found = case_record(report)
    return _CATEGORIES.get(str(found[0].get("outcome"))) if found else None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Controller only: under ``--collect-only`` just the estimate, if asked (no model is
    called); otherwise the summary, slow-model warnings and cassette misses."""
    cb = _session(config) if _active(config) else None
    if cb is None or cb.is_worker:
        return
    if config.option.collectonly:
        if config.getoption("citebench_estimate"):
            from pytest_citebench.estimate import estimate, lines
            from pytest_citebench.items import CaseItem

            session = terminalreporter._session
            jobs = [i.job for i in (session.items if session else []) if isinstance(i, CaseItem)]
            terminalreporter.write_sep("-", "citebench estimate (no model was called)")
            for line in lines(estimate(jobs)):
                terminalreporter.write_line(line)
        return
    from pytest_citebench.diagnostics import latency_warnings, miss_report
    from pytest_citebench.reports.summary import write_summary

    write_summary(terminalreporter, cb)
    if cb.stale_resumed:
        from collections import Counter

        why = Counter(cb.stale_resumed.values())
        terminalreporter.write_line(
            f"citebench: ran {len(cb.stale_resumed)} item(s) of --citebench-resume "
            f"{cb.options.resume} again: recorded under another version ("
            + "; ".join(f"{reason}: {n}" for reason, n in sorted(why.items()))
            + ")",
            yellow=True,
        )
    for error in cb.output_errors:
        terminalreporter.write_line(f"ERROR {error}", red=True)
    for line in latency_warnings(cb.models, cb.records):
        terminalreporter.write_line(line, yellow=True)
    misses = miss_report(
        cb.records, [str(a) for a in cb.config.invocation_params.args], cb.command_settings()
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
    matrix wider than a small suite stays green."""
    config = session.config
    cb = _session(config) if _active(config) else None
    if (
        cb is not None
        and cb.options.shard is not None
        and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED
        and config.stash.get(_SHARD_DESELECTED, 0) > 0
    ):
        session.exitstatus = pytest.ExitCode.OK


def pytest_unconfigure(config: pytest.Config) -> None:
    """Reached even when the run stopped early and ``finish`` never closed the results file."""
    cb = _session(config)
    if cb is not None:
        cb.close()
        cb.close_results()
    remove = config.stash.get(_LOG_SCRUBBER, None)
    if remove is not None:
        remove()
        del config.stash[_LOG_SCRUBBER]
    _restore_sigterm(config)
