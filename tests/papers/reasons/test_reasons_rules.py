"""REASONS' judging rules as ordered tuples (``judge_direct.RULES``, ``judge_indirect.RULES``):
one reply per rule that this rule, and no earlier one, judges, so each entry of a tuple is
needed and in its place, and a rule added without a case here fails the coverage test.

Mutations tried: removing ``repeats_the_cited_title`` from the direct tuple (its reply falls
through to ``nothing_name_like``: same outcome, another reason; only this file caught it) and
``names_a_corpus_paper`` / ``passes_after_the_citing_title`` from the indirect one (caught here
and in test_outcomes / test_scorer4); moving ``names_another_title`` before ``a_sentence``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_citebench.api import Attempt, Sample
from pytest_citebench.papers.reasons import judge_direct, judge_indirect
from pytest_citebench.papers.reasons.tasks import Direct, Indirect

GOLD = {
    "citing_title": "Policy Search for Robot Control",
    "sentence": "Trust-region methods constrain each policy update [12].",
    "cited_title": "Trust Region Policy Optimization",
    "cited_authors": "John Schulman, Sergey Levine, Philipp Moritz, Michael I. Jordan, Pieter Abbeel",
}
#: A paper of the suite's corpus that is not the gold.
CORPUS_PAPER = "If beam search is the answer, what was the question?"
#: A corpus paper a direct reply may write beside the names, as a reference line.
SURVEY_PAPER = "GANs: A Survey of Generative Adversarial Networks"
#: The cited paper's abstract, as the sid escalation gives it.
ABSTRACT = (
    "Trust region methods guarantee monotonic improvement of the policy under a bound on each "
    "update. We describe an iterative procedure for optimizing policies, with guaranteed "
    "monotonic improvement, and make several approximations to the theoretically justified "
    "procedure."
)
#: Another, whose title opens with its system's name.
SYSTEM_PAPER = "GAN2X: Non-Lambertian Inverse Rendering of Image GANs"

DIRECT_CASES = {
    "only_a_placeholder": ("[Author 1], [Author 2]", "unanswered", "template placeholder"),
    "repeats_the_cited_title": (
        "Trust Region Policy Optimization",
        "unanswered",
        "repeats the cited title",
    ),
    "nothing_name_like": ("", "unanswered", "nothing name-like"),
    "echoes_the_prompt": (
        "list only author names formatted as first name last name separated by comma do not "
        "mention the paper",
        "unanswered",
        "echoes the prompt",
    ),
    "placeholder_among_words": (
        "The authors are <first name> <last name> and <first name> <last name>.",
        "unanswered",
        "template placeholder",
    ),
    "no_name_like_span": ("OpenAI", "unanswered", "no name-like span"),
    "invents_authors": ("John Schulman, Tom Dean", "hallucinated", "1 author(s) not in the gold"),
    # SmolLM2 under RAG: the right names, then another (corpus) paper's title as a reference line
    "credits_them_to_another_paper": (
        GOLD["cited_authors"] + "\nGANs: A Survey of Generative Adversarial Networks\n2019-08-31",
        "hallucinated",
        "gives the names as another paper's authors",
    ),
    "names_every_gold_author": (GOLD["cited_authors"], "correct", "the same 5 author(s)"),
    "names_some_gold_authors": ("John Schulman, Pieter Abbeel", "partial", "names 2 of 5"),
}

INDIRECT_CASES: dict[str, tuple[str, dict[str, str], str, str]] = {
    "names_the_gold": ("Trust Region Policy Optimization", {}, "correct", "the gold title"),
    "settles_in_prose": (
        'The sentence reports results on "TRPO". Such updates come from policy-gradient work at '
        'OpenAI, so the citation there is therefore most likely "Proximal Policy Optimization '
        'Algorithms". I am fairly confident.',
        {},
        "hallucinated",
        "names a title that is not the gold (in prose)",
    ),
    "passes_after_the_citing_title": (
        'The sentence cites a paper titled "Policy Search for Robot Control" and the title of '
        'the possible research paper is "Pass".',
        {},
        "abstained",
        "echoes the citing title, then says 'pass'",
    ),
    "self_citation_named_alone": (
        "Policy Search for Robot Control",
        {"cited_title": "Policy Search for Robot Control"},
        "correct",
        "the gold title (a self-citation",
    ),
    "echoes_the_citing_title": (
        'The paper is titled "Policy Search for Robot Control".',
        {},
        "unanswered",
        "echoes the citing title",
    ),
    "gives_a_quoted_pass": (
        'The sentence "Pass" is a common abbreviation.',
        {},
        "abstained",
        "gives a quoted 'pass'",
    ),
    "no_title_like_span": ("", {}, "unanswered", "no title-like span"),
    "echoes_the_prompt": (GOLD["sentence"], {}, "unanswered", "echoes the prompt"),
    # A quoted title over a line break: only the one-line reading finds it.
    "names_the_gold_among_them": (
        'It cites "Trust Region\nPolicy Optimization"',
        {},
        "correct",
        "the gold title",
    ),
    "a_non_answer": ("N/A", {}, "unanswered", "no title, only"),
    "a_placeholder": ("<paper title here>", {}, "unanswered", "template placeholder"),
    "echoes_the_sentence": (
        'The sentence is referencing a paper titled "Trust-region methods constrain each policy '
        'update [12]" which is not available.',
        {},
        "unanswered",
        "echoes the prompt",
    ),
    # SmolLM2's second sid turn: the abstract it was given, quoted as the title.
    "copies_what_it_was_given": (
        'The sentence is referencing a paper titled "Trust region methods guarantee monotonic '
        'improvement of the policy under a bound on each update" which discusses it.',
        {"cited_abstract": ABSTRACT},
        "unanswered",
        "copies the abstract it was given",
    ),
    "names_a_corpus_paper": (
        CORPUS_PAPER,
        {},
        "hallucinated",
        "names a title that is not the gold (a corpus paper)",
    ),
    "names_the_gold_in_part": (
        "BERT",
        {"cited_title": "BERT: Pre-training of Deep Bidirectional Transformers for Language"},
        "partial",
        "names the paper by its system's name only",
    ),
    "contains_the_gold": (
        "We think they mean the method called TRPO (Trust Region Policy Optimization), which "
        "was introduced at ICML.",
        {},
        "correct",
        "the gold title, written in the reply",
    ),
    # SmolLM2 under RAG, a retrieved paper's system name quoted as the method (read blind as
    # hallucinated); a name of the sentence's own ("TRPO" would be) is not counted.
    "names_a_corpus_paper_by_its_system": (
        "The paper discusses a new method for image reconstruction. The method is described as "
        '"GAN2X" and is described as "2DMM" in the paper.',
        {},
        "hallucinated",
        "names a corpus paper by its system's name: GAN2X",
    ),
    "a_sentence": ("I'm not able to determine this.", {}, "unanswered", "a sentence, not a title"),
    "quotes_the_sentence_back": (
        '"constrain each policy update" is a type of optimisation method.',
        {},
        "unanswered",
        "quotes the sentence back",
    ),
    "not_shaped_like_a_title": ("A: A", {}, "unanswered", "no word of three letters"),
    "names_another_title": ("HyperNetworks", {}, "hallucinated", "names a title that is not"),
}


def first_rule(rules: Any, reply: Any) -> str:
    return next(rule.__name__ for rule in rules if rule(reply) is not None)


def test_every_rule_has_a_case_in_this_file() -> None:
    assert [r.__name__ for r in judge_direct.RULES] == list(DIRECT_CASES)
    assert [r.__name__ for r in judge_indirect.RULES] == list(INDIRECT_CASES)


@pytest.mark.parametrize("rule", list(DIRECT_CASES))
def test_each_direct_rule_judges_its_own_case(rule: str, tmp_path: Any) -> None:
    raw, outcome, reason = DIRECT_CASES[rule]
    corpus = tmp_path / "corpus.jsonl"
    papers = [{"id": "p1", "title": CORPUS_PAPER}, {"id": "p3", "title": SURVEY_PAPER}]
    corpus.write_text("".join(json.dumps(p) + "\n" for p in papers))
    task, item = Direct(), Sample("test/suite", "item-1", GOLD, 1)
    sources, instructions = task.prompt_texts(item)
    titles = judge_indirect.corpus_titles(str(corpus))
    reply = judge_direct.AuthorsReply(item, raw, sources, instructions, titles)
    assert first_rule(judge_direct.RULES, reply) == rule
    score = task.score(item, Attempt((task.parse("direct", raw),), corpus=str(corpus)))
    assert (score.outcome, score.reason[: len(reason)]) == (outcome, reason), score.reason


@pytest.mark.parametrize("rule", list(INDIRECT_CASES))
def test_each_indirect_rule_judges_its_own_case(rule: str, tmp_path: Any) -> None:
    raw, fields, outcome, reason = INDIRECT_CASES[rule]
    corpus = tmp_path / "corpus.jsonl"
    papers = [{"id": "p1", "title": CORPUS_PAPER}, {"id": "p2", "title": SYSTEM_PAPER}]
    corpus.write_text("".join(json.dumps(p) + "\n" for p in papers))
    task, item = Indirect(), Sample("test/suite", "item-1", {**GOLD, **fields}, 1)
    # An abstract among the fields: the reply answers the sid escalation that gave it.
    stage = "abstract" if "cited_abstract" in fields else "indirect"
    sources, instructions = task.prompt_texts_of(item, stage)
    titles = judge_indirect.corpus_titles(str(corpus))
    reply = judge_indirect.TitleReply(item, raw, sources, instructions, titles, str(corpus))
    assert first_rule(judge_indirect.RULES, reply) == rule
    score = task.score(item, Attempt((task.parse(stage, raw),), corpus=str(corpus)))
    assert (score.outcome, score.reason[: len(reason)]) == (outcome, reason), score.reason


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        # SmolLM2-135M (reasons/adversarial 1801.06353v4-s21): the question's words, then its own
        # answer "Pass": a pass, though it repeats a run of the instructions.
        (
            'The sentence is referencing a paper titled "Policy Search for Robot Control" and the '
            'title of the possible research paper that this sentence is citing to is "Pass".',
            "abstained",
        ),
        # A base model's echo of the whole prompt: its 'pass' is the instructions' own.
        (
            'I have taken a sentence from the research paper titled "Policy Search for Robot '
            'Control", give me the title of the possible research paper that this sentence is '
            "citing to. If you are not able to come up with the paper title write 'pass'.",
            "unanswered",
        ),
    ],
)
def test_a_pass_is_the_models_unless_copied_with_the_words_that_lead_to_it(
    raw: str, outcome: str
) -> None:
    task, item = Indirect(), Sample("test/suite", "item-1", GOLD, 1)
    score = task.score(item, Attempt((task.parse("indirect", raw),), corpus=None))
    assert score.outcome == outcome, score.reason
