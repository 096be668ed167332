"""A version per task: a rule change to one paper voids that paper's baselines only.

Each task stamps its own ``scorer_version`` on its records (the runner and ``rescore``), and
``compare`` refuses to pair records of two versions. So bumping REASONS' version must make the
REASONS groups "not compared" while an ArxEval baseline of the same file stays compared.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.commands.rescore import _suites, rescore_record
from pytest_citebench.results.compare import SCORER_CHANGED, compare
from tests.conftest import REPO

HCI = "reasons/hci"
JUMBLED = "arxeval/jumbled-reasons"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _bump(monkeypatch: pytest.MonkeyPatch, task: str, version: str) -> None:
    """A rule change to ``task``'s paper: every task of that paper gets the new version."""
    for t in registry.paper_of(task).tasks:
        monkeypatch.setattr(t, "scorer_version", version)


def _jumbled_record(item_id: str, cosine: float) -> dict[str, Any]:
    """A jumbled record as a run writes it; its outcome comes from the cosine ``solve`` stored."""
    details = {"cosine_minilm": cosine, "bertscore_minilm": cosine, "sts_minilm": cosine}
    stage = {"name": "jumbled", "raw": "An abstract.", "answer": "An abstract.", "abstained": False}
    return {
        "type": "item",
        "model": "local/gemma-3-270m",
        "suite": JUMBLED,
        "suite_version": 1,
        "task": "jumbled",
        "item_id": item_id,
        "outcome": "correct",  # replaced by the rescore below
        "metrics": {},
        "stages": [{**stage, "details": details}],
    }


@pytest.fixture(scope="module")
def baseline() -> list[dict[str, Any]]:
    """A baseline of two papers: the committed REASONS baseline's hci items, and ArxEval jumbled
    items scored under today's rules (so each record carries its own task's version)."""
    suites = _suites([REPO / "suites" / "reasons" / "hci", REPO / "suites" / "arxeval"])
    reasons = [
        r
        for r in read_jsonl(REPO / "baselines" / "gemma-3-270m.jsonl")
        if r.get("type") == "item" and r["suite"] == HCI
    ]
    ids = [item.id for item in suites[JUMBLED].items[:12]]
    jumbled = [
        rescore_record(_jumbled_record(i, 0.9 if n % 3 else 0.1), suites) for n, i in enumerate(ids)
    ]
    return reasons + jumbled


def _rescored(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    suites = _suites([REPO / "suites" / "reasons" / "hci", REPO / "suites" / "arxeval"])
    return [rescore_record(r, suites) for r in records]


def _groups(records: list[dict[str, Any]], base: list[dict[str, Any]]) -> dict[str, Any]:
    return {g.task: g for g in compare(records, base).groups}


def test_every_committed_baseline_record_carries_its_tasks_current_version() -> None:
    """The versions chosen per task keep every committed baseline comparable."""
    for path in sorted((REPO / "baselines").glob("*.jsonl")):
        for r in read_jsonl(path):
            if r.get("type") == "item":
                assert r["scorer_version"] == registry.get(r["task"]).scorer_version, path


def test_unchanged_rules_compare_every_group(baseline: list[dict[str, Any]]) -> None:
    groups = _groups(_rescored(baseline), baseline)
    assert set(groups) == {"direct", "indirect", "jumbled"}
    assert all(g.deltas and not g.note for g in groups.values())


def test_a_reasons_rule_change_leaves_arxeval_comparable(
    baseline: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = registry.get("direct").scorer_version
    _bump(monkeypatch, "direct", "99")
    new = _rescored(baseline)
    assert {r["scorer_version"] for r in new if r["task"] == "jumbled"} == {
        registry.get("jumbled").scorer_version
    }
    groups = _groups(new, baseline)
    for task in ("direct", "indirect"):
        assert not groups[task].deltas
        assert groups[task].note.startswith(f"{SCORER_CHANGED} ({old} -> 99): not compared")
    jumbled = groups["jumbled"]
    assert not jumbled.note
    assert [d.metric for d in jumbled.deltas] == ["accuracy", "hallucinated"]
    assert all(d.verdict == "same" for d in jumbled.deltas)


def test_an_arxeval_rule_change_leaves_reasons_comparable(
    baseline: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _bump(monkeypatch, "jumbled", "99")
    groups = _groups(_rescored(baseline), baseline)
    assert groups["jumbled"].note.startswith(SCORER_CHANGED) and not groups["jumbled"].deltas
    for task in ("direct", "indirect"):
        assert groups[task].deltas and not groups[task].note


SYNTH = REPO / "fixtures" / "suites" / "synth"


def test_a_run_stamps_each_record_with_its_own_tasks_version(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner, not only rescore: a task's records carry that task's version, and resuming
    them after a rule change reruns that task's items alone."""
    shutil.copytree(
        SYNTH, pytester.path / "suites" / "synth", ignore=shutil.ignore_patterns("*.py")
    )
    monkeypatch.setattr(registry.get("direct"), "scorer_version", "77")
    assert pytester.runpytest("--citebench", "--citebench-results", "run.jsonl").ret == 0
    items = [r for r in read_jsonl(pytester.path / "run.jsonl") if r["type"] == "item"]
    versions = {(r["task"], r["scorer_version"]) for r in items}
    assert versions == {("direct", "77"), ("indirect", registry.get("indirect").scorer_version)}
    monkeypatch.setattr(registry.get("direct"), "scorer_version", "78")
    result = pytester.runpytest(
        "--citebench", "--citebench-resume", "run.jsonl", "--citebench-results", "again.jsonl"
    )
    assert result.ret == 0
    direct = sum(r["task"] == "direct" for r in items)
    result.stdout.fnmatch_lines([f"*ran {direct} item(s) of --citebench-resume*scorer 77 -> 78*"])
