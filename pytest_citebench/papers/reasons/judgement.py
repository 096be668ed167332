"""What judging a REASONS answer yields, and how an ordered tuple of rules yields it.

Each task's rules are small named functions, tried in order; the first that recognises the reply
gives the judgement, and the last one judges every reply. Adding a rule is one function and one
entry in its tuple (``judge_direct.RULES``, ``judge_indirect.RULES``); the order is the
precedence docs/outcomes.md describes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pytest_citebench.api import Outcome


@dataclass(frozen=True)
class Judgement:
    """What a stage's answer is under the taxonomy, and the text the metrics are computed on."""

    outcome: Outcome
    reason: str
    answer: str
    #: What a *hallucinated* judgement found wrong, as data for the kind of wrong citation
    #: (``kinds.py`` classifies it after the rules decide; the rules never read these): the
    #: title judged not the gold (indirect), the people judged not gold authors (direct), and
    #: how an identifier given with the answer was wrong (``identifiers.WRONG_IDS``), if one was.
    wrong_title: str = ""
    wrong_authors: tuple[str, ...] = ()
    wrong_id: str = ""


Reply = TypeVar("Reply")
#: One rule: the judgement of a reply it recognises, None to leave it to the next rule.
Rule = Callable[[Reply], Judgement | None]


def first_judgement(rules: Sequence[Rule[Reply]], reply: Reply) -> Judgement:
    """The judgement of the first rule that recognises the reply."""
    for rule in rules:
        judgement = rule(reply)
        if judgement is not None:
            return judgement
    raise AssertionError(f"no rule judged the reply; the last of {len(rules)} must judge every one")


def short(text: str, limit: int = 80) -> str:
    """The text on one line, cut to ``limit`` characters, as a reason quotes it."""
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
