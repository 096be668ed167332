"""Reading the author list a model named from its reply, as "A, B, C".

The names are read beside the title (a reference string's names before it, a sentence's after
it), with lead-in sentences, list markers, degrees and trailing prose cut. The surname particles
and "et al." phrases are shared with the REASONS author scorer, so a name is read the same way
where it is parsed and where it is scored.
"""

from __future__ import annotations

import functools
import re

from pytest_citebench.parsing.abstention import _PLACEHOLDER
from pytest_citebench.parsing.identifiers import _IDENTIFIER
from pytest_citebench.parsing.names import SURNAME_PARTICLES, bare_names
from pytest_citebench.parsing.prose import _PROSE_START
from pytest_citebench.parsing.reply import (
    _EMPHASIS,
    _LEADING_LABEL,
    _MARKDOWN_LEAD,
    _YEAR,
    _strip_preamble,
    _strip_wrappers,
    final_text,
    has_letters,
    quoted_spans,
)
from pytest_citebench.parsing.title_match import find_title

_AUTHOR_LEAD = re.compile(
    r"^\s*(?:(?:the\s+)?(?:paper|research\s+paper|article|work)\s+(?:was\s+|is\s+)?"
    r"(?:written|authored|co-?authored)\s+by|(?:the\s+)?authors?\s+(?:of\s+[^:]{0,160}?\s+)?"
    r"(?:are|is|were|was|include)|(?:it\s+)?(?:was\s+)?(?:written|authored)\s+by|by)\b\s*:?\s*",
    re.IGNORECASE,
)
# Scorer 4: a chat model's author answer is a sentence or a list. The list starts after the
# last word of a lead-in ("I believe the authors are", "... was authored by", "Les auteurs de
# l'article sont"); it ends at the first lower-case word that no name has (", a renowned
# linguist", " is a groundbreaking study", " is a PhD student at ...").
_LEAD_STARTS_TEXT = (
    "the this that it i i'm i’m these those they to if as according based sure here my our its "
    "their written authored co-authored by authors author probably perhaps possibly likely "
    "maybe most les los las die gli os el la le il en in from per yes ok okay well so"
)
_LEAD_STARTS = frozenset(_LEAD_STARTS_TEXT.split())
_LEAD_WORD = re.compile(
    r"\b(?i:are|were|is|was|by|include[sd]?|including|sont|son|sind|sono|s[ãa]o|par|por|"
    r"est|es|ist|(?:author|writer|screenwriter|researcher|scientist|professor)s?,?)\b\s*,?"
    r"\s*[:\-–—]?\s*(?=(?:(?i:dr|prof|mr|mrs|ms)\.?\s+)?[A-Z<\[])|:\s*(?=\S)"
)
# Lower-case words a list of names may contain: separators in five languages, particles of
# surnames, "et al." and its kin.
_GLUE_TEXT = (
    "and und et y e & las los bou abu ben zu dei degli af op others colleagues co-authors "
    "coauthors al."
)
_NAME_GLUE = SURNAME_PARTICLES | frozenset(_GLUE_TEXT.split())
_DEGREE = re.compile(
    r"(?:,\s*|\s+)(?:Ph\.?\s?D|M\.\s?D|B\.\s?A|B\.\s?Sc?|M\.\s?Sc?|M\.\s?A|M\.\s?B|MBA|MPH|"
    r"MBBS|FRS|FRCP|D\.\s?Sc|D\.\s?Phil|M\.\s?Phil|B\.\s?Eng|M\.\s?Eng|Esq)\.?(?=\s*(?:[,;]|$))",
    re.IGNORECASE,
)
# A full stop after a word (never an initial), or after a two-letter surname ("Li", "Wu", "Xu")
# when a sentence plainly starts after it ("..., Chenliang Li. I'm highly confident").
_NEXT_SENTENCE = r"(?:I|I'm|I’m|It|Its|This|That|The|These|My|We|Note|All|Both|Each)\b"
# A list's bullet or number, or an IEEE reference's "[1]".
_LIST_BULLET = re.compile(r"^\s*(?:[-*•+–·]|\d+\s*[.)](?!\d)|\(\d+\)|\[\d+\])\s*")
_LETTER_ITEM = re.compile(r"^\s*[A-Z][.)]\s+(?=[^\s.]{2,})")
_AUTHOR_CONNECTOR = re.compile(
    r"^[\s\"'”’»」》*_]*[,.]?\s*(?:\(\s*" + _YEAR + r"\s*\)\s*[,.]?\s*)?"
    r"(?:(?:is|was|were|are|has\s+been|had\s+been)\s+)?"
    r"(?:(?:written|authored|co-?authored|published|proposed|developed|presented)\s+)?"
    r"(?:by\b|are\b|were\b|include[sd]?\b)?\s*:?\s*",
    re.IGNORECASE,
)


