"""Model profiles, system-role folding, per-model concurrency, usage and cost, the cost budget
and the missing-key error, each against the loopback stub server."""

from __future__ import annotations

import itertools
import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.models import fold_system
from pytest_citebench.recording import cassette_path
from pytest_citebench.settings.profiles import BUILTIN_PROFILES, ProfileError, parse_profile
from pytest_citebench.testing.stubserver import StubServer


def _items(path: Path) -> list[dict[str, Any]]:
    return [
        r for r in (json.loads(x) for x in path.read_text().splitlines()) if r["type"] == "item"
    ]


def _pyproject(pytester: pytest.Pytester, body: str) -> None:
    pytester.makefile(".toml", pyproject=body)


def test_fold_system_puts_the_system_text_first_in_the_first_user_turn() -> None:
    payload = [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": "Q2"},
    ]
    assert fold_system(payload) == [
        {"role": "user", "content": "SYS\n\nQ1"},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": "Q2"},
    ]
    assert payload[1]["content"] == "Q1"  # the caller's messages are not changed
    assert fold_system([{"role": "user", "content": "Q"}]) == [{"role": "user", "content": "Q"}]


def test_profile_fields_are_checked_with_the_profile_named() -> None:
    with pytest.raises(ProfileError, match=r'models."m"\] system_role must be one of'):
        parse_profile("m", {"model": "openai/x", "system_role": "developer"}, source="p")
    with pytest.raises(ProfileError, match="unknown field"):
        parse_profile("m", {"model": "openai/x", "temprature": 0}, source="p")
    with pytest.raises(ProfileError, match="concurrency"):
        parse_profile("m", {"model": "openai/x", "concurrency": 0}, source="p")
    profile = parse_profile("m", {"model": "openai/x", "max_tokens": 5}, source="p")
    assert profile.max_tokens == 5 and profile.system_role == "system"


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("params", {"seed": math.nan}, "params seed = nan"),
        ("params", {"top_p": math.inf}, "params top_p = inf"),
        ("params", {"temperature": 3}, "params temperature = 3"),
        ("params", "seed=7", "params = 'seed=7'"),
        ("api_base", "", "api_base = ''"),
        ("api_base", 3, "api_base = 3"),
        ("api_base", "file:///etc/passwd", "api_base = 'file:///etc/passwd'"),
        ("api_base", "127.0.0.1:8011/v1", "api_base = '127.0.0.1:8011/v1'"),
        ("params", {"api_base": "ftp://h/v1"}, "params api_base = 'ftp://h/v1'"),
    ],
)
def test_profile_params_and_api_base_follow_the_run_settings_rules(
    field: str, value: Any, named: str
) -> None:
    """A profile's litellm arguments and endpoint are checked like the command line's: a NaN
    argument or an empty URL is one error naming the profile, never a request per item."""
    with pytest.raises(ProfileError) as caught:
        parse_profile("m", {"model": "openai/x", field: value}, source="p")
    assert f'p: [tool.citebench.models."m"] {named}: ' in str(caught.value)
    assert "must be" in str(caught.value)
    good = parse_profile("m", {"params": {"seed": 7}, "api_base": "http://h/v1"}, source="p")
    assert good.params == {"seed": 7} and good.api_base == "http://h/v1"


def test_the_shipped_local_profile_is_the_one_the_cassettes_were_recorded_with() -> None:
    gemma = BUILTIN_PROFILES["local/gemma-3-270m"]
    assert gemma.api_base == "http://127.0.0.1:8011/v1"
    assert (gemma.temperature, gemma.max_tokens, gemma.system_role) == (0.0, 64, "user")
    assert gemma.concurrency == 2 and gemma.needs_key is False
    smol = BUILTIN_PROFILES["local/smollm2-135m-instruct"]
    assert (smol.model, smol.api_base) == (
        "openai/smollm2-135m-instruct",
        "http://127.0.0.1:8012/v1",
    )
    assert (smol.temperature, smol.max_tokens, smol.system_role) == (0.0, 128, "system")
    assert "local-model serve smollm2-135m-instruct" in smol.description


