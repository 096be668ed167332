from __future__ import annotations

import math

import pytest

from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.results.aggregate import aggregate
from pytest_citebench.results.gates import GateError, evaluate, parse_gate


def test_a_gate_parses_with_its_own_suite_or_the_manifests() -> None:
    gate = parse_gate("reasons/*:indirect:hr_paper<=0.5", source="cli")
    assert (gate.suite, gate.task, gate.metric, gate.op, gate.value) == (
        "reasons/*",
        "indirect",
        "hr_paper",
        "<=",
        0.5,
    )
    assert (
        parse_gate("direct:accuracy >= 1e-1", source="m", suite="reasons/nlp").suite
        == "reasons/nlp"
    )


@pytest.mark.parametrize(
    "spec",
    [
        "a:b:accuracy=0.5",
        "a:b:accuracy<0.5",
        "a:accuracy<=0.5",
        "a:b:c:accuracy<=1",
        "a:b:accuracy<=x",
    ],
)
def test_a_gate_not_of_the_form_suite_task_metric_op_value_is_refused(spec: str) -> None:
    with pytest.raises(GateError, match="is not of the form"):
        parse_gate(spec, source="cli")


def test_nan_never_passes() -> None:
    gate = parse_gate("*:*:f1>=0", source="cli")
    agg = Aggregate("m", "s", "t", {}, {"f1": Stat(math.nan, math.nan, math.nan, 0)})
    results, unmatched = evaluate([gate], [agg])
    assert not results[0].passed and not unmatched


def test_aggregate_golden_values() -> None:
    records = [
        {
            "model": "m",
            "suite": "s",
            "task": "indirect",
            "item_id": "a",
            "outcome": "correct",
            "metrics": {"f1": 1.0, "bleu": 1.0, "hr_paper": 0.0, "hr_code": 0.0},
        },
        {
            "model": "m",
            "suite": "s",
            "task": "indirect",
            "item_id": "b",
            "outcome": "hallucinated",
            "metrics": {"f1": 0.5, "bleu": 0.0, "hr_paper": 0.75, "hr_code": 0.5},
        },
        {
            "model": "m",
            "suite": "s",
            "task": "indirect",
            "item_id": "c",
            "outcome": "abstained",
            "metrics": {},
        },
        {
            "model": "m",
            "suite": "s",
            "task": "indirect",
            "item_id": "d",
            "outcome": "error",
            "metrics": {},
        },
    ]
    (agg,) = aggregate(records)
    # 3 scored items (the error is counted apart): accuracy 1/3, PP 1/3; means over the 2 answered.
    assert agg.metrics["accuracy"].value == pytest.approx(1 / 3)
    assert agg.metrics["pp"].value == pytest.approx(1 / 3)
    assert agg.metrics["f1"].value == pytest.approx(0.75)
    assert agg.metrics["hr_paper"].value == pytest.approx(0.375)
    assert agg.metrics["errors"].value == 1 and agg.metrics["n"].value == 3
    assert aggregate(list(reversed(records)))[0].to_record() == agg.to_record()
