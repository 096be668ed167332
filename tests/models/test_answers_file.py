"""``--citebench-model answers:FILE``: answers produced elsewhere, scored like a live answer, for
every paper; a missing id is an error naming file and id; a bad line is one usage error."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_citebench.models.answers import AnswersFileError, load_answers
from tests.conftest import REPO


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_answers(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_reasons_answers_are_scored_like_a_live_answer(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    answers = write_answers(
        pytester.path / "answers.jsonl",
        [
            # direct: gold authors -> correct; an invented name -> hallucinated.
            {
                "id": "2001.00001-s1",
                "task": "direct",
                "answer": "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion "
                "Jones, Aidan N. Gomez, Lukasz Kaiser, Illia Polosukhin",
            },
            {"id": "2001.00001-s2", "task": "direct", "answer": "Zork Q. Imaginary"},
            {"id": "2001.00002-s1", "task": "direct", "answer": "pass"},
            # No task: this line answers every task of the item.
            {"id": "2001.00002-s2", "answer": "Deep Residual Learning for Image Recognition"},
            {"id": "2001.00001-s1", "task": "indirect", "answer": "Attention Is All You Need"},
        ],
    )
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "answers:answers.jsonl",
        "--citebench-results",
        "out.jsonl",
        "-p",
        "no:cacheprovider",
    )
    items = {
        (r["task"], r["item_id"]): r
        for r in read_jsonl(pytester.path / "out.jsonl")
        if r["type"] == "item"
    }
    assert items[("direct", "2001.00001-s1")]["outcome"] == "correct"
    assert items[("direct", "2001.00001-s2")]["outcome"] == "hallucinated"
    assert items[("direct", "2001.00002-s1")]["outcome"] == "abstained"
    assert items[("indirect", "2001.00002-s2")]["outcome"] == "correct"
    assert items[("indirect", "2001.00001-s1")]["outcome"] == "correct"
    # An item the file does not answer is an error naming the file and the id, never a pass.
    missing = items[("indirect", "2001.00001-s2")]
    assert missing["outcome"] == "error"
    assert "answers.jsonl: no answer for id '2001.00001-s2' (task indirect)" in missing["error"]
    sha = hashlib.sha256(answers.read_bytes()).hexdigest()
    assert {json.dumps(r["answers_file"]) for r in items.values()} == {
        json.dumps({"file": "answers.jsonl", "sha256": sha})
    }
    assert result.ret != 0  # an error fails the run


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "a", "answer": "x"}\n{"answer": "y"}\n', "answers.jsonl:2: 'id' must be"),
        ('{"id": "a", "answer": 3}\n', "answers.jsonl:1: 'answer' must be a string"),
        ('{"id": "a", "answer": "x"}\n{"id": "a", "answer": "y"}\n', "answers.jsonl:2: a second"),
        ('{"id": "a", "answer": "x"}\nnot json\n', "answers.jsonl:2:"),
        ('{"id": "a", "answer": "x", "model": "m"}\n', "answers.jsonl:1: unknown keys"),
    ],
)
def test_a_malformed_line_is_one_usage_error_naming_file_and_line(
    pytester: pytest.Pytester, tiny: Path, line: str, problem: str
) -> None:
    (pytester.path / "answers.jsonl").write_text(line, encoding="utf-8")
    result = pytester.runpytest("--citebench", "--citebench-model", "answers:answers.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert problem in result.stderr.str()


def test_load_answers_task_line_wins_over_the_taskless_one(tmp_path: Path) -> None:
    path = write_answers(
        tmp_path / "a.jsonl",
        [{"id": "x", "answer": "any"}, {"id": "x", "task": "detect", "answer": "mine"}],
    )
    book = load_answers(path)
    assert book.answer("detect", "x") == "mine"
    assert book.answer("direct", "x") == "any"
    assert book.answer("direct", "y") is None
    assert book.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(AnswersFileError, match="no answers"):
        load_answers(write_answers(tmp_path / "empty.jsonl", []))


@pytest.mark.parametrize("layout", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_reasons_dois_are_checked_against_the_runs_recorded_responses(
    pytester: pytest.Pytester, tiny: Path, layout: list[str]
) -> None:
    """``--citebench-doi-offline-dir`` reaches REASONS' scoring in every worker: the right
    title with a DOI the registries answered 404 for is hallucinated; without recordings the
    same answer is correct and the DOI only unverifiable."""
    write_answers(
        pytester.path / "answers.jsonl",
        [
            {"id": "2001.00001-s1", "answer": "Attention Is All You Need, doi:10.1371/notarealdoi"},
            {"id": "2001.00001-s2", "answer": "pass"},
            {"id": "2001.00002-s1", "answer": "pass"},
            {"id": "2001.00002-s2", "answer": "pass"},
        ],
    )
    recorded = str(REPO / "fixtures" / "doi")

    def outcome(*extra: str) -> dict:
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
            *layout,
            *extra,
        )
        records = read_jsonl(pytester.path / "out.jsonl")
        found = [r for r in records if r.get("item_id") == "2001.00001-s1"]
        assert len(found) == 1, result.stdout.str()
        return found[0]

    # One argument: a bare path among the arguments would move pytest's rootdir to this repo.
    checked = outcome(f"--citebench-doi-offline-dir={recorded}")
    assert checked["outcome"] == "hallucinated", checked
    assert "DOI 10.1371/notarealdoi does not exist" in checked["reason"], checked
    unchecked = outcome()
    assert unchecked["outcome"] == "correct", unchecked
    assert "10.1371/notarealdoi unverifiable offline" in unchecked["reason"], unchecked


def test_a_key_in_an_answers_file_is_scrubbed_like_a_live_answer(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run before this one in the same process (pytester runs in-process) read the keys of
    # its own environment: this run must read its own (it failed under xdist without it).
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pytester.runpytest("--citebench", "-p", "no:cacheprovider", "--collect-only", "-q")
    """A key pasted into an answer (the environment's provider key, or one shaped like a
    provider's) reached the terminal, the results and the JUnit XML verbatim, where the same text
    from a live model is scrubbed. Both go through one scrub now."""
    env_key = "Zq3vN8pL2xR7kT4mW9cY6bH1"  # no known shape: caught as the variable's value
    shaped = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    write_answers(
        pytester.path / "answers.jsonl",
        [
            {"id": item, "answer": f'The paper is "Invented Title {n}" ({env_key}, {shaped})'}
            for n, item in enumerate(
                ["2001.00001-s1", "2001.00001-s2", "2001.00002-s1", "2001.00002-s2"]
            )
        ],
    )
    result = pytester.runpytest(
        "--citebench",
        "--citebench-model",
        "answers:answers.jsonl",
        "--citebench-results",
        "out.jsonl",
        "--junitxml",
        "junit.xml",
        "--citebench-html",
        "report.html",
        "--citebench-show",
        "10",
        "-v",
        "-p",
        "no:cacheprovider",
    )
    records = [r for r in read_jsonl(pytester.path / "out.jsonl") if r["type"] == "item"]
    assert "hallucinated" in {r["outcome"] for r in records}, records  # scored, and shown
    terminal = result.stdout.str() + result.stderr.str()
    assert "Invented Title" in terminal and "<REDACTED>" in terminal
    for where, text in [
        ("terminal", terminal),
        ("results", (pytester.path / "out.jsonl").read_text()),
        ("junit", (pytester.path / "junit.xml").read_text()),
        ("html", (pytester.path / "report.html").read_text()),
    ]:
        assert env_key not in text and shaped not in text, where


@pytest.mark.parametrize(
    "rag",
    [
        ["--citebench-rag", "naive"],
        ["--citebench-rag", "advanced"],
        ["--citebench-rag", "none", "--citebench-rag", "naive"],
    ],
)
def test_an_answers_file_behind_rag_is_one_usage_error_at_start(
    pytester: pytest.Pytester, tiny: Path, rag: list[str]
) -> None:
    """Issue 36: ``answers:FILE`` with ``--citebench-rag`` failed every item (an answers file
    answers by id and cannot stand behind a wrapper that changes the prompt). It is one usage
    error before any item, naming both settings and what to do."""
    write_answers(pytester.path / "answers.jsonl", [{"id": "2001.00001-s1", "answer": "pass"}])
    result = pytester.runpytest(
        "--citebench", "--citebench-model", "answers:answers.jsonl", *rag, "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert (
        f"--citebench-rag {rag[-1]} with --citebench-model answers:answers.jsonl: an answers file "
        "answers each item by id" in err
    )
    assert "run it without RAG" in err and "Traceback" not in err
    assert "failed" not in result.stdout.str() and "passed" not in result.stdout.str()
    # Without RAG the same file runs.
    assert pytester.runpytest("--citebench", "--citebench-model", "answers:answers.jsonl").ret in (
        pytest.ExitCode.OK,
        pytest.ExitCode.TESTS_FAILED,
    )
