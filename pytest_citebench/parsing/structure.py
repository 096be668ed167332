"""The reply's structure, read with the formats' own parsers before any rule reads words.

Deployed models wrap an answer in what their product asks for: a Markdown card with a heading
and labelled fields, a table, an HTML fragment, a YAML / TOML / XML / JSON document or a function
call, a LaTeX bibliography, an RIS record, an e-mail with a greeting and a signature. Read as
flat text, the wrapping is taken for the answer: a heading or a field label read as an author, a
table's header row as the title, "Hello," as the only name, ``TY  - CONF`` as a title. Read with
a parser, each piece of text has a *role* that says whether it can carry an answer at all:

- ``label`` (a field's name, a key, a table's header cell, a bold lead "**Authors:**"), ``heading``,
  ``url``, ``identifier`` (a bibliography key, a function's name), ``greeting`` and ``signoff``
  (an e-mail's first and last lines) never name a paper or a person;
- ``value`` (a field's value, under its label), ``cell`` (under its column's header), ``item``,
  ``link`` (a link's text) and ``line`` (a line of prose) may.

:func:`read_reply` turns a reply into such :class:`Span`\\ s; :func:`answer_reading` gives the
rules the text a person would read as the answer: the values under a label that names what was
asked (a task's own field names, "title", "author"), else every span that can carry an answer,
in order, one a line, with no markup. A reply in no structured format is left as it is (None),
so plain and prose answers go to the rules unchanged. Labels are found by where they stand (a key,
a header cell, a bold lead ending in a colon), in any language, not by a word list.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from pytest_citebench.parsing.documents import code, document
from pytest_citebench.parsing.markup import (
    LATEX_DOCUMENT,
    MARKUP,
    URL,
    html_as_markdown,
    jira_as_markdown,
    latex_as_markdown,
    markdown,
    troff_as_markdown,
)
from pytest_citebench.parsing.spans import ANSWER_ROLES, Span, Structure

__all__ = ["Reading", "Span", "Structure", "answer_reading", "read_reply"]

# An emoji code (":wave:"), not a clock ("15:59:57") or a ratio.
_EMOJI = re.compile(r"(?<!\w):[a-z_][a-z0-9_+-]{1,29}:(?!\w)")
#: A chat message's opening address: "@asker", "Hey @you", "Hi!" (a short greeting that ends
#: in "!" or "," before the answer on the same line).
_ADDRESS = re.compile(
    r"^(?:\s*(?:@[\w.-]+[,:!]?|\w{1,12}\s+@[\w.-]+[,:!]?|\w{1,12}\s*[!,](?=\s)))+(?=\s)"
)
_POST_NUMBER = re.compile(r"^\s*\d{1,2}/(?:\d{1,2})?\s+", re.MULTILINE)
_HASHTAG = re.compile(r"(?<![\w#&])#[^\W\d_][\w-]*")


def _unthreaded(text: str) -> str:
    """A thread's posts as list items, its hashtags (tags, not words of an answer) taken off."""
    if not _POST_NUMBER.match(text):
        return text
    return _HASHTAG.sub("", _POST_NUMBER.sub("- ", text))


_SLACK_LINK = re.compile(r"<(https?://[^|>\s]+)\|([^>]+)>")


def _is_greeting(line: str) -> bool:
    """A salutation: a short first line that ends in a comma or an exclamation mark."""
    words = line.split()
    return 0 < len(words) <= 5 and line.rstrip().endswith((",", "!", "،", "，")) and ":" not in line