def test_a_profile_shapes_the_request_and_names_the_cassettes(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with StubServer(lambda r: "pass") as server:
        _pyproject(
            pytester,
            f"""
[tool.citebench.models."team/small"]
model = "openai/served-name"
api_base = "{server.url}"
temperature = 0
max_tokens = 7
system_role = "user"
needs_key = false
params = {{seed = 3}}
""",
        )
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "team/small",
            "--citebench-record",
            "once",
            "--citebench-top-p",
            "0.5",
            "--citebench-results",
            "r.jsonl",
            "-p",
            "no:cacheprovider",
        )
        assert result.ret == 0, result.stdout.str()
        bodies = [r["json"] for r in server.requests if r["path"].endswith("/chat/completions")]
    assert len(bodies) == 8
    for body in bodies:
        assert body["model"] == "served-name"
        assert (body["temperature"], body["max_tokens"], body["seed"]) == (0, 7, 3)
        assert body["top_p"] == 0.5  # the command line wins over the profile
        assert [m["role"] for m in body["messages"]] == ["user"]  # system text folded in
    # The settings line tells the profile's sampling, not the run's defaults.
    result.stdout.fnmatch_lines(["*models: team/small*temperature 0, top_p 0.5, max_tokens 7*"])
    records = _items(pytester.path / "r.jsonl")
    assert {r["model"] for r in records} == {"team/small"}
    path = cassette_path(
        pytester.path / "cassettes", "team/small", "tiny", 1, "indirect", "2001.00001-s1"
    )
    assert path.is_file()
    assert "recorded_with" in path.read_text() and "litellm" in path.read_text()
    usage = records[0]["usage"]
    assert usage["calls"] == 1 and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["cost"] is None  # not in litellm's cost map: unknown, never 0
    assert len(usage["latencies"]) == 1 and usage["latencies"][0] >= 0


def test_an_unpriced_model_is_looked_up_once_and_its_cost_stays_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """litellm searches its whole cost map for a model it has no price for, on every call; once
    a model is found unpriced it is told a nominal price instead. The provider must see the same
    request, the cost must stay unknown (never 0), and a priced model or a price the user passed
    must be left alone."""
    import asyncio

    from pytest_citebench.models import litellm_backend as backend

    lib = backend.litellm()
    sent: list[dict[str, Any]] = []
    real = lib.completion

    litellm_costs: list[Any] = []

    def spy(**kwargs: Any) -> Any:
        sent.append({k: v for k, v in kwargs.items() if "cost" in k})
        response = real(**kwargs)
        litellm_costs.append(response._hidden_params.get("response_cost"))
        return response

    monkeypatch.setattr(backend, "_UNPRICED", set())
    monkeypatch.setattr(lib, "completion", spy)
    messages = [{"role": "user", "content": "who wrote it?"}]
    user_price = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
    with StubServer(lambda r: "Ada Lovelace") as server:
        common = {"timeout": 10, "api_base": server.url, "api_key": "x"}
        stub = [backend.completion("openai/stub", messages, **common) for _ in range(3)]
        priced = [backend.completion("openai/gpt-4o-mini", messages, **common) for _ in range(2)]
        mine = [backend.completion("openai/stub", messages, **common, **user_price)]
        later = asyncio.run(backend.acompletion("openai/stub", messages, **common))
        bodies = [r["json"] for r in server.requests if r["path"].endswith("/chat/completions")]
    skip = backend._SKIP_PRICING
    assert sent[:3] == [{}, skip, skip]  # looked up once, then told the nominal price
    assert [c.cost for c in stub] == [None, None, None]  # unknown, never free
    # Not zero to litellm, which would run its zero-cost diagnostic (another cost-map search).
    assert all(cost and cost > 0 for cost in litellm_costs[1:3])
    assert all(c.text == "Ada Lovelace" and c.prompt_tokens > 0 for c in stub)
    assert sent[3:5] == [{}, {}] and all(c.cost and c.cost > 0 for c in priced)
    assert sent[5] == user_price and mine[0].cost and mine[0].cost > 0
    assert later.cost is None
    assert set(backend._UNPRICED) == {"openai/stub"}
    stub_bodies = [b for b in bodies if b["model"] == "stub"]
    assert len(stub_bodies) == 5 and all(b == stub_bodies[0] for b in stub_bodies[:3])
    assert not any("cost" in key for body in bodies for key in body)


