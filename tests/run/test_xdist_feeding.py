"""The controller keeps each xdist worker's queue deep enough for the worker to keep its share of
the run's calls in flight (``workers.deep_load_scheduling``)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_citebench.run.workers import deep_load_scheduling, prefetch_window


class FakeNode:
    """What xdist's scheduler asks of a worker: take tests, shut down."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _run(sched: Any, cases: int, duration: float) -> list[int]:
    """Two workers finish their cases in turn, each taking ``duration``; returns the shortest
    queue a worker had while the controller still held cases."""
    nodes = [FakeNode("gw0"), FakeNode("gw1")]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, [f"t{i}" for i in range(cases)])
    sched.schedule()
    shortest: list[int] = []
    while any(sched.node2pending[n] for n in nodes):
        for node in nodes:
            queue = sched.node2pending[node]
            if queue:
                sched.mark_test_complete(node, queue[0], duration)
                if sched.pending:
                    shortest.append(len(sched.node2pending[node]))
    assert sorted(nodes[0].sent + nodes[1].sent) == list(range(cases))  # each case once
    assert all(n.shutting_down for n in nodes)
    return shortest


@pytest.fixture
def xdist_config(pytester: pytest.Pytester) -> pytest.Config:
    pytest.importorskip("xdist")
    return pytester.parseconfig("--tx", "2*popen")


def test_a_worker_queue_never_falls_below_its_prefetch_window_while_cases_remain(
    xdist_config: pytest.Config,
) -> None:
    from xdist.scheduler import LoadScheduling

    concurrency = 64
    window = prefetch_window(concurrency // 2)
    deep = _run(deep_load_scheduling(xdist_config, None, concurrency, 2), 3000, 0.4)
    assert min(deep) >= window - 1  # one case just finished, the refill comes with the next
    # xdist's own: a test of 0.1 s or more counts as long-running, so a queue is run down to
    # two cases before it is refilled (what starved the workers' engines).
    plain = _run(LoadScheduling(xdist_config, None), 3000, 0.4)
    assert min(plain) <= 2


def test_fast_cases_and_small_runs_are_still_sent_whole(xdist_config: pytest.Config) -> None:
    sched = deep_load_scheduling(xdist_config, None, 8, 2)
    assert _run(sched, 3, 0.0) == []  # fewer cases than a window: all sent at once


_SPY = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_xdist_make_scheduler(config, log):
    outcome = yield
    with open("scheduler.txt", "w") as f:
        f.write(type(outcome.get_result()).__name__)
"""


@pytest.mark.parametrize(
    ("dist", "expected"), [("load", "DeepLoadScheduling"), ("loadfile", "LoadFileScheduling")]
)
def test_a_citebench_run_under_xdist_uses_the_deep_queues_for_load_only(
    pytester: pytest.Pytester, tiny: Any, dist: str, expected: str
) -> None:
    pytest.importorskip("xdist")
    pytester.makeconftest(_SPY)
    result = pytester.runpytest_subprocess(
        "--citebench", "-p", "no:cacheprovider", "-n", "2", "--dist", dist
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert (pytester.path / "scheduler.txt").read_text() == expected
