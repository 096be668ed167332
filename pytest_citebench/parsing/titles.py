"""Reading the title a model named from its reply.

The first candidate of ``title_candidates`` is the parsed title; the others are alternative
readings a scorer may accept. ``not_a_title`` says why a span of a base model's continuation
names no paper.
"""

from __future__ import annotations

import functools
import re

from pytest_citebench.parsing.identifiers import _PAREN_ID, _TITLE_ID
from pytest_citebench.parsing.prose import _title_case, looks_like_prose
from pytest_citebench.parsing.reply import (
    _CHAT_TOKENS,
    _CJK_OPEN,
    _EMPHASIS,
    _LEADING_LABEL,
    _LIST_MARKER,
    _MARKDOWN_LEAD,
    _YEAR,
    _strip_preamble,
    _strip_wrappers,
    final_text,
    has_letters,
    quoted_spans,
)

# Lead-ins a model puts before the title or the authors ("The paper is likely ...").
_LEAD_IN = re.compile(
    r"^\s*(?:(?:based\s+on|given|from)\b[^,:]{0,160}[,:]\s*)?"
    r"(?:(?:i\s+(?:think|believe|guess|would\s+(?:say|guess))|i'?d\s+(?:say|guess)|my\s+guess\s+is|"
    r"it\s+(?:seems|appears|looks)\s+(?:like|that)|"
    r"most\s+likely|probably|perhaps|possibly)\s*,?\s*)?"
    r"(?:the\s+|this\s+|that\s+|it\s+)?"
    r"(?:(?:possible|likely|cited|research|original|relevant|referenced)\s+)*"
    r"(?:(?:sentence|paper|citation|title|work|article|reference|research\s+paper|answer|"
    r"authors?|author\s+names)\b[^:\"“'‘]{0,80}?\s+)?"
    r"(?:is|are|was|were|would\s+be|might\s+be|could\s+be|may\s+be|seems\s+to\s+be|cites?|"
    r"citing|refers\s+to|referring\s+to|references?|titled|entitled|called|by|include|"
    r"written\s+by|authored\s+by)"
    r"(?:\s+(?:most\s+)?(?:likely|probably|possibly|perhaps|to|the\s+paper|the\s+research\s+paper|"
    r"the\s+work|the\s+article|titled|entitled|called|as\s+follows))*"
    r"\s*[:\-–—]?\s*",
    re.IGNORECASE,
)


_PAREN_TAIL = re.compile(
    r"\s*[(\[]\s*(?:[^()\[\]]*\b" + _YEAR + r"\b[^()\[\]]*|arxiv[^()\[\]]*|doi[^()\[\]]*|"
    r"[^()\[\]]*\bet\s+al\b[^()\[\]]*|\d+|[^()\[\]]*\b(?:proceedings|conference|journal|"
    r"published|preprint)\b[^()\[\]]*)[)\]]",
    re.IGNORECASE,
)
_BY_TAIL = re.compile(
    r"[,.]?\s+(?:by|from)\s+(?:[A-Z][\w.'’\-]*\s*){1,4}"
    r"(?:et\s+al\b\.?|and\s+[A-Z]|&|,|\(|\s*\b" + _YEAR + r"\b|\s+in\s+|\s*$)",
)
_REFERENCE_TAIL = re.compile(
    r"[.,]\s+(?:in\s+(?:proc|proceedings|advances|the\s+\w+\s+conference|international|"
    r"conference|journal|ieee|acm)|proceedings\b|arxiv\b|advances\s+in\b|journal\s+of\b|"
    r"ieee\b|acm\b|springer\b|vol\.|pp\.|" + _YEAR + r"\b)",
    re.IGNORECASE,
)


_LABEL_HEADING = re.compile(
    r"[\s*_]*(?:the\s+)?(?:(?:possible|likely|probable|cited|candidate|suggested|most\s+likely|"
    r"best|my|final|research|original)\s+)*(?:paper|title|answer|citation|reference|result|"
    r"guess|authors?|author\s+list)s?(?:\s+(?:title|name|names|list))?[\s*_:]*",
    re.IGNORECASE,
)


