"""The plugin seen from outside: pytest runs on the tiny suite, checked by what users see."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

TINY_IDS = {
    "suites/tiny/suite.toml::direct::2001.00001-s1[citebench/bm25]",
    "suites/tiny/suite.toml::indirect::2001.00002-s1[citebench/bm25]",
}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_without_flag_no_items_and_nothing_heavy_imported(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    pytester.makepyfile(
        test_probe="""
        import sys
        def test_probe():
            heavy = {"litellm", "torch", "numpy", "sentence_transformers", "vcr", "rank_bm25", "nltk"}
            assert not heavy & set(sys.modules), heavy & set(sys.modules)
            # Nor any paper: their options are added only once --citebench is on (~0.25 s).
            papers = [m for m in sys.modules if m.startswith("pytest_citebench.papers")]
            assert not papers, papers
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)  # the probe only: suite.toml files are not collected


def test_collect_only_ids_markers_and_models(pytester: pytest.Pytester, tiny: Path) -> None:
    result = pytester.runpytest("--citebench", "--collect-only", "-q")
    ids = {line for line in result.outlines if "::" in line}
    assert ids >= TINY_IDS
    assert len(ids) == 4 * 2  # items x tasks, one model
    two = pytester.runpytest(
        "--citebench",
        "--collect-only",
        "-q",
        "--citebench-model",
        "citebench/bm25",
        "--citebench-model",
        "openai/gpt-4o-mini",
    )
    assert len({line for line in two.outlines if "::" in line}) == 16
    only = pytester.runpytest("--citebench", "--collect-only", "-q", "-m", "indirect and tiny")
    assert {line for line in only.outlines if "::" in line} == {
        f"suites/tiny/suite.toml::indirect::{i}[citebench/bm25]"
        for i in ("2001.00001-s1", "2001.00001-s2", "2001.00002-s1", "2001.00002-s2")
    }
    k = pytester.runpytest(
        "--citebench", "--collect-only", "-q", "-k", "2001.00002 and not indirect"
    )
    assert len([line for line in k.outlines if "::" in line]) == 2


def test_outcomes_categories_and_results_file(pytester: pytest.Pytester, tiny: Path) -> None:
    result = pytester.runpytest(
        "--citebench", "--citebench-results", "out.jsonl", "-p", "no:cacheprovider"
    )
    assert result.ret == 0  # hallucinations and abstentions do not fail the run by themselves
    assert result.parseoutcomes() == {"passed": 6, "hallucinated": 1, "abstained": 1}
    result.stdout.fnmatch_lines(
        ["*= citebench =*", "*tiny*indirect*citebench/bm25*", "*expected: Efficient Estimation*"]
    )
    records = read_jsonl(pytester.path / "out.jsonl")
    items = [r for r in records if r["type"] == "item"]
    aggs = [r for r in records if r["type"] == "aggregate"]
    assert len(items) == 8 and len(aggs) == 2
    wrong = next(r for r in items if r["outcome"] == "hallucinated")
    assert wrong["item_id"] == "2001.00001-s2" and wrong["task"] == "indirect"
    assert wrong["expected"] == "Efficient Estimation of Word Representations in Vector Space"
    assert set(wrong["metrics"]) == {"bleu", "f1", "hr_paper", "hr_code"}
    indirect = next(a for a in aggs if a["task"] == "indirect")
    assert indirect["counts"] == {
        "correct": 2,
        "partial": 0,
        "abstained": 1,
        "unanswered": 0,
        "hallucinated": 1,
        "error": 0,
    }
    assert wrong["reason"].startswith("names a title that is not the gold")
    assert indirect["metrics"]["accuracy"]["value"] == 0.5
    assert indirect["metrics"]["pp"]["value"] == 0.25
    lo, hi = indirect["metrics"]["accuracy"]["ci"]
    assert lo < 0.5 < hi


