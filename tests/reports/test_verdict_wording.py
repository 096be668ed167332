"""The verdict says exactly what was judged: how many groups a baseline compared (or why none
could be), a gate that was set but skipped, and a gate whose group has no scored item. None of
these may read like "no regression", "no gate set" or a measured number."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pytest_citebench.api import Stat
from pytest_citebench.reports.headline import verdict
from pytest_citebench.results.compare import compare
from pytest_citebench.results.gates import GateResult, parse_gate
from tests.reports.test_headline import rec


def _run(n: int = 12, **kw: str) -> list[dict[str, object]]:
    return [rec(f"i{i}", "correct", **kw) for i in range(n)]


def test_a_baseline_of_another_model_compares_nothing_and_says_so() -> None:
    comparison = compare(_run(model="new"), _run(model="old"), baseline="b.jsonl")
    v = verdict([], [], comparison=comparison)
    assert "no regression" not in v.line()
    assert v.line() == (
        "no gate set: nothing was judged; baseline compared nothing: none of 1 group(s) "
        "comparable because 1 not in the baseline (another model, suite or task)"
    )
    assert v.state == "neutral"


def test_a_baseline_of_another_suite_version_compares_nothing_and_says_so() -> None:
    old = [dict(r, suite_version=1) for r in _run()]
    new = [dict(r, suite_version=2) for r in _run()]
    gate = parse_gate("dom/a:indirect:accuracy>=0.5", source="x")
    results = [GateResult(gate, "m1", "dom/a", "indirect", Stat(1.0, 0.7, 1.0, 12))]
    v = verdict(results, [], comparison=compare(new, old, baseline="b.jsonl"))
    assert v.line() == (
        "gates passed (1); baseline compared nothing: none of 1 group(s) comparable because "
        "1 suite version changed"
    )
    assert v.state == "neutral"  # a passed gate does not turn a comparison of nothing green


def test_some_groups_without_a_baseline_are_counted_not_hidden() -> None:
    base = _run()
    new = _run() + _run(task="direct")
    gate = parse_gate("dom/a:indirect:accuracy>=0.5", source="x")
    passed = [GateResult(gate, "m1", "dom/a", "indirect", Stat(1.0, 0.7, 1.0, 12))]
    v = verdict(passed, [], comparison=compare(new, base, baseline="b.jsonl"))
    assert v.line().endswith(
        "no regression against the baseline in 1 group(s) compared; 1 group(s) not compared: "
        "1 not in the baseline (another model, suite or task)"
    )
    assert v.state == "neutral"
    full = verdict(passed, [], comparison=compare(base, base, baseline="b.jsonl"))
    assert full.line().endswith("no regression against the baseline in 1 group(s) compared")
    assert full.state == "ok"


def test_a_gate_set_but_skipped_is_not_no_gate_set() -> None:
    gate = parse_gate("dom/b:indirect:accuracy>=0.5", source="x")
    v = verdict([], [gate])
    assert v.gates == "skipped" and v.state == "neutral"
    assert v.line() == "gate skipped because no results matched: dom/b:indirect:accuracy>=0.5"
    passed = GateResult(
        parse_gate("dom/a:*:accuracy>=0", source="x"), "m", "dom/a", "t", Stat(1, 1, 1, 3)
    )
    both = verdict([passed], [gate])
    assert both.state == "neutral"
    assert "1 gate(s) skipped, no results matched: dom/b:indirect:accuracy>=0.5" in both.line()


def test_a_gate_on_a_group_where_every_item_errored_says_no_items_scored() -> None:
    gate = parse_gate("dom/a:indirect:accuracy>=0.5", source="x")
    result = GateResult(gate, "m1", "dom/a", "indirect", Stat(math.nan, math.nan, math.nan, 0))
    v = verdict([result], [], errors=12)
    assert "nan" not in v.line()
    assert v.line().startswith(
        "gate failed: dom/a:indirect:accuracy>=0.5 on m1 dom/a:indirect (no items scored"
    )
    assert "no items scored" in result.describe() and "nan" not in result.describe()


def test_plugin_verdict_with_a_baseline_of_another_model(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    first = pytester.runpytest("--citebench", "-p", "no:cacheprovider", "--citebench-results", "a")
    assert first.ret == 0
    lines = (pytester.path / "a").read_text().splitlines()
    other = [
        json.dumps({**r, "model": "someone/else"})
        for r in map(json.loads, lines)
        if r.get("type") == "item"
    ]
    (pytester.path / "base.jsonl").write_text("\n".join(other) + "\n")
    result = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider", "--citebench-baseline", "base.jsonl"
    )
    text = result.stdout.str()
    assert "no regression" not in text
    assert (
        text.count(
            "citebench verdict: no gate set: nothing was judged; baseline compared nothing: none of "
            "2 group(s) comparable because 2 not in the baseline (another model, suite or task)"
        )
        == 2
    )
