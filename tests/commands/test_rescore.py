"""Scorer versions: records carry one, baselines scored under another are not compared, and
``python -m pytest_citebench rescore`` re-scores a results file from its raw answers offline.
Also the new outcomes end to end through the plugin: their letters, and that only
*hallucinated* fails under --citebench-strict."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.__main__ import main as cli
from pytest_citebench.results.compare import compare
from pytest_citebench.results.record import ItemResult
from tests.conftest import REPO

# Every task module loaded before pytester's in-process runs, which drop modules first imported
# during a run (a task module imported again would register its task twice).
registry.all_tasks()

SYNTH = REPO / "fixtures" / "suites" / "synth"
# The synth suite runs REASONS tasks: their records carry REASONS' scorer version.
SCORER_VERSION = registry.get("direct").scorer_version

STUB = textwrap.dedent(
    """
    import importlib

    _saved = {}

    def pytest_configure(config):
        baselines = importlib.import_module("pytest_citebench.models.baselines")
        original = baselines.BASELINES["bm25"]
        _saved["bm25"] = original

        def answer(hint, options):
            if hint.task == "indirect":
                return "<title of the paper>"  # names nothing: unanswered
            return "Nobody Real"  # a name not in the gold: hallucinated

        baselines.BASELINES["bm25"] = answer

    def pytest_unconfigure(config):
        baselines = importlib.import_module("pytest_citebench.models.baselines")
        baselines.BASELINES["bm25"] = _saved.pop("bm25")
    """
)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def synth(pytester: pytest.Pytester) -> Path:
    target = pytester.path / "suites" / "synth"
    shutil.copytree(SYNTH, target, ignore=shutil.ignore_patterns("*.py"))
    return target


def test_records_carry_reason_and_scorer_version_and_old_records_still_load(
    pytester: pytest.Pytester, synth: Path
) -> None:
    assert pytester.runpytest("--citebench", "--citebench-results", "run.jsonl").ret == 0
    items = [r for r in read_jsonl(pytester.path / "run.jsonl") if r["type"] == "item"]
    assert items and all(r["scorer_version"] == SCORER_VERSION and r["reason"] for r in items)
    old = {k: v for k, v in items[0].items() if k not in ("reason", "scorer_version")}
    assert ItemResult.from_record(old).scorer_version == "1"


def test_rescore_rewrites_outcomes_from_the_raw_answers(
    pytester: pytest.Pytester, synth: Path
) -> None:
    assert pytester.runpytest("--citebench", "--citebench-results", "run.jsonl").ret == 0
    run = pytester.path / "run.jsonl"
    records = read_jsonl(run)
    # As a scorer-1 file would read: no version, no reason, and (say) another verdict.
    tampered = []
    for r in records:
        if r["type"] == "item":
            r = {k: v for k, v in r.items() if k not in ("reason", "scorer_version")}
            r["outcome"], r["metrics"] = "hallucinated", {}
        tampered.append(r)
    old = pytester.path / "old.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in tampered), encoding="utf-8")

    out = pytester.path / "rescored.jsonl"
    suites = str(pytester.path / "suites")
    assert cli(["rescore", str(old), "-o", str(out), "--suites", suites]) == 0
    rescored = read_jsonl(out)
    items = [r for r in rescored if r["type"] == "item"]
    original = {(r["task"], r["item_id"]): r for r in records if r["type"] == "item"}
    assert len(items) == len(original)
    for r in items:
        before = original[(r["task"], r["item_id"])]
        assert r["outcome"] == before["outcome"] and r["metrics"] == before["metrics"]
        assert r["scorer_version"] == SCORER_VERSION and r["reason"] == before["reason"]
    aggregates = [r for r in rescored if r["type"] == "aggregate"]
    assert {a["task"] for a in aggregates} == {"direct", "indirect"}
    assert all(a["counts"]["hallucinated"] == 0 for a in aggregates)


def test_rescore_refuses_a_changed_suite_version(pytester: pytest.Pytester, synth: Path) -> None:
    assert pytester.runpytest("--citebench", "--citebench-results", "run.jsonl").ret == 0
    manifest = synth / "suite.toml"
    manifest.write_text(manifest.read_text().replace("version = 1", "version = 2"))
    run = pytester.path / "run.jsonl"
    assert cli(["rescore", str(run), "--suites", str(pytester.path / "suites")]) == 2


def _item(outcome: str, version: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "item",
        "model": "m",
        "suite": "s",
        "suite_version": 1,
        "task": "direct",
        "item_id": "a",
        "outcome": outcome,
        "metrics": {},
    }
    if version is not None:
        record["scorer_version"] = version
    return record


def test_compare_does_not_pair_records_of_different_scorer_versions() -> None:
    result = compare([_item("correct", SCORER_VERSION)], [_item("hallucinated", None)])
    (group,) = result.groups
    assert not group.deltas
    assert (
        f"scorer version changed (1 -> {SCORER_VERSION})" in group.note and "rescore" in group.note
    )
    same = compare([_item("correct", SCORER_VERSION)], [_item("correct", SCORER_VERSION)])
    assert same.groups[0].deltas and not same.groups[0].note


def test_new_outcomes_have_letters_and_only_hallucinated_fails_strict(
    pytester: pytest.Pytester, synth: Path
) -> None:
    pytester.makeconftest(STUB)
    result = pytester.runpytest("--citebench", "--citebench-task", "indirect", "-rA")
    assert result.ret == pytest.ExitCode.OK
    assert result.parseoutcomes().get("unanswered") == 40
    strict = pytester.runpytest("--citebench", "--citebench-strict", "--citebench-task", "indirect")
    assert strict.ret == pytest.ExitCode.OK  # unanswered never fails, even strict
    failing = pytester.runpytest("--citebench", "--citebench-strict", "--citebench-task", "direct")
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    assert failing.parseoutcomes().get("failed") == 40


def _old_record(suite_name: str, item_id: str, task_name: str, raw: str) -> dict[str, Any]:
    """A record as scorer 1 left it: the stages solve recorded, a stale outcome, no reason."""
    import asyncio
    from dataclasses import asdict

    from pytest_citebench.suites import load_suite

    suite = load_suite(REPO / "suites" / suite_name / "suite.toml")
    item = next(i for i in suite.items if i.id == item_id)
    task = registry.get(task_name)
    corpus = suite.manifest.corpus_file

    async def generate(messages: Any, *, hint: Any) -> str:
        return raw

    attempt = asyncio.run(task.solve(item, generate, suite_corpus=str(corpus) if corpus else None))
    return {
        "type": "item",
        "model": "m",
        "suite": suite_name,
        "suite_version": suite.manifest.version,
        "task": task_name,
        "item_id": item_id,
        "outcome": "hallucinated",
        "answer": attempt.final.answer,
        "expected": "",
        "metrics": {},
        "raw_answer": raw,
        "stages": [asdict(s) for s in attempt.stages],
    }


def test_rescore_record_for_mixed_and_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_citebench.commands.rescore import _suites, rescore_record

    monkeypatch.delenv("CITEBENCH_DOI", raising=False)
    suites = _suites([REPO / "suites" / "arxeval" / "mixed-reasons", REPO / "suites" / "guard"])
    mixed = _old_record(
        "arxeval/mixed-reasons", "0912.0071+1704.06873", "mixed", "1. Some Title\n2. Another"
    )
    new = rescore_record(mixed, suites)
    assert new["outcome"] == "unanswered" and new["reason"] == "no DOI in the answer"
    assert new["scorer_version"] == registry.get("mixed").scorer_version
    echo = "End every sentence with the number of the passage that supports it in square "
    echo += "brackets, for example [2]."
    guard = _old_record("guard/scifact-answers", "scifact-012", "guard", echo)
    # As scorer 1 audited it: the echoed [2] was a citation.
    audit = json.loads(guard["stages"][0]["raw"])
    audit["citations"] = [{"flagged": True, "missing": False, "alternative_score": None}]
    guard["stages"][0]["raw"] = json.dumps(audit)
    new = rescore_record(guard, suites)
    assert new["outcome"] == "unanswered" and new["metrics"]["citations"] == 0


def _run_file(pytester: pytest.Pytester) -> tuple[Path, list[dict[str, Any]]]:
    """A bm25 run of the synth suite, its path and its records."""
    assert pytester.runpytest("--citebench", "--citebench-results", "run.jsonl").ret == 0
    run = pytester.path / "run.jsonl"
    return run, read_jsonl(run)


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _without_raw(record: dict[str, Any]) -> None:
    del record["stages"][0]["raw"]


def _raw_not_text(record: dict[str, Any]) -> None:
    record["stages"][0]["raw"] = 7


def _without_abstained(record: dict[str, Any]) -> None:
    del record["stages"][-1]["abstained"]


def _details_not_an_object(record: dict[str, Any]) -> None:
    record["stages"][0]["details"] = [1, 2]


def _unknown_task(record: dict[str, Any]) -> None:
    record["task"] = "nosuch"


def _unknown_task_on_an_error(record: dict[str, Any]) -> None:
    record.update(task="nosuch", outcome="error", error="boom", stages=[])


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (_without_raw, "stage 1 (indirect) has no 'raw'; this record cannot be rescored"),
        (_raw_not_text, "stage 1 (indirect): 'raw' must be a string (the model's raw text"),
        (_without_abstained, "stage 1 (indirect) has no 'abstained'"),
        (_details_not_an_object, "stage 1 (indirect): 'details' must be an object, got [1, 2]"),
        (_unknown_task, "task 'nosuch' is not a task of any installed paper (known: "),
        (_unknown_task_on_an_error, "task 'nosuch' is not a task of any installed paper"),
    ],
)
def test_rescore_of_a_record_it_cannot_use_is_one_line_naming_file_and_line(
    pytester: pytest.Pytester,
    synth: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Any,
    says: str,
) -> None:
    """Issue 36: an unknown task or a stage without ``raw`` was a KeyError traceback. Now every
    record rescore cannot use is one line on stderr naming ``file:line``, what is wrong and what
    to do, exit 2, and the file is left as it was."""
    _, records = _run_file(pytester)
    line = next(
        n for n, r in enumerate(records, start=1) if r["type"] == "item" and r["task"] == "indirect"
    )
    damage(records[line - 1])
    bad = _write(pytester.path / "bad.jsonl", records)
    before = bad.read_bytes()
    capsys.readouterr()
    assert cli(["rescore", str(bad), "--suites", str(pytester.path / "suites")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"rescore: {bad}:{line}: "), err
    assert says in err, err
    assert "delete that line" in err
    assert bad.read_bytes() == before


def test_rescore_stamps_error_records_so_a_rescored_baseline_compares(
    pytester: pytest.Pytester, synth: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: rescore left an error record at its old scorer version, so ``baseline
    compare`` kept saying "scorer version changed ... rescore" after the rescore, a fix that
    could never work. An error was never scored: rescore stamps it with the current version,
    and compare ignores the scorer version of error records (their pairs are not compared)."""
    run, records = _run_file(pytester)
    old = []
    for r in records:
        if r["type"] == "item":
            r = {k: v for k, v in r.items() if k not in ("reason", "scorer_version")}
            if r["item_id"] == records[0]["item_id"]:
                r.update(outcome="error", error="a provider failure", stages=[], metrics={})
        old.append(r)
    base = _write(pytester.path / "old.jsonl", old)
    suites = str(pytester.path / "suites")
    capsys.readouterr()
    # Every group under another scorer: nothing is compared, which is exit 2 (issue 36).
    assert cli(["baseline", "compare", str(run), str(base)]) == 2
    said = capsys.readouterr()
    assert "scorer version changed" in said.out + said.err  # scorer 1: rescore it

    assert cli(["rescore", str(base), "--suites", suites]) == 0
    assert "error record(s) kept, stamped with the current scorer version" in (
        capsys.readouterr().out
    )
    rescored = [r for r in read_jsonl(base) if r["type"] == "item"]
    assert {r["scorer_version"] for r in rescored} == {SCORER_VERSION}
    assert cli(["baseline", "compare", str(run), str(base)]) == 0
    out = capsys.readouterr().out
    assert "scorer version changed" not in out and "rescore" not in out, out
    compared = [line.split()[:4] for line in out.splitlines() if " accuracy " in line]
    assert compared == [
        ["synth", task, "citebench/bm25", "accuracy"] for task in ("direct", "indirect")
    ], out


