"""Replies that give no answer: "pass" in any wrapping, words that stand where an answer would
("N/A", "Reference [12]"), template placeholders.

Every paper asks this before reading a title or names: an abstention is scored as one, never as
a wrong answer, and a placeholder never counts as a name.
"""

from __future__ import annotations

import re

from pytest_citebench.parsing.reply import _LEADING_LABEL, _YEAR, _strip_wrappers, final_text

_PLACEHOLDER = re.compile(
    r"<[^<>]{1,40}>|<[A-Za-z_ ]{1,40}$|"
    r"\[(?:[^\[\]]*\b(?:name|author|title|paper|surname|insert)\b[^\[\]]*)\]|"
    r"\{(?:[^{}]*\b(?:name|author|title)\b[^{}]*)\}|"
    r"\b(?:first\s*name|last\s*name|given\s*name|family\s*name|surname\s*\d|author\s*\d+|"
    r"author\s+[a-z]\b|name\s*\d+|paper\s+title\s+here|title\s+of\s+(?:the\s+)?paper\s+here|"
    r"john\s+doe|jane\s+doe|xyz|lorem\s+ipsum)\b",
    re.IGNORECASE,
)


def _is_pass_text(candidate: str) -> bool:
    cleaned = _LEADING_LABEL.sub("", _strip_wrappers(candidate))
    cleaned = _strip_wrappers(cleaned).casefold()
    cleaned = re.sub(
        r"^(?:(?:the\s+|my\s+)?(?:final\s+)?answer\s+(?:is|would\s+be)\s*:?\s*|"
        r"i\s+(?:will|would|'ll|must|have\s+to)\s+(?:say\s+)?)",
        "",
        cleaned,
    )
    return _strip_wrappers(cleaned) in {"pass", "i pass"}


_QUOTED_PASS = re.compile(
    r"[\W_]*(?:(?:the|my)\s+)?(?:sentence|answer|title|paper|response|reply)"
    r"(?:\s+(?:is|would\s+be|will\s+be))?\s*:?\s*[\"'“‘«*_`]+\s*pass\s*[\"'”’»*_`]+[\s.!]*",
    re.IGNORECASE,
)


def is_abstention(raw: str) -> bool:
    """True when the final answer (or its first line) is the word "pass" in any wrapping.

    "pass" followed by an explanation abstains; "pass ... on second thought: X" answers X,
    and "X ... actually, pass" abstains: the final answer counts.
    """
    text = final_text(raw)
    if not text:
        return False
    first = text.splitlines()[0]
    if any(_is_pass_text(c) for c in (text, first)):
        return True
    if _QUOTED_PASS.fullmatch(first.strip()):
        return True  # 'The sentence is "pass"', "My answer: 'pass'"
    # "pass - I don't know", "Pass, I cannot tell", "PASS (not enough information)".
    return re.match(r"^[\W_]*pass[\W_]*?(?:\s[-–—]\s|[:,;.(!]|$)", first, re.IGNORECASE) is not None


_NON_ANSWER = re.compile(
    r"(?:n/?a|none|unknown|nothing|null|nil|not\s+sure|no\s+idea|not\s+available|"
    r"not\s+applicable|no\s+answer|i\s+do(?:n't|\s+not)\s+know|idk|unsure|tbd|"
    r"(?:the\s+)?(?:paper\s+)?(?:title|reference|ref|citation|source|paper|work)s?"
    r"(?:\s*\[?\d+\]?)?)",
    re.IGNORECASE,
)
_AUTHOR_YEAR = re.compile(
    r"[A-Z][\w'’\-]+(?:\s+(?:et\s+al\.?|(?:and|&)\s+[A-Z][\w'’\-]+))?,?\s*\(?"
    + _YEAR
    + r"\)?|[A-Z][\w'’\-]+\s+et\s+al\.?"
)


def is_non_answer(text: str) -> bool:
    """ "N/A", "Unknown", "Reference [12]", "Title", "Schulman et al. (2015)": words that stand
    where an answer would, naming no title (an author-year names no title either)."""
    text = _strip_wrappers(text.strip())
    return bool(_NON_ANSWER.fullmatch(text) or _AUTHOR_YEAR.fullmatch(text))


def is_placeholder(text: str) -> bool:
    """Template placeholders ("<first name> <last name>", "[Author 1]", "Title of paper here")."""
    return _PLACEHOLDER.search(text) is not None