def _bibtex_authors(text: str) -> str | None:
    match = re.search(r"\bauthor\s*=\s*[{\"](.+?)[}\"]\s*,?\s*(?:\n|\w+\s*=|$)", text, re.I | re.S)
    return match.group(1) if match else None


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CLAUSE_COLON = re.compile(r"[:：]\s*(?=(?:(?i:dr|prof)\.?\s+)?[A-Z])")


def _after_clause_colon(line: str) -> str | None:
    """The names after a lead-in clause ending in a colon, in any language: "Non ne sono del
    tutto sicuro, ma credo che gli autori siano: A, B", "我不是完全确定,但作者应该是: A, B". A
    clause is two lower-case words or more, or any CJK text; names before a colon are kept
    ("Yann LeCun: ..." has no clause)."""
    matches = list(_CLAUSE_COLON.finditer(line))
    if not matches:
        return None
    match = matches[-1]
    head = line[: match.start()]
    if any(q in head for q in '"“”«„「『'):
        return None  # a colon inside or after a quoted title: "... titled "Mind: A New ...""
    lower_words = [w for w in head.split() if w[:1].islower() and w.lower() not in _NAME_GLUE]
    if len(lower_words) >= 2 or _CJK.search(head):
        return line[match.end() :]
    return None


def _cut_lead(line: str, lower: bool) -> str:
    """Drop a lead-in sentence before the names ("I believe the authors are", "It was written
    by", "Les auteurs de l'article sont"); only when the line starts as prose does, so a name
    is never cut. A line that starts as prose and has no lead-in names nobody ("I'm glad you
    asked", "The paper explores ...")."""
    after = None if lower else _after_clause_colon(line)
    if after is not None:
        return after
    words = line.split()
    prose = [w for w in words if w[:1].islower() and w.strip(",.;:").lower() not in _NAME_GLUE]
    if not words or not prose or re.fullmatch(r"[A-Z]\.", words[0]):
        return line  # "Le Wu, Lei Chen", "El Mahdi El Mhamdi", "I. Mele": names, no lead-in
    first = words[0].strip("\"'*_,.:").lower()
    if first not in _LEAD_STARTS and not (words[0][:1].islower() and not lower):
        return line
    match = _LEAD_WORD.search(line)
    if match:
        return line[match.end() :]
    return "" if first in _LEAD_STARTS and not lower else line


_TITLE_GLUE_TEXT = (
    "for of on with to via using under through towards toward into over from without versus "
    "vs beyond across between against about in"
)
_TITLE_GLUE = frozenset(_TITLE_GLUE_TEXT.split())
#: "and <these>" closes a list of names the way "et al." does; an affiliation may follow.
ET_AL_COMPANIONS = r"others|colleagues|co-?workers|co-?authors"
ET_AL_AFFILIATION = r"(?:\s+(?:at|from|of|in)\s+[^,;\n]*)?"
_ET_AL_PHRASE = re.compile(
    r"\band\s+(?:"
    + ET_AL_COMPANIONS
    + r"|(?:his|her|their)\s+(?:team|colleagues|students))\b"
    + ET_AL_AFFILIATION,
    re.IGNORECASE,
)


