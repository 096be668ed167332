"""Scorer 9 (issue 42): a reply read by its structure and by the rules, the two settled; the
classes of three fresh held-out rounds (fixtures/answers/frontier, keys p, q, r), end to end
through the task's own solve and score.

Mutations tried, each caught here: ``settle`` returning the rules' verdict always (the card,
the table, the letter, the YAML lose their right answers); the match-first branch removed (a
title with a colon read as a key turns a right answer wrong); the placed check removed (numbered
steps become a wrong title); ``gold_people_span`` returning None; ``supplemented`` returning the
gold as it is; ``_second_surname_left_out`` False; ``_transposed`` False.
"""

from __future__ import annotations

import pytest

from pytest_citebench.papers.reasons.authors import parse_authors, same_person
from pytest_citebench.papers.reasons.judgement import Judgement
from pytest_citebench.papers.reasons.readings import gold_people_span, settle
from pytest_citebench.papers.reasons.title_reply import supplemented
from pytest_citebench.parsing.structure import Reading
from tests.papers.reasons.test_scorer6 import GOLD, ITEM, judge

TITLE = ITEM["cited_title"]


@pytest.mark.parametrize(
    ("task", "raw", "outcome"),
    [
        # p0012: a card's heading and labels are no authors
        ("direct", f"## Authors\n\n**Query:** Author list\n**Authors:** {GOLD}\n\n*Follow-up: more?*", "correct"),
        ("direct", f"## Authors\n\n**Authors:** {GOLD}, Ada Smith", "hallucinated"),
        # p0023: a table's header row is no title
        ("indirect", f"| Cited paper title |\n|---|\n| {TITLE} |", "correct"),
        ("indirect", "| Cited paper title |\n|---|\n| Hand Pose Estimation in the Wild |", "hallucinated"),
        # p0002, p0037: a letter's greeting and signature
        ("direct", f"Hello,\n\nThe authors are:\n\n{GOLD}\n\nBest regards,\nResearch Assistant", "correct"),
        ("indirect", "Hello,\n\nThe most likely cited paper is:\n\nHand Pose Estimation in the Wild\n\nBest regards,\nAssistant", "hallucinated"),
        # p0051, q0038: a 'pass' under a label or after a chat greeting
        ("indirect", "## Cited Paper\n\n**Result:** pass\n\n*Follow-up: share more text?*", "abstained"),
        ("direct", "Hi! :wave: pass", "abstained"),
        # p0019, p0003: an HTML fragment, a LaTeX bibliography
        ("indirect", "<p>Hand Pose Estimation in the Wild</p>", "hallucinated"),
        ("indirect", f"\\begin{{thebibliography}}{{1}}\n\\bibitem{{c}} Y.~Chen.\n\\newblock {TITLE}.\n\\newblock In ECCV, 2020.\n\\end{{thebibliography}}", "correct"),
        # p0014, r0010: documents and what programs write
        ("direct", f'authors: "{GOLD}"', "correct"),
        ("direct", f"INSERT INTO citations (authors) VALUES ('{GOLD}');", "correct"),
        # p0000: prose that names every gold author
        ("direct", "The authors of that paper are Yujin Chen, Zhigang Tu, Di Kang and Linchao Bao.", "correct"),
        # Gemma's numbered steps stay unread: no placed span names a paper
        ("indirect", ". The algorithm works as follows:\n\n1. Create a graph with nodes.\n2. For each node, compute the distance.", "unanswered"),
    ],
)  # fmt: skip
def test_structured_replies(task: str, raw: str, outcome: str) -> None:
    score = judge(task, raw)
    assert score.outcome == outcome, score.reason


def test_a_title_with_a_colon_keeps_the_rules_reading() -> None:
    """'SMOTE: Synthetic ...' reads as a field (label SMOTE) too: match first keeps the gold."""
    score = judge("indirect", "SMOTE: Synthetic Minority Over-sampling Technique",
                  cited_title="SMOTE: Synthetic Minority Over-sampling Technique")  # fmt: skip
    assert score.outcome == "correct", score.reason


def _j(outcome: str, answer: str = "x") -> Judgement:
    return Judgement(outcome, f"{outcome} reason", answer)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rules", "structure", "placed", "document", "expected"),
    [
        ("correct", "hallucinated", True, True, "correct"),  # match first: the rules found it
        ("hallucinated", "correct", False, False, "correct"),  # match first: the structure did
        ("unanswered", "hallucinated", True, True, "hallucinated"),  # a document's parser
        ("hallucinated", "unanswered", False, True, "unanswered"),
        ("unanswered", "hallucinated", False, False, "unanswered"),  # unplaced: no evidence
        ("unanswered", "hallucinated", True, False, "hallucinated"),  # placed: evidence
        ("hallucinated", "abstained", False, False, "abstained"),  # a 'pass' under a label
        ("hallucinated", "unanswered", True, False, "hallucinated"),  # Markdown: the rules
    ],
)
def test_settle(rules: str, structure: str, placed: bool, document: bool, expected: str) -> None:
    reading = Reading("x", "html" if document else "markdown", placed, document)
    assert settle(_j(rules), _j(structure), reading).outcome == expected


def test_gold_people_span() -> None:
    text = "Thanks. The authors are Hung Dang, Yue Huang and Ee-Chien Chang, I believe."
    assert gold_people_span(text, ["Hung Dang", "Yue Huang", "Ee-Chien Chang"]) == (
        "Hung Dang, Yue Huang and Ee-Chien Chang"
    )
    assert gold_people_span(text, ["Hung Dang", "Ada Smith"]) is None
    # the list goes on past the gold's last author: not the whole list
    more = "The authors are Hung Dang, Yue Huang, Ee-Chien Chang and Ada Smith."
    assert gold_people_span(more, ["Hung Dang", "Yue Huang", "Ee-Chien Chang"]) is None


def test_a_supplements_gold_is_named_by_its_paper() -> None:
    gold = 'Supplementary information for "Quantum supremacy using a programmable processor"'
    assert supplemented(gold) == "Quantum supremacy using a programmable processor"
    assert supplemented("Quantum supremacy") == "Quantum supremacy"
    score = judge("indirect", "Quantum supremacy using a programmable processor", cited_title=gold)
    assert score.outcome == "correct", score.reason


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Antonio Manuel López", "Antonio Manuel López Peña", True),  # second surname left out
        ("Antonio López", "Antonio López Peña", False),  # too short to tell
        ("Charu C. Aggarwal", "Charu C. Aggrawal", True),  # two letters swapped
        ("Özlem Uzuner", "Ozlem Ozuner", False),  # a letter changed: another name
    ],
)
def test_name_variants(a: str, b: str, same: bool) -> None:
    pa, pb = parse_authors(a).persons[0], parse_authors(b).persons[0]
    assert same_person(pa, pb) is same


def test_a_document_line_that_repeats_the_prompt_is_no_answer() -> None:
    """r0014: a Turtle reply gives the citing paper's title beside the cited one's. Mutation:
    the lines that repeat the prompt kept -> the echo rule reads nothing."""
    raw = (
        "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        f'ex:citing dcterms:title "{ITEM["citing_title"]}" ;\n    dcterms:references ex:c .\n'
        'ex:c dcterms:title "Hand Pose Estimation in the Wild" .'
    )
    score = judge("indirect", raw)
    assert score.outcome == "hallucinated", score.reason
