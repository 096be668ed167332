"""Issue 36: what a replay that cannot play says, and that the commands it prints run as printed.

- a recording whose response body was changed after recording is said to exist, with its body
  not valid, never "no recording of this exact request";
- the printed command selects the missed items whatever the run's plugins: ``--lf`` only where
  pytest's cache plugin is on (tox's replays pass ``-p no:cacheprovider``), and never the whole
  suite folder beside a listed node id;
- a miss on the api base says which api base was recorded and replays with it;
- many misses are a count per reason, not a FAILURES entry each.

Every printed command is run here, as printed.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from pytest_citebench.recording import LAST_FAILED, Rerun, record_command, replay_command
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import FIXTURES, outcomes, run_stub, stub_args

KEY = "sk-test-not-a-real-key-0123456789"
INDIRECT = ("--citebench-task", "indirect")


@pytest.fixture
def synth(pytester: pytest.Pytester) -> Path:
    """The 40-item synth suite as suites/synth: more misses than a command lists."""
    target = pytester.path / "suites" / "synth"
    shutil.copytree(FIXTURES / "suites" / "synth", target, ignore=shutil.ignore_patterns("*.py"))
    return target


def printed(result: pytest.RunResult, after: str) -> list[str]:
    """The command printed on the line after the one containing ``after``, as argv less
    ``pytest``."""
    lines = result.stdout.lines
    index = next(i for i, line in enumerate(lines) if after in line)
    words = shlex.split(lines[index + 1])
    assert words[0] == "pytest", lines[index + 1]
    return words[1:]


REPLAY = "(no key, no network, nothing overwritten):"
RECORD = "'all' OVERWRITES their cassettes"


def _indirect_cassettes(root: Path) -> list[Path]:
    return sorted((root / "cassettes").rglob("indirect/*.yaml"))


def test_the_printed_fixes_run_as_printed_without_the_cache_plugin(
    pytester: pytest.Pytester, synth: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tox's replays pass ``-p no:cacheprovider``: the fix printed for 40 misses appended
    ``--lf``, which is then "unrecognized arguments" (exit 4). It now selects them with
    ``--citebench-resume`` on the run's own results file; both printed commands run."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with StubServer(lambda request: "pass") as server:
        url = server.url
        first = run_stub(pytester, url, *INDIRECT, "--citebench-record", "once")
        assert outcomes(first) == {"abstained": 40}
        monkeypatch.delenv("OPENAI_API_KEY")
        missed = run_stub(
            pytester,
            url,
            *INDIRECT,
            "--citebench-temperature",
            "0",
            "--citebench-results",
            "rep.jsonl",
        )
        assert "no:cacheprovider" in stub_args(url)
        assert missed.ret == pytest.ExitCode.TESTS_FAILED
        out = missed.stdout.str()
        assert "--lf" not in out
        replay, record = printed(missed, REPLAY), printed(missed, RECORD)
        for command in (replay, record):
            assert command[-4:-2] == ["--citebench-resume", "rep.jsonl"] or (
                command[-2:] == ["--citebench-temperature", "1.0"]
                and "--citebench-resume" in command
            ), command

        # The replay fix, as printed: the recorded sampling, no key, nothing recorded.
        saved = (pytester.path / "rep.jsonl").read_bytes()
        calls = server.calls
        replayed = pytester.runpytest(*replay)
        assert replayed.ret == pytest.ExitCode.OK, replayed.stdout.str()[-2000:]
        assert outcomes(replayed) == {"abstained": 40} and server.calls == calls

        # The record fix, as printed, from the same state: only the missed items, recorded.
        (pytester.path / "rep.jsonl").write_bytes(saved)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        recorded = pytester.runpytest(*record)
        assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()[-2000:]
        assert server.calls == calls + 40
    # What was recorded replays at this run's settings, with the stub stopped.
    monkeypatch.delenv("OPENAI_API_KEY")
    again = run_stub(pytester, url, *INDIRECT, "--citebench-temperature", "0")
    assert outcomes(again) == {"abstained": 40}


def _failures_section(lines: list[str]) -> list[str]:
    """The lines of pytest's FAILURES section, before its short test summary."""
    start = next(i for i, line in enumerate(lines) if " FAILURES " in line)
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return lines[start:end]