def _without_letter_frame(text: str) -> tuple[str, bool]:
    """The body of a letter or a help-desk message: its greeting line and its signature block
    (after the last blank line: at most four short lines, the first ending in a comma) off."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    framed = False
    if len(paragraphs) > 1 and _is_greeting(paragraphs[0].splitlines()[0]):
        first = paragraphs[0].splitlines()
        paragraphs[0] = "\n".join(first[1:])
        framed = True
    if len(paragraphs) > 1:
        last = paragraphs[-1].splitlines()
        if len(last) <= 4 and all(len(x.split()) <= 6 for x in last):
            closing = last[0].rstrip().endswith((",", "،", "，", "!")) and len(last[0].split()) <= 4
            if closing or re.match(r"^\s*(?:—|--)\s*\S", last[0]):
                paragraphs.pop()
                framed = True
    return "\n\n".join(p for p in paragraphs if p.strip()), framed


@functools.lru_cache(maxsize=4096)
def read_reply(raw: str) -> Structure | None:
    """The reply read as the first format that parses it whole; None for plain text (no markup,
    no document, no letter frame): the rules read it as it is."""
    text = _SLACK_LINK.sub(r"[\2](\1)", raw.strip())
    found = document(text) or code(text)
    if found is not None:
        return found
    # A chat message's address: emoji codes, @mentions, a greeting before the answer; a
    # microblog thread's post numbers ("1/", "2/") and hashtags.
    addressed = _ADDRESS.sub("", _EMOJI.sub("", _unthreaded(text))).strip()
    framed = addressed != text
    body, lettered = _without_letter_frame(addressed)
    framed = framed or lettered
    for kind, convert in (
        ("latex", latex_as_markdown),
        ("html", html_as_markdown),
        ("man", troff_as_markdown),
        ("jira", jira_as_markdown),
    ):
        converted = convert(body)
        if converted is not None:
            whole = kind in ("man", "jira") or body.lstrip().startswith("<")
            whole = whole or bool(LATEX_DOCUMENT.search(body))
            return replace(markdown(converted), kind=kind, framed=framed, document=whole)
    reference = _reference(body)
    if reference is not None:
        return replace(reference, framed=framed)
    if framed or MARKUP.search(body) or any(URL.match(x.strip()) for x in body.splitlines()):
        return replace(markdown(body), framed=framed)
    return _fields(body)


# A Vancouver / NLM reference: "Jang E, Gu S, Poole B. Title. Venue; year." -- surnames with
# their initials after them, then the title up to the next full stop.
_VANCOUVER = re.compile(
    r"^\s*(?:\[?\d{1,3}[.\]]\s*)?"
    r"(?P<people>(?:[^\W\d_][\w'’-]*(?:\s[^\W\d_][\w'’-]*){0,2}\s[A-Z]{1,3},\s)*"
    r"[^\W\d_][\w'’-]*(?:\s[^\W\d_][\w'’-]*){0,2}\s[A-Z]{1,3}(?:,\s*et\s+al)?)\.\s+"
    r"(?P<title>[^\n]+?[^\s.])\.(?:\s|$)"
)


def _reference(text: str) -> Structure | None:
    """One reference line in the Vancouver shape: its people and its title as fields."""
    lines = [x for x in text.splitlines() if x.strip()]
    found = _VANCOUVER.match(lines[0]) if len(lines) == 1 else None
    # A reference ends with where and when the paper appeared: a year after the title (prose
    # that starts with a name, "Mason A. Porter, ... are the authors", has none).
    if found is None or not re.search(r"\b(?:19|20)\d{2}\b", lines[0][found.end("title") :]):
        return None
    spans = (Span(found["people"], "value", "authors"), Span(found["title"], "value", "title"))
    return Structure("reference", spans, document=True)


# A label holds no quote or bracket of a quoted title ('The sentence "X: Y" is ...').
_FIELD_LINE = re.compile(r"^\s*([^:：՝፡፦\n\"“”«»<>]{1,80}?)\s*(?::\s+|[：՝፡፦]\s*)(\S.*)$")


def _latin(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c < "ɐ" for c in letters) / len(letters) > 0.8


def _label_words(label: str) -> int:
    """A label's length in words, a hedge in brackets not counted ("Auteurs (je n'en suis pas
    sûr) :")."""
    return len(re.sub(r"\([^()]*\)", " ", label).split())


def _one_label(label: str, value: str) -> bool:
    """A lone "label: value" line whose label is a label: in another script than its value, or
    a single word before a list of people (a title never is one: "Författare: A, B, C")."""
    if not _latin(label) and _latin(value):
        return True
    return len(label.split()) == 1 and value.count(",") >= 1 and not label.isupper()


