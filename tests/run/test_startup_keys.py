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
