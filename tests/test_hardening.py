"""Fixes from hostile testing (issue 13): each test names the row of the issue's table it keeps
fixed. Rows 1-4, 7 and 12 (cassettes) are tested in test_recording.py / test_secrets.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench import jsonl, registry
from pytest_citebench.__main__ import main as cli
from pytest_citebench.results.files import read_results

ODD = "line\u2028separator\u0085next\x0cfeed\u2029para"


def _records(path: Path) -> list[dict[str, Any]]:
    return jsonl.read_objects(path)


def _aggregates(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["suite"], r["task"]): r for r in _records(path) if r.get("type") == "aggregate"}


# -- row 6: one JSON-lines module; U+2028 in an answer survives every reader --------------------


def test_jsonl_splits_at_newline_only_and_counts_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(
        json.dumps({"a": ODD}, ensure_ascii=False) + "\n\n  \n" + '{"b": 1}\r\n[1]\n',
        encoding="utf-8",
    )
    assert list(jsonl.iter_values(path)) == [(1, {"a": ODD}), (4, {"b": 1}), (5, [1])]
    with pytest.raises(jsonl.JsonlError, match=r"a\.jsonl:5: expected a JSON object, got list"):
        jsonl.read_objects(path)
    torn = tmp_path / "torn.jsonl"
    torn.write_text('{"a": 1}\n{"b": \n\n', encoding="utf-8")
    assert jsonl.read_objects(torn, torn_tail_ok=True) == [{"a": 1}]
    with pytest.raises(jsonl.JsonlError, match=r"torn\.jsonl:2: malformed JSON"):
        jsonl.read_objects(torn)
    middle = tmp_path / "middle.jsonl"
    agg = '{"type": "aggregate"}'
    middle.write_text(f'{agg}\n{{"b": \n{agg}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"middle\.jsonl:2: malformed JSON"):
        read_results(middle)


def test_appended_lines_read_back_as_written_and_a_newline_is_refused(tmp_path: Path) -> None:
    """A case's record reaches the results file as the line its worker dumped; a newline in it
    would split one record into two torn lines."""
    path = tmp_path / "r.jsonl"
    appender = jsonl.Appender(path)
    appender.write({"a": ODD})
    appender.write_line(jsonl.dumps({"b": ODD, "c": 1}))
    with pytest.raises(ValueError, match="no newline"):
        appender.write_line('{"d": 1}\n{"e": 2}')
    appender.close()
    appender.write_line('{"f": 1}')  # after close: dropped, as write drops it
    assert jsonl.read_objects(path) == [{"a": ODD}, {"b": ODD, "c": 1}]


def test_a_reports_record_is_parsed_once_however_often_it_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The controller asks for a report's record twice (its status letter, then the record);
    the line is parsed once. A new report is parsed anew, even with equal text."""
    from pytest_citebench.run import items

    parses: list[str] = []
    real_loads = json.loads

    def counting_loads(text: str) -> Any:
        parses.append(text)
        return real_loads(text)

    monkeypatch.setattr(items.json, "loads", counting_loads)

    def report(line: str) -> pytest.TestReport:
        return pytest.TestReport(
            "x::y", ("x", 0, "y"), {}, "passed", None, "call", user_properties=[("citebench", line)]
        )

    line = jsonl.dumps({"type": "item", "outcome": "correct", "answer": "A"})
    first = report(line)
    got = [items.case_record(first), items.case_record(first)]
    assert got[0] == got[1] == ({"type": "item", "outcome": "correct", "answer": "A"}, line)
    assert len(parses) == 1
    second = report("".join(list(line)))  # equal text, another string object
    assert items.case_record(second) == got[0]
    assert len(parses) == 2
    third = report(jsonl.dumps({"type": "item", "outcome": "partial"}))
    assert items.case_record(third)[0]["outcome"] == "partial"  # type: ignore[index]
    assert items.case_record(first) == got[0]