def test_strict_turns_hallucinations_into_failures_and_lf_reruns_them(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    result = pytester.runpytest("--citebench", "--citebench-strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(
        ["*hallucinated (--citebench-strict)*", "*expected: Efficient Estimation*", "*given:*BERT*"]
    )
    again = pytester.runpytest("--citebench", "--citebench-strict", "--lf", "-q")
    assert again.parseoutcomes()["failed"] == 1
    assert "1 failed" in again.outlines[-1] and "passed" not in again.outlines[-1]


@pytest.mark.parametrize(
    ("gate", "exit_code"),
    [
        ("tiny:indirect:accuracy>=0.99", pytest.ExitCode.TESTS_FAILED),
        ("tiny:indirect:accuracy>=0.25", pytest.ExitCode.OK),
        ("t*:*:hallucinated<=0.25", pytest.ExitCode.OK),
        ("tiny:direct:hr_paper<=-1", pytest.ExitCode.TESTS_FAILED),
    ],
)
def test_gates_from_cli(pytester: pytest.Pytester, tiny: Path, gate: str, exit_code: int) -> None:
    result = pytester.runpytest("--citebench", "--citebench-gate", gate)
    assert result.ret == exit_code
    verdict = "PASS" if exit_code == pytest.ExitCode.OK else "FAIL"
    result.stdout.fnmatch_lines([f"*{verdict} gate *{gate.split(':')[-1].split('=')[0]}*measured*"])


def test_gates_from_manifest_and_pyproject(pytester: pytest.Pytester, tiny: Path) -> None:
    manifest = tiny / "suite.toml"
    manifest.write_text(
        manifest.read_text().replace("gates = []", 'gates = ["indirect:accuracy>=0.9"]')
    )
    result = pytester.runpytest("--citebench")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*FAIL gate tiny:indirect:accuracy>=0.9 *suite.toml* measured 0.5 (95% CI*"]
    )
    manifest.write_text(manifest.read_text().replace("accuracy>=0.9", "accuracy>=0.5"))
    pytester.makefile(
        ".toml", pyproject='[tool.citebench]\ngates = ["tiny:direct:accuracy>=1.01"]\n'
    )
    result = pytester.runpytest("--citebench")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL gate tiny:direct:accuracy>=1.01 [pyproject.toml*"])
    result.stdout.fnmatch_lines(["*PASS gate tiny:indirect:accuracy>=0.5 *suite.toml*"])


def test_bad_gate_is_a_usage_error(pytester: pytest.Pytester, tiny: Path) -> None:
    result = pytester.runpytest("--citebench", "--citebench-gate", "tiny:indirect:accuracy=0.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*gate 'tiny:indirect:accuracy=0.5' is not of the form*"])
    result = pytester.runpytest("--citebench", "--citebench-gate", "tiny:indirect:acuracy>=0.5")
    result.stderr.fnmatch_lines(["*unknown metric 'acuracy'*"])


def test_unmatched_gate_is_reported_not_dropped(pytester: pytest.Pytester, tiny: Path) -> None:
    # A gate on a suite that exists but whose items this run did not select: SKIP, not a pass.
    # (A gate naming no suite that exists is a usage error: test_hardening.py, issue 13 row 11.)
    result = pytester.runpytest(
        "--citebench", "-k", "not indirect", "--citebench-gate", "tiny:indirect:accuracy>=0.5"
    )
    result.stdout.fnmatch_lines(["*SKIP gate tiny:indirect:accuracy>=0.5*no results matched*"])


def test_xdist_gives_identical_aggregates(pytester: pytest.Pytester, tiny: Path) -> None:
    serial = pytester.runpytest_subprocess(
        "--citebench", "-n", "0", "--citebench-results", "serial.jsonl", "-p", "no:cacheprovider"
    )
    dist = pytester.runpytest_subprocess(
        "--citebench", "-n", "2", "--citebench-results", "dist.jsonl", "-p", "no:cacheprovider"
    )
    assert serial.ret == dist.ret == 0
    a = read_jsonl(pytester.path / "serial.jsonl")
    b = read_jsonl(pytester.path / "dist.jsonl")
    aggs = lambda rs: [r for r in rs if r["type"] == "aggregate"]  # noqa: E731
    assert aggs(a) == aggs(b) and len(aggs(a)) == 2
    key = lambda r: (r["task"], r["item_id"])  # noqa: E731
    items = lambda rs: sorted(  # noqa: E731
        (key(r), r["outcome"], r["answer"]) for r in rs if r["type"] == "item"
    )
    assert items(a) == items(b)


BAD_CASES = {
    "malformed JSON": ('{"id": "x1", "citing_title": "t"', "items.jsonl:1: malformed JSON"),
    "missing field": (
        '{"id": "x1", "citing_title": "t", "sentence": "s", "cited_title": "c"}',
        "items.jsonl:1: field 'cited_authors': missing",
    ),
    "mistyped field": (
        '{"id": "x1", "citing_title": "t", "sentence": 3, "cited_title": "c", "cited_authors": "a"}',
        "items.jsonl:1: field 'sentence': expected string, got integer",
    ),
    "duplicate id": (
        '{"id": "x1", "citing_title": "t", "sentence": "s", "cited_title": "c", "cited_authors": "a"}\n'
        * 2,
        "items.jsonl:2: field 'id': duplicate id 'x1' (first on line 1)",
    ),
    "empty suite": ("\n", "items.jsonl: empty suite"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_suite_is_one_clear_error_and_others_still_run(
    pytester: pytest.Pytester, tiny: Path, case: str
) -> None:
    content, message = BAD_CASES[case]
    bad = pytester.path / "suites" / "bad"
    bad.mkdir()
    (bad / "suite.toml").write_text(
        (tiny / "suite.toml")
        .read_text()
        .replace('name = "tiny"', 'name = "bad"')
        .replace('corpus = "corpus.jsonl"\n', "")
    )
    (bad / "items.jsonl").write_text(content)
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["passed"] == 6  # the tiny suite still ran
    result.stdout.fnmatch_lines([f"*invalid suite: *{message}*"])


def test_bad_manifest_and_non_utf8(pytester: pytest.Pytester, tiny: Path) -> None:
    bad = pytester.path / "suites" / "bad"
    bad.mkdir()
    (bad / "suite.toml").write_text(
        (tiny / "suite.toml")
        .read_text()
        .replace('name = "tiny"', 'name = "bad"')
        .replace('"direct", "indirect"', '"direct", "telepathy"')
    )
    result = pytester.runpytest("--citebench")
    result.stdout.fnmatch_lines(
        ["*invalid suite: *suite.toml: field 'tasks': unknown task 'telepathy'*"]
    )
    (bad / "suite.toml").write_text(
        (tiny / "suite.toml").read_text().replace('name = "tiny"', 'name = "bad"')
    )
    (bad / "items.jsonl").write_bytes(b'{"id": "caf\xe9"}\n')
    (bad / "corpus.jsonl").write_text((tiny / "corpus.jsonl").read_text())
    result = pytester.runpytest("--citebench")
    result.stdout.fnmatch_lines(["*invalid suite: *items.jsonl:1: not UTF-8*"])
    validate = pytester.run(sys.executable, "-m", "pytest_citebench", "validate", "suites")
    assert validate.ret == 1
    validate.stderr.fnmatch_lines(["ERROR *items.jsonl:1: not UTF-8*"])
    validate.stdout.fnmatch_lines(["ok    tiny: 4 items*"])


def test_summary_compares_models_side_by_side(pytester: pytest.Pytester, tiny: Path) -> None:
    textwrap.dedent("")
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "citebench/bm25",
        "--citebench-model",
        "citebench/nosuch",
    )
    # An unknown model is an error for each of its items, never a pass.
    assert result.parseoutcomes()["failed"] == 8
    result.stdout.fnmatch_lines(
        [
            "*unknown built-in model 'citebench/nosuch'*",
            "*ERROR citebench/nosuch: 8 item(s) ended in an error*",
        ]
    )
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if "citebench: per suite" in line)
    # The next section (the kinds of wrong citation have rows per suite too) ends the table.
    end = next(i for i, line in enumerate(lines) if i > start and "citebench:" in line)
    table = [line for line in lines[start:end] if line.startswith("tiny ")]
    assert [line.split()[2] for line in table] == ["citebench/bm25", "citebench/nosuch"] * 2


# -- the collector's thresholds: raised while cases run, given back after ------------------------

_REPORT_GC = """
import gc

def pytest_runtest_call(item):
    print(f"\\nthresholds in a case: {gc.get_threshold()}")
"""


def test_gc_thresholds_are_raised_while_cases_run_and_given_back(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    import gc

    from pytest_citebench.run.scheduler import GC_THRESHOLDS

    pytester.makeconftest(_REPORT_GC)
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        result = pytester.runpytest("--citebench", "-p", "no:cacheprovider", "-s")
        after = gc.get_threshold()
    finally:
        gc.set_threshold(*before)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"thresholds in a case: {GC_THRESHOLDS}"])
    assert after == (700, 10, 10)


# -- per-test log capture: off for a run of citebench cases only, unless logs are asked for ------

_REPORT_LOGGING = """
def pytest_sessionfinish(session):
    has = session.config.pluginmanager.has_plugin("logging-plugin")
    print(f"\\nlogging-plugin registered: {has}")
"""


@pytest.mark.parametrize(
    ("extra", "python_test", "kept"),
    [
        ([], False, False),
        (["--log-level=INFO"], False, True),
        (["-o", "log_cli=true"], False, True),
        ([], True, True),  # an ordinary test in the same run keeps its caplog
    ],
)
def test_log_capture_is_dropped_only_for_a_run_of_cases_that_asks_for_no_logs(
    pytester: pytest.Pytester, tiny: Path, extra: list[str], python_test: bool, kept: bool
) -> None:
    pytester.makeconftest(_REPORT_LOGGING)
    paths = []
    if python_test:
        pytester.makepyfile(
            test_plain="def test_logs(caplog):\n    import logging\n"
            "    logging.getLogger('x').warning('hi')\n    assert 'hi' in caplog.text\n"
        )
        paths = ["suites", "test_plain.py"]
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider", "-s", *extra, *paths)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([f"logging-plugin registered: {kept}"])
