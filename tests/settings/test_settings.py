"""Settings from every source go through one check (settings/checks.py): a hostile value in
pyproject.toml, a profile or a flag is one usage error (exit 4) naming the setting, never an
INTERNALERROR, a silent no-op or an error per item. Also the cost cap on unpriced models, and
manifests that ``validate`` and the run judge alike (duplicate tasks, gates, paths)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_citebench.__main__ import main as cli_main
from pytest_citebench.settings.checks import SETTINGS, SettingError, check
from pytest_citebench.suites import SuiteError, discover, load_manifest
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import REPO, TINY

# Values that no setting accepts, whatever its kind (a list-of-strings setting refuses a bare
# string, a number refuses a string, NaN, infinity and a boolean, a string refuses a number).
_HOSTILE_ANY = st.one_of(
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.booleans(),
    st.dictionaries(st.text(min_size=1, max_size=3), st.integers(), min_size=1, max_size=2),
)


def _hostile(key: str) -> st.SearchStrategy[Any]:
    spec = SETTINGS[key]
    if spec.kind in ("int", "float"):
        out_of_range: list[st.SearchStrategy[Any]] = [
            _HOSTILE_ANY,
            st.text(max_size=8),  # a string is never a number, "0.5" included
            st.lists(st.integers(), max_size=2),
        ]
        if spec.low is not None:
            below = st.floats(max_value=spec.low, allow_nan=False, allow_infinity=False)
            out_of_range.append(below.filter(lambda v: v < spec.low or spec.low_open))
        if spec.high is not None:
            out_of_range.append(
                st.floats(min_value=spec.high, allow_nan=False, allow_infinity=False).filter(
                    lambda v: v > spec.high
                )
            )
        if spec.kind == "int":
            out_of_range.append(st.floats(0.1, 0.9))  # not whole
        return st.one_of(out_of_range)
    if spec.kind in ("strs", "choices"):
        return st.one_of(
            _HOSTILE_ANY,
            st.text(min_size=1, max_size=8),  # a bare string: once iterated letter by letter
            st.integers(),
            st.lists(st.integers(), min_size=1, max_size=2),
            st.just([""]),
        )
    if spec.kind == "url":
        return st.one_of(
            st.integers(),
            st.just(""),
            st.lists(st.text(), max_size=2),
            # Any scheme litellm would send to but no provider answers on, and no host.
            st.sampled_from(["file", "ftp", "gopher", "javascript", "data", "ws", ""]).flatmap(
                lambda scheme: st.text(alphabet="abc/.:", max_size=12).map(
                    lambda rest: f"{scheme}://{rest}" if scheme else rest
                )
            ),
            st.sampled_from(["http://", "https://", "http:///v1", "https:?x"]),
        )
    if spec.kind in ("str", "choice"):
        return st.one_of(
            st.integers(),
            st.floats(allow_nan=True),
            st.just(""),
            st.lists(st.text(), max_size=2),
        )
    return st.one_of(st.integers(), st.text(), st.lists(st.integers(), max_size=2))


@given(data=st.data())
@settings(max_examples=400, deadline=None)
def test_every_hostile_value_of_every_setting_is_one_error_naming_it(data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(SETTINGS)))
    value = data.draw(_hostile(key))
    if SETTINGS[key].kind == "choice" and value in SETTINGS[key].choices:
        return
    source = f"pyproject.toml [tool.citebench] {key}"
    with pytest.raises(SettingError) as caught:
        check(key, value, source=source)
    assert str(caught.value).startswith(f"{source} = ")
    assert "must be" in str(caught.value)


def test_valid_values_pass_and_are_normalised() -> None:
    assert check("retries", 3.0, source="x") == 3 and isinstance(
        check("retries", 3.0, source="x"), int
    )
    assert check("timeout", 0.5, source="x") == 0.5
    assert check("default_models", ["citebench/bm25"], source="x") == ["citebench/bm25"]
    assert check("gates", [], source="x") == []
    assert check("temperature", 0, source="x") == 0.0
    assert check("correction", "bh", source="x") == "bh"
    assert check("api_base", "https://proxy.example/v1", source="x") == "https://proxy.example/v1"
    assert check("api_base", "HTTP://127.0.0.1:8011/v1", source="x") == "HTTP://127.0.0.1:8011/v1"


def test_the_adversarial_choices_are_the_papers_swaps() -> None:
    """settings/checks.py names the swaps without importing the paper; the paper's own kind check is
    gone, so the two lists must not drift apart."""
    from pytest_citebench.papers.reasons.swaps import SWAPS

    assert SETTINGS["adversarial"].choices == tuple(SWAPS)


def _faults_table() -> dict[str, str]:
    """docs/faults.md's table of what each setting must be, as {setting: must be}."""
    doc = (REPO / "docs" / "faults.md").read_text("utf-8")
    start = doc.index("| setting | must be |")
    rows = {}
    for line in doc[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        names, must = line.strip("|").split("|", 1)
        for key in re.findall(r"`([a-z_]+)`", names):
            rows[key] = must
    return rows


def test_the_faults_table_says_what_each_setting_must_be() -> None:
    """The docs' table against the specs: every setting, its kind, bounds and choices."""
    rows = _faults_table()
    assert set(rows) == set(SETTINGS)
    for key, spec in SETTINGS.items():
        must = rows[key]
        if spec.kind in ("int", "float"):
            assert ("whole number" in must) == (spec.kind == "int"), key
            if spec.high is not None:
                assert f"{spec.low:g} to {spec.high:g}" in must, key
            elif spec.low is not None:
                assert f"{'>' if spec.low_open else '≥'} {spec.low:g}" in must, key
        elif spec.kind == "choice":
            assert set(re.findall(r"`([a-z]+)`", must)) == set(spec.choices), key
        elif spec.kind in ("strs", "choices"):
            assert "a list of" in must, key
        elif spec.kind == "str":
            assert "a non-empty string" in must, key
        elif spec.kind == "bool":
            assert "`true` or `false`" in must, key
        elif spec.kind == "url":
            assert "`http://` or `https://` URL" in must, key
        else:
            assert "a table" in must, key


def _toml(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return json.dumps(value)


# One hostile value per setting the pyproject table takes, end to end: the exit status and the
# message pytest prints (the property above covers the values; this covers the wiring).
_PYPROJECT_CASES = {
    "temperature": "nan",
    "top_p": "inf",
    "max_tokens": '"256"',
    "retries": "-1",
    "timeout": "0",
    "concurrency": "0",
    "processes": "-1",
    "max_errors": "-3",
    "max_cost": "nan",
    "rag_k": "0",
    "tolerance": '"0.02"',
    "correction": '"bonferroni"',
    "tables": '"wide"',
    "rag": '"naive"',
    "default_models": '"citebench/bm25"',
    "models": '"citebench/bm25"',
    "suites": '"suites"',
    "gates": '"tiny:direct:accuracy>=0"',
    "baseline": "7",
    "cassettes": "[1]",
    "api_base": "3",
    "params": '"seed=7"',
    "adversarial": '"title"',
    "adversarial_threshold": '"0.7"',
    "include_suspect": '"yes"',
    "judge": '""',
    "judge_mode": '"every"',
}


def test_every_setting_has_an_end_to_end_case() -> None:
    assert set(_PYPROJECT_CASES) == set(SETTINGS) - {"show"}  # show is a flag only


def test_the_reference_lists_every_key_the_table_takes() -> None:
    readme = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    start = readme.index("Defaults can also be set in `[tool.citebench]`")
    listed = re.findall(r"`([a-z_]+)`", readme[start : readme.index("Command-line", start)])
    assert set(listed) == set(_PYPROJECT_CASES)


@pytest.mark.parametrize("key", sorted(_PYPROJECT_CASES))
def test_hostile_pyproject_value_is_one_usage_error_naming_the_setting(
    pytester: pytest.Pytester, tiny: Path, key: str
) -> None:
    pytester.makepyprojecttoml(f"[tool.citebench]\n{key} = {_PYPROJECT_CASES[key]}\n")
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert f"[tool.citebench] {key} = " in err, err
    assert "INTERNALERROR" not in err + result.stdout.str() and "Traceback" not in err


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--citebench-temperature", "nan"),
        ("--citebench-top-p", "inf"),
        ("--citebench-retries", "-1"),
        ("--citebench-timeout", "0"),
        ("--citebench-timeout", "-2"),
        ("--citebench-concurrency", "0"),
        ("--citebench-processes", "-1"),
        ("--citebench-max-cost", "-1"),
        ("--citebench-max-cost", "nan"),
        ("--citebench-max-tokens", "0"),
        ("--citebench-show", "-1"),
        ("--citebench-tolerance", "nan"),
        ("--citebench-param", "temperature=NaN"),
        ("--citebench-param", "seed=Infinity"),
        ("--citebench-api-base", "file:///etc/passwd"),
        ("--citebench-param", "api_base=file:///etc/passwd"),
        ("--citebench-param", "base_url=ftp://127.0.0.1/v1"),
    ],
)
def test_hostile_flag_is_one_usage_error_before_any_item(
    pytester: pytest.Pytester, tiny: Path, flag: str, value: str
) -> None:
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider", flag, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{flag} *= *must be*"])
    assert "passed" not in result.stdout.str()  # no item ran