def test_a_compacted_record_is_equal_and_shares_its_trajectory_strings() -> None:
    """The controller keeps every record (issue 46): compacted, a record is equal to the one
    parsed, keeps its types (lists stay lists), and two records showing the same paper hold
    one copy of its title, however deep in a stage's details."""
    from pytest_citebench.run import items

    def record(query: str) -> dict[str, Any]:
        title = "LightGCN: Simplifying and Powering Graph Convolution Network " + "x" * 20
        shown = [["2002.02126", title], ["1706.02263", "Graph Convolutional Matrix Completion"]]
        calls = [{"tool": "search", "query": query, "shown": shown, "ok": True}]
        agent = {"calls": calls, "cited": {"id": "2002.02126", "title": title}, "steps": 3}
        stage = {"name": "agentic", "answer": title, "raw": title, "details": {"agent": agent}}
        return {"type": "item", "answer": title, "metrics": {"f1": 1.0}, "stages": [stage]}

    lines = [jsonl.dumps(record("q" * 300 + str(n))) for n in range(2)]
    first, second = (items.compact(json.loads(line)) for line in lines)
    assert first == json.loads(lines[0]) and second == json.loads(lines[1])
    assert jsonl.dumps(first) == lines[0]
    one, two = (r["stages"][0]["details"]["agent"] for r in (first, second))
    assert one["calls"][0]["shown"][0][1] is two["calls"][0]["shown"][0][1]
    assert one["cited"]["title"] is two["cited"]["title"]
    assert isinstance(one["calls"][0]["shown"][0], list)
    assert one["calls"][0]["query"] is not two["calls"][0]["query"]


def test_answer_with_line_separator_survives_resume_merge_and_compare(
    pytester: pytest.Pytester, tiny: Path, capsys: Any
) -> None:
    """Row 6: an answer holding U+2028 broke every reader built on str.splitlines()."""
    first = pytester.runpytest("--citebench", "--citebench-results", "r.jsonl")
    assert first.ret == 0
    results = pytester.path / "r.jsonl"
    records = _records(results)
    for record in records:
        if record.get("type") == "item":
            record["answer"] = record["answer"] + ODD
    jsonl.write(results, records)
    assert "\u2028" in results.read_text(encoding="utf-8")  # written raw, not escaped

    items, aggregates = read_results(results)
    assert len(items) == 8 and len(aggregates) == 2
    assert all(i["answer"].endswith(ODD) for i in items)

    merged = pytester.path / "m.jsonl"
    assert cli(["merge", str(results), "-o", str(merged)]) == 0
    assert all(r["answer"].endswith(ODD) for r in _records(merged) if r["type"] == "item")
    assert cli(["baseline", "compare", str(results), str(merged)]) == 0
    capsys.readouterr()

    jsonl.write(results, items[:5])  # as if the run had stopped after five items
    resumed = pytester.runpytest(
        "--citebench", "--citebench-resume", "r.jsonl", "--citebench-results", "again.jsonl"
    )
    assert resumed.ret == 0, resumed.stdout.str()
    resumed.stdout.fnmatch_lines(["*5 deselected*"])
    again = [r for r in _records(pytester.path / "again.jsonl") if r["type"] == "item"]
    assert len(again) == 8 and sum(r["answer"].endswith(ODD) for r in again) == 5


# -- row 5: --citebench-resume under xdist keeps the resumed items in aggregates and gates -------


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resume_under_xdist_aggregates_the_resumed_items(
    pytester: pytest.Pytester, tiny: Path, workers: str
) -> None:
    full = pytester.runpytest("--citebench", "--citebench-results", "full.jsonl")
    assert full.ret == 0
    items, _ = read_results(pytester.path / "full.jsonl")
    jsonl.write(pytester.path / "partial.jsonl", items[:5])  # stopped after five items
    resumed = pytester.runpytest_subprocess(
        "--citebench",
        "-n",
        workers,
        "-p",
        "no:cacheprovider",
        "--citebench-resume",
        "partial.jsonl",
        "--citebench-results",
        "resumed.jsonl",
        "--citebench-gate",
        "tiny:direct:accuracy>=0.99",
    )
    assert resumed.ret == 0, resumed.stdout.str()
    resumed.stdout.fnmatch_lines(["*PASS gate tiny:direct:accuracy>=0.99*n=4*"])
    full_aggs = _aggregates(pytester.path / "full.jsonl")
    resumed_aggs = _aggregates(pytester.path / "resumed.jsonl")
    assert {k: a["metrics"]["n"]["value"] for k, a in resumed_aggs.items()} == {
        ("tiny", "direct"): 4,
        ("tiny", "indirect"): 4,
    }
    assert resumed_aggs == full_aggs
    assert sum(r["type"] == "item" for r in _records(pytester.path / "resumed.jsonl")) == 8


