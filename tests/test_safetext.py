"""Issue 36: an answer holding a lone surrogate (JSON's ``"\\ud800"``) was an INTERNALERROR with
no record written, and its saved cassette did it again on every replay. Answers (and error
texts) are made writable where they enter the run: the item is scored, its record written, and
the cassette replays."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench import jsonl, registry
from pytest_citebench.__main__ import main as cli
from pytest_citebench.api import Hint, Message
from pytest_citebench.errors import ProviderError
from pytest_citebench.models import Model
from pytest_citebench.run.runner import Job, run_item
from pytest_citebench.safetext import REPLACEMENT, safe_text
from pytest_citebench.suites import load_suite
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import TINY, outcomes, run_stub

LONE = "\ud800"
ANSWER = f'Title: "Attention Is All You Need" {LONE}'


def test_safe_text_replaces_lone_surrogates_and_keeps_everything_else() -> None:
    assert safe_text(f"a{LONE}b\udfff") == f"a{REPLACEMENT}b{REPLACEMENT}"
    assert safe_text("x\ud83d\ude00y") == "x\U0001f600y"  # a pair is its character
    text = "Müller – ☃ \U0001f600"
    assert safe_text(text) is text
    assert safe_text("plain") == "plain"


def _records(path: Path) -> list[dict[str, Any]]:
    return [r for r in jsonl.read_objects(path) if r["type"] == "item"]


def test_a_lone_surrogate_answer_is_scored_recorded_and_replays(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the plugin: record against a loopback stub that answers with a lone surrogate
    (sent as the JSON escape ``\\ud800``, as a server does), then replay with the stub stopped."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    args = ("--citebench-task", "indirect")
    with StubServer(lambda request: ANSWER) as server:
        url = server.url
        recorded = run_stub(
            pytester, url, *args, "--citebench-record", "once", "--citebench-results", "rec.jsonl"
        )
    assert "INTERNALERROR" not in recorded.stdout.str() + recorded.stderr.str()
    assert outcomes(recorded) == {"passed": 1, "hallucinated": 3}
    records = _records(pytester.path / "rec.jsonl")
    assert len(records) == 4
    assert {r["raw_answer"] for r in records} == {ANSWER.replace(LONE, REPLACEMENT)}
    cassettes = list((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 4 and "\\ud800" in cassettes[0].read_text(encoding="utf-8")

    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = run_stub(pytester, url, *args, "--citebench-results", "rep.jsonl")
    assert "INTERNALERROR" not in replayed.stdout.str() + replayed.stderr.str()
    assert outcomes(replayed) == outcomes(recorded)
    again = _records(pytester.path / "rep.jsonl")
    key = ("item_id", "outcome", "answer", "raw_answer", "reason")
    assert sorted(tuple(r[k] for k in key) for r in again) == sorted(
        tuple(r[k] for k in key) for r in records
    )


def test_a_lone_surrogate_in_an_answers_file_is_scored(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    (pytester.path / "answers.jsonl").write_text(  # ASCII JSON: the surrogate is escaped
        json.dumps({"id": "2001.00001-s1", "task": "indirect", "answer": ANSWER}) + "\n",
        encoding="utf-8",
    )
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "answers:answers.jsonl",
        "--citebench-task",
        "indirect",
        "--citebench-results",
        "out.jsonl",
        "-p",
        "no:cacheprovider",
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    scored = {r["item_id"]: r for r in _records(pytester.path / "out.jsonl")}
    assert scored["2001.00001-s1"]["outcome"] == "correct"
    assert scored["2001.00001-s1"]["raw_answer"] == ANSWER.replace(LONE, REPLACEMENT)

    # A results file may spell one too (JSON's escape, a hand edit): every command that reads
    # a results file and writes what it read reads it back as writable text.
    out = pytester.path / "out.jsonl"
    lines = out.read_text(encoding="utf-8").splitlines()
    out.write_text("".join(line.replace(REPLACEMENT, "\\ud800") + "\n" for line in lines))
    assert "\\ud800" in out.read_text(encoding="utf-8")
    for command, written in [
        (["merge", str(out), "-o", "merged.jsonl"], "merged.jsonl"),
        (["baseline", "promote", str(out), "--to", "base.jsonl", "--allow-errors"], "base.jsonl"),
        (["rescore", str(out), "--suites", str(pytester.path / "suites")], "out.jsonl"),
    ]:
        assert cli(command) in (0, 1), command  # merge: 1 for the unanswered ids' errors
        again = {r["item_id"]: r for r in _records(pytester.path / written)}
        assert again["2001.00001-s1"]["raw_answer"] == ANSWER.replace(LONE, REPLACEMENT)


class _Raising(Model):
    async def answer_item(
        self, messages: Sequence[Message], *, hint: Hint, task: str, item_id: str
    ) -> str:
        raise ProviderError(f"{self.name}: the server said {LONE}")


def test_an_error_text_holding_a_lone_surrogate_is_written_too(tmp_path: Path) -> None:
    """The other way outside text enters a record: a provider's error message."""
    suite = load_suite(TINY / "suite.toml")
    job = Job(
        nodeid="n",
        item=suite.items[0],
        task=registry.get("indirect"),
        model=_Raising("openai/stub"),
        suite_version=suite.manifest.version,
        corpus=None,
        cassette_root=tmp_path,
    )
    record = asyncio.run(run_item(job, None)).to_record()
    assert record["outcome"] == "error"
    assert REPLACEMENT in record["error"]
    jsonl.dumps(record).encode("utf-8")  # what the results file does with it


@pytest.mark.parametrize("where", ["items.jsonl", "corpus.jsonl"])
def test_a_lone_surrogate_in_a_suite_is_one_error_naming_file_line_and_field(
    pytester: pytest.Pytester, tiny: Path, where: str
) -> None:
    """The same INTERNALERROR came from a suite: a gold title holding ``\\ud800`` reached the
    results file as ``expected``. A suite's text is compared, not repaired: it is refused when
    the suite loads, as one failing ``invalid-suite`` test and one ``validate`` line."""
    path = tiny / where
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["title" if where == "corpus.jsonl" else "cited_title"] += LONE
    lines[0] = json.dumps(first)  # ASCII JSON: the surrogate is written as its escape
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    field = "title" if where == "corpus.jsonl" else "cited_title"
    says = f"{path}:1: field '{field}': holds a lone surrogate"

    result = pytester.runpytest("--citebench", "--citebench-results", "out.jsonl")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert says in result.stdout.str()
    assert outcomes(result) == {"failed": 1}
    assert cli(["validate", str(tiny)]) == 1
