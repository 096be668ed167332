"""A reply under RAG that cites the retrieved papers by number ("The answer is: [3] [1]", the
llama.cpp SmolLM2 recording's s0014): read as the papers the prompt showed under those numbers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_citebench.api import (
    Hint,
    ItemScore,
    Message,
    Sample,
    ScoredStage,
    ShownPaper,
    papers_shown,
    show_papers,
)
from pytest_citebench.papers.reasons.ranks import SHOWN_KEY, cited_by_rank
from pytest_citebench.papers.reasons.tasks import Direct, Indirect
from pytest_citebench.testing.stubserver import StubServer
from tests.conftest import outcomes

ITEM = {
    "id": "x-s1",
    "citing_title": "DialogueLLM: Context and Emotion Knowledge-Tuned Large Language Models",
    "sentence": "Lei et al. reformulate emotion recognition as generation.",
    "cited_title": "InstructERC: Reforming Emotion Recognition in Conversation with a Retrieval "
    "Multi-task LLMs Framework",
    "cited_authors": "Shanglin Lei, Guanting Dong, Xiaoping Wang, Keheng Wang, Sirui Wang",
}
OTHER = ShownPaper(
    1,
    "Multimodal Learning using Optimal Transport for Sarcasm and Humor Detection",
    "Shraman Pramanick, Aniket Roy, Vishal M. Patel",
)
GOLD = ShownPaper(2, ITEM["cited_title"], ITEM["cited_authors"])
SHOWN = (OTHER, GOLD)


def scored(task: Direct | Indirect, raw: str, shown: Sequence[ShownPaper] = SHOWN) -> ItemScore:
    """solve + score with a model behind a retrieval wrapper that showed ``shown``."""
    item = Sample("reasons/nlp", ITEM["id"], ITEM, 1)

    async def generate(messages: Sequence[Message], *, hint: Hint) -> str:
        show_papers(shown)
        return raw

    return task.score(item, asyncio.run(task.solve(item, generate, suite_corpus=None)))


@pytest.mark.parametrize(
    ("raw", "ranks"),
    [
        ("The answer is:\n[3] [1]", (3, 1)),
        ("[2]", (2,)),
        ("Retrieved paper [2] is the cited work.", (2,)),
        ("None of [1], [2] fits.", None),  # ruling papers out is not citing them
        ("[1] Title: Multimodal Learning", None),  # a copied entry: the other rules read it
        ("The answer is pass", None),
    ],
)
def test_only_numbers_and_connecting_words_cite_by_number(
    raw: str, ranks: tuple[int, ...] | None
) -> None:
    cited = cited_by_rank(raw, SHOWN)
    assert (cited.ranks if cited else None) == ranks


def test_no_list_shown_means_no_reading_by_number() -> None:
    assert cited_by_rank("[1]", ()) is None
    # ... and the reply stays what it was before: it names nothing the rules can read
    assert scored(Indirect(), "The answer is: [1]", shown=()).outcome == "unanswered"


@pytest.mark.parametrize(
    ("task", "raw", "outcome", "reason"),
    [
        (Indirect(), "The answer is: [2]", "correct", "cites retrieved paper [2] by number"),
        # s0014: [3] was never shown, [1] is another corpus paper
        (Indirect(), "The answer is:\n[3] [1]", "hallucinated", "[3]: no paper shown"),
        (Indirect(), "[3]", "unanswered", "names no paper"),
        (Direct(), "[2]", "correct", "the same 5 author(s)"),
        (Direct(), "The authors are those of [1].", "hallucinated", "not in the gold"),
    ],
)
def test_a_number_is_read_as_the_paper_shown_under_it(
    task: Direct | Indirect, raw: str, outcome: str, reason: str
) -> None:
    score = scored(task, raw)
    assert (score.outcome, reason in score.reason) == (outcome, True), score.reason


def test_the_shown_list_is_kept_on_the_stage_for_a_rescore() -> None:
    task = Indirect()
    item = Sample("reasons/nlp", ITEM["id"], ITEM, 1)

    async def generate(messages: Sequence[Message], *, hint: Hint) -> str:
        show_papers(SHOWN)
        return "[2]"

    attempt = asyncio.run(task.solve(item, generate, suite_corpus=None))
    assert isinstance(attempt.final, ScoredStage)
    assert attempt.final.details[SHOWN_KEY] == [p.to_json() for p in SHOWN]
    again = task.restage(item, attempt, None)
    assert task.score(item, again).outcome == "correct"


def test_papers_shown_collects_across_a_thread_and_resets() -> None:
    async def call() -> None:
        await asyncio.to_thread(show_papers, SHOWN)

    with papers_shown() as sink:
        asyncio.run(call())
    assert sink == list(SHOWN)
    show_papers(SHOWN)  # outside any block: nobody collects, nothing fails
    with papers_shown() as fresh:
        pass
    assert fresh == []


def rank_answer(request: dict) -> str:
    """A model that answers with the first retrieved paper's number, as SmolLM2 did."""
    assert any(m["content"].startswith("Here are research papers") for m in request["messages"])
    return "The answer is: [1]"


def test_a_reply_by_number_under_naive_rag_is_scored_and_replayed(
    pytester: pytest.Pytester, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the plugin: the retrieval wrapper tells the task what [1] was; the record keeps
    it; replay and rescore give the same verdicts."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-ranks-0123456789abcdef")
    args = ["--citebench", "--citebench-model", "openai/stub", "--citebench-rag", "naive"]
    args += ["--citebench-task", "indirect", "-p", "no:cacheprovider"]
    with StubServer(rank_answer) as server:
        recorded = pytester.runpytest(
            *args, "--citebench-api-base", server.url, "--citebench-record", "once",
            "--citebench-results", "rec.jsonl",
        )  # fmt: skip
        monkeypatch.delenv("OPENAI_API_KEY")
        replayed = pytester.runpytest(
            *args, "--citebench-api-base", server.url, "--citebench-results", "rep.jsonl"
        )
    rows = [json.loads(x) for x in (pytester.path / "rec.jsonl").read_text().splitlines()]
    items = [r for r in rows if r["type"] == "item"]
    assert items
    for r in items:
        shown = r["stages"][-1]["details"][SHOWN_KEY]
        first_is_gold = shown[0]["title"] == r["expected"]
        assert r["outcome"] == ("correct" if first_is_gold else "hallucinated"), r["reason"]
        assert r["reason"].startswith("cites retrieved paper [1] by number"), r["reason"]
    assert {r["outcome"] for r in items} == {"correct", "hallucinated"}
    assert outcomes(replayed) == outcomes(recorded)
