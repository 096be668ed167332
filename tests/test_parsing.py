"""Answer parsing: abstentions in any wrapping, boilerplate stripped, raw kept by the caller."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.papers.reasons.tasks import same_authors, stage
from pytest_citebench.parsing import clean_authors, clean_title, is_abstention


@pytest.mark.parametrize(
    "raw",
    [
        "pass",
        "Pass.",
        " PASS ",
        "'pass'",
        '"Pass"',
        "`pass`",
        "**pass**",
        "Pass!",
        "pass\nI could not identify the paper.",
        "Answer: pass",
        "“pass”",
    ],
)
def test_abstention_spellings(raw: str) -> None:
    assert is_abstention(raw)


@pytest.mark.parametrize(
    "raw",
    ["", "Passage Retrieval with Dense Vectors", "passing the test", "I pass on this? No: BERT"],
)
def test_not_abstentions(raw: str) -> None:
    assert not is_abstention(raw)


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        ("Attention Is All You Need", "Attention Is All You Need"),
        ('Title: "Attention Is All You Need"', "Attention Is All You Need"),
        ("**Title:** Attention Is All You Need.", "Attention Is All You Need"),
        ('"Attention Is All You Need" by Vaswani et al. (2017)', "Attention Is All You Need"),
        (
            "Attention Is All You Need. This paper introduced the Transformer.",
            "Attention Is All You Need",
        ),
        ("1. Attention Is All You Need (2017)", "Attention Is All You Need"),
        (
            "The cited paper title is: Attention Is All You Need\n\nIt proposes...",
            "Attention Is All You Need",
        ),
        ("Learning by Watching: A Study", "Learning by Watching: A Study"),
        (
            '"Why Should I Trust You?": Explaining the Predictions of Any Classifier',
            '"Why Should I Trust You?": Explaining the Predictions of Any Classifier',
        ),
        (
            "MatConvNet - Convolutional Neural Networks for MATLAB",
            "MatConvNet - Convolutional Neural Networks for MATLAB",
        ),
        ('The paper is "Deep Sets" (Zaheer et al., 2017).', "Deep Sets"),
        ("Pass. On second thought: Deep Sets", "Deep Sets"),
        ("[INST] Deep Sets [/INST]", "Deep Sets"),
        ("### Possible cited paper\n**Deep Sets**", "Deep Sets"),
        ("Sure! Here is the title:\n\nDeep Sets", "Deep Sets"),
    ],
)
def test_clean_title(raw: str, title: str) -> None:
    assert clean_title(raw) == title


def test_clean_authors_strips_label_and_trailing_sentence() -> None:
    raw = "Authors: Ashish Vaswani, Noam Shazeer, Niki Parmar. These authors are from Google."
    assert clean_authors(raw) == "Ashish Vaswani, Noam Shazeer, Niki Parmar"


@pytest.mark.parametrize(
    ("raw", "authors"),
    [
        # The old trailing-sentence rule took the initial "I." for a sentence start.
        ("D. A. Cohn, Z. Ghahramani, M. I. Jordan", "D. A. Cohn, Z. Ghahramani, M. I. Jordan"),
        ("The authors are: A. Smith and B. Jones.", "A. Smith and B. Jones"),
        ("1. Ann Lee\n2. Bo Chen", "Ann Lee, Bo Chen"),
        ('Lee, Ann, and Bo Chen. "A Title of Theirs." Venue, 2020.', "Lee, Ann, and Bo Chen"),
        ("Lee, A., & Chen, B. (2020). A title. Venue.", "Lee, A., & Chen, B"),
        ("@article{x, author = {Lee, Ann and Chen, Bo}, title = {T}}", "Lee, Ann and Chen, Bo"),
    ],
)
def test_clean_authors_styles(raw: str, authors: str) -> None:
    assert clean_authors(raw) == authors


def test_stage_keeps_raw_and_marks_abstention() -> None:
    s = stage("indirect", "  'Pass.'  ", clean_title)
    assert s.abstained and s.answer == "pass" and s.raw == "  'Pass.'  "
    s = stage("indirect", 'Title: "BERT"', clean_title)
    assert not s.abstained and s.answer == "BERT" and s.raw == 'Title: "BERT"'


def test_same_authors_ignores_order_accents_initials_and_et_al() -> None:
    gold = "Vishal Sood, Myléne Mathieu, Amer Shreim"
    assert same_authors("Amer Shreim, Mylene Mathieu and Vishal Sood", gold)
    assert same_authors("V. Sood; M. Mathieu; A. Shreim", gold)
    assert same_authors("Vishal Sood, Myléne Mathieu, Amer Shreim, et al.", gold)
    assert not same_authors("Vishal Sood, Amer Shreim", gold)
    assert not same_authors("Vishal Sood, Myléne Mathieu, Amer Shreim, Jane Doe", gold)


@given(st.text())
def test_parsers_never_raise(text: str) -> None:
    is_abstention(text)
    clean_title(text)
    clean_authors(text)
