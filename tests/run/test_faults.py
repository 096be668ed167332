"""Every scripted fault of the loopback stub ends as its documented outcome (docs/faults.md).

One in-process pytester run covers the whole table: a generated suite has one item per row, the
stub reads the row from the prompt and scripts that row's faults attempt by attempt. Each row is
then its own test, reading that run's results file, cassettes and the stub's arrival times.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_citebench.models import RetryPolicy
from pytest_citebench.models.litellm_backend import litellm, retryable
from pytest_citebench.papers.reasons.tasks import text_metrics
from pytest_citebench.recording import cassette_path
from pytest_citebench.testing.stubserver import Fault, StubServer
from tests.conftest import REPO, run_stub


def warm_imports() -> None:
    """pytester's in-process runs drop the modules first imported during a run, so each run
    would import them again on the engine's event loop, inside its first timed calls: litellm's
    ~40 lazy modules on the first call and nltk (2 s) on the first score. That stalls every call
    in flight and blurs timeouts and retry gaps. Import them once, here."""
    litellm().completion(
        model="openai/warmup", messages=[{"role": "user", "content": "x"}], mock_response="ok"
    )
    text_metrics("warm up the metrics", "warm up")


warm_imports()

KEY = "sk-proj-CITEBENCHfaultsSECRET0123456789abcdef"
RETRIES = 2  # --citebench-retries: a permanent fault is tried RETRIES + 1 times
TIMEOUT = 1.0  # --citebench-timeout
RETRY_AFTER = 1.0
DOCS = REPO / "docs" / "faults.md"


@dataclass(frozen=True)
class Row:
    """One fault and the outcome the plugin documents for it."""

    name: str  # the item id, and the row's name in docs/faults.md
    faults: tuple[Fault | None, ...]  # attempt by attempt; past the end: the last one forever
    outcome: str  # "correct" or "error"
    attempts: int
    message: str = ""  # in the item's error
    then_ok: bool = False  # the script ends with a success (None)

    def fault(self, attempt: int) -> Fault | None:
        return self.faults[min(attempt, len(self.faults) - 1)]


def _ok(*faults: Fault) -> tuple[Fault | None, ...]:
    return (*faults, None)


def _row_always(name: str, fault: Fault, message: str, attempts: int = RETRIES + 1) -> Row:
    return Row(name, (fault,), "error", attempts, message)


def _row_then_ok(name: str, fault: Fault) -> Row:
    return Row(name, _ok(fault), "correct", 2, then_ok=True)


ROWS: tuple[Row, ...] = (
    Row(
        "status-429-retry-after-then-ok",
        _ok(Fault("status", status=429, retry_after=RETRY_AFTER)),
        "correct",
        2,
        then_ok=True,
    ),
    _row_always(
        "status-429-always", Fault("status", status=429, retry_after=RETRY_AFTER), "RateLimitError"
    ),
    _row_always("status-500-always", Fault("status", status=500), "InternalServerError"),
    _row_always("status-502-always", Fault("status", status=502), "BadGatewayError"),
    _row_always("status-503-always", Fault("status", status=503), "ServiceUnavailableError"),
    _row_then_ok("status-500-then-ok", Fault("status", status=500)),
    _row_then_ok("status-502-then-ok", Fault("status", status=502)),
    _row_then_ok("status-503-then-ok", Fault("status", status=503)),
    _row_always("status-400", Fault("status", status=400), "BadRequestError", attempts=1),
    _row_always("status-401", Fault("status", status=401), "AuthenticationError", attempts=1),
    _row_always("reset-always", Fault("reset"), "Connection error"),
    _row_then_ok("reset-then-ok", Fault("reset")),
    _row_always("timeout-always", Fault("timeout", delay=2 * TIMEOUT), "Timeout"),
    _row_then_ok("timeout-then-ok", Fault("timeout", delay=2 * TIMEOUT)),
    _row_always("malformed-json-always", Fault("malformed_json"), "Expecting value"),
    _row_then_ok("malformed-json-then-ok", Fault("malformed_json")),
    _row_always("empty-choices", Fault("empty_choices"), "the response has no choices", attempts=1),
    _row_always("truncated-always", Fault("truncated_stream"), "Connection error"),
    _row_then_ok("truncated-then-ok", Fault("truncated_stream")),
    Row(
        "slow-first-byte-within-timeout", (Fault("slow_first_byte", delay=0.3), None), "correct", 1
    ),
    _row_always(
        "slow-first-byte-past-timeout", Fault("slow_first_byte", delay=2 * TIMEOUT), "Timeout"
    ),
    # Each byte within the timeout, the whole answer far past it: the timeout is a deadline.
    _row_always(
        "drip-past-timeout",
        Fault("drip", delay=0.25),
        "CallTimeout: no complete answer within --citebench-timeout 1 s",
    ),
)
BY_NAME = {row.name: row for row in ROWS}
ERRORS = sum(row.outcome == "error" for row in ROWS)


def write_suite(root: Path, name: str, ids: list[str]) -> Path:
    """A one-task (indirect) suite whose item ``i`` expects the title ``Paper i``."""
    folder = root / "suites" / name
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(
        f'name = "{name}"\nversion = 1\ndescription = "generated by tests/run/test_faults.py"\n'
        'tasks = ["indirect"]\n\n[source]\npaper = "test"\nurl = "https://example.invalid"\n'
        'licence = "CC0-1.0"\n'
    )
    lines = [
        json.dumps(
            {
                "id": i,
                "citing_title": "Faults",
                "sentence": f"row {i}",
                "cited_title": f"Paper {i}",
                "cited_authors": "A. Author",
            }
        )
        for i in ids
    ]
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def row_of(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"]).removeprefix("row ")


def answer(request: dict[str, Any]) -> str:
    return f"Paper {row_of(request)}"


@dataclass
class Script:
    """The stub's fault script: each row's faults in order, and when each attempt arrived."""

    arrivals: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, index: int, request: dict[str, Any]) -> Fault | None:
        name = row_of(request)
        with self.lock:
            times = self.arrivals.setdefault(name, [])
            times.append(time.monotonic())
            attempt = len(times) - 1
        return BY_NAME[name].fault(attempt)


@dataclass
class FaultRun:
    ret: int
    stdout: str
    records: dict[str, dict[str, Any]]
    cassettes: dict[str, list[dict[str, Any]]]
    arrivals: dict[str, list[float]]


_RUN: list[FaultRun] = []


@pytest.fixture
def fault_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> FaultRun:
    """The one run of the whole table (made by whichever row's test comes first)."""
    if _RUN:
        return _RUN[0]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    write_suite(pytester.path, "faults", [row.name for row in ROWS])
    script = Script()
    with StubServer(answer, faults=script) as server:
        result = run_stub(
            pytester,
            server.url,
            "--citebench-record",
            "all",
            "--citebench-retries",
            str(RETRIES),
            "--citebench-timeout",
            str(TIMEOUT),
            "--citebench-concurrency",
            str(len(ROWS)),
            "--citebench-results",
            "faults.jsonl",
        )
    records = {}
    for line in (pytester.path / "faults.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "item":
            records[record["item_id"]] = record
    cassettes = {}
    for row in ROWS:
        path = cassette_path(
            pytester.path / "cassettes", "openai/stub", "faults", 1, "indirect", row.name
        )
        if path.is_file():
            cassettes[row.name] = yaml.safe_load(path.read_text())["interactions"]
    run = FaultRun(int(result.ret), "\n".join(result.outlines), records, cassettes, script.arrivals)
    _RUN.append(run)
    return run


@pytest.mark.parametrize("name", [row.name for row in ROWS])
def test_fault_ends_as_documented(fault_run: FaultRun, name: str) -> None:
    row = BY_NAME[name]
    record = fault_run.records[name]
    assert record["outcome"] == row.outcome, record.get("error")
    assert len(fault_run.arrivals[name]) == row.attempts
    if row.outcome == "error":
        # An error is never scored: no answer, no metrics, and it is said why.
        assert record["answer"] == "" and record["metrics"] == {}
        assert record["error"].startswith("openai/stub: ")
        assert row.message in record["error"]
        if row.attempts > 1:
            assert f"(after {row.attempts} attempts)" in record["error"]
        else:
            assert "(after" not in record["error"]  # not retried
        assert "Traceback" not in record["error"]
        assert name not in fault_run.cassettes  # nothing recorded from a failure
    else:
        assert record["answer"] == f"Paper {name}"
        # Only the successful response is in the cassette: no 429/5xx, no malformed 200.
        interactions = fault_run.cassettes[name]
        assert len(interactions) == 1
        response = interactions[0]["response"]
        assert response["status"]["code"] == 200
        assert json.loads(response["body"]["string"])["choices"][0]["message"]["content"] == (
            f"Paper {name}"
        )


def test_retry_waits_at_least_retry_after(fault_run: FaultRun) -> None:
    first, second = fault_run.arrivals["status-429-retry-after-then-ok"]
    assert second - first >= RETRY_AFTER
    always = fault_run.arrivals["status-429-always"]
    assert all(b - a >= RETRY_AFTER for a, b in itertools.pairwise(always))


def test_backoff_grows_between_attempts(fault_run: FaultRun) -> None:
    # base 0.5 s x 2**attempt x jitter in [0.5, 1]: at least 0.25 s, then at least 0.5 s.
    for name in ("status-500-always", "status-502-always", "status-503-always"):
        a, b, c = fault_run.arrivals[name]
        assert b - a >= 0.25 and c - b >= 0.5, (name, b - a, c - b)


def test_errors_counted_per_model_and_fail_the_run(fault_run: FaultRun) -> None:
    assert fault_run.ret == pytest.ExitCode.TESTS_FAILED
    assert f"ERROR openai/stub: {ERRORS} item(s) ended in an error" in fault_run.stdout
    assert sum(r["outcome"] == "error" for r in fault_run.records.values()) == ERRORS
    assert KEY not in fault_run.stdout


def test_docs_table_lists_every_row() -> None:
    """docs/faults.md and this file describe the same faults, row for row."""
    section = DOCS.read_text().split("## Fault table", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.MULTILINE)
    assert documented == [row.name for row in ROWS]


def test_max_errors_stops_a_run_when_the_provider_is_down(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    ids = [f"down-{i:02d}" for i in range(12)]
    write_suite(pytester.path, "down", ids)
    always_503: Callable[[int, dict[str, Any]], Fault] = lambda i, r: Fault("status", status=503)  # noqa: E731
    with StubServer(answer, latency=0.05, faults=always_503) as server:
        result = run_stub(
            pytester,
            server.url,
            "--citebench-record",
            "all",
            "--citebench-retries",
            "0",
            "--citebench-concurrency",
            "1",
            "--citebench-max-errors",
            "2",
            "--citebench-results",
            "down.jsonl",
        )
        calls = server.calls
    assert result.ret == pytest.ExitCode.INTERRUPTED  # stopped early, and it fails the run
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 3  # the third error is more than 2: stop there
    assert calls < len(ids)  # the rest never reached the provider
    result.stdout.fnmatch_lines(
        [
            "*ERROR openai/stub: 3 item(s) ended in an error*",
            "*Interrupted: citebench: 3 items ended in an error, more than --citebench-max-errors 2;"
            " the provider looks down*",
        ]
    )
    lines = (pytester.path / "down.jsonl").read_text().splitlines()
    assert len([r for r in map(json.loads, lines) if r["type"] == "item"]) == 3


# -- the retry policy and the classification, without a server ---------------------------------


def test_retry_policy_backoff_jitter_cap_and_retry_after() -> None:
    policy = RetryPolicy(retries=5, base_delay=0.5, max_delay=4.0)
    for attempt in range(6):
        for _ in range(50):
            delay = policy.delay(attempt, None)
            full = min(4.0, 0.5 * 2**attempt)
            assert full / 2 <= delay <= full
    assert policy.delay(0, 3.0) == 3.0  # Retry-After wins when longer than the backoff
    assert policy.delay(0, 3600.0) == 4.0  # but never past max_delay
    assert policy.delay(3, 0.01) >= 2.0  # a short Retry-After does not cut the backoff


@pytest.mark.parametrize(
    ("status", "retry"),
    [(429, True), (500, True), (502, True), (503, True), (400, False), (401, False), (404, False)],
)
def test_status_classification(status: int, retry: bool) -> None:
    import httpx
    import litellm

    response = httpx.Response(
        status, headers={"retry-after": "7"}, request=httpx.Request("POST", "http://127.0.0.1/v1")
    )
    kinds = {
        429: litellm.RateLimitError,
        500: litellm.InternalServerError,
        502: litellm.BadGatewayError,
        503: litellm.ServiceUnavailableError,
        400: litellm.BadRequestError,
        401: litellm.AuthenticationError,
        404: litellm.NotFoundError,
    }
    exc = kinds[status](message="x", llm_provider="openai", model="stub", response=response)
    can, after = retryable(exc)
    assert can is retry
    if retry:
        assert after == 7.0
