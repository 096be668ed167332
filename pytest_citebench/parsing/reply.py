"""What every reading of a reply shares: the final answer after any revision, and the wrappers
(labels, quotes, emphasis, markdown, chat preambles) around it.

Titles and authors are read from the same replies, so the text both strip is defined once here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from pytest_citebench.parsing.names import bare_names

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
# Answer labels in the languages chat deployments reply in ("Autoren:", "著者：", "Titre :"),
# beside the English ones; a hedge in parentheses may stand before the colon ("Auteurs (je n'en
# suis pas sûr) :").
_LEADING_LABEL = re.compile(
    r"^\s*(?:\[\d+\]\s*)?(?:\*\*|__)?\s*(?:the\s+)?(?:final\s+|cited\s+|research\s+|possible\s+|paper\s+)*"
    r"(?:paper\s+title|title\s+of\s+the\s+(?:cited\s+)?(?:research\s+)?paper|title|answer|"
    r"response|citation(?:\s+paper\s+title)?|reference|paper|authors?|author\s+names|"
    r"author\s+list)"
    r"\s*(?:\([^()\n]{0,120}\))?"
    r"\s*(?:is|are)?\s*(?:\*\*|__)?\s*[:：\-–—]\s*(?:\*\*|__)?\s*",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^\s*(?:\*(?=\s)|[•+]|-|\d+\s*[.)](?!\d)|\(\d+\)|[a-z][.)](?=\s))\s*")
_MARKDOWN_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|>\s*)+")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_)(.+?)\1")
# "pass ... on second thought: X": the last revision marker starts the final answer; in prose,
# "..., so my best guess is: X" too.
_REVISION = re.compile(
    r"(?:^|(?<=[.!?;\n])|(?<=\bpass\b)|(?<=\bso)|(?<=\bthus)|(?<=\bhence)|(?<=\btherefore)|(?<=,))"
    r"\s*[\"'*_]*\s*(?:on\s+second\s+thoughts?|actually|wait|"
    r"correction|(?:my\s+)?final\s+answer(?:\s+is)?|(?:my\s+)?best\s+guess(?:\s+is)?|"
    r"(?:so\s+|therefore\s+)?my\s+answer\s+(?:is|would\s+be)(?:\s+therefore)?|"
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


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# Han, kana and Hangul: scripts written without spaces, whose words a split() cannot count.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _is_reasoning(paragraph: str) -> bool:
    """A paragraph of reasoning, not an answer: prose by its shape; sentences (ending in
    sentence punctuation, eight words or more) that are not Title Case; a sentence opening
    like prose ("This is the NIPS 2015 Highway Networks paper from IDSIA."), whatever its
    capitals; or a lead-in of four words or more ending in a colon, in any language ("Das
    zitierte Paper ist daher wahrscheinlich:")."""
    from pytest_citebench.parsing.prose import _PROSE_START, looks_like_prose, reads_as_title_case

    text = " ".join(paragraph.split())
    words = len(text.split())
    pieces = [p.strip() for p in re.split(r"[,;]", text) if p.strip()]
    if (
        len(pieces) >= 3
        and all(len(p.split()) <= 6 for p in pieces)
        and sum(p[:1].isupper() for p in pieces) >= 0.7 * len(pieces)
    ):
        return False  # a list of names, however long
    if text.endswith((":", "：")) and (words >= 4 or len(_CJK.findall(text)) >= 6):
        return True  # "Das zitierte Paper ist daher wahrscheinlich:", "被引用的论文应该是："
    label, colon, rest = text.partition(": ")
    if colon and rest.strip() and not looks_like_prose(rest) and len(label.split()) <= 7:
        return False  # "The cited paper title is: X" gives its answer
    if looks_like_prose(text):
        return True
    sentence = text.endswith((".", "!", "?", "。"))
    if sentence and words >= 6 and _PROSE_START.match(text) and " " in text:
        return True
    return sentence and words >= 8 and not reads_as_title_case(text)


def answer_after_reasoning(raw: str, *, is_echo: Callable[[str], bool] = lambda _p: False) -> str:
    """The answer paragraph of a reply that reasons first: "This is the ICLR 2018 GAT paper,
    which I recognise from the title.\n\nGraph Attention Networks". Chat deployments that
    ask for a line of reasoning before the answer write it so; read whole, the reply's first
    line is that reasoning and the answer after it was lost. The first paragraph that is not
    reasoning is the answer when every paragraph before it is reasoning (not a repetition of
    the prompt: ``is_echo``, and naming no title of its own) and it is shaped like an answer
    (names, a title, a pass); paragraphs after it (a hedge, a note) are not read. Otherwise
    ``raw`` is returned as it is."""
    text = raw.strip()
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    if len(paragraphs) < 2:
        return raw
    for index, paragraph in enumerate(paragraphs):
        if index and not _is_reasoning(paragraph):
            later = paragraphs[index + 1 :]
            if not _can_be_an_answer(paragraph) or any(_TITLE_ANNOUNCED.search(p) for p in later):
                return raw  # a fragment, or a title named after it: read whole, as before
            # A list of names goes on in a paragraph of more names (they are given too).
            kept = [paragraph]
            for after in later:
                if not (bare_names(kept[-1].splitlines()[-1]) and bare_names(after)):
                    break
                kept.append(after)
            return "\n\n".join(kept)
        opening = paragraph.lstrip("\"'“‘«„*_")[:1]
        if not opening.isalpha() or opening.islower() or not _is_reasoning(paragraph):
            return raw  # an answer first, or a continuation or fragment of the prompt
        if is_echo(paragraph) or _TITLE_ANNOUNCED.search(paragraph):
            return raw  # the prompt repeated, or a paragraph that names a title itself
    return raw


# A paragraph that names a title itself ('The proposed paper is titled "X" and ...'): no
# reasoning before an answer, whatever follows it.
_TITLE_ANNOUNCED = re.compile(
    r"\b(?:titled|entitled|called|named)\s*:?\s*[\"“«„「*]|"
    r"\b(?:paper|article|title)\s+(?:is|was)\s*:?\s*[\"“«„「*]",
    re.IGNORECASE,
)


def _can_be_an_answer(paragraph: str) -> bool:
    """Shaped like an answer, not a fragment of prose a base model trails off into ("The
    purpose of this", "Web pages (e-mail, chat, etc"): a pass; a list of names ("A, B, C"); or
    a title of two words or more in Title Case, quoted, emphasised or labelled ("Title: ..."),
    in any script."""
    from pytest_citebench.parsing.prose import (
        _PROSE_START,
        _PROSE_VERB,
        looks_like_prose,
        reads_as_title_case,
    )

    text = " ".join(paragraph.split())
    if text.strip("*_.!'\"` ").casefold() == "pass":
        return True  # reasons, then a pass: an abstention
    if text[:1].islower() or text[:1] in "[<(" or len(text.split()) < 2:
        return False
    if re.match(r"(?:\d+[.)]|[-*•])\s", text):
        return False  # a list after reasoning (candidates, edits): read whole, as before
    if _LEADING_LABEL.match(text) or text[:1] in _QUOTES or text.startswith(("**", "__", "@")):
        return True
    pieces = [p.strip() for p in re.split(r"[,;]|\band\b", text) if p.strip()]
    if len(pieces) >= 2 and all(p[:1].isupper() and len(p.split()) <= 5 for p in pieces):
        return True  # names
    if not any(c.isascii() and c.isalpha() for c in text):
        return True  # another script: the judges read what they can
    if looks_like_prose(text) or "\n" in paragraph.strip():
        return False
    if (_PROSE_START.match(text) or _PROSE_VERB.search(text)) and not reads_as_title_case(text):
        return False  # "The article", "Pregelix is designed to take": a fragment of prose
    # One line, a title's length, not closed like a sentence ("How to Use t-SNE Effectively",
    # "Emerging vaccine-breakthrough SARS-CoV-2 variants").
    return len(text.split()) <= 30 and not text.endswith(".")


# Pure, and asked for the same reply by each reading of it (dozens of times a case).
@functools.lru_cache(maxsize=16384)
def final_text(raw: str) -> str:
    """The part of ``raw`` that is the model's final answer: after its last revision marker
    ("on second thought:", "actually,", "final answer:") when something follows it; chat
    template tokens removed. (A reply that reasons in paragraphs before its answer is cut by
    the judge, which knows the prompt: :func:`answer_after_reasoning`.)"""
    return _after_revision(_CHAT_TOKENS.sub(" ", raw).strip())


def _after_revision(text: str) -> str:
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
