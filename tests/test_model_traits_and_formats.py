"""What a model declares (``Traits``) and how a report format is declared (``reports.formats``):
each reader asks the trait it means, and a format is one table entry."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from pytest_citebench.models import IN_PROCESS, Model, Traits
from pytest_citebench.models.answers import AnswersModel
from pytest_citebench.models.rag import RagModel
from pytest_citebench.reports import formats
from pytest_citebench.reports.data import ReportData
from pytest_citebench.reports.output import write_reports
from pytest_citebench.results.aggregate import aggregate
from pytest_citebench.results.conclude import Baseline, conclude


def test_a_provider_model_is_priced_recorded_and_keyed_unless_its_profile_says_no_key() -> None:
    remote = Model("openai/gpt-4o-mini").traits
    assert remote == Traits(
        needs_key=True, priced=True, records_cassettes=True, runs_in_process=False, samples=True
    )
    # A local OpenAI-compatible server: recorded and sampled, but no key to export.
    served = Model("local/gemma", litellm_model="openai/gemma", needs_key=False).traits
    assert not served.needs_key and served.records_cassettes and not served.runs_in_process


def test_baselines_answers_files_and_rag_over_them_run_in_process() -> None:
    assert Model("citebench/bm25").traits == IN_PROCESS
    # A profile naming a citebench/* model is one too, whatever its own name.
    assert Model("mine", litellm_model="citebench/bm25").traits == IN_PROCESS
    assert AnswersModel("answers:a.jsonl", needs_key=False).traits == IN_PROCESS
    assert IN_PROCESS.runs_in_process and not IN_PROCESS.priced and not IN_PROCESS.samples
    # RAG retrieves in-process; the base model decides the rest.
    assert RagModel.wrap(Model("citebench/bm25"), "naive").traits == IN_PROCESS
    assert RagModel.wrap(Model("openai/x"), "naive").traits == Model("openai/x").traits


def test_every_format_declares_its_options_once(pytester: pytest.Pytester) -> None:
    names = [fmt.name for fmt in formats.FORMATS]
    assert names == ["html", "markdown"] and len(set(names)) == len(names)
    help_text = "\n".join(pytester.runpytest("--help").outlines)
    from pytest_citebench.__main__ import main

    for fmt in formats.FORMATS:
        assert fmt.option in help_text and fmt.option == f"--citebench-{fmt.name}"
        assert callable(fmt.renderer())
    with pytest.raises(SystemExit):
        main(["merge", "--help"])


def test_a_new_format_is_one_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Added to the table alone, a format is written by ``write_reports`` (merge's path) under
    its own name, scrubbed like the others."""
    module = types.ModuleType("citebench_test_renderer")
    module.render = lambda data: f"{len(data.records)} records in {tmp_path}/x\n"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    text = formats.ReportFormat("text", "text report", "h", "h", f"{module.__name__}:render")
    monkeypatch.setattr(formats, "FORMATS", (*formats.FORMATS, text))
    monkeypatch.setattr("pytest_citebench.reports.output.FORMATS", formats.FORMATS)
    records = [
        {"type": "item", "model": "m", "suite": "s", "task": "direct", "item_id": "1",
         "outcome": "correct", "metrics": {"accuracy": 1.0}, "answer": "", "expected": ""}
    ]  # fmt: skip
    out = tmp_path / "r.txt"
    written = write_reports(ReportData(records, aggregate(records)), text=out)
    assert written == [("text report", out)]
    assert out.read_text() == "1 records in …/x\n"  # absolute paths stripped
    with pytest.raises(TypeError, match="no report format pdf"):
        write_reports(ReportData(records, aggregate(records)), pdf=out)


def test_conclusion_counts_what_fails_the_run() -> None:
    records = [
        {"type": "item", "model": "m", "suite": "s", "task": "direct", "item_id": str(i),
         "outcome": outcome, "metrics": {"accuracy": float(outcome == "correct")},
         "answer": "", "expected": ""}
        for i, outcome in enumerate(["correct", "hallucinated", "error"])
    ]  # fmt: skip
    from pytest_citebench.results.gates import parse_gate

    gate = parse_gate("s:direct:accuracy>=0.9", source="test")
    done = conclude(records, [gate], Baseline(records, "same"))
    assert done.error_counts == {"m": 1}
    assert done.failed_gates == 1 and done.regressions == 0
    assert done.verdict().state == "bad"
    with pytest.raises(AttributeError):
        done.gates = ()  # type: ignore[misc]