def _cut_prose(line: str, lower: bool) -> str:
    """End the names at the first lower-case word no name has, or at a sentence's full stop
    (after a word, never after an initial: "M. I. Jordan" stays whole); a reply written wholly
    in lower case is left to the other rules."""
    if lower:
        return line
    stop = re.search(
        r"(?<=[a-zà-ÿ]{2})(?<!\bal)\.(?=\s*$|\s+(?:" + _YEAR + r"\b|[A-Z][a-z]*\s+[a-z]|[^\w\s]))"
        r"|(?<=\b[A-Z][a-z])\.(?=\s+" + _NEXT_SENTENCE + ")",
        line,
    )
    line = line[: stop.start()] if stop else line
    for word in re.finditer(r"\S+", line):
        token = word.group(0).strip(",;:()\"'“”‘’*_")
        bare = token.rstrip(".")
        if not bare or bare.startswith("<") or bare.startswith("[") or bare == "&":
            continue
        lowercase_word = bare[0].islower() and not any(c.isupper() for c in bare)
        lowercase_word = lowercase_word and len(bare) > 1  # "María d. M. González"
        ends_piece = word.group(0).endswith((",", ";")) or not line[word.end() :].strip()
        if lowercase_word and bare.lower() not in _NAME_GLUE and not ends_piece:
            if bare.lower() in _TITLE_GLUE:
                # "Policy Search for Robot Control": a title's words, not a name and prose;
                # the piece that runs into it is dropped.
                return line[: max(line.rfind(",", 0, word.start()), 0)]
            return line[: word.start()]
    return line


# A named thing listed among the authors ("..., Peter J. Liu, and the Colossal Clean Crawled
# Corpus"): kept as an entry, so it is judged as the author it is given as. A team, group or
# collaboration stays out, like "and colleagues".
_NAMED_THING = re.compile(
    r"(,|\band)\s+the\s+(?=(?:[A-Z][\w'’\-]*\s+)+[A-Z][\w'’\-]*\s*(?:[,;.]|$))"
    r"(?!(?:[A-Z][\w'’\-]*\s+)*(?i:team|group|lab|laboratory|consortium|collaboration|"
    r"project|contributors|committee)\b)"
)


def _name_line(line: str, lower: bool = False) -> str:
    line = _strip_preamble(_EMPHASIS.sub(r"\2", line))
    line = _NAMED_THING.sub(r"\1 ", line)
    line = _IDENTIFIER.sub(" ", line)
    line = _PLACEHOLDER.sub(" <> ", line)
    line = re.split(r"\(\s*" + _YEAR + r"\s*\)\s*\.", line, maxsplit=1)[0]  # APA: "(2015)."
    line = re.sub(r"\s*\([^()]*\)\s*", " ", line)  # "(2018)", "(@ElonMusk)", affiliations
    line = re.split(r"\s+[-–—]+\s+", line, maxsplit=1)[0]  # "- Founder and CEO of SpaceX"
    line = _LEADING_LABEL.sub("", line)
    line = _AUTHOR_LEAD.sub("", line, count=1)
    line = _cut_lead(line, lower)
    line = _ET_AL_PHRASE.sub(" et al.", line)
    line = _DEGREE.sub("", line)
    cut = _cut_prose(line, lower)
    if cut != line and len(cut.split()) == 1 and len(line.split()) > 3:
        return ""  # "Demonstration of the performance of ...": one word, then prose
    return _strip_wrappers(cut).strip(" ,;")


