"""Recording when the disk or the provider misbehaves: nothing paid for is thrown away, nothing
recorded fails to replay, and a timeout is a deadline.

- A cassette folder that is full, read-only or refuses access (a fault-injecting file system,
  since root ignores permissions) keeps the paid answer in the item's record, stops the run with
  one error naming the folder, and makes no further call.
- An answer too big for replay's cassette cap fails at record time, and nothing is written that
  replay would refuse (hypothesis over sizes around the cap, and the real 32 MiB cap once).
- A server that drips its answer a byte at a time cannot hold a call past ``--citebench-timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench.errors import CassetteNotSaved
from pytest_citebench.models.litellm_backend import acompletion
from pytest_citebench.recording import cassettes
from pytest_citebench.recording.cassettes import CassettePersister, CassetteSerializer
from pytest_citebench.testing.stubserver import Fault, StubServer
from tests.conftest import run_stub

KEY = "sk-proj-CITEBENCHrecordingFAULTS0123456789"
ANSWER = "Attention Is All You Need, by someone else entirely"


#: Every run here writes its records to r.jsonl.
RESULTS = ("--citebench-results", "r.jsonl")


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def records(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in lines if r["type"] == "item"]


class _FullFile(io.BytesIO):
    """A file on a full disk: opening works, writing does not."""

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@contextlib.contextmanager
def faulty_fs(root: Path, code: int) -> Iterator[None]:
    """Every write under ``root`` fails with ``code``: opening a file for writing, making a
    folder, renaming into it (ENOSPC fails the write itself, as a full disk does)."""
    real_open, real_mkdir, real_replace = io.open, os.mkdir, os.replace
    root = root.resolve()

    def under(path: Any) -> bool:
        try:
            return Path(os.fsdecode(path)).resolve().is_relative_to(root)
        except (TypeError, ValueError):
            return False

    def fail(path: Any) -> OSError:
        return OSError(code, os.strerror(code), os.fsdecode(path))

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if under(file) and any(c in mode for c in "wax+"):
            if code == errno.ENOSPC:
                return _FullFile()
            raise fail(file)
        return real_open(file, mode, *args, **kwargs)

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        if under(path) and not Path(os.fsdecode(path)).exists():
            raise fail(path)
        real_mkdir(path, *args, **kwargs)

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if under(dst):
            raise fail(dst)
        real_replace(src, dst, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(io, "open", open_)
        mp.setattr(os, "mkdir", mkdir)
        mp.setattr(os, "replace", replace)
        yield


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.ENOSPC, "No space left on device"),
        (errno.EROFS, "Read-only file system"),
        (errno.EACCES, "Permission denied"),
    ],
    ids=["full", "read-only", "no-access"],
)
def test_an_unwritable_cassette_folder_keeps_the_answer_and_stops_paying(
    pytester: pytest.Pytester, tiny: Path, code: int, says: str
) -> None:
    folder = pytester.path / "cassettes"
    folder.mkdir()
    with StubServer(lambda request: ANSWER) as server, faulty_fs(folder, code):
        result = run_stub(
            pytester,
            server.url,
            *RESULTS,
            "--citebench-record",
            "all",
            "--citebench-concurrency",
            "1",
        )
        calls = server.calls
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, out
    assert "Traceback" not in out and "unexpected OSError" not in out, out
    result.stdout.fnmatch_lines(
        [f"*Interrupted: citebench: cannot save cassettes in {folder}: {says}; the run stops*"]
    )
    [record] = records(pytester.path / "r.jsonl")  # the run stopped at the first item
    assert record["outcome"] == "error"
    assert record["reason"] == "the answer came but its cassette could not be saved"
    assert record["raw_answer"] == ANSWER and record["answer"]  # the paid answer is kept
    assert "it scored" in record["error"] and str(folder) in record["error"]
    assert calls == 1  # no call after the one whose cassette failed
    assert not [p for p in folder.rglob("*") if p.is_file()]  # no partial cassette left

    # The folder is writable again: resume records what is missing, and it replays.
    with StubServer(lambda request: ANSWER) as server:
        again = run_stub(
            pytester,
            server.url,
            *RESULTS,
            "--citebench-record",
            "once",
            "--citebench-resume",
            "r.jsonl",
            "--citebench-results",
            "r2.jsonl",
        )
        assert again.ret == 0, again.stdout.str()
        assert server.calls >= 8
    assert len(records(pytester.path / "r2.jsonl")) == 8


# -- what is recorded must replay ----------------------------------------------------------------


def _cassette(answer_bytes: int) -> dict[str, Any]:
    """What vcrpy hands the persister: one exchange whose answer is ``answer_bytes`` long."""
    from vcr.request import Request

    body = json.dumps({"choices": [{"message": {"content": "x" * answer_bytes}}]})
    request = Request("POST", "http://127.0.0.1:9/v1/chat/completions", "{}", {})
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"Content-Type": ["application/json"]},
        "body": {"string": body},
    }
    return {"requests": [request], "responses": [response]}


@given(size=st.integers(min_value=0, max_value=12_000))
@settings(max_examples=60, derandomize=True, database=None, deadline=None)
def test_a_cassette_is_saved_only_if_replay_loads_it(size: int) -> None:
    """Around a small cap (both sides read the same constant): saved and loadable, or refused at
    save with the reason and no file."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(cassettes, "MAX_CASSETTE_BYTES", 8_000)
        path = Path(tmp) / "c.yaml"
        try:
            CassettePersister.save_cassette(path, _cassette(size), CassetteSerializer)
        except CassetteNotSaved as exc:
            assert "more than the 8000 bytes" in str(exc)
            assert not list(Path(tmp).iterdir())
        else:
            loaded = CassettePersister.load_cassette(path, CassetteSerializer)
            assert len(loaded[0]) == 1