@pytest.mark.parametrize(
    "table",
    [
        '[tool.citebench]\napi_base = "file:///etc/passwd"\n',
        '[tool.citebench]\nparams = { api_base = "file:///etc/passwd" }\n',
        '[tool.citebench.models."m"]\nmodel = "openai/x"\napi_base = "file:///etc/passwd"\n',
        '[tool.citebench.models."m"]\nmodel = "openai/x"\nparams = { base_url = "file:///x" }\n',
    ],
    ids=["pyproject", "pyproject-params", "profile", "profile-params"],
)
def test_a_non_http_api_base_is_refused_at_start_and_never_sent(
    pytester: pytest.Pytester, tiny: Path, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``file:`` endpoint was sent, and retried three times, on every item: from any source
    it is one usage error before any item, naming where it came from."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000000000")
    pytester.makepyprojecttoml(table)
    result = pytester.runpytest(
        "--citebench", "--citebench-model", "m", "--citebench-record", "once",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert "file:///" in err and "must be an http:// or https:// URL" in err, err
    assert ('models."m"]' in err) == ("models" in table), err
    assert "Traceback" not in err and "passed" not in result.stdout.str()


def test_hostile_profile_value_names_the_profile_and_the_setting(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    pytester.makepyprojecttoml('[tool.citebench.models."m"]\nmodel = "openai/x"\nretries = -1\n')
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(['*[[]tool.citebench.models."m"[]] retries = -1: *must be*'])


@given(
    key=st.sampled_from(["temperature", "timeout", "retries", "concurrency", "default_models"]),
    value=st.one_of(
        st.text(alphabet="abc-. ", min_size=1, max_size=5),
        st.floats(max_value=-0.001, allow_nan=False, allow_infinity=False),
        st.just(math.nan),
        st.just(math.inf),
    ),
)
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_property_hostile_pyproject_never_reaches_internalerror(
    pytester: pytest.Pytester, key: str, value: Any
) -> None:
    """The property through pytest itself: whatever is drawn, exit 4 naming the setting."""
    target = pytester.path / "suites" / "tiny"
    if not target.exists():
        shutil.copytree(TINY, target)
    pytester.makepyprojecttoml(f"[tool.citebench]\n{key} = {_toml(value)}\n")
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, (key, value, result.stdout.str())
    assert f"[tool.citebench] {key} = " in result.stderr.str()


# -- the cost cap on a model litellm cannot price ------------------------------------------------


def test_cost_cap_on_an_unpriced_model_is_one_usage_error_before_any_call(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000000000")
    with StubServer(lambda r: "pass") as server:
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "openai/not-priced-anywhere",
            "--citebench-api-base",
            server.url,
            "--citebench-record",
            "once",
            "--citebench-max-cost",
            "0.000001",
            "-p",
            "no:cacheprovider",
        )
        calls = server.calls
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert calls == 0
    result.stderr.fnmatch_lines(
        ["*--citebench-max-cost 1e-06 with --citebench-model openai/not-priced-anywhere*"]
    )
    assert "input_cost_per_token" in result.stderr.str()


def test_cost_cap_holds_for_a_model_given_its_price(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The way out the error names: a price per token makes the cap count, and stop."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000000000")
    with StubServer(lambda r: "pass") as server:
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "openai/not-priced-anywhere",
            "--citebench-api-base",
            server.url,
            "--citebench-record",
            "once",
            "--citebench-concurrency",
            "1",
            "--citebench-param",
            "input_cost_per_token=0.001",
            "--citebench-param",
            "output_cost_per_token=0.001",
            "--citebench-max-cost",
            "0.000001",
            "--citebench-results",
            "r.jsonl",
            "-p",
            "no:cacheprovider",
        )
        calls = server.calls
    records = [json.loads(x) for x in (pytester.path / "r.jsonl").read_text().splitlines()]
    stopped = [r for r in records if "--citebench-max-cost" in (r.get("error") or "")]
    assert calls == 1 and len(stopped) == 7, (calls, result.stdout.str())


def test_an_answer_with_no_price_stops_a_capped_run() -> None:
    """The runtime net under the start-up check: an unpriced paid answer ends the spending."""
    from pytest_citebench.errors import BudgetExceeded
    from pytest_citebench.models import Budget

    budget = Budget(5.0)
    budget.check("m")
    budget.add(None, "m")
    with pytest.raises(BudgetExceeded, match="could not price an answer of m"):
        budget.check("m")
    assert Budget(None).check("m") is None  # no cap: nothing to keep


def test_usage_counts_a_server_cannot_mean_are_not_believed() -> None:
    """Issue 36: negative token counts became a negative cost, counted by the cap as credit."""
    from pytest_citebench.errors import BudgetExceeded
    from pytest_citebench.models import Budget
    from pytest_citebench.models.usage import MAX_TOKENS_PER_CALL, usage_problem

    def problem(p: Any, c: Any, cost: Any = 0.001) -> str | None:
        return usage_problem(p, c, cost, prompt="a prompt", answer="an answer")

    assert problem(12, 3) is None and problem(MAX_TOKENS_PER_CALL, 1) is None
    assert "negative" in str(problem(-1000, 3)) and "negative" in str(problem(5, -1))
    assert "whole number" in str(problem(12.5, 3)) and "whole number" in str(problem(True, 3))
    assert "whole number" in str(problem("12", 3)) and "whole number" in str(problem(None, 3))
    assert "more than any model" in str(problem(10**15, 3))
    assert "prompt_tokens 0" in str(problem(0, 3)) and "completion_tokens 0" in str(problem(5, 0))
    assert usage_problem(5, 0, 0.0, prompt="p", answer="") is None  # an empty answer is 0
    for cost in (-0.5, math.nan, math.inf):
        assert "cost" in str(problem(5, 3, cost))
    # The budget's own net: a negative or non-finite cost is never credit, it is unknown.
    budget = Budget(0.01)
    budget.add(0.005, "m")
    budget.add(-1.0, "m")
    assert budget.spent == 0.005
    with pytest.raises(BudgetExceeded, match=r"could not price an answer of m \(its usage"):
        budget.check("m")


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -1000, "completion_tokens": -1000, "total_tokens": -2000},
        {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        {"prompt_tokens": 10**15, "completion_tokens": 3, "total_tokens": 10**15 + 3},
        # litellm refuses the body outright: the item is an error, and the 200s still count.
        {"prompt_tokens": 12.5, "completion_tokens": 3, "total_tokens": 15.5},
    ],
    ids=["negative", "zero", "absurd", "fractional"],
)
def test_a_cap_counts_untrusted_usage_at_its_most_never_as_credit(
    pytester: pytest.Pytester,
    tiny: Path,
    monkeypatch: pytest.MonkeyPatch,
    usage: dict[str, Any],
) -> None:
    """Issue 36: with negative counts 6 calls went under a 0.01 USD cap. Each call whose usage
    is not believed counts at an upper bound of its price (here every prompt byte and all 256
    max_tokens at 0.001 USD: 0.53 USD), so a 0.8 USD cap stops after two calls (before, all 8
    items called, 16 attempts for the fractional counts); the records say the usage is unknown,
    and the terminal says so once."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000000000")
    with StubServer(lambda r: "pass", usage=lambda r: usage) as server:
        result = pytester.runpytest(
            "--citebench",
            "--citebench-model",
            "openai/not-priced-anywhere",
            "--citebench-api-base",
            server.url,
            "--citebench-record",
            "once",
            "--citebench-concurrency",
            "1",
            "--citebench-retries",
            "1",
            "--citebench-max-tokens",
            "256",
            "--citebench-param",
            "input_cost_per_token=0.001",
            "--citebench-param",
            "output_cost_per_token=0.001",
            "--citebench-max-cost",
            "0.8",
            "--citebench-results",
            "r.jsonl",
            "-p",
            "no:cacheprovider",
        )
        calls = server.calls
    out = result.stdout.str()
    assert calls == 2, (calls, out)
    records = [json.loads(x) for x in (pytester.path / "r.jsonl").read_text().splitlines()]
    items = [r for r in records if r.get("type") == "item"]
    stopped = [r for r in items if "--citebench-max-cost" in (r.get("error") or "")]
    assert len(stopped) >= len(items) - calls, out
    answered = [r for r in items if r["outcome"] != "error"]
    for record in answered:  # unknown, never 0 or a negative number
        u = record["usage"]
        assert u["prompt_tokens"] is None and u["completion_tokens"] is None and u["cost"] is None
        assert u["untrusted"] == 1 and u["untrusted_reason"]
    if answered:
        assert out.count("could not be believed") == 1 and "2 call(s)" in out, out
    assert "Traceback" not in out and "INTERNALERROR" not in out


# -- manifests: validate rejects what the run rejects ---------------------------------------------


def _suite(tmp_path: Path) -> Path:
    target = tmp_path / "s"
    shutil.copytree(TINY, target)
    return target


def _edit(target: Path, old: str, new: str) -> None:
    manifest = target / "suite.toml"
    text = manifest.read_text()
    assert old in text
    manifest.write_text(text.replace(old, new))


def test_a_task_listed_twice_is_an_error_with_file_and_line(tmp_path: Path) -> None:
    target = _suite(tmp_path)
    _edit(target, 'tasks = ["direct", "indirect"]', 'tasks = [\n  "indirect",\n  "indirect",\n]')
    with pytest.raises(SuiteError) as caught:
        load_manifest(target)
    assert str(caught.value) == (
        f"{target / 'suite.toml'}:6: field 'tasks': 'indirect' is listed twice; list each task once"
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("gates = []", 'gates = ["indirect:accuracy>=nan"]', "not of the form"),
        ("gates = []", 'gates = ["indirect:accuracy>=0.5x"]', "not of the form"),
        ("gates = []", 'gates = ["indirect:acuracy>=0.5"]', "unknown metric"),
        ('corpus = "corpus.jsonl"', 'corpus = "../corpus.jsonl"', "outside the suite folder"),
        ('corpus = "corpus.jsonl"', 'corpus = "/etc/hosts"', "outside the suite folder"),
        ("gates = []", 'items = "../items.jsonl"\ngates = []', "outside the suite folder"),
        ('tasks = ["direct", "indirect"]', 'tasks = ["direct", "direct"]', "listed twice"),
    ],
)
def test_validate_and_the_run_reject_the_same_manifests(
    pytester: pytest.Pytester,
    tiny: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    message: str,
) -> None:
    _edit(tiny, old, new)
    assert cli_main(["validate", str(tiny)]) == 1
    assert message in capsys.readouterr().err
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    assert result.ret != pytest.ExitCode.OK
    assert message in result.stdout.str() + result.stderr.str()


# -- a symlinked suite: the same gates in every layout --------------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
@pytest.mark.parametrize("layout", ["-n0", "-n2", "merge"])
def test_a_symlinked_suites_manifest_gate_applies_in_every_layout(
    pytester: pytest.Pytester, layout: str
) -> None:
    real = pytester.path / "elsewhere" / "tiny"
    shutil.copytree(TINY, real)
    _edit(real, "gates = []", 'gates = ["indirect:accuracy>=0.99"]')
    (pytester.path / "suites").mkdir()
    (pytester.path / "suites" / "tiny").symlink_to(real, target_is_directory=True)
    assert [p.parent.name for p in discover(pytester.path / "suites")] == ["tiny"]
    args = ["--citebench", "-p", "no:cacheprovider", "--citebench-results", "r.jsonl"]
    if layout == "merge":
        pytester.runpytest_subprocess(*args)
        code = cli_main(
            ["merge", str(pytester.path / "r.jsonl"), "--suites", str(pytester.path / "suites")]
        )
        assert code == 1
        return
    result = pytester.runpytest_subprocess(*args, "-n", layout[2:])
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*verdict: gate failed: tiny:indirect:accuracy>=0.99*"])
    assert result.stdout.str().count("FAIL gate tiny:indirect:accuracy>=0.99") == 1


def _printed_fixes(message: str) -> list[list[str]]:
    """The argument lists the root check's message offers: the values written with '=', and
    ``-c FILE`` (each replaces the arguments that moved the root)."""
    found = re.search(r"Write such values with '=' \((.*?)\), or pass -c (\S+)", message, re.S)
    assert found is not None, message
    return [found.group(1).split(), ["-c", found.group(2)]]


@pytest.mark.parametrize(
    "pyproject",
    [
        "[tool.pytest.ini_options]\naddopts = ''\n",
        # Configured as the README shows, with [tool.citebench] alone: pytest's fallback.
        '[tool.citebench]\ngates = ["tiny:indirect:accuracy>=0.99"]\n',
    ],
    ids=["pytest-config", "citebench-only"],
)
def test_an_option_value_that_moves_pytests_root_is_a_usage_error_and_each_printed_fix_works(
    pytester: pytest.Pytester, tiny: Path, tmp_path_factory: pytest.TempPathFactory, pyproject: str
) -> None:
    """``--citebench-results /elsewhere/r.jsonl`` (a space, not '='), the file there from an
    earlier run: pytest reads the existing path as an argument when it decides the root, finds
    no configuration above it, and the project's suites were not collected ("no tests ran",
    exit 5, the gate unread, no reason). Now one usage error that says why, and each fix it
    prints is run here as printed (the ``--rootdir`` it used to print failed the same way)."""
    pytester.makepyprojecttoml(pyproject)
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "r.jsonl"
    elsewhere.write_text("", encoding="utf-8")  # an earlier run's results
    moved = pytester.runpytest_subprocess("--citebench", "--citebench-results", str(elsewhere))
    assert moved.ret == pytest.ExitCode.USAGE_ERROR, moved.stdout.str()
    message = moved.stderr.str()
    assert "as the root directory, not" in message and "moved the root" in message, message
    assert f"--citebench-results={elsewhere}" in message
    gated = "gates" in pyproject
    for fix in _printed_fixes(message):
        if fix[0] == "-c":  # -c replaces nothing: the value keeps its space
            fix += ["--citebench-results", str(elsewhere)]
        elsewhere.unlink()
        ran = pytester.runpytest_subprocess("--citebench", *fix)
        assert ran.ret == (1 if gated else 0), (fix, ran.stdout.str(), ran.stderr.str())
        assert elsewhere.is_file(), fix
        if gated:  # the project's [tool.citebench] was read
            ran.stdout.fnmatch_lines(["*gate failed: tiny:indirect:accuracy>=0.99*"])


def test_a_suite_outside_the_project_given_as_an_argument_runs_with_the_projects_settings(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A contributor's shared suite, a temporary one, a checkout beside the project: pytest takes
    a root from the argument (no option moved it), and the run used to be refused with a fix
    (``--rootdir``) that failed the same way. It runs, and the settings are the project's."""
    pytester.makepyprojecttoml(
        "[tool.pytest.ini_options]\naddopts = ''\n\n"
        '[tool.citebench]\ngates = ["tiny:indirect:accuracy>=0.99"]\n'
    )
    outside = tmp_path_factory.mktemp("shared") / "tiny"
    shutil.copytree(TINY, outside)
    result = pytester.runpytest_subprocess("--citebench", str(outside), "-p", "no:cacheprovider")
    assert "moved the root" not in result.stderr.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*gate failed: tiny:indirect:accuracy>=0.99*"])
    assert not (outside.parent.parent / "cassettes").exists()