def test_a_profile_concurrency_caps_calls_in_flight_below_the_run_budget(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    answered: list[float] = []

    def answer(request: dict) -> str:
        answered.append(time.perf_counter())  # after the stub's latency: when each call ended
        return "pass"

    with StubServer(answer, latency=0.3) as server:
        _pyproject(
            pytester,
            f"""
[tool.citebench.models."one-slot"]
model = "openai/x"
api_base = "{server.url}"
concurrency = 1
needs_key = false
""",
        )
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "one-slot",
            "--citebench-record",
            "once",
            "--citebench-concurrency",
            "16",
            "-p",
            "no:cacheprovider",
        )
        assert result.ret == 0
    # One at a time, 8 calls of 0.3 s end >= 0.3 s apart; 16 in flight would end together.
    answered.sort()
    gaps = [b - a for a, b in itertools.pairwise(answered)]
    assert len(answered) == 8 and min(gaps) >= 0.25


def test_recording_without_the_key_is_one_usage_error_naming_the_variable(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "openai/gpt-4o-mini",
        "--citebench-record",
        "once",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*recording needs the provider's key in $OPENAI_API_KEY*"])


def test_max_cost_stops_paid_calls_once_the_budget_is_spent(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000000000")
    with StubServer(lambda r: "pass") as server:
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "openai/gpt-4o-mini",
            "--citebench-api-base",
            server.url,
            "--citebench-record",
            "once",
            "--citebench-concurrency",
            "1",
            "--citebench-max-cost",
            "0.0000001",
            "--citebench-results",
            "r.jsonl",
            "-p",
            "no:cacheprovider",
        )
        calls = server.calls
    records = _items(pytester.path / "r.jsonl")
    spent = [r for r in records if r["outcome"] != "error"]
    stopped = [r for r in records if "--citebench-max-cost" in (r.get("error") or "")]
    assert spent and spent[0]["usage"]["cost"] > 0  # gpt-4o-mini is in the local cost map
    assert calls == len(spent) < 8 and len(stopped) == 8 - len(spent)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_self_hosted_profile_with_a_price_is_capped_by_max_cost(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a self-hosted model needs for --citebench-max-cost: its price in the profile's
    params (litellm has none for it). No key either: the server is on loopback."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with StubServer(lambda r: "pass") as server:
        _pyproject(
            pytester,
            f"""
[tool.citebench.models."team/vllm"]
model = "openai/my-finetune"
api_base = "{server.url}"
concurrency = 1
params = {{ input_cost_per_token = 0.001, output_cost_per_token = 0.001 }}
""",
        )
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "team/vllm",
            "--citebench-record",
            "once",
            "--citebench-max-cost",
            "0.000001",
            "--citebench-results",
            "r.jsonl",
            "-p",
            "no:cacheprovider",
        )
        calls = server.calls
        bodies = [r["json"] for r in server.requests if r["path"].endswith("/chat/completions")]
    records = _items(pytester.path / "r.jsonl")
    spent = [r for r in records if r["outcome"] != "error"]
    stopped = [r for r in records if "--citebench-max-cost" in (r.get("error") or "")]
    assert calls == len(spent) == 1 and len(stopped) == 7, result.stdout.str()
    assert spent[0]["usage"]["cost"] > 0  # priced by the profile, not unknown
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not any("cost" in key for body in bodies for key in body)  # the price stays here


def test_estimate_counts_calls_and_cost_without_calling_the_model(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "openai/gpt-4o-mini",
        "--citebench-model",
        "openai/not-a-priced-model",
        "--citebench-api-base",
        "http://127.0.0.1:9/v1",
        "--collect-only",
        "--citebench-estimate",
        "--citebench-max-tokens",
        "10",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 0
    out = result.stdout.str()
    assert "citebench estimate (no model was called)" in out
    row = next(x.split() for x in out.splitlines() if x.startswith("openai/gpt-4o-mini "))
    assert row[1:3] == ["8", "8"] and row[4] == "80"  # 8 cases, 8 calls, 10 tokens each at most
    assert float(row[5]) > 0
    unknown = next(x.split() for x in out.splitlines() if x.startswith("openai/not-a-priced"))
    assert unknown[-1] == "n/a"
    # The table, not every case: counts per suite file stand in for pytest's item listing.
    assert "suites/tiny/suite.toml: 16" in out
    assert "2001.00001-s1" not in out and len(result.stdout.lines) < 30
    quiet = pytester.runpytest(
        "--citebench", "--collect-only", "--citebench-estimate", "-q", "-p", "no:cacheprovider"
    )
    assert "2001.00001-s1" not in quiet.stdout.str()  # -q lists every case: not for an estimate


def test_a_server_that_queues_past_half_the_timeout_is_named_once(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    with StubServer(lambda r: "pass", latency=1.2) as server:
        _pyproject(
            pytester,
            f"""
[tool.citebench.models."slow"]
model = "openai/x"
api_base = "{server.url}"
concurrency = 8
timeout = 2.0
needs_key = false
""",
        )
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "slow",
            "--citebench-record",
            "once",
            "-p",
            "no:cacheprovider",
        )
    assert result.ret == 0
    warnings = [x for x in result.stdout.lines if "is over half the timeout" in x]
    assert len(warnings) == 1 and warnings[0].startswith("WARNING slow: p95 item duration")


def _record_against(pytester: pytest.Pytester, server: StubServer, *extra: str) -> Any:
    """A recording run of the tiny suite on ``openai/x`` against the loopback stub."""
    return pytester.runpytest(
        "--citebench", "--citebench-model", "openai/x", "--citebench-api-base", server.url,
        "--citebench-record", "once", "-p", "no:cacheprovider", *extra,
    )  # fmt: skip


def test_pyproject_params_table_reaches_the_request(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000000000")
    with StubServer(lambda r: "pass") as server:
        _pyproject(pytester, "[tool.citebench]\nparams = {seed = 11}\n")
        result = _record_against(pytester, server)
        assert result.ret == 0, result.stdout.str() + result.stderr.str()
        assert {r["json"]["seed"] for r in server.requests} == {11}


# -- the run's budgets are run-wide under xdist -------------------------------------------------


def test_share_splits_a_budget_into_parts_that_add_up_exactly() -> None:
    from pytest_citebench.run.workers import share

    for total in range(1, 40):
        for count in range(1, 9):
            parts = [share(total, i, count) for i in range(count)]
            assert sum(parts) == total
            assert max(parts) - min(parts) <= 1


def test_xdist_workers_split_the_concurrency_so_the_server_sees_the_run_budget(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    # 2 workers and --citebench-concurrency 2: one call in flight per worker, 2 at the server;
    # each worker holding the whole budget would put 4 there (8 items, 1 s each: long enough
    # that the two workers overlap even when one starts late on a loaded machine; at 0.3 s a
    # loaded run saw one worker finish before the other began, peak 1).
    pytester.makefile(".toml", pyproject="[tool.citebench]\n")
    with StubServer(lambda _r: "pass", latency=1.0) as server:
        result = _record_against(
            pytester,
            server,
            "--citebench-concurrency", "2", "-n", "2",
            "--citebench-param", "api_key=sk-test-0000000000000000",
        )  # fmt: skip
        assert result.ret == 0, result.stdout.str()
        assert server.calls == 8
        assert server.peak_in_flight == 2


def test_a_one_slot_profile_under_two_workers_is_a_usage_error(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    _pyproject(
        pytester,
        """
[tool.citebench.models."one-slot"]
model = "openai/x"
api_base = "http://127.0.0.1:9/v1"
concurrency = 1
needs_key = false
""",
    )
    result = pytester.runpytest(
        "--citebench", "--citebench-model", "one-slot", "--citebench-record", "once",
        "-n", "2", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*one-slot, whose profile serves 1 request(s) at a time*-n 1*"])
    # Replaying reaches no server: the same run without recording is allowed.
    result = pytester.runpytest(
        "--citebench", "--citebench-model", "one-slot", "-n", "2", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret != pytest.ExitCode.USAGE_ERROR