def _name_block(text: str) -> list[str]:
    """The lines that hold the names: the first paragraph of content after an intro line
    ("The authors of the research paper ... are:"), list markers removed (bullets, numbers,
    and letters "A." "B." when the list starts at "A.")."""
    lines = [line for line in text.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    if len(lines) > 1 and lines[0].rstrip(" *_").endswith(":") and len(lines[0].split()) <= 40:
        lines.pop(0)
        while lines and not lines[0].strip():
            lines.pop(0)
    block: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            # A blank line inside a numbered or bulleted list does not end it ("1. A\n2. B\n\n3.
            # C"): the next content line continues the list when it carries the next marker.
            following = next((x for x in lines[index + 1 :] if x.strip()), "")
            if block and _LIST_BULLET.match(block[-1]) and _LIST_BULLET.match(following):
                continue
            # A paragraph that is nothing but further names continues the list (SmolLM2 under
            # RAG: the gold authors, a blank line, then eight people of a retrieved paper): an
            # aside about another paper is prose and ends it.
            if block and bare_names(following) and bare_names(block[-1]):
                continue
            break
        if line.strip().startswith("```"):
            continue
        block.append(_MARKDOWN_LEAD.sub("", line))
    items = [line for line in block if re.match(r"^\s*[A-Z][.)]\s+[^\s.]{2,}", line)]
    lettered = bool(block) and (
        len(items) >= 2 or re.match(r"^\s*A[.)]\s+[A-Z][^\s,.]+\s+[A-Z]", block[0]) is not None
    )
    out = []
    for line in block:
        line = _LIST_BULLET.sub("", line)
        if lettered:
            line = _LETTER_ITEM.sub("", line)
        out.append(line)
    return out


def _after_title(text: str, title: str | None) -> str:
    """Around the title (the cited one, or the first quoted span of two words or more): the
    names before it (a reference string) when there are some, else what follows it ("The
    research paper "X" by A and B is ...", "... "X" are:\n- A")."""
    start = end = -1
    if title:
        words = tuple(w for w in re.split(r"[\W_]+", title) if w)
        if words:
            found = find_title(words, text)
            if found:
                start, end = found.start(), found.end()
    if start < 0:
        spans = [s for s in quoted_spans(text) if len(s[2].split()) >= 2]
        if not spans:
            return text
        start, end = spans[0][0], spans[0][1]
    before = text[:start].rstrip(" \"'“‘«《「*_")
    after = text[end:]
    line_start = before.rfind("\n") + 1
    head = _name_line(before[line_start:], before == before.lower()) if before.strip() else ""
    if head and re.search(r"[A-Z]", head) and not _PROSE_START.match(before[line_start:].strip()):
        return before[line_start:]
    after = _AUTHOR_CONNECTOR.sub("", after, count=1)
    return after if has_letters(after) else ""


# In a paragraph of prose, where its author list starts: "The authors are: A, B", "Its
# authors are A, B", "My best recollection of the authors is A, B", "written by A and B", "My
# best answer is: A, B". The names must follow (a capital), so "written by members of ..." is
# no lead.
_INLINE_LEAD = re.compile(
    r"\b(?i:(?:the\s+)?authors?\s+(?:are|were|is|was|include)|(?:written|authored|co-?authored)"
    r"\s+by|(?:my\s+)?(?:best\s+)?answer\s+(?:is|would\s+be))\s*:?\s*"
    r"(?=(?:(?i:dr|prof)\.?\s+)?[A-Z][\w'’.\-]*\s*[A-Z\w])"
)
_SENTENCE_END = re.compile(
    r"(?<=[a-zà-ÿ]{2})\.(?=\s+[A-Z]|\s*$)|(?<=\b[A-Z][a-z])\.(?=\s+" + _NEXT_SENTENCE + ")"
)


def _names_in_prose(text: str) -> str | None:
    """The sentence of a prose reply that gives its author list, from its lead to its full
    stop ("This paper ... introduced MUNIT. The authors are A, B, C. I am confident ..." -> "A,
    B, C"); None when the reply does not open as prose or has no such lead (a list, a reference,
    a bare line of names are read as before)."""
    from pytest_citebench.parsing.prose import looks_like_prose

    first = next((line for line in text.splitlines() if line.strip()), "")
    if not looks_like_prose(first):
        return None
    lead = _INLINE_LEAD.search(text)
    if lead is None:
        return None
    rest = text[lead.end() :]
    end = _SENTENCE_END.search(rest)
    return rest[: end.start()] if end else rest


# The layout a model copies from a retrieved context (models/rag.py): "[1] Title: X\nAuthors:
# A, B\nAbstract: ...", one entry or several.
_ENTRY_TITLE = re.compile(r"^\s*(?:\[\d+\]\s*)?(?:\*\*)?title(?:\*\*)?\s*:", re.IGNORECASE)
_ENTRY_AUTHORS = re.compile(
    r"^\s*(?:\[\d+\]\s*)?(?:\*\*)?authors?(?:\*\*)?\s*:\s*(.+)$", re.IGNORECASE | re.M
)


def _entry_authors(text: str) -> str | None:
    """The names of every "Authors:" line of a reply laid out as retrieved entries ("[1]
    Title: ...\nAuthors: ..."), joined; every entry counts, so a second paper's authors given
    beside the first are judged too. None for any other layout."""
    if not _ENTRY_TITLE.match(text.lstrip()):
        return None  # the reply answers first; an entry pasted after its answer is no layout
    lines = [m.group(1).strip() for m in _ENTRY_AUTHORS.finditer(text)]
    return ", ".join(lines) if lines else None


_ENTRY_START = re.compile(
    r"^\s*(?:\d+\s*[.)]\s*|\[\d+\]\s*)?(?:\*\*)?title(?:\*\*)?\s*:\s*(.*)$", re.I | re.M
)
_WORD = re.compile(r"[^\W\d_]{3,}")


def _without_other_entries(text: str, title: str | None) -> str:
    """A reply that answers, then lists the retrieved entries it was given ("...names\n1.
    Title: <another paper>\nAuthors: ..."), is judged by its answer and by the entries of the
    paper asked about: an entry whose title shares fewer than half its words with the asked
    title is another paper shown as another paper, its authors not given as the answer's."""
    first = _ENTRY_START.search(text)
    if title is None or first is None or not text[: first.start()].strip():
        return text  # no entries, or laid out as entries from the start (_entry_authors)
    asked = {w.lower().rstrip("s") for w in _WORD.findall(title)}
    kept = [text[: first.start()]]
    starts = list(_ENTRY_START.finditer(text))
    for entry, after in zip(starts, [*starts[1:], None], strict=True):
        body = text[entry.start() : after.start() if after else len(text)]
        words = {w.lower().rstrip("s") for w in _WORD.findall(entry.group(1))}
        if words and 2 * len(words & asked) >= len(words):
            kept += [m.group(1) for m in _ENTRY_AUTHORS.finditer(body)]  # its names, not its title
    return "\n".join(part.rstrip("\n") for part in kept)


# Pure: the direct strategies of an item clean the same reply against the same title.
@functools.lru_cache(maxsize=16384)
def clean_authors(raw: str, title: str | None = None) -> str:
    """The author list a model gave, as "A, B, C": the lead-in, the title (``title``, the cited
    one, or a quoted one), list markers, "Dr."-style prose and trailing sentences removed;
    template placeholders kept as ``<>``, so a reply of placeholders alone can say so."""
    text = final_text(raw)
    bib = _bibtex_authors(text) or _entry_authors(text)
    if bib:
        return re.sub(r"\s+", " ", bib).strip()
    text = _without_other_entries(text, title)
    lower = text == text.lower()  # the whole reply: "<author> is a ..." after a title is not
    inline = _names_in_prose(text)
    text = inline if inline is not None else _after_title(text, title)
    names = [n for n in (_name_line(x, lower) for x in _name_block(text)) if has_letters(n)]
    names += ["<>"] if not names and _PLACEHOLDER.search(text) else []
    return ", ".join(names)