def test_an_answer_over_the_real_cap_is_refused_when_recorded(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    over = cassettes.MAX_CASSETTE_BYTES + 1
    with pytest.raises(CassetteNotSaved, match=r"more than the 33554432 bytes \(32 MiB\)"):
        CassettePersister.save_cassette(path, _cassette(over), CassetteSerializer)
    assert not list(tmp_path.iterdir())


def test_an_answer_too_big_to_replay_is_an_error_at_record_time_and_the_run_goes_on(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", 20_000)

    def answer(request: dict[str, Any]) -> str:
        big = "attention mechanisms" in json.dumps(request)  # item 2001.00001-s1
        return "y " * 15_000 if big else "pass"

    with StubServer(answer) as server:
        recorded = run_stub(
            pytester, server.url, *RESULTS, "--citebench-record", "once", "-k", "indirect"
        )
        url = server.url
    out = recorded.stdout.str()
    assert recorded.ret == pytest.ExitCode.TESTS_FAILED, out
    errors = [r for r in records(pytester.path / "r.jsonl") if r["outcome"] == "error"]
    assert errors and len(records(pytester.path / "r.jsonl")) == 4  # the others ran
    for record in errors:
        assert "more than the 20000 bytes" in record["error"]
        assert record["raw_answer"].startswith("y y")
    saved = list((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(saved) == 4 - len(errors)
    replayed = run_stub(pytester, url, *RESULTS, "-k", "indirect")
    assert "could not be loaded" not in replayed.stdout.str()  # nothing replay refuses


# -- a timeout is a deadline -----------------------------------------------------------------------


def test_a_dripping_server_cannot_hold_a_call_past_the_timeout() -> None:
    with StubServer(faults=lambda index, request: Fault("drip", delay=0.25)) as server:
        started = time.monotonic()
        with pytest.raises(Exception, match="no complete answer within --citebench-timeout 1 s"):
            asyncio.run(
                acompletion(
                    "openai/stub",
                    [{"role": "user", "content": "x"}],
                    timeout=1,
                    api_base=server.url,
                    api_key=KEY,
                )
            )
        elapsed = time.monotonic() - started
    assert elapsed < 2.5  # the body alone would take a minute


def test_a_dripping_server_ends_the_item_as_an_error_within_the_timeout(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    with StubServer(faults=lambda index, request: Fault("drip", delay=0.25)) as server:
        started = time.monotonic()
        result = run_stub(
            pytester,
            server.url,
            *RESULTS,
            "--citebench-record",
            "all",
            "-k",
            "indirect and 00001-s1",
            "--citebench-timeout",
            "2",
            "--citebench-retries",
            "1",
        )
        elapsed = time.monotonic() - started
        calls = server.calls
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    [record] = records(pytester.path / "r.jsonl")
    assert record["outcome"] == "error"
    assert "CallTimeout" in record["error"] and "(after 2 attempts)" in record["error"]
    assert calls == 2
    assert record["duration"] < 2 * 2 + 2.5 and elapsed < 20


def test_a_cassette_folder_known_to_be_unwritable_is_a_usage_error_before_any_call(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = (pytester.path / "cassettes").resolve()
    folder.mkdir()
    real_access = os.access

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        # As a read-only folder answers a user who is not root (root ignores permissions).
        if Path(path).resolve() == folder:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    with StubServer(lambda request: ANSWER) as server:
        result = run_stub(pytester, server.url, *RESULTS, "--citebench-record", "once")
        (pytester.path / "file.txt").write_text("")
        as_file = run_stub(
            pytester,
            server.url,
            *RESULTS,
            "--citebench-record",
            "once",
            "--citebench-cassettes",
            "file.txt",
        )
        assert server.calls == 0
    assert result.ret == as_file.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: cannot save cassettes in {folder}: *not writable*"])
    as_file.stderr.fnmatch_lines(["ERROR: --citebench-cassettes file.txt is a file; pass a folder"])
