"""Answer parsing: abstentions in any wrapping, boilerplate stripped, raw kept by the caller."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.tasks.parsing import clean_authors, clean_title, is_abstention
from pytest_citebench.tasks.reasons import author_keys, stage


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
    ],
)
def test_clean_title(raw: str, title: str) -> None:
    assert clean_title(raw) == title


def test_clean_authors_strips_label_and_trailing_sentence() -> None:
    raw = "Authors: Ashish Vaswani, Noam Shazeer, Niki Parmar. These authors are from Google."
    assert clean_authors(raw) == "Ashish Vaswani, Noam Shazeer, Niki Parmar"


def test_stage_keeps_raw_and_marks_abstention() -> None:
    s = stage("indirect", "  'Pass.'  ", clean_title)
    assert s.abstained and s.answer == "pass" and s.raw == "  'Pass.'  "
    s = stage("indirect", 'Title: "BERT"', clean_title)
    assert not s.abstained and s.answer == "BERT" and s.raw == 'Title: "BERT"'


def test_author_keys_ignore_order_accents_initials_and_et_al() -> None:
    gold = author_keys("Vishal Sood, Myléne Mathieu, Amer Shreim")
    assert author_keys("Amer Shreim, Mylene Mathieu and Vishal Sood") == gold
    assert author_keys("V. Sood; M. Mathieu; A. Shreim") == gold
    assert author_keys("Vishal Sood, Myléne Mathieu, Amer Shreim, et al.") == gold
    assert author_keys("Vishal Sood, Amer Shreim") != gold


@given(st.text())
def test_parsers_never_raise(text: str) -> None:
    is_abstention(text)
    clean_title(text)
    clean_authors(text)