# -- row 8: ids and suite names that no file, terminal or report can hold fail at load ----------

TINY_ITEM = {
    "citing_title": "t",
    "sentence": "s",
    "cited_title": "c",
    "cited_authors": "a",
}


def _suite(root: Path, ids: list[str], name: str = "odd") -> Path:
    folder = root / "suites" / "odd"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.toml").write_text(
        f'name = {json.dumps(name)}\nversion = 1\ndescription = "d"\ntasks = ["indirect"]\n'
        '[source]\npaper = "p"\nurl = "u"\nlicence = "CC0-1.0"\n',
        encoding="utf-8",
    )
    (folder / "items.jsonl").write_text(  # ASCII JSON: a lone surrogate is written escaped
        "".join(json.dumps({"id": i, **TINY_ITEM}) + "\n" for i in ids), encoding="utf-8"
    )
    return folder


@pytest.mark.parametrize(
    ("bad_id", "problem"),
    [
        ("a\x00b", "control character U+0000"),
        ("a\rb", "control character U+000D"),
        ("\x1b[31mred", "control character U+001B"),
        ("a\u2028b", "control character U+2028"),
        ("a\u200bb", "control character U+200B"),
        ("\ud800", "control character U+D800"),
        ("x" * 201, "is 201 characters long; the limit is 200"),
        ("", "is empty"),
    ],
)
def test_unusable_item_id_is_a_load_error_naming_file_and_line(
    tmp_path: Path, bad_id: str, problem: str
) -> None:
    from pytest_citebench.suites import SuiteError, load_suite

    folder = _suite(tmp_path, ["ok-1", bad_id])
    with pytest.raises(SuiteError) as caught:
        load_suite(folder)
    message = str(caught.value)
    assert message.startswith(f"{folder / 'items.jsonl'}:2: field 'id': "), message
    assert problem in message
    assert "\x00" not in message and "\r" not in message and "\x1b" not in message
    _suite(tmp_path, ["ok-1", "x" * 200])  # the limit itself is fine
    assert len(load_suite(folder).items) == 2


@pytest.mark.parametrize("bad_name", ["a\x00b", "a\rb", "n\x1b", "x" * 201])
def test_unusable_suite_name_is_a_load_error(tmp_path: Path, bad_name: str) -> None:
    from pytest_citebench.suites import SuiteError, load_manifest

    folder = _suite(tmp_path, ["ok-1"], name=bad_name)
    with pytest.raises(SuiteError, match=r"suite\.toml: field 'name': .*rename the suite"):
        load_manifest(folder)


def test_task_names_are_plain() -> None:
    from pytest_citebench.api import Paper, Task
    from pytest_citebench.errors import CitebenchError

    class Bad(Task):
        name = "in\x00direct"

    with pytest.raises(CitebenchError, match="task name"):
        registry.register(Paper(name="bad", title="bad", tasks=(Bad(),)))
    assert "in\x00direct" not in registry.names()


def test_bad_id_fails_collection_before_any_model_call(pytester: pytest.Pytester) -> None:
    _suite(pytester.path, ["ok-1", "nul\x00id"])
    # A remote model at a closed port: any call would end as a provider error in the results.
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "openai/x",
        "--citebench-api-base",
        "http://127.0.0.1:9/v1",
        "--citebench-results",
        "r.jsonl",
    )
    result.stdout.fnmatch_lines(["*invalid suite: *items.jsonl:2: field 'id': *U+0000*"])
    assert result.parseoutcomes() == {"failed": 1}  # the invalid-suite test, nothing ran
    assert not [r for r in _records(pytester.path / "r.jsonl") if r.get("type") == "item"]


