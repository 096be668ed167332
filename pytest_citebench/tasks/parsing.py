"""Turning a model's free text into the answer we score, without losing what it said.

Models wrap answers in boilerplate ("Title: ...", quotes, markdown, a paragraph of explanation)
and abstain in many spellings ("Pass.", "'pass'", " PASS "). Scoring the boilerplate would count
politeness as hallucination, so we strip it; the raw text is always kept beside the parsed answer.
"""

from __future__ import annotations

import re

_QUOTES = "\"'`“”‘’«»„"
_LEADING_LABEL = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?:the\s+)?(?:cited\s+|research\s+|possible\s+)*"
    r"(?:paper\s+title|title\s+of\s+the\s+(?:cited\s+)?(?:research\s+)?paper|title|answer|"
    r"response|citation(?:\s+paper\s+title)?|authors?|author\s+names)"
    r"\s*(?:is|are)?\s*(?:\*\*|__)?\s*[:\-–—]\s*(?:\*\*|__)?\s*",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_)(.+?)\1")
_TRAILING_EXPLANATION = re.compile(
    r"(?:\s+[-–—]\s+|\s*\(\s*(?:arxiv|doi|published|\d{4})"
    r"|\.\s+(?:this|the|it|i|which|that|note)\b).*$",
    re.IGNORECASE | re.DOTALL,
)


def _strip_wrappers(text: str) -> str:
    """Remove surrounding whitespace, quotes, emphasis and final punctuation, repeatedly."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip()
        text = _EMPHASIS.sub(r"\2", text) if _EMPHASIS.fullmatch(text) else text
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
            text = text[1:-1]
        text = text.rstrip(".!;,")
    return text


def is_abstention(raw: str) -> bool:
    """True when the answer (or its first line) is the word "pass" in any wrapping."""
    text = raw.strip()
    if not text:
        return False
    first = text.splitlines()[0]
    for candidate in (text, first):
        cleaned = _LEADING_LABEL.sub("", _strip_wrappers(candidate))
        if _strip_wrappers(cleaned).casefold() == "pass":
            return True
    return False


def _first_content_line(raw: str) -> str:
    for line in raw.strip().splitlines():
        line = _LIST_MARKER.sub("", line).strip()
        if line and not _LEADING_LABEL.fullmatch(line + " "):
            return line
    return raw.strip()


def clean_title(raw: str) -> str:
    """The title a model gave, without labels, quotes, markdown or a trailing explanation."""
    line = _first_content_line(raw)
    line = _LEADING_LABEL.sub("", line)
    quoted = re.match(r"^\s*[" + _QUOTES + r"](.+?)[" + _QUOTES + r"]", line)
    if quoted:
        return _strip_wrappers(quoted.group(1))
    line = _EMPHASIS.sub(r"\2", line)
    line = _TRAILING_EXPLANATION.sub("", line)
    return _strip_wrappers(line)


def clean_authors(raw: str) -> str:
    """The author list a model gave: first content line, label and trailing sentence removed."""
    line = _first_content_line(raw)
    line = _LEADING_LABEL.sub("", line)
    line = _EMPHASIS.sub(r"\2", line)
    line = re.sub(r"\.\s+(?:These|They|This|The|It|I)\b.*$", "", line)
    return _strip_wrappers(line)