def _content_lines(raw: str) -> list[str]:
    """Lines with letters, list markers, markdown leads and emphasis removed; bare labels
    ("**Title:**" alone on a line) dropped, code fences dropped."""
    out = []
    # A hard-wrapped paragraph is one line: a line break before a lower-case word continues it.
    raw = re.sub(r"(?<=[^\n.!?:])[ \t]*\n[ \t]*(?=[a-z(])", " ", raw)
    for line in raw.splitlines():
        if line.strip().startswith("```"):
            continue
        line = _MARKDOWN_LEAD.sub("", line)
        line = _LIST_MARKER.sub("", line).strip()
        line = _strip_preamble(line)
        if not has_letters(line) or _LEADING_LABEL.fullmatch(line + " "):
            continue
        if _LABEL_HEADING.fullmatch(line):
            continue  # "### Possible cited paper" over the title on the next line
        if line.rstrip("*_ ").endswith(":") and len(line.split()) <= 12 and not quoted_spans(line):
            continue  # "The authors of the paper are:" alone on its line introduces the next
        out.append(line)
    return out


def _first_content_line(raw: str) -> str:
    lines = _content_lines(raw)
    return lines[0] if lines else ""


_CAPTION = re.compile(
    r"(?i)^(?:figure|fig\.|table|section|algorithm|eq\.|equation)\s*\d|^\d+(?:\.\d+)+\.?\s"
)
_CONTINUES = re.compile(r"^\s*[.,;)\]]+\s*[A-Za-z]")
_FUNCTION_WORDS_TEXT = (
    "a an and or but nor so to of in on at by for from with as than that which who whose the "
    "this these those its it is are was were be use using used"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
_NAME_WORD = re.compile(r"[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]+)+[A-Za-z0-9]*|[A-Z][a-z]{5,}")
_DESCRIBES = re.compile(r"(?:this|these|it|we|they|here)\s+\w+\s+\w+", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(?:we|i|our|us)\b", re.IGNORECASE)


_TAGS_ONLY = re.compile(r"\s*(?:</?[A-Za-z][^<>]*>\s*)+")


def not_a_title(text: str, raw: str = "") -> str | None:
    """Why an unquoted span of free text names no paper, or None when it could be a title.

    Base models continue the prompt instead of answering it: ", a model for the prediction of
    ...", "and neural networks.", "sis. However, ...", "Figure 4: Action annotation ...". Taking
    such a fragment for a title made "hallucinated" mean "rambled". A title has at least two
    words, starts as a title starts (not with a lower-case function word continuing a sentence,
    not with "We"), is not a caption or section heading, and does not open with the punctuation
    that continues the prompt's last sentence.
    """
    words = text.split()
    if not re.search(r"[^\W\d_]{3,}", text):
        return "no word of three letters, names no paper"  # "A: A"
    if _TAGS_ONLY.fullmatch(text):
        # Gemma 3 270M's whole reply once: '<img src="https://i.imgur.com/2416308.png">'.
        return "markup (a tag and its attributes), names no paper"
    if len(words) < 2 and not _NAME_WORD.fullmatch(text.strip()):
        # "DVS", "LTM+", "sis"; a coined name in mixed case ("HyperNetworks") may be a title.
        return "a single word names no paper"
    first = words[0].strip("\"'`*_([")
    if first[:1].islower() and not any(c.isupper() or c.isdigit() for c in first[1:]):
        # A title in lower case exists ("t-count and qubit optimized ..."), stated alone; a
        # function word, or a fragment the reply runs on from, continues a sentence.
        runs_on = len(raw.split()) > len(words) + 3
        if first.lower() in _FUNCTION_WORDS or runs_on:
            return "continues a sentence, names no paper"
    if _FIRST_PERSON.match(first):
        return "a sentence, not a title"
    if _CAPTION.match(text):
        return "a caption or section heading, not a title"
    titles_quoted = any(title_quotes(line) for line in raw.splitlines())
    if raw and _CONTINUES.match(raw.lstrip("\n")) and not titles_quoted:
        return "continues the prompt's sentence, names no paper"
    head, colon, rest = text.partition(":")
    spaced = head.endswith((" ", "\t")) and len(rest.split()) >= 6  # "Tracking : The system ..."
    if colon and len(head.split()) <= 3 and (spaced or _DESCRIBES.match(rest.strip())):
        return "a heading and a sentence, not a title"  # "EWalk2 : This dataset contains ..."
    return None


def _bibtex_title(text: str) -> str | None:
    match = re.search(r"\btitle\s*=\s*([{\"])", text, re.IGNORECASE)
    if not match:
        return None
    start = match.end()
    if match.group(1) == '"':
        end = text.find('"', start)
        return text[start:end] if end > 0 else None
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start : i - 1].replace("{", "").replace("}", "") if depth == 0 else None


def _apa_title(line: str) -> str | None:
    """APA: ``Surname, A., & Other, B. (2017). Title of the paper. Venue``."""
    match = re.search(r"\(\s*" + _YEAR + r"\s*\)\.?\s+(.+)$", line)
    if not match or not re.search(r"[A-Z][\w'’\-]+,\s*(?:[A-Z]\.\s*)+", line[: match.start()]):
        return None
    rest = match.group(1)
    spans = quoted_spans(rest)
    if spans and spans[0][0] == 0:
        return _title_from_quote(rest, spans[0])
    cut = re.search(r"(?<=[^A-Z\s])[.?!](?:\s+|$)", rest)
    if cut:
        keep = rest[: cut.start() + (1 if rest[cut.start()] in "?!" else 0)]
        return keep
    return rest


def _title_from_quote(line: str, span: tuple[int, int, str]) -> str:
    """A quoted span, or the quote plus its continuation when a colon continues it."""
    start, end, inner = span
    after = line[end:]
    cont = re.match(r"\s*:\s*(?=[A-Za-z0-9])", after)
    if cont:
        return _trim_tail(line[start:])
    return inner


def _trim_tail(line: str) -> str:
    """Cut trailing explanations, parenthetical author-year, 'by X et al.', reference debris."""
    previous = None
    while previous != line:
        previous = line
        line = _PAREN_TAIL.sub("", line).rstrip()
        match = _BY_TAIL.search(line)
        if match:
            line = line[: match.start()]
        match = _REFERENCE_TAIL.search(line)
        if match:
            line = line[: match.start()]
        for sep in re.finditer(r"\s+[-–—]{1,2}\s+|(?<=[^A-Z\s][.!?])\s+|;\s+", line):
            rest = line[sep.end() :]
            author_year = re.match(
                r"[A-Z][\w'’\-]+(?:\s+et\s+al\b|\s+(?:and|&)\s+[A-Z]|,\s*" + _YEAR + r"\b)", rest
            )
            if (
                looks_like_prose(rest)
                or author_year
                or re.match(r"(?i)(?:by|published|authors?|in)\b", rest)
            ):
                line = line[: sep.start()]
                break
    return line


def _strip_lead_in(line: str) -> str:
    """Drop "The paper is likely" and the like; a one-word match ("Is Attention
    Interpretable?") is the title's own first word, not a lead-in."""
    if not re.match(
        r"(?i)(?:the|this|that|it|i|based|given|from|most|probably|perhaps|possibly|my)\b", line
    ):
        return line
    match = _LEAD_IN.match(line)
    if match is None or len(match.group(0).split()) < 2:
        return line
    return line[match.end() :]


# Scorer 4: "The title of the possible research paper that this sentence is citing to is X":
# the question restated, then the answer. The restatement is dropped and X is read.
_RESTATEMENT = re.compile(
    r"^.{0,80}?\b(?:title\s+of\s+the\s+|another\s+)?(?:possible\s+)?(?:research\s+)?paper\s+"
    r"(?:that\s+)?(?:this|the)\s+sentence\s+is\s+(?:citing|cited|referencing|referring)(?:\s+to)?"
    r"(?:\s+(?:is|would\s+be|might\s+be|could\s+be|was))?\s*[:\-–—]?\s*",
    re.IGNORECASE,
)
# A quoted span is not a title when it is "the sentence" quoted back, a phrase or a search
# query ('The sentence "X" is ...', 'described as "X"', 'search for "X"').
_NOT_A_TITLE_QUOTE = re.compile(
    r"\bsentence\s*,?\s*$|\bsentence\s+(?:is|reads|says)\s*:?\s*$|(?:\bphrase|\bterm|\bwords?|\bexpression|\bquery|\bkeywords?|\bsearch(?:ing)?"
    r"(?:\s+\w+){0,2}\s+(?:for|on)|\blook(?:ing)?\s+(?:up|for)|\bgoogle|\bas|\blike|\buse\s+of|"
    r"\brephrased\s+as|\brevised\s+sentence|\bsuch\s+as|\btry|\bstands\s+for|\bknown\s+as|"
    r"\bas\s+(?:an?|the)|\bor(?:\s+simply)?)\s*[:,]?\s*$",
    re.IGNORECASE,
)
_PRONOUN = re.compile(
    r"^\W*(?:I'm|I’m|I'll|I’ll|I've|You|You've|You're|Your|We|Our|Let's)\b|\bI\s+[a-z]|"
    r"\b(?:i'm|i’m|i'll|i’ll|i've|you|you've|you're|your|we|our|let's|me)\b"
)
_TITLE_CUE = re.compile(
    r"\b(?:titled|entitled|called|named|paper|article|study|work|publication)\s*[:,]?\s*$",
    re.IGNORECASE,
)
# A reference that starts with its authors: "J. Schulman, S. Levine, and P. Abbeel. Trust
# region policy optimization. In ICML, 2015." / ACM "... and Pieter Abbeel. 2015. Title. In".
_NAME_RUN = r"(?:[A-Z][\w'’\-]*\.?\s*){1,4}"
_AUTHOR_LED = re.compile(
    r"^" + _NAME_RUN + r"(?:,\s*(?:and\s+|&\s*)?" + _NAME_RUN + r")*"
    r"(?:,?\s*(?:and|&)\s+" + _NAME_RUN + r")?"
    r"(?<=[a-z]{2})\.\s+(?:\(?" + _YEAR + r"\)?\.\s+)?(?P<title>[^.?!]{8,}[?!]?)(?:\.|$)"
)


def strip_restatement(text: str) -> str:
    """``text`` without a restated question before its answer (each line)."""
    return "\n".join(_RESTATEMENT.sub("", line, count=1) for line in text.splitlines())


# In a sentence, a quoted span is a title when the words before it introduce one: "titled",
# "the paper", "is", "cites", a colon, a reference's full stop or comma ('Smith. "Title."').
_QUOTE_CUE = re.compile(
    r"(?:\b(?:titled|entitled|named|paper|article|work|study|publication|title|reference|"
    r"citation|is|was|be|it's|it’s|cites?|citing(?:\s+to)?|references?|referencing|refers\s+to|"
    r"reference\s+to|guess|say|think|believe|answer|by|in)"
    r"(?:\s+(?:most\s+)?(?:likely|probably|possibly|perhaps|maybe))?|[:.,(\-–—])\s*$",
    re.IGNORECASE,
)


def title_quotes(line: str) -> list[tuple[int, int, str]]:
    """The quoted spans of a line that may be titles: at the line's start or introduced as a
    title (``_QUOTE_CUE``), and not "the sentence", a phrase or a search query quoted back
    ('a game engine called "GTA V"', 'the question of "What is the answer?"')."""
    out = []
    for span in quoted_spans(line):
        before = line[: span[0]]
        if _NOT_A_TITLE_QUOTE.search(before):
            continue
        # 《》「」, and the marks other languages quote a title with (« », „ “), are title marks
        # wherever they stand: "Das zitierte Paper ist «X».", "C'est « X »."
        cjk = line[span[0]] in _CJK_OPEN or line[span[0]] in "«„‹"
        if before.strip(" *_") and not cjk and not _QUOTE_CUE.search(before):
            continue
        out.append(span)
    return out


#: A sentence's connective and its comma opens a sentence; no title opens so. SmolLM2-135M's
#: 'The revised sentence would be: "However, requiring EHRs as context for question generation
#: limits scalability"' (a rephrasing of the prompt's sentence) had read as a wrong title.
_CONNECTIVE = re.compile(
    r"[\"'“‘*_(\[\s]*(?:however|moreover|furthermore|therefore|thus|hence|unfortunately|"
    r"additionally|consequently|nevertheless|meanwhile|similarly|likewise|in\s+addition|"
    r"in\s+contrast|for\s+example|for\s+instance),\s",
    re.IGNORECASE,
)


def _prose_line(line: str, body: str) -> bool:
    """A line that is a sentence about the question rather than an answer: a first- or
    second-person sentence, a sentence opened by a connective ("However, ..."), or prose whose
    lead-in (if any) is not followed by a title."""
    if _CONNECTIVE.match(line):
        return True
    words = line.split()
    sentence = line.rstrip(" *_\"'”’").endswith(".") or re.search(r"[a-z]\.\s+[A-Z]", line)
    if _PRONOUN.search(line) and len(words) > 4 and sentence:
        return True
    aux = re.search(
        r"\b(?:is|are|was|were|has|have|had)\s+(?:a|an|the|been|not|used|developed|shown|also)\b",
        line,
    )
    if aux and sentence and len(words) >= 8 and not _title_case(line):
        return True  # "Visualization techniques have been developed to explain ..."
    if body != line:  # "The paper is likely X": a lead-in, then what follows it
        return body[:1].islower() or looks_like_prose(body)
    return looks_like_prose(line)


def title_candidates(raw: str) -> list[str]:
    """Every span of the final answer that may be the title the model named, best first.

    The first candidate is *the* parsed title; the others are alternative readings (the
    first quoted span alone, the line before a trailing explanation) that a scorer may accept
    when one of them is exactly the gold title.
    """
    return list(_title_candidates(raw))


# Pure, and read again by every strategy of an item that got the same reply, then by its judge.
@functools.lru_cache(maxsize=16384)
def _title_candidates(raw: str) -> tuple[str, ...]:
    final = final_text(raw)
    text = strip_restatement(final)
    # The reply was cut at a marker of its final answer ("my best guess is:").
    revised = final != _CHAT_TOKENS.sub(" ", raw).strip()
    # A DOI or an arXiv id given with the title is checked apart; it never stays in the title.
    text = _PAREN_ID.sub("", text)
    text = _TITLE_ID.sub("", text)
    out: list[str] = []

    def add(value: str | None) -> None:
        if value is None:
            return
        value = _strip_wrappers(_EMPHASIS.sub(r"\2", value))
        value = re.sub(r"\s+", " ", value).strip().lstrip(".,;:!?-–—> ").strip()
        if has_letters(value) and value not in out:
            out.append(value)

    bib = _bibtex_title(text)
    if bib:
        add(bib)
    lines = _content_lines(text)
    # A title set apart in italics or bold on its own line (or opening it, before a dash and
    # its authors) inside a longer answer is the answer that answer gives.
    for raw_line in lines[1:] if lines and not _EMPHASIS.match(lines[0].strip()) else []:
        emphasised = re.match(r"^(\*\*|__|\*|_)([^*_]+?)\1(?:\s*[-–—:,(]|\s*$)", raw_line.strip())
        title = emphasised.group(2) if emphasised else ""
        if len(title.split()) >= 2 and not looks_like_prose(title):
            add(title)
    prose_before = False
    for raw_line in lines:
        if prose_before:
            # After a sentence that named nothing, only a title announced as one ('a paper
            # titled "X"') is read; a phrase quoted in the ramble that follows is not.
            for span in quoted_spans(raw_line):
                if _TITLE_CUE.search(raw_line[: span[0]]) and len(span[2].split()) >= 2:
                    add(span[2])
            if out:
                break
            continue
        line = _EMPHASIS.sub(r"\2", raw_line)
        labelled = _LEADING_LABEL.sub("", line)
        apa = _apa_title(labelled)
        if apa:
            add(apa)
        led = _AUTHOR_LED.match(labelled)
        if led and not _PRONOUN.search(labelled[: led.start("title")]):
            add(_trim_tail(led.group("title")))
        spans = [s for s in title_quotes(labelled) if len(s[2].split()) >= 1]
        for span in spans:
            titled = re.search(r"\b(?:titled|entitled)\s*$", labelled[: span[0]], re.IGNORECASE)
            if len(span[2].split()) >= 2 or span[0] == 0 or titled:
                add(_title_from_quote(labelled, span))
        # "### Possible cited paper **Title**": an emphasised span of a longer line.
        for emphasised in re.finditer(r"(\*\*|__)(.+?)\1", raw_line):
            if len(emphasised.group(2).split()) >= 2 and emphasised.group(0) != raw_line.strip():
                add(emphasised.group(2))
        body = labelled if labelled != line else _strip_lead_in(line)
        if not out and quoted_spans(labelled) and not spans:
            prose_before = True  # only "the sentence" or a phrase quoted back: no title here
            continue
        head = _trim_tail(body)
        if (
            revised
            and not out
            and labelled == line
            and _prose_line(line, body)
            and head != body
            and len(head.split()) >= 3
            and not _prose_line(head, _strip_lead_in(head))
        ):
            # What a marker of the final answer leaves ("..., so my best guess is: T. My
            # confidence is low. It could also cite ..."): the title, then sentences about it.
            # Only there: prose that opens a reply is no title (SmolLM2's first sentences).
            body = head
        elif not out and labelled == line and _prose_line(line, body):
            # A sentence with no quoted title: try after "titled" / "called" anyway.
            titled = re.search(
                r"\b(?:titled|entitled|(?:paper|article|work)\s+called)\s+(?=[A-Z0-9])", line
            )
            if not titled:
                prose_before = True
                continue
            body = line[titled.end() :]
        trimmed = _trim_tail(body)
        add(trimmed)
        add(re.sub(r"\s*[(\[][^()\[\]]*[)\]]\s*$", "", trimmed))  # "X (TRPO)"
        add(re.sub(r",\s+[^,]*\b" + _YEAR + r"\b[^,]*$", "", trimmed))  # "X, ICML 2015"
        inner = re.search(r"\(([^()]{8,})\)\s*[.!]?$", body)  # "TRPO (Trust Region Policy ...)"
        if inner and len(inner.group(1).split()) >= 2:
            add(inner.group(1))
        # "I'd guess: X", "Bài báo được trích dẫn có lẽ là: X" (a lead-in in any language, an
        # extra reading), the authors in brackets after it or not.
        prefix = re.match(r"^([^:]{1,60}):\s+(\S.*)$", body)
        if prefix and len(prefix.group(1).split()) <= 8:
            after = _trim_tail(prefix.group(2))
            add(after)
            add(re.sub(r"\s*[(\[][^()\[\]]*[)\]]\s*$", "", after))
        add(body)
        add(line)
        if out:
            break
    if not out and lines:
        # No line reads as an answer: the first one is the reading, for the judge to call a
        # sentence (or a real paper of the suite's corpus, whatever its title looks like).
        first = _LEADING_LABEL.sub("", _EMPHASIS.sub(r"\2", lines[0]))
        add(first)
        add(_trim_tail(_strip_lead_in(first)))
    return tuple(out)


def reads_as_sentence(text: str) -> bool:
    """A reading that is a sentence about the question, not a title (see ``_prose_line``)."""
    return _prose_line(text, _strip_lead_in(text))


def clean_title(raw: str) -> str:
    """The title a model gave, without labels, quotes, markdown or a trailing explanation."""
    candidates = title_candidates(raw)
    return candidates[0] if candidates else ""