def _fields(text: str) -> Structure | None:
    """Plain lines of "label: value": a record (two such lines or more), one line whose label is
    a label by how it is written (``_one_label``), or a short reply of one or two lines led by a
    label of at most three words. Where the label stands makes it one, in any language; "SMOTE:
    Synthetic ..." reads as a field too, and the rules' reading of the whole line, which names
    the gold, is kept (``papers/reasons/readings.settle``: match first)."""
    lines = [x for x in text.splitlines() if x.strip()]
    matches = [_FIELD_LINE.match(x) for x in lines]
    fields = [m for m in matches if m and _label_words(m.group(1)) <= 4]
    if not fields:
        return None
    lone = len(fields) < 2 and not any(_one_label(m.group(1), m.group(2)) for m in fields)
    if lone and (len(lines) > 2 or _label_words(fields[0].group(1)) > 3):
        return None
    spans = []
    for line, m in zip(lines, matches, strict=True):
        if m and _label_words(m.group(1)) <= 4:
            label = m.group(1).strip()
            spans += [Span(label, "label"), Span(m.group(2).strip(), "value", label)]
        else:
            spans.append(Span(line.strip(), "line"))
    return Structure("fields", tuple(spans))


#: Words a field's label holds when it names what a task asks for, by the task's answer.
_WANTED = {
    "title": ("title", "titel", "paper", "answer"),
    "authors": ("author", "creator", "name", "answer"),
}


def _wanted_key(key: str, want: str, prefer: tuple[str, ...]) -> bool:
    k = key.casefold().replace("-", "_")
    return any(p in k for p in prefer) or any(w in k for w in _WANTED.get(want, ()))


@dataclass(frozen=True)
class Reading:
    """The text a person reads as the answer, and whether the structure *placed* it there: under
    a label, in a table's cell, in a document, or in a letter or message whose frame was taken
    off. An unplaced reading (lines and list items of Markdown prose) may say what the answer is
    not, never on its own that a wrong paper was named."""

    text: str
    kind: str
    placed: bool
    #: The reply is a document of its kind: its parser's reading is the reply's.
    document: bool = False


def answer_reading(raw: str, want: str, prefer: tuple[str, ...] = ()) -> Reading | None:
    """The reply's answer as a person reads it, one span a line, for the rules to judge; None
    when the reply has no structure (the rules read it whole).

    ``want`` is what the task asks for ("title" or "authors"). The values under a label that
    names it come first (a task's own field names in ``prefer``, then "title"/"author"); with
    none, every span that can carry an answer, labels, headings, links' URLs, identifiers and a
    letter's greeting and signature left out."""
    found = read_reply(raw)
    if found is None:
        return None
    spans = list(_row_fields(found.spans, want, prefer))
    spans = [s for s in spans if s.role in ANSWER_ROLES and not URL.match(s.text)]
    # A question (the one asked, restated) is never the answer; a lead-in that ends in a colon
    # introduces what follows it ("my best guess for the cited paper:").
    answers = [s for s in spans if not s.text.rstrip().endswith(_QUESTION_MARKS)]
    spans = answers or spans
    leads = [s for s in spans[:-1] if s.role == "line" and s.text.rstrip().endswith((":", "："))]
    spans = [s for s in spans if s not in leads] or spans
    keyed = [s for s in spans if s.key and _wanted_key(s.key, want, prefer)]
    if keyed and want == "title":
        # Title fields first: "paper_title" over "paper_id"; every title field is read (a
        # Turtle reply may give the citing paper's and the cited one's).
        keyed = [s for s in keyed if "title" in s.key.casefold()] or keyed
    chosen = keyed or spans
    placed = bool(keyed) or found.framed or found.document
    placed = placed or (bool(chosen) and all(s.role in ("value", "cell") for s in chosen))
    if want == "authors" and keyed and all(_one_person(s.text) for s in keyed):
        return Reading(", ".join(s.text for s in keyed), found.kind, placed, found.document)
    return Reading("\n".join(s.text for s in chosen), found.kind, placed, found.document)


def _row_fields(spans: tuple[Span, ...], want: str, prefer: tuple[str, ...]) -> list[Span]:
    """A table of fields (``|Authors|A, B|`` under ``||Field||Value||``): a cell that names what
    was asked labels the cell beside it."""
    out = list(spans)
    for i in range(len(out) - 1):
        here, beside = out[i], out[i + 1]
        named = here.role == beside.role == "cell" and len(here.text.split()) <= 3
        if named and _wanted_key(here.text, want, prefer):
            out[i] = Span(here.text, "label")
            out[i + 1] = Span(beside.text, "value", here.text)
    return out


_QUESTION_MARKS = ("?", "？", "؟", "\u037e")


def _one_person(text: str) -> bool:
    return "," not in text and " and " not in text and 1 <= len(text.split()) <= 5