def test_many_misses_are_counted_per_reason_not_printed_one_failure_each(
    pytester: pytest.Pytester, synth: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,092 misses printed ~7,700 lines of FAILURES before the summary. The first three are
    shown in full; the others are one line each in the short test summary, counted per reason
    in the misses section (``-v`` shows every one)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with StubServer(lambda request: "pass") as server:
        url = server.url
        run_stub(pytester, url, *INDIRECT, "--citebench-record", "once")
    monkeypatch.delenv("OPENAI_API_KEY")
    missed = run_stub(pytester, url, *INDIRECT, "--citebench-max-tokens", "9")
    lines = missed.stdout.lines
    assert outcomes(missed) == {"failed": 40}
    assert sum(line.startswith("_____") for line in lines) == 3
    # The short test summary is not truncated on CI (pytest prints each whole message when CI
    # is set), so the misses shown in full are counted in the FAILURES section only.
    assert sum("cassette miss:" in line for line in _failures_section(lines)) == 3
    assert sum(line.startswith("FAILED ") for line in lines) == 40
    missed.stdout.fnmatch_lines(
        [
            "40 items had no recording of their request:",
            "  40 x differs from the recording: max_tokens: recorded 256, now 9",
            "(37 of them are left out of FAILURES above, one line each in the short test "
            "summary; -v shows them in full)",
        ]
    )
    # Before pytest's short summary (one entry per failure, whole messages on CI): few lines.
    summary = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    assert summary < 60, summary
    verbose = run_stub(pytester, url, *INDIRECT, "--citebench-max-tokens", "9", "-v")
    shown = _failures_section(verbose.stdout.lines)
    assert sum("cassette miss:" in line for line in shown) == 40
    assert "left out of FAILURES" not in verbose.stdout.str()


def test_a_miss_on_the_api_base_says_which_was_recorded_and_replays_against_it(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cassettes recorded against a loopback server, replayed without ``--citebench-api-base``:
    the fix printed was ``--citebench-record all`` with no api base (against the provider,
    overwriting good cassettes). It now names the recorded api base and replays with it."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with StubServer(lambda request: "pass") as server:
        url = server.url
        run_stub(pytester, url, "--citebench-record", "once")
    monkeypatch.delenv("OPENAI_API_KEY")
    plain = ["--citebench", "--citebench-model", "openai/stub", "-p", "no:cacheprovider"]
    missed = pytester.runpytest(*plain)
    assert outcomes(missed) == {"failed": 8}
    missed.stdout.fnmatch_lines(
        [
            "*differs from the recording: api_base differs: recorded "
            f"{url}, now https://api.openai.com/v1",
            f"they were recorded against the api base {url}: replay them against it",
            REPLAY,
        ]
    )
    replay = printed(missed, REPLAY)
    assert replay[-2:] == ["--citebench-api-base", url] and "--citebench-record" not in replay
    replayed = pytester.runpytest(*replay)  # the stub is stopped: every answer is the cassette's
    assert replayed.ret == pytest.ExitCode.OK, replayed.stdout.str()[-2000:]
    assert outcomes(replayed) == {"abstained": 8}


def test_a_listed_item_is_recorded_alone_not_its_whole_suite_folder(
    pytester: pytest.Pytester, synth: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run given its suite folder: the command listing one missed node id kept the folder,
    and pytest collects a folder whole beside a node id in it, so ``--citebench-record all``
    recorded (overwrote) every cassette of the suite. The run's files and folders are dropped
    when node ids are listed (an option's value equal to one is kept)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with StubServer(lambda request: "pass") as server:
        url = server.url
        run_stub(pytester, url, "suites/synth", *INDIRECT, "--citebench-record", "once")
        calls = server.calls
        missed = run_stub(
            pytester, url, "suites/synth", *INDIRECT, "-k", "s-001", "--citebench-top-p", "0.5"
        )
        assert outcomes(missed) == {"failed": 1, "deselected": 39}
        record = printed(missed, "'all' OVERWRITES their cassettes")
        assert "suites/synth" not in record and record[record.index("-k") + 1] == "s-001"
        assert "suites/synth/suite.toml::indirect::s-001[openai/stub]" in record
        recorded = pytester.runpytest(*record)
        assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()[-2000:]
        assert server.calls == calls + 1


def _damage(cassette: Path, body: str) -> None:
    data = json.loads(cassette.read_text(encoding="utf-8"))
    data["interactions"][0]["response"]["body"]["string"] = body
    cassette.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('{"id": "chatcmpl-1", "choices": [{"message', "the body is not valid JSON (Unterminated"),
        ("[1, 2]", "the client could not read it ("),
    ],
)
def test_a_recording_with_a_damaged_response_body_is_said_to_exist(
    pytester: pytest.Pytester,
    tiny: Path,
    monkeypatch: pytest.MonkeyPatch,
    body: str,
    says: str,
) -> None:
    """A hand-edited (corrupt) recorded response body was reported as "no recording of this
    exact request": replay served it, the client could not read it and asked again, and the
    second ask missed. Now: the recording exists, its response is not valid, the cassette is
    named, and the command printed at the end records it again (run here, as printed)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with StubServer(lambda request: "pass") as server:
        url = server.url
        run_stub(pytester, url, *INDIRECT, "--citebench-record", "once")
        cassette = _indirect_cassettes(pytester.path)[0]
        _damage(cassette, body)
        monkeypatch.delenv("OPENAI_API_KEY")
        broken = run_stub(pytester, url, *INDIRECT)
        assert outcomes(broken) == {"failed": 1, "abstained": 3}
        out = broken.stdout.str()
        assert "no recording of this exact request" not in out
        broken.stdout.fnmatch_lines(
            [
                f"cassette unusable: {cassette} holds a recording of this request, but its "
                f"recorded response is not valid: {says}*",
                "  the recording exists: its response was changed or damaged after it was recorded",
                "1 items had no usable recording of their request:",
                "  1 x recorded, but the recorded response is not valid (changed after recording)",
            ]
        )
        record = printed(broken, "'all' overwrites any cassette")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        calls = server.calls
        assert pytester.runpytest(*record).ret == pytest.ExitCode.OK
        assert server.calls == calls + 1
    monkeypatch.delenv("OPENAI_API_KEY")
    assert outcomes(run_stub(pytester, url, *INDIRECT)) == {"abstained": 4}


NODES = [f"s.toml::t::i{n}[m]" for n in range(11)]


@pytest.mark.parametrize(
    ("rerun", "nodeids", "selects"),
    [
        (LAST_FAILED, NODES, ["--lf"]),
        (Rerun(last_failed=False, results="r.jsonl"), NODES, ["--citebench-resume", "r.jsonl"]),
        (Rerun(last_failed=False), NODES, NODES),
        (
            Rerun(last_failed=False, results="r.jsonl", positional=frozenset({1})),
            NODES[:2],
            NODES[:2],
        ),
    ],
)
def test_the_selection_of_a_printed_command(
    rerun: Rerun, nodeids: list[str], selects: list[str]
) -> None:
    """``--lf`` only where the cache plugin is on; else the results file; else every node id;
    up to ten node ids are listed, the run's own files and folders (``positional``) dropped."""
    args = ["--citebench", "suites/s", "--citebench-resume", "old.jsonl", "-k", "suites/s"]
    record = shlex.split(record_command(args, nodeids, (), rerun))
    assert record[-2:] == ["--citebench-record", "all"]
    assert record[-2 - len(selects) : -2] == selects
    replay = shlex.split(replay_command(args, nodeids, {"--citebench-top-p": "1"}, rerun))
    assert replay[-2 - len(selects) : -2] == selects
    if selects == NODES[:2]:
        # The folder is dropped; -k's value, equal to it, is kept.
        kept = ["--citebench", "--citebench-resume", "old.jsonl", "-k", "suites/s"]
        assert record[1:6] == kept
    if selects[0] == "--citebench-resume":
        assert "old.jsonl" not in record
