"""Turning a model's free text into the answer we score, without losing what it said.

Models wrap answers in boilerplate ("Title: ...", quotes, markdown, a leading sentence, a paragraph
of explanation, a reference string in some citation style) and abstain in many spellings
("Pass.", "'pass'", " PASS "). Scoring the boilerplate would count politeness as hallucination,
so we strip it; the raw text is always kept beside the parsed answer. The rules, with examples,
are in docs/outcomes.md; every one of them has a test in tests/parsing/test_parsing.py.

Two principles shape the code:

* Quotes inside a title are part of it. ``"Why Should I Trust You?": Explaining the Predictions
  of Any Classifier`` opens with a quoted span that is *continued* by a colon, so it is not a
  wrapper. A quoted span is a wrapper only when nothing title-like continues it.
* Cutting is conservative. " - " and ". " end a title only when what follows reads as prose or
  as reference debris (authors, venue, year); a subtitle after a dash stays.

One module per concept: ``reply`` (the final answer and the wrappers around it), ``abstention``
(replies that answer nothing), ``prose`` (a sentence rather than a title), ``identifiers`` (DOIs
and arXiv ids), ``titles``, ``title_match`` (the cited title inside a reply), ``names`` (what a
person's name looks like: surname particles, a line of nothing but people) and ``authors``.
This package gives callers the names they use, wherever the rule lives.

May import: nothing of the package (pure text rules).
"""

from __future__ import annotations

from pytest_citebench.parsing.abstention import is_abstention, is_non_answer, is_placeholder
from pytest_citebench.parsing.authors import (
    ET_AL_AFFILIATION,
    ET_AL_COMPANIONS,
    SURNAME_PARTICLES,
    clean_authors,
)
from pytest_citebench.parsing.identifiers import ARXIV_ID
from pytest_citebench.parsing.prose import looks_like_prose, reads_as_title_case
from pytest_citebench.parsing.reply import final_text, has_letters, quoted_spans
from pytest_citebench.parsing.title_match import find_title, title_pattern
from pytest_citebench.parsing.titles import (
    clean_title,
    not_a_title,
    reads_as_sentence,
    strip_restatement,
    title_candidates,
    title_quotes,
)

__all__ = [
    "ARXIV_ID",
    "ET_AL_AFFILIATION",
    "ET_AL_COMPANIONS",
    "SURNAME_PARTICLES",
    "clean_authors",
    "clean_title",
    "final_text",
    "find_title",
    "has_letters",
    "is_abstention",
    "is_non_answer",
    "is_placeholder",
    "looks_like_prose",
    "not_a_title",
    "quoted_spans",
    "reads_as_sentence",
    "reads_as_title_case",
    "strip_restatement",
    "title_candidates",
    "title_pattern",
    "title_quotes",
]
