"""Cassettes as untrusted input and as evidence: secrets never written, bombs refused quickly,
recorded failures refused by name, and a replay that explains why it has nothing to play."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.recording import (
    CassetteSerializer,
    cassette_format,
    cassette_path,
    cassette_text,
    client_versions,
    error_note,
    request_differences,
    scrub_text,
)
from pytest_citebench.testing.stubserver import Fault, StubServer
from tests.conftest import run_stub

TOKEN = "custom-header-secret-1f2e3d4c5b6a"


#: Every run here writes its records to r.jsonl.
RESULTS = ("--citebench-results", "r.jsonl")


def _cassette(pytester: pytest.Pytester, task: str = "indirect") -> Path:
    return cassette_path(
        pytester.path / "cassettes", "openai/stub", "tiny", 1, task, "2001.00001-s1"
    )


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change a recorded cassette's data and write it back in the format it was in."""
    text = path.read_text(encoding="utf-8")
    data = CassetteSerializer.deserialize(text)
    change(data)
    path.write_text(cassette_text(data, cassette_format(text)), encoding="utf-8")


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-HARDENINGtest0123456789abcdefgh")


def test_a_credential_header_from_params_never_reaches_any_file(
    pytester: pytest.Pytester, tiny: Path, key: None
) -> None:
    with StubServer(lambda r: "pass") as server:
        headers = json.dumps({"X-Custom-Token": TOKEN, "X-Trace": "visible"})
        result = run_stub(
            pytester,
            server.url,
            *RESULTS,
            "--citebench-record",
            "once",
            "--citebench-param",
            f"extra_headers={headers}",
            "--citebench-html",
            "r.html",
        )
        assert result.ret == 0
        sent = server.requests[-1]["headers"]
    assert sent.get("x-custom-token") == TOKEN  # the provider got it ...
    written = [p for p in pytester.path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".yaml" for p in written)
    for path in written:  # ... no cassette, results file or report did
        text = path.read_text(errors="replace")
        assert TOKEN not in text, path
        if path.suffix == ".yaml":
            assert "x-custom-token" not in text.lower() and "x-trace" in text.lower()
    assert TOKEN not in result.stdout.str()


def test_urls_lose_userinfo_and_key_like_query_values_everywhere() -> None:
    text = "GET http://user:pw-123456@host:8/v1/x?token=abc123secret&model=m&api_key=zzz999"
    scrubbed = scrub_text(text, [])
    assert "pw-123456" not in scrubbed and "abc123secret" not in scrubbed
    assert "zzz999" not in scrubbed and "model=m" in scrubbed and "host:8" in scrubbed


