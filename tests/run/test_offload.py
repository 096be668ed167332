"""The built-in models' cases solved in forked processes (``--citebench-processes``, run/offload.py):
the same records as in pytest's own process, the work really elsewhere, a dead child costing
nothing but time (with a warning), and the option refused where it cannot apply.

The runs are in-process pytester runs on a real suite (reasons/biomolecules, 27 items, direct and
indirect: 54 cases, spans of 16 so that several are in flight); a plugin wraps ``run_item`` to
write down which process ran each case.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

# Imported here, before any in-process run: a module first imported inside one is dropped after
# it, and the spy of the next run would patch the dropped module the children never see.
from pytest_citebench.run import offload, runner, scheduler  # noqa: F401
from tests.conftest import REPO

SUITE = REPO / "suites" / "reasons" / "biomolecules"

# A plugin that appends "<pid> <nodeid>" for each case it runs; with CITEBENCH_TEST_DIE set, a
# child (any process but the one that configured the run) exits hard at its third case, as a
# child killed for memory would. It puts ``run_item`` back when the run ends.
_SPY = """
import os
from pytest_citebench.run import runner, scheduler

_real = runner.run_item


def pytest_configure(config):
    parent, seen = os.getpid(), []

    async def run_item(job, recorder):
        seen.append(job.nodeid)
        if os.environ.get("CITEBENCH_TEST_DIE") and os.getpid() != parent and len(seen) == 3:
            os._exit(9)
        with open(os.environ["CITEBENCH_TEST_PIDS"], "a") as f:
            f.write(f"{os.getpid()} {job.nodeid}\\n")
        return await _real(job, recorder)

    runner.run_item = scheduler.run_item = run_item


def pytest_unconfigure(config):
    runner.run_item = scheduler.run_item = _real
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Any:
    pytester.makepyfile(offload_spy=_SPY)
    pytester.syspathinsert()
    monkeypatch.setattr(offload, "SPAN", 16)
    pids = pytester.path / "pids.txt"
    monkeypatch.setenv("CITEBENCH_TEST_PIDS", str(pids))

    def go(name: str, *args: str) -> tuple[pytest.RunResult, list[dict[str, Any]], list[str]]:
        pids.write_text("")
        results = pytester.path / f"{name}.jsonl"
        outcome = pytester.runpytest_inprocess(
            "--citebench", str(SUITE), "-p", "no:cacheprovider",
            "--citebench-task", "direct", "--citebench-task", "indirect",
            f"--citebench-results={results}", "-p", "offload_spy", *args,
        )  # fmt: skip
        records = [json.loads(line) for line in results.read_text().splitlines()]
        for record in records:
            record.pop("duration", None)
        return outcome, records, pids.read_text().split()[::2]

    return go


def test_processes_give_the_same_records_and_the_work_runs_in_a_child(run: Any) -> None:
    inline, inline_records, inline_pids = run("inline", "--citebench-processes", "0")
    forked, forked_records, forked_pids = run("forked", "--citebench-processes", "1")
    assert inline.ret == forked.ret == 0
    cases = len(inline_pids)
    assert cases == 54
    assert set(inline_pids) == {str(os.getpid())}  # in-process run: pytest's own process
    assert len(forked_pids) == cases and str(os.getpid()) not in forked_pids
    assert len(set(forked_pids)) == 1  # one child ran every case
    assert forked_records == inline_records  # aggregates included, in the same order
    # A second run into the same file right after: no child of the first holds its lock.
    again, again_records, _ = run("forked", "--citebench-processes", "1")
    assert again.ret == 0 and again_records == inline_records


def test_a_child_that_dies_costs_only_time(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _, inline_records, _ = run("inline", "--citebench-processes", "0")
    monkeypatch.setenv("CITEBENCH_TEST_DIE", "1")
    outcome, records, pids = run("died", "--citebench-processes", "1")
    assert outcome.ret == 0
    assert records == inline_records
    # The child wrote two cases before dying; every case then ran in pytest's process.
    assert pids.count(str(os.getpid())) == 54
    outcome.stdout.fnmatch_lines(["*the process solving cases beside pytest failed*"])


def test_processes_are_refused_for_a_providers_model(pytester: pytest.Pytester) -> None:
    outcome = pytester.runpytest_inprocess(
        "--citebench", str(SUITE), "--citebench-model", "openai/gpt-4o-mini",
        "--citebench-processes", "1", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert outcome.ret == pytest.ExitCode.USAGE_ERROR
    outcome.stderr.fnmatch_lines(["*--citebench-processes 1: only the built-in models*"])


@pytest.mark.parametrize(
    ("cases", "cpus", "expected"),
    [(999, 8, 0), (1000, 1, 0), (1000, 2, 1), (5000, 4, 3), (50_000, 64, 4)],
)
def test_auto_leaves_a_core_to_pytest_and_skips_small_runs(
    monkeypatch: pytest.MonkeyPatch, cases: int, cpus: int, expected: int
) -> None:
    monkeypatch.setattr(offload, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(offload, "can_fork", lambda: True)
    assert offload.auto_processes(cases) == expected


def test_auto_is_off_where_fork_is_not_the_safe_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offload, "can_fork", lambda: False)
    monkeypatch.setattr(offload, "usable_cpus", lambda: 8)
    assert offload.auto_processes(50_000) == 0


def test_blocking_work_leaves_the_loop_unless_the_process_runs_one_case_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio
    import threading

    from pytest_citebench import models

    def thread() -> int:
        return threading.get_ident()

    here = threading.get_ident()
    assert asyncio.run(models.blocking(thread)) != here  # another case may need the loop
    monkeypatch.setattr(models, "_ONE_CASE_AT_A_TIME", False)
    models.one_case_at_a_time()  # what a child of run/offload.py calls first
    assert asyncio.run(models.blocking(thread)) == here
