"""When an ArxEval answer declines: "pass" (the REASONS rule) or a refusal sentence.

A model that says it does not know a jumbled or mixed title has not invented a paper, so both
tasks score such an answer *abstained*; this module is the one place that decides it.
"""

from __future__ import annotations

import re

from pytest_citebench.parsing import is_abstention

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
# An optional apology ("Sorry, but", "I apologize,", "Unfortunately,") before the refusal itself.
_APOLOGY = (
    r"(?:(?:(?:i'?m|i\s+am|i)\s+)?(?:sorry|apologi[sz]e)[^.!?]*?[,.!]?\s*(?:but\s+)?"
    r"|unfortunately,?\s*)?"
)
_FIND = r"(?:find|locate|identify|recogni[sz]e|know|verify)"
_HAVE = (
    r"have\s+(?:any\s+)?(?:specific\s+)?(?:information|details|data|knowledge|access|a\s+record)"
)
_REFUSAL = re.compile(
    r"^\W*"
    + _APOLOGY
    + r"(?:"
    + rf"i\s*(?:'m|\s+am)\s+(?:not\s+(?:aware|familiar|able\s+to\s+{_FIND})|unable\s+to\s+{_FIND}"
    + r"|unaware)"
    + r"|i\s+(?:could\s*n[o']?t|can\s*n[o']?t|cannot|was\s+unable\s+to|was\s+not\s+able\s+to"
    + rf"|did\s*n[o']?t|do\s*n[o']?t|do\s+not|did\s+not)\s+(?:{_FIND}|{_HAVE})"
    + r"|i\s+have\s+no\s+(?:information|record|knowledge|details)"
    + r"|there\s+(?:is|are)\s+no\s+(?:such\s+|known\s+|specific\s+)*(?:research\s+)?"
    + r"(?:paper|papers|article|record|publication)"
    + r"|(?:this|the|that)\s+(?:research\s+)?(?:paper|title|article)\s+(?:does\s+not|doesn't)\s+"
    + r"(?:appear|seem)\s+to\s+(?:be|exist|correspond)"
    + r"|no\s+(?:such\s+)?(?:paper|record|article|publication)\s+(?:matching|with|titled|exists)"
    + r")",
    re.IGNORECASE,
)


def is_refusal(raw: str) -> bool:
    """True when the answer's first sentence says the model does not know the paper.

    Recognised openings (case-insensitive, curly apostrophes too, optionally after "Sorry, but"
    or "I apologize,"): "I'm not aware of / familiar with", "I'm unable / not able to find",
    "I couldn't / can't / cannot / didn't find / locate / identify / recognise", "I don't know",
    "I don't have (any) (specific) information / details / access", "I have no information /
    record", "There is no (such / known) paper", "This paper does not appear to exist",
    "No paper matching ...". Only the *first* sentence is read: "I couldn't find it, but based on
    the title it likely ..." declines (what follows is a guess the model itself flagged), while a
    description that later says "I'm not aware of follow-up work" does not.
    """
    text = raw.strip().translate(_APOSTROPHES)
    if not text:
        return False
    first = re.split(r"(?<=[.!?])\s+|\n", text, maxsplit=1)[0]
    first = re.sub(r"^[\s*_>#-]+", "", first)
    return _REFUSAL.match(first) is not None


def declines(raw: str) -> bool:
    """The model declined: "pass" in any wrapping (the REASONS rule) or a refusal sentence."""
    return is_abstention(raw) or is_refusal(raw)
