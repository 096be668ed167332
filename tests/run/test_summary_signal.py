"""SIGTERM once every item has finished (a CI timeout that fires while the summary prints) is
held until the summary is complete: the verdict is printed, no raw KeyboardInterrupt
traceback, and the run exits 2 (interrupted)."""

from __future__ import annotations

from pathlib import Path

import pytest

_CONFTEST = """
import os
import signal

import pytest

# The signal as a CI runner sends it, whatever this test process inherited.
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.hookimpl(tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_sigterm_during_the_summary_still_prints_the_verdict(
    pytester: pytest.Pytester, tiny: Path, workers: str
) -> None:
    pytester.makeconftest(_CONFTEST)
    result = pytester.runpytest_subprocess(
        "--citebench", "-p", "no:cacheprovider", "-n", workers, "--citebench-results", "r.jsonl"
    )
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert out.count("citebench verdict: no gate set: nothing was judged") == 2
    result.stdout.fnmatch_lines(["*signal 15 arrived after the last item*exit 2*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED
    records = (pytester.path / "r.jsonl").read_text().splitlines()
    assert len(records) == 8 + 2  # every item and both aggregates: the run had finished