# -- row 10: one suite name in two folders is an error naming both manifests ---------------------


def test_same_suite_name_in_two_folders_is_an_error_naming_both(
    pytester: pytest.Pytester, tiny: Path, capsys: Any
) -> None:
    import shutil

    twin = pytester.path / "suites" / "twin"
    shutil.copytree(tiny, twin)
    first, second = tiny / "suite.toml", twin / "suite.toml"
    assert cli(["validate", str(pytester.path / "suites")]) == 1
    err = capsys.readouterr().err
    assert f"ERROR {second}: field 'name': suite name 'tiny' is already used by {first}" in err
    result = pytester.runpytest("--citebench")
    result.stdout.fnmatch_lines(
        [f"*invalid suite: *{second}: field 'name': suite name 'tiny' is already used by*"]
    )
    assert str(first) in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# -- row 11: a gate naming no suite or task that exists is a usage error at start ----------------


@pytest.mark.parametrize(
    ("where", "spec", "message"),
    [
        (
            "cli",
            "tiny:indirct:accuracy>=0.2",
            "--citebench-gate: gate 'tiny:indirct:accuracy>=0.2': task 'indirct' matches no "
            "task of suite 'tiny'; its tasks: direct, indirect",
        ),
        (
            "cli",
            "reasons/*:indirect:accuracy>=0.2",
            "--citebench-gate: gate 'reasons/*:indirect:accuracy>=0.2': suite 'reasons/*' "
            "matches no suite; known suites: tiny",
        ),
        (
            "pyproject",
            "tni*:*:accuracy>=0.2",
            "pyproject.toml [[]tool.citebench[]]: gate 'tni*:*:accuracy>=0.2': suite 'tni*'*",
        ),
        (
            "manifest",
            "indirct:accuracy>=0.2",
            "*suite.toml: gate 'tiny:indirct:accuracy>=0.2': task 'indirct' matches no task*",
        ),
    ],
)
@pytest.mark.parametrize("workers", ["0", "2"])
def test_gate_matching_no_suite_or_task_is_a_usage_error(
    pytester: pytest.Pytester, tiny: Path, where: str, spec: str, message: str, workers: str
) -> None:
    args = ["--citebench", "-p", "no:cacheprovider", "-n", workers]
    if where == "cli":
        args += ["--citebench-gate", spec]
    elif where == "pyproject":
        pytester.makepyprojecttoml(f'[tool.citebench]\ngates = ["{spec}"]\n')
    else:
        manifest = tiny / "suite.toml"
        manifest.write_text(manifest.read_text().replace("gates = []", f'gates = ["{spec}"]'))
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_gate_on_deselected_items_still_skips_and_manifest_gates_hold_under_xdist(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    deselected = pytester.runpytest(
        "--citebench", "--citebench-task", "direct", "--citebench-gate", "tiny:indirect:pp<=0.1"
    )
    assert deselected.ret == pytest.ExitCode.OK
    deselected.stdout.fnmatch_lines(["*SKIP gate tiny:indirect:pp<=0.1*"])
    # The controller of an xdist run collects nothing: it used to drop the manifests' gates.
    manifest = tiny / "suite.toml"
    manifest.write_text(
        manifest.read_text().replace("gates = []", 'gates = ["indirect:accuracy>=0.9"]')
    )
    for workers in ("0", "2"):
        result = pytester.runpytest_subprocess(
            "--citebench", "-n", workers, "-p", "no:cacheprovider"
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED, (workers, result.stdout.str())
        result.stdout.fnmatch_lines(["*FAIL gate tiny:indirect:accuracy>=0.9*"])
        assert result.stdout.str().count("FAIL gate") == 1


# -- row 13: shard results carry their spec and item count; merge refuses a partial set ----------


def test_shard_record_and_merge_refuses_missing_or_incomplete_shards(
    pytester: pytest.Pytester, tiny: Path, capsys: Any
) -> None:
    files = {}
    for index, workers in ((1, "0"), (2, "2")):
        name = f"shard{index}.jsonl"
        result = pytester.runpytest_subprocess(
            "--citebench",
            "-p",
            "no:cacheprovider",
            "-n",
            workers,
            "--citebench-shard",
            f"{index}/2",
            "--citebench-results",
            name,
        )
        assert result.ret == 0, result.stdout.str()
        files[index] = pytester.path / name
    # tiny's 8 cases split 3 / 5 between the two shards (sharding.py's fixed hash)
    for index, owed in ((1, 3), (2, 5)):
        records = _records(files[index])
        assert records[-1] == {
            "type": "shard",
            "shard": f"{index}/2",
            "index": index,
            "total": 2,
            "expected": owed,
        }
        assert sum(r["type"] == "item" for r in records) == owed
    one, two = str(files[1]), str(files[2])
    assert cli(["merge", one, two]) == 0
    capsys.readouterr()

    assert cli(["merge", one]) == 1
    out = capsys.readouterr().out
    assert "merge: shard(s) 2/2 missing: no file given holds them" in out
    assert "pass --allow-partial" in out
    assert cli(["merge", one, "--allow-partial"]) == 0
    assert (
        "WARNING partial merge (--allow-partial): shard(s) 2/2 missing" in capsys.readouterr().out
    )

    records = _records(files[2])
    stopped = pytester.path / "stopped.jsonl"  # stopped early (-x, max-errors): 4 of 5 items
    jsonl.write(stopped, [r for r in records if r["type"] == "item"][1:] + records[-1:])
    assert cli(["merge", one, str(stopped)]) == 1
    assert f"shard 2/2 ({stopped}): 4 of 5 item records" in capsys.readouterr().out
    # a rerun of the same shard (resume) completes it: the two files together hold all five
    assert cli(["merge", one, str(stopped), two]) == 0
    capsys.readouterr()

    killed = pytester.path / "killed.jsonl"  # killed: items, but no aggregates nor shard record
    jsonl.write(killed, [r for r in records if r["type"] == "item"])
    assert cli(["merge", one, str(killed)]) == 1
    assert f"{killed}: no shard record" in capsys.readouterr().out

    # whole runs (no shard record at all) merge as before
    whole = pytester.runpytest("--citebench", "--citebench-results", "whole.jsonl")
    assert whole.ret == 0
    assert cli(["merge", str(pytester.path / "whole.jsonl")]) == 0


def test_shard_count_follows_deselection_and_resume(pytester: pytest.Pytester, tiny: Path) -> None:
    direct = pytester.runpytest(
        "--citebench",
        "--citebench-shard",
        "2/2",
        "-k",
        "not indirect",
        "--citebench-results",
        "d.jsonl",
    )
    assert direct.ret == 0
    assert _records(pytester.path / "d.jsonl")[-1]["expected"] == 3  # shard 2's direct items
    resumed = pytester.runpytest(
        "--citebench",
        "--citebench-shard",
        "2/2",
        "--citebench-resume",
        "d.jsonl",
        "--citebench-results",
        "all.jsonl",
    )
    assert resumed.ret == 0
    records = _records(pytester.path / "all.jsonl")
    assert records[-1]["expected"] == 5 == sum(r["type"] == "item" for r in records)


# -- row 14: bad CITEBENCH_GUARD_* settings are one usage error at start --------------------------


def test_bad_guard_environment_is_one_usage_error_at_start(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEBENCH_GUARD_ALPHA", "0.1x")
    monkeypatch.setenv("CITEBENCH_GUARD_TRIALS", "0")
    monkeypatch.setenv("CITEBENCH_GUARD_VERIFIER", "lexical")  # without CITEBENCH_GUARD_TAU
    monkeypatch.setenv("CITEBENCH_GUARD_APLHA", "0.1")
    result = pytester.runpytest("--citebench", "--citebench-results", "r.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*citebench: bad environment settings:",
            "*CITEBENCH_GUARD_APLHA is not a citebench setting; known: CITEBENCH_GUARD_ALPHAS*",
            "*CITEBENCH_GUARD_ALPHA='0.1x' is not a number",
            "*set CITEBENCH_GUARD_VERIFIER and CITEBENCH_GUARD_TAU together*",
            "*CITEBENCH_GUARD_TRIALS=0: must be at least 1",
        ]
    )
    assert not (pytester.path / "r.jsonl").exists()  # nothing ran
    monkeypatch.delenv("CITEBENCH_GUARD_APLHA")
    monkeypatch.setenv("CITEBENCH_GUARD_ALPHA", "0.1")
    monkeypatch.setenv("CITEBENCH_GUARD_TRIALS", "50")
    monkeypatch.setenv("CITEBENCH_GUARD_TAU", "0.3")
    monkeypatch.setenv("CITEBENCH_GUARD_VERIFIER", "nosuch")
    result = pytester.runpytest("--citebench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*CITEBENCH_GUARD_VERIFIER='nosuch': unknown verifier; available:*"]
    )
    monkeypatch.setenv("CITEBENCH_GUARD_VERIFIER", "lexical")
    assert pytester.runpytest("--citebench").ret == pytest.ExitCode.OK


# -- row 9: answers and ids are text in Markdown and on the terminal, never markup or commands ---

HOSTILE = "ok\r| x |</details><script>alert(1)</script><img src=x onerror=alert(1)>\x1b[2J\x00`end"

HALLUCINATING_CONFTEST = f"""
import importlib

_saved = {{}}


def pytest_configure(config):
    baselines = importlib.import_module("pytest_citebench.models.baselines")
    _saved["bm25"] = baselines.BASELINES["bm25"]
    baselines.BASELINES["bm25"] = lambda prompt, corpus, k=None: {HOSTILE!r}


def pytest_unconfigure(config):
    baselines = importlib.import_module("pytest_citebench.models.baselines")
    baselines.BASELINES["bm25"] = _saved.pop("bm25")
"""


def test_escape_helpers() -> None:
    from pytest_citebench.reports.escape import markdown_cell, markdown_code, terminal

    assert terminal("a\x1b[31mb\x00c\rd\u202ee\nf\tg") == "a\\x1b[31mb\\x00c\\x0dd\\u202ee\nf\tg"
    assert markdown_cell("a\r\nb | <script>x</script> & \x1b") == (
        "a b \\| &lt;script&gt;x&lt;/script&gt; &amp; \\x1b"
    )
    assert markdown_code("a `b` c") == "``a `b` c``"
    assert markdown_code("`x") == "`` `x ``"
    assert markdown_code("<img onerror=x>") == "`<img onerror=x>`"


def test_hostile_answer_is_escaped_in_markdown_and_terminal(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    from pytest_citebench.reports.data import ReportData
    from pytest_citebench.reports.markdown import render_markdown

    record = {
        "type": "item",
        "model": "m",
        "suite": "s",
        "suite_version": 1,
        "task": "indirect",
        "item_id": "i1",
        "nodeid": "s::indirect::i1[m]",
        "outcome": "hallucinated",
        "expected": "Real Title",
        "answer": HOSTILE,
        "metrics": {"hr_paper": 1.0, "f1": 0.0},
    }
    error = {**record, "item_id": "i2", "outcome": "error", "error": "boom " + HOSTILE}
    text = render_markdown(ReportData(records=[record, error], aggregates=[]))
    assert "<script>" not in text and "<img" not in text
    assert text.count("</details>") == 1  # only the summary's own
    assert "\r" not in text and "\x1b" not in text and "\x00" not in text
    rows = [line for line in text.splitlines() if "Real Title" in line]
    # The worst-answers table has eight cells: the | in the answer is escaped, not a new cell.
    assert len(rows) == 1 and rows[0].count(" | ") == 7
    assert "&lt;script&gt;" in text

    pytester.makeconftest(HALLUCINATING_CONFTEST)
    result = pytester.runpytest("--citebench", "--citebench-strict", "--citebench-markdown", "s.md")
    out = result.stdout.str()
    assert "\x1b[2J" not in out and "\x00" not in out and "\r" not in out
    assert "\\x1b[2J" in out and "\\x00" in out
    markdown = (pytester.path / "s.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown and "\x1b" not in markdown and "\r" not in markdown


# -- point 7: baseline tests corrected for multiplicity; every test has a p-value ----------------


def test_holm_and_bh_golden_values() -> None:
    from pytest_citebench.metrics.stats import adjust_p_values, benjamini_hochberg, holm

    p = [0.01, 0.04, 0.03, 0.005]
    # Holm by hand: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04;
    # running maximum 0.02, 0.03, 0.06, 0.06; back in input order:
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH by hand: p * 4 / rank = 0.02, 0.02, 0.04, 0.04; running minimum from the top; in order:
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert benjamini_hochberg([0.5, 0.6]) == pytest.approx([0.6, 0.6])
    # step-up: 0.01 * 3 / 1 = 0.03 and 0.02 * 3 / 2 = 0.03 fall to the 0.021 of the largest p
    assert benjamini_hochberg([0.01, 0.02, 0.021]) == pytest.approx([0.021] * 3)
    assert adjust_p_values(p, "none") == p and holm([]) == [] == benjamini_hochberg([])
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_p_values(p, "bonferroni")


def test_sign_flip_p_golden_values_and_mcnemar_equivalence() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from pytest_citebench.metrics.stats import mcnemar_exact, sign_flip_p

    # diffs 1, 2, 3: the 8 sign patterns sum to +-6, +-4, +-2, 0, 0; |sum| >= 6 in 2 of 8
    assert sign_flip_p([1.0, 2.0, 3.0]) == 0.25
    assert sign_flip_p([0.0, 0.0]) == 1.0 == sign_flip_p([])
    assert sign_flip_p([0.1] * 40) == pytest.approx(2 / 2**40)  # one size: binomial tail
    mixed = [0.1 * (i % 7 + 1) for i in range(30)]  # 30 > 16 sizes: 10,000 random patterns
    assert sign_flip_p(mixed) == 1 / 10_001
    assert sign_flip_p([x * (-1) ** i for i, x in enumerate(mixed)]) > 0.2

    @given(st.integers(0, 12), st.integers(0, 12), st.integers(0, 5))
    def same_as_mcnemar(worse: int, better: int, ties: int) -> None:
        diffs = [-1.0] * worse + [1.0] * better + [0.0] * ties
        assert sign_flip_p(diffs) == pytest.approx(mcnemar_exact(worse, better))

    same_as_mcnemar()


def _flipped(flips: int, n: int = 12) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def rec(item: str, outcome: str) -> dict[str, Any]:
        hr = 0.0 if outcome == "correct" else 0.8
        return {
            "type": "item",
            "model": "m",
            "suite": "s",
            "suite_version": 1,
            "task": "indirect",
            "item_id": item,
            "outcome": outcome,
            "metrics": {"hr_paper": hr, "f1": 1.0 - hr},
        }

    base = [rec(f"i{i}", "correct") for i in range(n)]
    new = [rec(f"i{i}", "hallucinated" if i < flips else "correct") for i in range(n)]
    return new, base


def test_holm_correction_is_the_default_and_reported_next_to_raw_p(
    tmp_path: Path, capsys: Any
) -> None:
    from pytest_citebench.results.compare import compare

    new, base = _flipped(6)  # 6 of 12 items flipped: each of 4 tests has raw p = 2/64
    raw = compare(new, base, correction="none")
    assert [d.p_value for d in raw.deltas] == pytest.approx([0.03125] * 4)
    assert {d.metric for d in raw.deltas} == {"accuracy", "hallucinated", "hr_paper", "f1"}
    assert len(raw.failures) == 4
    holm = compare(new, base)  # default
    assert holm.correction == "holm"
    assert [d.p_adjusted for d in holm.deltas] == pytest.approx([0.125] * 4)
    assert not holm.failures and {d.verdict for d in holm.deltas} == {"worse"}
    assert "McNemar p=0.0312, 6 items worse / 0 better, Holm p=0.125" in holm.deltas[0].describe()
    assert "sign-flip p=0.0312, Holm p=0.125" in holm.deltas[-1].describe()
    bh = compare(new, base, correction="bh")
    assert [d.p_adjusted for d in bh.deltas] == pytest.approx([0.03125] * 4)
    assert len(bh.failures) == 4

    new_file, base_file = tmp_path / "new.jsonl", tmp_path / "base.jsonl"
    jsonl.write(new_file, new)
    jsonl.write(base_file, base)
    assert cli(["baseline", "compare", str(new_file), str(base_file)]) == 0
    assert "p=0.0312 holm=0.125" in capsys.readouterr().out
    assert cli(["baseline", "compare", str(new_file), str(base_file), "--correction", "none"]) == 1
    assert cli(["merge", str(new_file), "--baseline", str(base_file)]) == 0
    assert cli(["merge", str(new_file), "--baseline", str(base_file), "--correction", "bh"]) == 1


def test_correction_option_reaches_the_plugin(pytester: pytest.Pytester, tiny: Path) -> None:
    assert pytester.runpytest("--citebench", "--citebench-results", "base.jsonl").ret == 0
    result = pytester.runpytest(
        "--citebench", "--citebench-baseline", "base.jsonl", "--citebench-correction", "bh"
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*p adjusted: bh*", "*accuracy*p=1 bh=1*same*"])
    pytester.makepyprojecttoml('[tool.citebench]\ncorrection = "bonferroni"\n')
    bad = pytester.runpytest("--citebench", "--citebench-baseline", "base.jsonl")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(
        ["*correction = 'bonferroni': the p-value correction must be one of 'none', 'holm', 'bh'*"]
    )


# -- point 8: no "coroutine ... was never awaited" when a run stops mid-call ---------------------


def test_engine_close_leaves_no_unawaited_provider_coroutine() -> None:
    """litellm.acompletion builds the provider's request coroutine in an executor thread
    (``loop.run_in_executor(None, completion)``) and awaits it afterwards; an item cancelled
    while that thread runs (--citebench-max-errors, Ctrl-C) used to drop it unawaited."""
    import asyncio
    import gc
    import threading
    import time
    import warnings

    from pytest_citebench.run.runner import Engine

    started = threading.Event()

    async def provider_request() -> str:
        return "never sent"

    def completion() -> Any:  # what litellm's completion(acompletion=True) returns
        started.set()
        time.sleep(0.3)
        return provider_request()

    async def item() -> Any:
        request = await asyncio.get_running_loop().run_in_executor(None, completion)
        return await request

    engine = Engine(2)
    future = engine.submit(item)
    assert started.wait(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine.close()  # cancels the item while completion() still runs
        time.sleep(0.6)  # completion() returns its coroutine to a loop that has stopped
        del engine, future  # the stopped loop and the call's result go with it
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]


@pytest.mark.parametrize("value", ["", "x" * 300, "a\x00b"])
def test_unusable_items_file_name_is_a_manifest_error(tmp_path: Path, value: str) -> None:
    """Found by test_fuzz.py while hardening: ``items = ""`` named the folder itself, and a
    300-character name raised OSError (name too long) instead of a SuiteError."""
    from pytest_citebench.suites import SuiteError, load_suite

    folder = _suite(tmp_path, ["ok-1"])
    manifest = folder / "suite.toml"
    manifest.write_text(
        manifest.read_text().replace("[source]", f"items = {json.dumps(value)}\n[source]")
    )
    with pytest.raises(SuiteError, match=r"suite\.toml: field 'items': .*name a file"):
        load_suite(folder)
