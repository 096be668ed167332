"""Scorer 5 (issue 35): the answers chatty and multilingual deployments write, one case per class,
each taken from (or shaped like) a real frontier-model answer of fixtures/answers/frontier.jsonl.

Mutations tried, each caught here: ``answer_after_reasoning`` returning the reply whole (the
reasoning cases fail); dropping the foreign labels from ``_LEADING_LABEL`` (the multilingual
direct case reads "著者: Eric Brochu" as one name and becomes partial); removing the
``_ALTERNATIVE_CUE`` check from ``names_the_gold`` (a gold named as a second choice becomes
correct); removing « from the title marks (the German quote is hallucinated).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from typing import Any

import pytest

from pytest_citebench import registry
from pytest_citebench.api import ItemScore, Sample
from tests.conftest import REPO, outcomes

ITEM = {
    "id": "x-s1",
    "citing_title": "Policy Search for Robot Control",
    "sentence": "Trust-region methods constrain each policy update [12].",
    "cited_title": "Trust Region Policy Optimization",
    "cited_authors": "John Schulman, Sergey Levine, Philipp Moritz, Michael I. Jordan, Pieter Abbeel",
}
GOLD = ITEM["cited_authors"]


def judge(task: str, raw: str, **fields: str) -> ItemScore:
    t = registry.get(task)
    sample = Sample("reasons/nlp", "x-s1", {**ITEM, **fields}, 0)

    async def generate(messages: Any, *, hint: Any) -> str:
        return raw

    return t.score(sample, asyncio.run(t.solve(sample, generate, suite_corpus=None)))


CASES = [
    # reasoning before the answer, a blank line, then the answer (direct and indirect)
    ("direct", "This is the 2015 ICML paper from Berkeley on monotonic policy improvement.\n\n"
     + GOLD, "correct"),
    ("indirect", "The sentence says trust-region methods constrain each update, which is the "
     "idea Schulman et al. introduced.\n\nTrust Region Policy Optimization", "correct"),
    ("indirect", "The sentence says trust-region methods constrain each update, which is the "
     "idea of a later clipped objective.\n\nProximal Policy Optimization Algorithms",
     "hallucinated"),
    # a lead-in paragraph in another language ending with a colon
    ("indirect", "Hier wird wahrscheinlich die Arbeit von Schulman zitiert, die den "
     "Vertrauensbereich einführt:\n\nTrust Region Policy Optimization", "correct"),
    # answer labels and lead-in clauses in other languages
    ("direct", "著者: " + GOLD, "correct"),
    ("direct", "Auteurs (je n'en suis pas entièrement sûr) : " + GOLD, "correct"),
    ("direct", "Non ne sono del tutto sicuro, ma credo che gli autori siano: " + GOLD, "correct"),
    # titles quoted in another language's marks, anywhere in the sentence
    ("indirect", "Das zitierte Paper ist «Trust Region Policy Optimization».", "correct"),
    ("indirect", "L'article cité est „Trust Region Policy Optimization“.", "correct"),
    # an author list inside a paragraph of prose
    ("direct", "This is the ICML 2015 paper that introduced TRPO. The authors are " + GOLD
     + ". I am confident about this list.", "correct"),
    ("direct", "This is the ICML 2015 paper that introduced TRPO. The authors are John "
     "Schulman, Sergey Levine, Tom Dean. I am fairly confident.", "hallucinated"),
    # prose that settles on a quoted title; a second choice is not the answer
    ("indirect", 'The sentence reports results on "TRPO". The cited paper is therefore most '
     'likely "Trust Region Policy Optimization". I am confident.', "correct"),
    ("indirect", 'The sentence is about clipping, so the cited paper is most likely "Proximal '
     'Policy Optimization Algorithms". A possible alternative is "Trust Region Policy '
     'Optimization".', "hallucinated"),
    # the gold written word for word inside a sentence
    ("indirect", "They mean the method called TRPO (Trust Region Policy Optimization), which "
     "was introduced at ICML.", "correct"),
    # an explanation, then a pass
    ("indirect", "The sentence makes a generic point about policy updates. I can't tie it to "
     "one paper.\n\npass", "abstained"),
    ("indirect", "The fragment has no distinctive clue, so any single title would be a guess. "
     "My answer is therefore: pass.", "abstained"),
    # a doubled-letter typo of the gold's own spelling names the same paper
    ("indirect", "DolphinAttack: Inaudible Voice Commands", "correct",
     {"cited_title": "DolphinAtack: Inaudible Voice Commands"}),
    # the layouts a model copies from a retrieved context
    ("direct", "[1] Title: Trust Region Policy Optimization\nAuthors: " + GOLD, "correct"),
    # The asked paper's entry with its authors, then another paper's entry: that one is named
    # as another paper, not judged (labelling.md); scorer 10 reads the gold's entry first.
    ("direct", "[1] Title: Trust Region Policy Optimization\nAuthors: " + GOLD
     + "\n\n[2] Title: Evaluating Entity Disambiguation\nAuthors: Ana Smith, Bo Li",
     "correct"),
    ("direct", "1. John Schulman\n2. Sergey Levine\n\n3. Tom Dean", "hallucinated"),
    # a retrieved entry copied as the answer is read through its "[k] Title:" label
    ("indirect", "The answer is:\n\n[3] Title: Proximal Policy Optimization Algorithms",
     "hallucinated"),
    ("indirect", "[1] Title: Trust Region Policy Optimization\nAuthors: John Schulman", "correct"),
    # an entry of another paper pasted after the answer is no layout (real SmolLM2 RAG answer)
    ("direct", GOLD + ",\n\n[1] Title: Evaluating Entity Disambiguation\nAuthors: Ana Smith, "
     "Bo Li\nAbstract: ...", "correct"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_chat_styles_get_the_readers_outcome(case: tuple[Any, ...]) -> None:
    task, raw, outcome, *fields = case
    score = judge(task, raw, **(fields[0] if fields else {}))
    assert score.outcome == outcome, f"{score.outcome}: {score.reason}\n{raw!r}"


BERT = "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"


@pytest.mark.parametrize(
    ("raw", "outcome", "why"),
    [
        ("BERT", "partial", "system's name only"),
        ("BERT: Pre-training of Deep Bidirectional Transformers", "partial", "cut short"),
        ("BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
         "correct", "the gold title"),
        ("BERT: A Survey of Bidirectional Models", "hallucinated", "not the gold"),
    ],
)  # fmt: skip
def test_title_variants_follow_the_documented_policy(raw: str, outcome: str, why: str) -> None:
    """docs/outcomes.md: the main title alone is correct, a system's name or a title cut short
    partial, never hallucinated; a new subtitle is another paper."""
    score = judge("indirect", raw, cited_title=BERT)
    assert score.outcome == outcome and why in score.reason, score.reason
    main = judge("indirect", "Deep Residual Learning", cited_title="Deep Residual Learning: X")
    assert main.outcome == "correct" and "main title" in main.reason


def test_a_reply_the_rules_cannot_read_says_so_and_is_counted() -> None:
    raw = (
        "Цитируемая работа, скорее всего, посвящена методам доверительной области для "
        "обучения с подкреплением и ограничению шага обновления политики."
    )
    score = judge("indirect", raw)
    assert score.outcome == "unanswered" and score.reason.startswith("not read:")
    task = registry.get("indirect")
    records = [
        {"task": "indirect", "model": "m", "outcome": "unanswered", "reason": score.reason},
        {"task": "indirect", "model": "m", "outcome": "correct", "reason": "the gold title"},
    ]
    assert task.set_metrics(records)["unread"].value == 0.5
    (line,) = task.summary_lines([], records)
    assert line.startswith("m: 1 of 2 replies (50.0%) not read")
    # An echo or a placeholder is the model's own failure, not a style the rules missed.
    echo = judge("indirect", "Policy Search for Robot Control")
    assert echo.outcome == "unanswered" and not echo.reason.startswith("not read")


def test_a_base_models_echo_before_a_fragment_stays_unanswered() -> None:
    """A paragraph that repeats the prompt is no reasoning (gemma: the prompt, then "The
    purpose of this"): the paragraph rule leaves the reply whole."""
    raw = (
        'I have taken a sentence from the research paper titled "Policy Search for Robot '
        'Control", give me the title of the possible research paper that this sentence is '
        "citing to. If you are not able to come up with the paper title write 'pass'. Don't "
        "write anything else.\n\nRobust Control Methods"
    )
    assert judge("indirect", raw).outcome == "unanswered"


# --------------------------------------------------------------------------- the corpus itself


def _frontier() -> list[dict[str, Any]]:
    path = REPO / "fixtures" / "answers" / "frontier.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_the_frontier_corpus_spans_every_suite_style_and_form() -> None:
    rows = _frontier()
    assert len(rows) >= 400
    assert len({r["suite"] for r in rows}) == 11
    styles = {r["style"] for r in rows}
    assert {"reasoning", "markdown", "apa", "ieee", "bibtex", "language", "long"} <= styles
    assert {r["form"] for r in rows} == {"first-turn", "rag-naive", "rag-advanced", "second-turn"}
    assert all(r["item"].get("gold_verified") for r in rows)  # judged against read golds


def test_an_answers_file_of_the_corpus_scores_through_the_plugin_as_labelled(
    pytester: pytest.Pytester,
) -> None:
    """The hci answers file, run as ``--citebench-model answers:FILE`` on its own items:
    every record's outcome is its blind label (after adjudication)."""
    shutil.copytree(REPO / "suites" / "reasons" / "hci", pytester.path / "suites" / "hci")
    answers = REPO / "fixtures" / "answers" / "frontier" / "answers-files" / "hci.jsonl"
    shutil.copy(answers, pytester.path / "hci.jsonl")
    labels = {(r["task"], r["item_id"]): r["expected_outcome"] for r in _frontier()}
    lines = [json.loads(x) for x in answers.read_text(encoding="utf-8").splitlines()]
    ids = [f"suites/hci/suite.toml::{x['task']}::{x['id']}[answers:hci.jsonl]" for x in lines]
    result = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider", "--citebench-model", "answers:hci.jsonl",
        "--citebench-results", "r.jsonl", *ids,
    )  # fmt: skip
    assert sum(outcomes(result).values()) == len(lines)
    records = [json.loads(x) for x in (pytester.path / "r.jsonl").read_text().splitlines()]
    items = [r for r in records if r["type"] == "item"]
    assert len(items) == len(lines)
    for record in items:
        assert record["outcome"] == labels[(record["task"], record["item_id"])], record
        assert record["answers_file"]["file"].endswith("hci.jsonl")
