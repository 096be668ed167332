"""Record against a loopback stub, replay with it stopped, and what a miss or a failure looks like."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest

from pytest_citebench.recording import cassette_path, scrub_text, snapshot_secrets
from pytest_citebench.testing.stubserver import Fault, StubServer
from tests.conftest import outcomes, run_stub

SECRET = "sk-proj-CITEBENCHtestSECRET0123456789abcdef"


def answer(request: dict) -> str:
    """Right for one item, a wrong title for the rest, 'pass' for the direct task."""
    system = request["messages"][0]["content"]
    if system.startswith("Who were the authors"):
        return "Pass."
    if "attention mechanisms" in request["messages"][1]["content"]:
        return 'Title: "Attention Is All You Need"'
    return "Deep Residual Learning for Image Recognition. This paper introduced ResNets."


def items(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return {
        (r["task"], r["item_id"]): (r["outcome"], r["answer"])
        for r in records
        if r["type"] == "item"
    }


def test_record_replay_round_trip_miss_and_no_secrets(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with StubServer(answer) as server:
        url = server.url
        recorded = run_stub(
            pytester, url, "--citebench-record", "once", "--citebench-results", "rec.jsonl"
        )
        assert server.calls == 8
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    assert outcomes(recorded) == {"passed": 3, "hallucinated": 1, "abstained": 4}
    cassette = cassette_path(
        pytester.path / "cassettes", "openai/stub", "tiny", 1, "indirect", "2001.00001-s1"
    )
    assert cassette.is_file()
    relative = cassette.relative_to(pytester.path).as_posix()
    assert re.fullmatch(
        r"cassettes/openai--stub~[0-9a-f]{16}/tiny/v1/indirect/2001\.00001-s1\.yaml", relative
    )

    # Server stopped, no key: replay gives the same answers.
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run_stub(pytester, url, "--citebench-results", "rep.jsonl")
    assert outcomes(replayed) == outcomes(recorded)
    assert items(pytester.path / "rep.jsonl") == items(pytester.path / "rec.jsonl")
    # Usage says which calls were replayed: their latency is the replay's, not the provider's.
    usages = {
        name: [
            r["usage"]
            for r in map(json.loads, (pytester.path / name).read_text().splitlines())
            if r["type"] == "item"
        ]
        for name in ("rec.jsonl", "rep.jsonl")
    }
    assert all(u["replayed"] == u["calls"] >= 1 for u in usages["rep.jsonl"])
    assert not any("replayed" in u for u in usages["rec.jsonl"])
    replayed.stdout.fnmatch_lines(["*openai/stub*(replay)*(replay)"])
    assert items(pytester.path / "rep.jsonl")[("indirect", "2001.00001-s1")] == (
        "correct",
        "Attention Is All You Need",
    )

    # The key is nowhere in what was written.
    for path in pytester.path.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert SECRET not in text, path
            assert "authorization" not in text.lower() or path.suffix != ".yaml", path

    # A changed prompt (here: the sampling temperature in the body) is a miss, never a wrong replay.
    changed = run_stub(pytester, url, "--citebench-temperature", "0")
    assert changed.ret == pytest.ExitCode.TESTS_FAILED
    assert changed.parseoutcomes()["failed"] == 8
    changed.stdout.fnmatch_lines(
        [
            "*cassette miss: *2001.00001-s1.yaml has no recording of this exact request*",
            "*differs from the recording: temperature: recorded 1.0, now 0.0*",
        ]
    )
    # One record command for the whole run, repeating every option that shaped the requests.
    changed.stdout.fnmatch_lines(
        [
            "*8 items had no recording of their request:*",
            "*8 x differs from the recording: temperature: recorded 1.0, now 0.0*",
            # The replay fix first: the recorded sampling, no key, nothing overwritten ...
            "they were recorded with other sampling settings: replay them as recorded",
            "(no key, no network, nothing overwritten):",
            f"  pytest --citebench --citebench-model openai/stub --citebench-api-base {url} *"
            "'suites/tiny/suite.toml::direct::2001.00001-s1[[]openai/stub]'*"
            "--citebench-temperature 1.0",
            # ... then recording anew, which says that it overwrites, with the run's sampling.
            "or record them anew with this run's settings (needs the provider's key and "
            "network; 'all' OVERWRITES their cassettes, the ones recorded as above included):",
            f"*pytest --citebench --citebench-model openai/stub --citebench-api-base {url}*"
            "--citebench-temperature 0*--citebench-top-p 0.95 --citebench-max-tokens 256*"
            "'suites/tiny/suite.toml::direct::2001.00001-s1[[]openai/stub]'*--citebench-record all",
        ]
    )
    assert changed.stdout.str().count("--citebench-record all") == 1
    replay = next(
        line for line in changed.stdout.lines if line.endswith("--citebench-temperature 1.0")
    )
    assert "--citebench-record" not in replay and "--citebench-temperature 0 " not in replay


def test_missing_cassette_is_an_error_not_a_pass(pytester: pytest.Pytester, tiny: Path) -> None:
    result = run_stub(pytester, "http://127.0.0.1:9/v1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert outcomes(result) == {"failed": 8}
    result.stdout.fnmatch_lines(
        [
            "*cassette miss: *does not exist*",
            "*record them (needs the provider's key and network; 'all' overwrites any cassette*",
            "*--citebench-record all",
        ]
    )


def test_provider_failure_after_retries_is_an_error(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with StubServer(answer, faults=lambda i, req: Fault("status", status=503)) as server:
        result = run_stub(
            pytester,
            server.url,
            "--citebench-record",
            "all",
            "--citebench-retries",
            "1",
            "--citebench-task",
            "indirect",
        )
        assert server.calls == 8  # 4 items x (1 try + 1 retry)
    assert outcomes(result) == {"failed": 4}
    result.stdout.fnmatch_lines(["*openai/stub: ServiceUnavailableError*(after 2 attempts)*"])
    assert not list(
        (pytester.path / "cassettes").rglob("*.yaml")
    )  # nothing recorded from a failure


def test_calls_are_concurrent(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    arrivals: list[float] = []
    lock = threading.Lock()

    def timed(request: dict) -> str:
        with lock:
            arrivals.append(time.monotonic())
        return "pass"

    with StubServer(timed, latency=0.5) as server:
        result = run_stub(
            pytester, server.url, "--citebench-record", "all", "--citebench-concurrency", "8"
        )
    assert outcomes(result) == {"abstained": 8}
    # Serial calls would arrive >= 0.5 s apart; concurrent ones arrive together.
    assert max(arrivals) - min(arrivals) < 0.4


def test_scrub_text_removes_env_keys_and_key_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "zzzz-custom-secret-value")
    text = "a zzzz-custom-secret-value b sk-ant-abcdefghijklmnopqrstuvwx c AIzaSyA1234567890abcdefghijklmnopqrstu"
    snapshot_secrets()  # the plugin snapshots the environment when recording starts
    scrubbed = scrub_text(text)
    assert "zzzz-custom" not in scrubbed and "sk-ant" not in scrubbed and "AIza" not in scrubbed
    assert scrubbed.count("<REDACTED>") == 3


def test_replay_calls_litellm_synchronously_and_recording_asynchronously(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Replay waits on no network, so the async path's thread-pool hop is only cost; a recording
    run must stay async, or one slow provider call would stall every other item's."""
    import asyncio

    from pytest_citebench.api import Hint, Message
    from pytest_citebench.models import Model
    from pytest_citebench.models import litellm_backend as backend

    calls: list[str] = []

    def sync(model: str, messages: object, **kwargs: object) -> backend.Completion:
        calls.append("sync")
        return backend.Completion("answer")

    async def asynchronous(model: str, messages: object, **kwargs: object) -> backend.Completion:
        calls.append("async")
        return backend.Completion("answer")

    monkeypatch.setattr(backend, "completion", sync)
    monkeypatch.setattr(backend, "acompletion", asynchronous)
    messages = [Message("user", "who wrote it?")]
    hint = Hint(task="direct", query="q", suite="s")
    for replay_only in (True, False):
        model = Model("openai/stub", replay_only=replay_only, needs_key=False)
        assert asyncio.run(model.complete(messages, hint=hint)) == "answer"
    assert calls == ["sync", "async"]


def test_replay_runs_each_case_on_pytests_thread_and_recording_ahead_on_the_engine(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay overlaps nothing, so a second thread only made the two take turns at the GIL;
    a recording run must keep calls in flight ahead of pytest, or it would be serial."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.makeconftest(
        """
        import threading

        def pytest_runtest_call(item):
            names = {t.name for t in threading.enumerate()}
            item.config._engine_seen = getattr(item.config, "_engine_seen", False) or (
                "citebench-engine" in names
            )

        def pytest_terminal_summary(terminalreporter, config):
            terminalreporter.write_line(f"engine thread: {config._engine_seen}")
        """
    )
    with StubServer(answer, latency=0.3) as server:
        recorded = run_stub(pytester, server.url, "--citebench-record", "once", "-k", "indirect")
        url, peak, calls = server.url, server.peak_in_flight, server.calls
    recorded.stdout.fnmatch_lines(["engine thread: True"])
    assert calls >= 4 and peak >= 4  # one at a time would peak at 1
    replayed = run_stub(pytester, url, "-k", "indirect")  # the server is gone: a replay or a miss
    replayed.stdout.fnmatch_lines(["engine thread: False"])
    assert outcomes(replayed) == outcomes(recorded)
