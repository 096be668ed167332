"""What a model declares (``Traits``) and how a report format is declared (``reports.formats``):
each reader asks the trait it means, and a format is its renderer's module alone."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from pytest_citebench.models import IN_PROCESS, Model, Traits
from pytest_citebench.models.answers import AnswersModel
from pytest_citebench.models.rag import RagModel
from pytest_citebench.reports import formats
from pytest_citebench.reports.conclude import Baseline, conclude
from pytest_citebench.reports.data import ReportData
from pytest_citebench.reports.output import write_reports
from pytest_citebench.results.aggregate import aggregate


def test_a_provider_model_is_priced_recorded_and_keyed_unless_its_profile_says_no_key() -> None:
    remote = Model("openai/gpt-4o-mini").traits
    assert remote == Traits(
        needs_key=True,
        priced=True,
        records_cassettes=True,
        runs_in_process=False,
        samples=True,
        scrubs_answers=True,
    )
    # A local OpenAI-compatible server: recorded and sampled, but no key to export.
    served = Model("local/gemma", litellm_model="openai/gemma", needs_key=False).traits
    assert not served.needs_key and served.records_cassettes and not served.runs_in_process


def test_baselines_answers_files_and_rag_over_them_run_in_process() -> None:
    assert Model("citebench/bm25").traits == IN_PROCESS
    # A profile naming a citebench/* model is one too, whatever its own name.
    assert Model("mine", litellm_model="citebench/bm25").traits == IN_PROCESS
    # An answers file runs in-process too, but its text comes from outside (scrubbed of keys),
    # and it answers by id whatever the prompt.
    from_file = AnswersModel("answers:a.jsonl", needs_key=False).traits
    assert from_file == dataclasses.replace(IN_PROCESS, scrubs_answers=True, reads_prompt=False)
    assert IN_PROCESS.runs_in_process and not IN_PROCESS.priced and not IN_PROCESS.samples
    assert not IN_PROCESS.scrubs_answers  # the baselines answer from the suite's own corpus
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


_PLAIN = '''"""A format written as one module: nothing else names it."""

from pytest_citebench.reports.formats import ReportFormat

FORMAT = ReportFormat(
    name="plain",
    label="plain report",
    help="write a plain-text count here",
    merge_help="write the plain-text count here",
    render="render",
)


def render(data):
    return f"{len(data.records)} records in {data.records[0]['answer']}\\n"
'''


def test_a_new_format_is_its_module_alone(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A module on the reports package's path declaring ``FORMAT`` is found, without being
    imported, and gets ``--citebench-NAME``, merge's ``--NAME`` and its file, scrubbed like the
    others."""
    import pytest_citebench.reports as reports
    from pytest_citebench.__main__ import main

    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "plain.py").write_text(_PLAIN)
    monkeypatch.setattr(reports, "__path__", [*reports.__path__, str(tmp_path / "ext")])
    module = "pytest_citebench.reports.plain"
    monkeypatch.delitem(sys.modules, module, raising=False)
    found = formats.discover()
    assert [fmt.name for fmt in found] == ["html", "markdown", "plain"]
    assert found[2].render == f"{module}:render" and module not in sys.modules
    # Every reader bound the table at import; give them the one discovered now. (pytester's
    # in-process runs may have re-imported formats.py since this file imported it.)
    tables = {id(formats.FORMATS), id(sys.modules[formats.__name__].FORMATS)}
    for reader in list(sys.modules.values()):
        if id(getattr(reader, "FORMATS", None)) in tables:
            monkeypatch.setattr(reader, "FORMATS", found)
    with pytest.raises(SystemExit):
        main(["merge", "--help"])
    assert "--plain PLAIN" in capsys.readouterr().out
    records = [
        {"type": "item", "model": "m", "suite": "s", "task": "direct", "item_id": "1",
         "outcome": "correct", "metrics": {"accuracy": 1.0}, "answer": f"{tmp_path}/x",
         "expected": ""}
    ]  # fmt: skip
    out = tmp_path / "r.txt"
    try:
        written = write_reports(ReportData(records, aggregate(records)), plain=out)
    finally:
        sys.modules.pop(module, None)
    assert written == [("plain report", out)]
    assert out.read_text() == "1 records in …/x\n"  # absolute paths stripped
    with pytest.raises(TypeError, match="no report format pdf"):
        write_reports(ReportData(records, aggregate(records)), pdf=out)
    # Last: pytester's in-process run re-imports modules, unpatched, when it is done.
    assert "--citebench-plain=FILE" in "\n".join(pytester.runpytest("--help").outlines)


def test_a_format_declaration_that_needs_an_import_is_refused(tmp_path: Path) -> None:
    """FORMAT is read from source, so a computed field is an error naming file and line, never
    a format silently missing its option."""
    bad = tmp_path / "bad.py"
    fields = 'label="l", help="h", merge_help="m"'
    bad.write_text(f'"""x"""\nFORMAT = ReportFormat(name=NAME, {fields}, render="r")\n')
    with pytest.raises(formats.FormatError, match=r"bad.py:2: name= must be a literal"):
        formats.declared(bad, "x.bad")
    bad.write_text(f'x = 1\nFORMAT = ReportFormat(name="n", {fields})\n')
    with pytest.raises(formats.FormatError, match=r"bad.py:2: .*render"):
        formats.declared(bad, "x.bad")
    # Read up to the end of the statement, not the first closing bracket.
    bad.write_text(f'FORMAT = ReportFormat(\n    name="n", {fields}, render="r"\n).lower()\n')
    with pytest.raises(formats.FormatError, match=r"bad.py:1: write FORMAT = ReportFormat"):
        formats.declared(bad, "x.bad")


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
