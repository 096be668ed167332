"""What every reading of a reply shares: the final answer after any revision, and the wrappers
(labels, quotes, emphasis, markdown, chat preambles) around it.

Titles and authors are read from the same replies, so the text both strip is defined once here.
"""

from __future__ import annotations

import re

_QUOTES = "\"'`“”‘’«»„《》「」『』〈〉"
_PAIRS = {
    '"': '"',
    "“": "”",
    "”": "”",
    "„": "“”",
    "«": "»",
    "'": "'",
    "‘": "’",
    "`": "`'",
    "《": "》",
    "「": "」",
    "『": "』",
    "〈": "〉",
}
_CJK_OPEN = "《「『〈"
_OPENER = re.compile("[" + re.escape("".join(_PAIRS)) + "]")
_CLOSER = {opener: re.compile("[" + re.escape(closers) + "]") for opener, closers in _PAIRS.items()}
_LEADING_LABEL = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?:the\s+)?(?:final\s+|cited\s+|research\s+|possible\s+|paper\s+)*"
    r"(?:paper\s+title|title\s+of\s+the\s+(?:cited\s+)?(?:research\s+)?paper|title|answer|"
    r"response|citation(?:\s+paper\s+title)?|reference|paper|authors?|author\s+names|"
    r"author\s+list)"
    r"\s*(?:is|are)?\s*(?:\*\*|__)?\s*[:\-–—]\s*(?:\*\*|__)?\s*",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^\s*(?:\*(?=\s)|[•+]|-|\d+\s*[.)](?!\d)|\(\d+\)|[a-z][.)](?=\s))\s*")
_MARKDOWN_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|>\s*)+")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_)(.+?)\1")
# "pass ... on second thought: X": the last revision marker starts the final answer.
_REVISION = re.compile(
    r"(?:^|(?<=[.!?;\n])|(?<=\bpass\b))\s*[\"'*_]*\s*(?:on\s+second\s+thoughts?|actually|wait|"
    r"correction|(?:my\s+)?final\s+answer(?:\s+is)?|(?:my\s+)?best\s+guess(?:\s+is)?|"
    r"scratch\s+that)\s*[:,\-–—]\s*",
    re.IGNORECASE,
)


_YEAR = r"(?:19|20)\d{2}[a-z]?"


# Chat preambles: "Sure!", "Certainly.", "Here is the title:", "Here's what I found:".
_INTERJECTION = re.compile(
    r"^\s*(?:sure|certainly|of\s+course|okay|ok|yes|absolutely|great|alright|got\s+it)"
    r"[!,.:]+(?:\s+|$)",  # punctuation required: "OK-VQA", "Great Expectations" are titles
    re.IGNORECASE,
)
_HERE_IS = re.compile(
    r"^\s*here(?:'s|’s|\s+is|\s+are|\s+it\s+is)\b[^:\n]{0,80}?(?::|$)\s*", re.IGNORECASE
)


def _strip_preamble(line: str) -> str:
    previous = None
    while previous != line:
        previous = line
        line = _INTERJECTION.sub("", line, count=1)
        line = _HERE_IS.sub("", line, count=1)
    return line


def _strip_wrappers(text: str) -> str:
    """Remove surrounding whitespace, quotes, emphasis and final punctuation, repeatedly."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip()
        text = _EMPHASIS.sub(r"\2", text) if _EMPHASIS.fullmatch(text) else text
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
            inner = text[1:-1]
            # '"A": B "C"' is not one quoted span: only strip a pair that wraps everything.
            if not any(q in inner for q in '"“”') or text[0] not in '"“”':
                text = inner
        text = text.rstrip(".!;,:。")
        text = text.strip("*_")
    return text


# Chat-template tokens a raw completion model may print ("[INST]", "<end_of_turn>", "</s>").
_CHAT_TOKENS = re.compile(
    r"\[/?INST\]|<\|[^<>|]{1,30}\|>|</?s>|<(?:start|end)_of_turn>(?:user|model)?|<[be]os>",
    re.IGNORECASE,
)


def final_text(raw: str) -> str:
    """The part of ``raw`` that is the model's final answer: after its last revision marker
    ("on second thought:", "actually,", "final answer:") when something follows it; chat
    template tokens removed."""
    text = _CHAT_TOKENS.sub(" ", raw).strip()
    last = None
    for match in _REVISION.finditer(text):
        if text[match.end() :].strip():
            last = match
    if last is None:
        return text
    rest = text[last.end() :].strip()
    # "Actually, on second thought: X": revision markers in a row.
    while (again := _REVISION.match(rest)) is not None and rest[again.end() :].strip():
        rest = rest[again.end() :].strip()
    return rest


def has_letters(text: str) -> bool:
    """Any letter in any script; text of only digits, marks or punctuation names nothing."""
    return any(ch.isalpha() for ch in text)


def quoted_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, inner) of quoted spans that open at a word boundary; an apostrophe inside a
    word ("Don't") opens nothing. Jumps from quote mark to quote mark (a regex search each):
    stepping through every character was ~11% of scoring an answer under cProfile."""
    spans = []
    n = len(line)
    i = 0
    while (opener := _OPENER.search(line, i)) is not None:
        i = opener.start()
        ch = line[i]
        if i == 0 or not line[i - 1].isalnum() or ch in _CJK_OPEN:
            closer = _CLOSER[ch]
            j = n
            at = i + 1
            while (close := closer.search(line, at)) is not None:
                k = close.start()
                if k + 1 == n or not line[k + 1].isalnum() or ch in _CJK_OPEN:
                    j = k
                    break
                at = k + 1
            if j < n and j > i + 1 and has_letters(line[i + 1 : j]):
                spans.append((i, j + 1, line[i + 1 : j]))
                i = j + 1
                continue
        i += 1
    return spans