def test_compare_ignores_the_scorer_version_of_error_records() -> None:
    """An error record from an older run (never rescored) does not block a comparison: only
    scored pairs are compared, so only their scorer versions can differ in a way that counts."""
    errored = {**_item("error", None), "item_id": "b"}
    new = [_item("correct", SCORER_VERSION), {**_item("correct", SCORER_VERSION), "item_id": "b"}]
    result = compare(new, [_item("correct", SCORER_VERSION), errored])
    (group,) = result.groups
    assert not group.note and group.deltas and group.errors == 1


RAG_STUB = textwrap.dedent(
    """
    import importlib

    _saved = {}

    def pytest_configure(config):
        baselines = importlib.import_module("pytest_citebench.models.baselines")
        _saved["bm25"] = baselines.BASELINES["bm25"]
        baselines.BASELINES["bm25"] = lambda hint, options: "The answer is [1]"

    def pytest_unconfigure(config):
        baselines = importlib.import_module("pytest_citebench.models.baselines")
        baselines.BASELINES["bm25"] = _saved.pop("bm25")
    """
)


def test_rescore_refuses_rag_records_made_before_the_numbered_papers_were_kept(
    pytester: pytest.Pytester, synth: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: such a record was stamped with today's scorer while "[1]" was judged as naming
    nothing, and a baseline comparison then reported the rescore as the model's change. The
    record is refused, naming the file, the line and what to do; a record that kept its list
    rescores to the same verdicts."""
    pytester.makeconftest(RAG_STUB)
    result = pytester.runpytest(
        "--citebench", "--citebench-rag", "naive", "--citebench-results", "run.jsonl"
    )
    assert result.ret in (0, 1), result.stdout.str()
    run = pytester.path / "run.jsonl"
    records = read_jsonl(run)
    items = [r for r in records if r["type"] == "item" and "+rag-" in r["model"]]
    assert items and all("shown" in (s.get("details") or {}) for r in items for s in r["stages"])
    suites = str(pytester.path / "suites")
    again = pytester.path / "again.jsonl"
    assert cli(["rescore", str(run), "-o", str(again), "--suites", suites]) == 0
    before = {(r["task"], r["item_id"]): r["outcome"] for r in items}
    after = {
        (r["task"], r["item_id"]): r["outcome"]
        for r in read_jsonl(again)
        if r["type"] == "item" and "+rag-" in r["model"]
    }
    assert after == before and "unanswered" not in set(after.values())
    old = []
    for r in records:
        if r["type"] == "item":
            for stage in r["stages"]:
                stage.pop("details", None)
        old.append(r)
    made_before = pytester.path / "old.jsonl"
    made_before.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    out = pytester.path / "rescored.jsonl"
    capsys.readouterr()
    assert cli(["rescore", str(made_before), "-o", str(out), "--suites", suites]) == 2
    err = capsys.readouterr().err
    assert f"{made_before}:" in err and "cites a retrieved paper by number" in err, err
    assert "run the item again" in err and not out.exists()
