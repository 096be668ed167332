"""Answer parsing: abstentions in any wrapping, boilerplate stripped, raw kept by the caller."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
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


def _quoted_spans_reference(line: str) -> list[tuple[int, int, str]]:
    """The rule stepped through one character at a time, as it was first written."""
    from pytest_citebench.parsing.reply import _CJK_OPEN, _PAIRS, has_letters

    spans = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch in _PAIRS and (i == 0 or not line[i - 1].isalnum() or ch in _CJK_OPEN):
            closers = _PAIRS[ch]
            j = i + 1
            while j < len(line):
                if line[j] in closers and (
                    j + 1 == len(line) or not line[j + 1].isalnum() or ch in _CJK_OPEN
                ):
                    break
                j += 1
            if j < len(line) and j > i + 1 and has_letters(line[i + 1 : j]):
                spans.append((i, j + 1, line[i + 1 : j]))
                i = j + 1
                continue
        i += 1
    return spans


_QUOTE_TEXT = st.text(
    alphabet=st.sampled_from(list("\"'`“”„«»‘’《》「」『』〈〉ab1 .-é")), max_size=24
)


@given(_QUOTE_TEXT)
@example("「ab」c and 'Don't' “x” «y»")
@settings(max_examples=1000)
def test_quoted_spans_jumping_between_quote_marks_finds_what_stepping_finds(line: str) -> None:
    from pytest_citebench.parsing.reply import quoted_spans

    assert quoted_spans(line) == _quoted_spans_reference(line)
