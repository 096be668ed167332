"""The key check's fast path: the controller knows a provider's key is set without litellm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_citebench.run.startup import KEY_VARIABLES, key_known_present
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import stub_args


@pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier")
@pytest.mark.parametrize(("provider", "variable"), sorted(KEY_VARIABLES.items()))
def test_each_fast_path_provider_needs_exactly_its_one_variable_in_litellm(
    provider: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table is only a shortcut: litellm itself must want that variable and nothing else,
    or a set variable would pass a check that litellm fails."""
    from pytest_citebench.models.litellm_backend import litellm

    lib = litellm()
    for name in KEY_VARIABLES.values():
        monkeypatch.delenv(name, raising=False)
    missing = lib.validate_environment(model=f"{provider}/some-model")["missing_keys"]
    assert missing == [variable]
    monkeypatch.setenv(variable, "sk-test-key")
    for api_base in (None, "http://127.0.0.1:9/v1"):
        found = lib.validate_environment(model=f"{provider}/some-model", api_base=api_base)
        assert found["missing_keys"] == [] and found["keys_in_environment"] is True


def test_the_fast_path_says_present_only_for_a_named_provider_whose_variable_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    assert key_known_present("openai/gpt-4o-mini")
    assert not key_known_present("gpt-4o-mini")  # litellm infers the provider: ask it
    assert not key_known_present("azure/gpt-4o")  # three variables: ask litellm
    assert not key_known_present("openaiX/gpt")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert not key_known_present("openai/gpt-4o-mini")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert not key_known_present("openai/gpt-4o-mini")


_REPORT_IMPORTS = """
import json, os, sys

def pytest_unconfigure(config):
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller"
    with open(os.path.join(os.environ["IMPORTS_DIR"], role + ".json"), "w") as handle:
        json.dump({"litellm": "litellm" in sys.modules}, handle)
"""


def test_an_xdist_controller_recording_a_run_never_imports_litellm(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its workers make every call; the controller only checks the key, from the environment."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    monkeypatch.setenv("IMPORTS_DIR", str(pytester.path))
    pytester.makeconftest(_REPORT_IMPORTS)
    with StubServer(lambda r: "pass") as server:
        # A subprocess: this test process imported litellm long ago.
        result = pytester.runpytest_subprocess(
            *stub_args(server.url, "--citebench-record", "once", "--citebench-concurrency", "4"),
            "-n",
            "2",
        )
        calls = server.calls
    assert result.ret == 0, result.stdout.str()
    assert calls > 0
    seen = {p.stem: json.loads(p.read_text())["litellm"] for p in pytester.path.glob("*.json")}
    assert seen == {"controller": False, "gw0": True, "gw1": True}


def _authorizations(server: StubServer) -> set[str]:
    return {
        r["headers"].get("Authorization") or r["headers"].get("authorization") or ""
        for r in server.requests
        if r["path"].endswith("/chat/completions")
    }


def test_a_server_on_loopback_is_recorded_without_a_key_and_gets_the_placeholder(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A self-hosted model (vLLM, llama.cpp, Ollama on this machine) asks for no provider key:
    the first hour once needed a dummy OPENAI_API_KEY for it."""
    from pytest_citebench.models.types import REPLAY_API_KEY

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with StubServer(lambda r: "pass") as server:
        result = pytester.runpytest(*stub_args(server.url, "--citebench-record", "once"))
        seen = _authorizations(server)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert seen == {f"Bearer {REPLAY_API_KEY}"}


def test_a_loopback_proxy_gets_the_key_when_the_environment_has_one(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local proxy in front of a provider may need the real key: it is never replaced."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-proxy-0123456789abcdef")
    with StubServer(lambda r: "pass") as server:
        result = pytester.runpytest(*stub_args(server.url, "--citebench-record", "once"))
        seen = _authorizations(server)
    assert result.ret == 0, result.stdout.str()
    assert seen == {"Bearer sk-test-proxy-0123456789abcdef"}


@pytest.mark.parametrize(
    ("api_base", "loopback"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.9.9.9/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://127.0.0.1.evil.example/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        (None, False),
        ("http://[::1/v1", False),
    ],
)
def test_on_loopback_is_this_machine_only(api_base: str | None, loopback: bool) -> None:
    from pytest_citebench.models import on_loopback

    assert on_loopback(api_base) is loopback


def test_a_remote_endpoint_still_needs_the_key(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = pytester.runpytest(
        *stub_args("http://10.255.255.1:9/v1", "--citebench-record", "once")
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*recording needs the provider's key in $OPENAI_API_KEY*"])


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_key_variable_is_a_usage_error_at_start(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Issue 44: ``OPENAI_API_KEY=""`` (a fork's pull request's secret) passed the check, as
    litellm counts a set variable as present; then every item errored "Missing credentials ...
    after 3 attempts". Now one usage error before any call."""
    monkeypatch.setenv("OPENAI_API_KEY", value)
    result = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider", "--citebench-model", "openai/gpt-4o-mini",
        "--citebench-record", "once", "--citebench-task", "indirect",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(["*$OPENAI_API_KEY, which is set but empty*"])
