"""Metrics declared by their task: compare, the headline, formatting and gates read each task's
``MetricSpec`` instead of tables of paper metric names in the core.

The golden tables below are the core's tables before the declarations existed (``COMPARED`` in
results/compare.py, ``BADNESS`` in reports/headline.py, ``LABELS``/``is_raw`` in
reports/format.py): the declarations must reproduce them exactly, so every report reads as before.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.api import CORE_METRICS, MetricSpec, Paper, Stat, Task
from pytest_citebench.errors import CitebenchError
from pytest_citebench.reports import headline
from pytest_citebench.reports.data import chart_specs, columns
from pytest_citebench.reports.format import fmt, is_raw, label
from pytest_citebench.results.aggregate import aggregate, known_metrics
from pytest_citebench.results.compare import compare, compared_metrics
from pytest_citebench.results.gates import GateError, parse_gate

REPO = Path(__file__).resolve().parent.parent

OLD_LABELS = {
    "accuracy": "acc %",
    "pp": "PP %",
    "hallucinated": "halluc %",
    "unanswered": "unans %",
    "partial": "partial %",
    "hr_paper": "HR paper %",
    "hr_code": "HR code %",
    "f1": "F1 %",
    "bleu": "BLEU %",
    "unread": "unread %",  # scorer 5: replies the rules could not read (issue 35)
    # Issue 37: the kinds of a hallucinated answer, declared once by the core (KIND_METRICS).
    "misattributed": "misattrib %",
    "fabricated": "fabricated %",
    "unverified": "unverified %",
    # Issue 45: the agent's numbers (agentic tasks): shares, then means printed as they are.
    "gold_shown": "shown %",
    "gold_read": "read %",
    "found_not_chosen": "found-not-chosen %",
    "cited_unseen": "cited unseen %",
    "unfinished": "unfinished %",
    "steps": "steps",
    "searches": "searches",
    "reads": "reads",
    "bad_calls": "bad calls",
}
AGENT_MEANS = {"steps", "searches", "reads", "bad_calls"}
OLD_COMPARED = {
    "accuracy": (True, "mcnemar"),
    "hallucinated": (False, "mcnemar"),
    "misattributed": (False, "mcnemar"),
    "fabricated": (False, "mcnemar"),
    "unverified": (False, "mcnemar"),
    "hr_paper": (False, "bootstrap"),
    "f1": (True, "bootstrap"),
}
KINDS = ("misattributed", "fabricated", "unverified")
OLD_BADNESS = ("hr_paper", "hr_code", "f1", "bleu", "cosine_minilm", "source_recall")
OLD_HIGHER_IS_BETTER = {"f1", "bleu", "cosine_minilm", "source_recall"}


# One deliberate change since those tables: HALLMARK's ``uncertain`` is a count (issue 36: 40
# UNCERTAIN answers printed as "4000.0"), so it is raw and printed as a whole number.
COUNTS = ("n", "errors", "uncertain")


def old_is_raw(metric: str) -> bool:
    return metric in {"kappa", "ac1", "tau", "uncertain"} | AGENT_MEANS or metric.endswith(
        ("_count", "_mean_n")
    )


def old_fmt(stat: Stat, metric: str) -> str:
    if metric in COUNTS:
        return str(int(stat.value))
    scale, digits = (1.0, 3) if old_is_raw(metric) else (100.0, 1)
    text = f"{stat.value * scale:.{digits}f}"
    if stat.lo != stat.hi:
        text += f" [{stat.lo * scale:.{digits}f}, {stat.hi * scale:.{digits}f}]"
    return text


def old_badness(record: dict[str, Any]) -> float:
    metrics = record.get("metrics") or {}
    for name in OLD_BADNESS:
        if name in metrics:
            value = float(metrics[name])
            return 1.0 - value if name in OLD_HIGHER_IS_BETTER else value
    return 1.0


def baseline_items() -> list[dict[str, Any]]:
    lines = (REPO / "baselines" / "smollm2-135m-instruct.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == "item"]


DECLARED = sorted(known_metrics())


def test_every_declared_metric_is_typed_and_the_core_shares_are_declared_once() -> None:
    for task in registry.all_tasks():
        declared = task.declared_metrics()
        assert all(isinstance(s, MetricSpec) and s.doc for s in declared.values()), task.name
        assert list(declared)[: len(CORE_METRICS)] == list(CORE_METRICS)


@pytest.mark.parametrize("metric", DECLARED)
def test_labels_and_formatting_reproduce_the_old_tables(metric: str) -> None:
    assert label(metric) == OLD_LABELS.get(metric, metric)
    if metric not in ("n", "errors"):
        assert is_raw(metric) == old_is_raw(metric)
    for stat in (Stat(0.4318, 0.4, 0.5, 9), Stat(3.0, 3.0, 3.0, 3)):
        assert fmt(stat, metric) == old_fmt(stat, metric)


def test_compare_tests_what_it_tested_before_for_every_task() -> None:
    for task in registry.all_tasks():
        specs = compared_metrics(task.name)
        expected = ["accuracy", "hallucinated"] + [
            m for m in (*KINDS, "hr_paper", "f1") if m in task.metrics
        ]
        assert list(specs) == expected, task.name
        assert {m: (s.higher_is_better, s.paired_test) for m, s in specs.items()} == {
            m: OLD_COMPARED[m] for m in expected
        }


def test_compare_on_a_committed_baseline_has_the_old_deltas_in_the_old_order() -> None:
    items = baseline_items()
    groups = compare(items, items).groups
    assert {g.task for g in groups} == {"direct", "indirect", "direct_metadata", "sid"}
    for group in groups:
        assert [d.metric for d in group.deltas] == list(OLD_COMPARED), group.task
        assert all(d.higher_is_better == OLD_COMPARED[d.metric][0] for d in group.deltas)


def test_worst_answers_rank_and_show_as_before() -> None:
    items = baseline_items()
    for r in items:
        assert headline.badness(r) == old_badness(r)
        metrics = r.get("metrics") or {}
        shown = [k for k in OLD_BADNESS if k in metrics] or sorted(metrics)
        old_text = ", ".join(f"{k}={float(metrics[k]):.3f}" for k in shown[:4])
        assert headline.item_metrics_text(r) == old_text
    for task in registry.all_tasks():
        names = list(headline.distance_metrics(task.name))
        assert names == [m for m in OLD_BADNESS if m in task.metrics], task.name
        for name in names:  # each alone, so its direction decides (F1 up is better, HR worse)
            alone = {"task": task.name, "metrics": {name: 0.25}}
            assert headline.badness(alone) == old_badness(alone), (task.name, name)


def test_tables_and_figures_keep_their_columns() -> None:
    """The per-suite table keeps HR paper and F1 first when narrowed; figures leave hr_code and
    the counts out, as the core's own lists did."""
    aggs = aggregate(baseline_items())
    assert not {"n", "errors"} & set(columns(aggs))
    charted = {spec.metric for spec in chart_specs(aggs)}
    assert "hr_code" not in charted and {"hr_paper", "f1", "bleu"} <= charted
    keys = {m for t in registry.all_tasks() for m, s in t.declared_metrics().items() if s.key}
    assert keys == {"hr_paper", "f1"}