def test_a_miss_prints_no_credentials_of_the_api_base(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    result = run_stub(pytester, "http://alice:pw-s3cret-777@127.0.0.1:9/v1", *RESULTS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str() + (pytester.path / "r.jsonl").read_text()
    assert "cassette miss" in out and "pw-s3cret-777" not in out


def test_a_billion_laughs_cassette_is_refused_quickly_and_named(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    levels = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        levels.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    bomb = "\n".join(levels)
    path = _cassette(pytester)
    path.parent.mkdir(parents=True)
    path.write_text(
        f"bomb:\n  {bomb.replace(chr(10), chr(10) + '  ')}\ninteractions: []\nversion: 1\n"
    )
    started = time.perf_counter()
    result = run_stub(
        pytester, "http://127.0.0.1:9/v1", *RESULTS, "--log-level=INFO", "-k", "indirect"
    )
    assert time.perf_counter() - started < 60
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*cassette {path} could not be loaded*YAML nodes*"])


def test_a_recorded_server_error_is_refused_by_name_not_dropped(
    pytester: pytest.Pytester, tiny: Path, key: None
) -> None:
    with StubServer(lambda r: "pass") as server:
        assert run_stub(pytester, server.url, *RESULTS, "--citebench-record", "once").ret == 0
        url = server.url
    path = _cassette(pytester)
    _edit(path, lambda data: data["interactions"][0]["response"]["status"].update(code=500))
    result = run_stub(pytester, url, *RESULTS, "-k", "indirect and 2001.00001-s1")
    result.stdout.fnmatch_lines(["*could not be loaded: interaction 1: a recorded 500 response*"])


def test_an_item_that_failed_while_recording_replays_with_its_original_cause(
    pytester: pytest.Pytester, tiny: Path, key: None
) -> None:
    fault = Fault("status", status=400)
    with StubServer(lambda r: "pass", faults=lambda i, r: fault) as server:
        recorded = run_stub(
            pytester, server.url, *RESULTS, "--citebench-record", "once", "-k", "indirect"
        )
        url = server.url
    assert recorded.ret == pytest.ExitCode.TESTS_FAILED
    path = _cassette(pytester)
    assert not path.exists() and error_note(path).is_file()
    replayed = run_stub(pytester, url, *RESULTS, "-k", "indirect")
    replayed.stdout.fnmatch_lines(
        [
            "*cassette miss: *2001.00001-s1.yaml was not saved: recording this item failed with*",
            "*BadRequestError*",
        ]
    )
    assert "does not exist" not in replayed.stdout.str()


def test_a_miss_after_a_client_upgrade_names_the_versions(
    pytester: pytest.Pytester, tiny: Path, key: None
) -> None:
    with StubServer(lambda r: "pass") as server:
        assert run_stub(pytester, server.url, *RESULTS, "--citebench-record", "once").ret == 0
        url = server.url
    path = _cassette(pytester)
    now = client_versions()["litellm"]
    _edit(path, lambda data: data["recorded_with"].update(litellm="0.0.1"))
    result = run_stub(pytester, url, *RESULTS, "--citebench-max-tokens", "65", "-k", "indirect")
    result.stdout.fnmatch_lines(
        [
            "*differs from the recording: max_tokens: recorded 256, now 65*",
            f"*recorded with litellm 0.0.1, now {now}*",
        ]
    )


def test_request_differences_speak_of_fields_not_bytes() -> None:
    from vcr.request import Request

    def req(uri: str, body: dict) -> Request:
        return Request("POST", uri, json.dumps(body), {})

    a = req(
        "http://h:1/v1/chat", {"max_tokens": 64, "messages": [{"role": "user", "content": "a"}]}
    )
    b = req(
        "http://h:2/v1/chat", {"max_tokens": 65, "messages": [{"role": "user", "content": "b"}]}
    )
    diffs = request_differences(a, b)
    assert diffs[0].startswith("api_base differs")
    assert "max_tokens: recorded 64, now 65" in diffs
    assert "messages[0].content differs" in diffs


def test_the_serializer_writes_no_yaml_aliases_and_the_client_versions() -> None:
    shared = {"k": ["v"]}
    text = CassetteSerializer.serialize(
        {"version": 1, "interactions": [], "a": shared, "b": shared}
    )
    assert "&id" not in text and "*id" not in text
    assert CassetteSerializer.deserialize(text)["recorded_with"] == client_versions()


# -- files beside the cassettes are never followed through a link ------------------------------

# What a planted link pointed at in the probe: a private key, which must never be printed.
SECRET_FILE = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQPLANTEDkeyMATERIAL42\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
SECRET_MARK = "PLANTEDkeyMATERIAL42"


def _plant(pytester: pytest.Pytester, path: Path, kind: str) -> Path:
    """A link (or a FIFO) at ``path`` where a cassette or a note would be; returns the secret."""
    secret = pytester.path / "outside" / "id_ed25519"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(SECRET_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link":
        path.symlink_to(secret)
    else:
        import os

        os.mkfifo(path)
    return secret


def _everything_written(pytester: pytest.Pytester, result: pytest.RunResult) -> str:
    files = [pytester.path / name for name in ("r.jsonl", "r.html", "junit.xml")]
    return (
        result.stdout.str()
        + result.stderr.str()
        + "".join(p.read_text(errors="replace") for p in files if p.exists())
    )


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_planted_error_note_is_refused_on_replay_and_never_printed(
    pytester: pytest.Pytester, tiny: Path, kind: str
) -> None:
    """A committed ``<item>.error.txt`` linking to an SSH key printed the key into the
    terminal, the results and the HTML report on replay; a FIFO there would hang the run."""
    path = _cassette(pytester)
    _plant(pytester, error_note(path), kind)
    result = run_stub(
        pytester, "http://127.0.0.1:9/v1", *RESULTS, "--citebench-html", "r.html",
        "--junitxml", "junit.xml", "-k", "indirect and 2001.00001-s1",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    what = "a symbolic link" if kind == "link" else "not a regular file"
    result.stdout.fnmatch_lines(
        [
            "*cassette miss: *2001.00001-s1.yaml does not exist, and its error note is refused*",
            f"*2001.00001-s1.error.txt is {what}; files beside cassettes are read and written*",
        ]
    )
    everything = _everything_written(pytester, result)
    assert SECRET_MARK not in everything and "PRIVATE KEY" not in everything
    record = next(r for r in map(json.loads, (pytester.path / "r.jsonl").open()) if "error" in r)
    assert record["outcome"] == "error" and what in record["error"]


def test_a_planted_error_note_is_never_written_through_when_recording(
    pytester: pytest.Pytester, tiny: Path, key: None
) -> None:
    """Recording an item that fails writes its note: through a planted link it overwrote the
    link's target (any file the user can write). The link is refused and the target kept."""
    path = _cassette(pytester)
    secret = _plant(pytester, error_note(path), "link")
    fault = Fault("status", status=400)
    with StubServer(lambda r: "pass", faults=lambda i, r: fault) as server:
        result = run_stub(
            pytester, server.url, *RESULTS, "--citebench-record", "once",
            "-k", "indirect and 2001.00001-s1",
        )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert secret.read_text() == SECRET_FILE and error_note(path).is_symlink()
    result.stdout.fnmatch_lines(["*its error note was not written: *is a symbolic link*"])
    assert SECRET_MARK not in _everything_written(pytester, result)


@pytest.mark.parametrize("mode", ["none", "once"])
def test_a_cassette_that_is_a_link_is_refused_never_read_or_written_through(
    pytester: pytest.Pytester, tiny: Path, key: None, mode: str
) -> None:
    """A cassette is read back into every report: one that links elsewhere is refused by name
    (a YAML error would quote the target's first line), in replay and when recording."""
    path = _cassette(pytester)
    secret = _plant(pytester, path, "link")
    with StubServer(lambda r: "pass") as server:
        result = run_stub(
            pytester, server.url, *RESULTS, "--citebench-record", mode,
            "--citebench-html", "r.html", "-k", "indirect and 2001.00001-s1",
        )  # fmt: skip
        calls = server.calls
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert calls == 0  # refused before any call: nothing paid for that could not be kept
    result.stdout.fnmatch_lines([f"*cassette {path} could not be loaded: *is a symbolic link*"])
    assert secret.read_text() == SECRET_FILE and path.is_symlink()
    assert SECRET_MARK not in _everything_written(pytester, result)


def test_cassettes_convert_refuses_a_link_and_prints_nothing_of_its_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_citebench.__main__ import main as cli

    secret = tmp_path / "id_ed25519"
    secret.write_text(SECRET_FILE)
    folder = tmp_path / "cassettes" / "m"
    folder.mkdir(parents=True)
    (folder / "x.yaml").symlink_to(secret)
    assert cli(["cassettes", "convert", str(tmp_path / "cassettes")]) == 2
    out = capsys.readouterr()
    assert "is a symbolic link" in out.err
    assert SECRET_MARK not in out.out + out.err and secret.read_text() == SECRET_FILE