def test_gates_accept_declared_metrics_and_name_the_unknown_ones() -> None:
    for metric in ("hr_paper", "dois_count", "kappa", "accuracy"):
        assert parse_gate(f"s:t:{metric}<=0.5", source="cli").metric == metric
    with pytest.raises(GateError, match="unknown metric 'hr_papr'"):
        parse_gate("s:t:hr_papr<=0.5", source="cli")


class _Plain(Task):
    name = "zz_metric_probe"
    paper = "probe"
    fields: Any = MappingProxyType({})


def _paper(**attrs: Any) -> Paper:
    task = type("Probe", (_Plain,), attrs)()
    return Paper("zz_probe", "probe", (task,))


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"metrics": {"exact": "a doc string"}}, "metric 'exact': declare it as .*MetricSpec"),
        ({"metrics": {"accuracy": MetricSpec("again")}}, "metric 'accuracy': the core computes"),
        (
            {"set_metric_specs": {"hr_paper": MetricSpec("another HR", label="HR %")}},
            "metric 'hr_paper' is declared differently by task '(direct|indirect|sid)",
        ),
    ],
    ids=["untyped", "core-name", "conflict"],
)
def test_a_bad_declaration_is_refused_when_the_paper_registers(
    attrs: dict[str, Any], message: str
) -> None:
    registry.names()  # the built-in papers first, as in a run
    with pytest.raises(CitebenchError, match=message):
        registry.register(_paper(**attrs))
    assert "zz_metric_probe" not in registry.names()


def test_a_compared_metric_must_say_which_way_is_better() -> None:
    with pytest.raises(ValueError, match="higher_is_better"):
        MetricSpec("a mean", paired_test="bootstrap")
    with pytest.raises(ValueError, match="outcome"):
        MetricSpec("a share", higher_is_better=True, paired_test="mcnemar")


def test_an_undeclared_name_reads_as_a_share_under_its_own_name() -> None:
    assert label("nowhere_declared") == "nowhere_declared"
    assert fmt(Stat(0.5, 0.5, 0.5, 2), "nowhere_declared") == "50.0"
    assert math.isnan(Stat(math.nan, 0, 0, 0).value) and fmt(None, "accuracy") == "-"


def test_a_narrowed_table_keeps_the_tasks_key_metrics_first() -> None:
    """HR paper and F1 (declared ``key``) stay when the table must drop columns; HR code and
    BLEU, declared before F1 or after it, go first, as the core's old priority list had it."""
    from pytest_citebench.reports.terminal import render_table

    aggs = [a for a in aggregate(baseline_items()) if a.stage is None and a.task == "direct"]
    lines = render_table(aggs, width=200)
    dropped = lines[-1].removeprefix("not shown, to fit 200 columns (-v shows them): ")
    # the kind shares (issue 37) and unread (issue 35), none key, go with HR code and BLEU
    assert dropped != lines[-1] and "HR code %, BLEU %" in dropped
    assert "HR paper %" in lines[0] and "F1 %" in lines[0]
