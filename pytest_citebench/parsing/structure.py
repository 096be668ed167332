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

import ast
import functools
import html
import json
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from typing import Any

#: Roles whose text can name a paper or a person.
ANSWER_ROLES = frozenset({"value", "cell", "item", "link", "line"})


@dataclass(frozen=True)
class Span:
    """A piece of the reply with its role, and the label (key, column header) it stands under."""

    text: str
    role: str
    key: str = ""


@dataclass(frozen=True)
class Structure:
    """The reply read as one format (``kind``), as spans in the reply's order."""

    kind: str
    spans: tuple[Span, ...]
    #: A letter's greeting or signature, or a chat message's address, was taken off.
    framed: bool = False
    #: The whole reply is in the format (a JSON object, an HTML fragment that starts with a
    #: tag, a LaTeX bibliography), not prose with a link or a bold word in it: its parser's
    #: reading is the reply's.
    document: bool = False


# --- documents: JSON, YAML, TOML, Python, XML --------------------------------------------------

_FENCED = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.-]*")
#: A program's key on one line: "cited_title:", or a one-word key before a quoted value.
_PROGRAM_KEY = re.compile(
    r"^(?:[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+\s*:|[a-z][a-z0-9]*\s*:\s*[\"'\[{])"
)
_KEY_LINE = re.compile(r"^\s*[\w\"'.-]+\s*[:=]", re.MULTILINE)


def _leaves(data: Any, key: str = "") -> Iterator[Span]:
    """A parsed document's text values, each under the key it stands at; a CSL/JSON person
    (``{"family": ..., "given": ...}``) is one name, a list of strings one value a line."""
    if isinstance(data, dict):
        lower = {str(k).casefold(): v for k, v in data.items()}
        if "family" in lower and isinstance(lower["family"], str):
            given = lower.get("given") or ""
            yield Span(f"{given} {lower['family']}".strip(), "value", key)
            return
        for k, v in data.items():
            if isinstance(v, str | int | float) and not isinstance(v, bool):
                yield Span(str(k), "label", key)
            yield from _leaves(v, str(k))
    elif isinstance(data, list):
        for v in data:
            yield from _leaves(v, key)
    elif isinstance(data, str) and data.strip():
        text = data.strip()
        role = "identifier" if _IDENTIFIER.fullmatch(text) and not text.isalpha() else "value"
        yield Span(text, role, key)


def _document(text: str) -> Structure | None:
    """A reply that is one JSON, TOML, YAML or Python document (fenced or not)."""
    body = text.strip()
    fenced = _FENCED.fullmatch(body)
    language = ""
    if fenced:
        language, body = fenced.group(1).casefold(), fenced.group(2).strip()
    elif body.startswith("```"):
        return None
    for kind, load in (("json", json.loads), ("toml", tomllib.loads), ("yaml", _yaml)):
        if language and language not in (kind, "yml" if kind == "yaml" else kind, "javascript"):
            continue
        try:
            data = load(body)
        except Exception:
            continue
        spans = tuple(_leaves(data)) if isinstance(data, dict | list) else ()
        if any(s.role == "value" for s in spans):
            return Structure(kind, spans, document=True)
    if language in ("python", "py") or (not language and fenced):
        return _python(body)
    return None


def _yaml(text: str) -> Any:
    import yaml

    if not _KEY_LINE.search(text.split("\n", 1)[0]) and not text.lstrip().startswith("-"):
        raise ValueError("not a mapping or a list")
    if "\n" not in text.strip() and not _PROGRAM_KEY.match(text.strip()):
        # One line "SMOTE: Synthetic Minority ..." or "fairseq: A Fast, ..." is a title with a
        # colon; one line 'cited_title: ...' or 'title: "..."' a program's key and value.
        raise ValueError("one line, not a program's key")
    data = yaml.safe_load(text)
    if isinstance(data, dict) and not all(
        isinstance(v, str | list | dict | int | float) or v is None for v in data.values()
    ):
        raise ValueError("not a document")
    return data


def _python(code: str) -> Structure | None:
    """Python code: its string constants, each under the name or key it is assigned to."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    spans: list[Span] = []

    def visit(node: ast.AST, key: str) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            spans.extend(_leaves(node.value, key))
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                name = k.value if isinstance(k, ast.Constant) else key
                visit(v, str(name))
        elif isinstance(node, ast.List | ast.Tuple | ast.Set):
            for element in node.elts:
                visit(element, key)
        elif isinstance(node, ast.Call):
            for arg in node.args:
                visit(arg, key)
            for kw in node.keywords:
                visit(kw.value, kw.arg or key)
        elif isinstance(node, ast.JoinedStr | ast.BinOp):
            return

    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
            name = target.id if isinstance(target, ast.Name) else ""
            visit(statement.value, name)
        elif isinstance(statement, ast.Expr):
            visit(statement.value, "")
    return Structure("python", tuple(spans), document=True) if spans else None


def _xml(text: str) -> Structure | None:
    """One XML document (elements of any names): each element's text under its tag."""
    import xml.etree.ElementTree as ET

    body = text.strip()
    if not body.startswith("<") or not body.endswith(">"):
        return None
    try:
        root = ET.fromstring(re.sub(r"^<\?xml[^>]*\?>", "", body).strip())
    except ET.ParseError:
        return None
    spans: list[Span] = []
    for element in root.iter():
        for name, value in element.attrib.items():
            spans.extend(_leaves(value, name))
        if element.text and element.text.strip():
            spans.extend(_leaves(" ".join(element.text.split()), element.tag))
    if root.tag.casefold() in _HTML_BLOCKS | _HTML_INLINE:
        return None  # an HTML fragment that happens to be well-formed: read as HTML
    return Structure("xml", tuple(spans), document=True) if spans else None


# --- HTML and LaTeX, rewritten as Markdown so one reader reads all three ---------------------

_HTML_BLOCKS = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "header",
        "footer",
        "ul",
        "ol",
        "li",
        "table",
        "thead",
        "tbody",
        "tr",
        "td",
        "th",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "dl",
        "dt",
        "dd",
        "blockquote",
        "br",
        "hr",
        "pre",
        "figure",
        "figcaption",
        "cite",
        "main",
        "aside",
        "nav",
        "span",
    ]
)
_HTML_INLINE = frozenset(
    ["a", "b", "strong", "i", "em", "u", "small", "code", "sup", "sub", "q", "abbr", "time", "mark"]
)
_HTML_TAG = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>")


class _HtmlToMarkdown(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.header_row = False
        self.rows_done = 0
        self.href = ""

    def _put(self, text: str) -> None:
        (self.cell if self.cell is not None else self.out).append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("td", "th"):
            self.cell = []
            self.header_row = self.header_row or tag == "th"
        elif tag == "tr":
            self.row, self.header_row = [], False
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag in ("b", "strong", "dt"):
            self._put("**" if tag != "dt" else "\n\n**")
        elif tag in ("i", "em"):
            self._put("*")
        elif tag == "a":
            self.href = dict(attrs).get("href") or ""
            self._put("[")
        elif tag == "br":
            self._put("  \n")
        elif tag in _HTML_BLOCKS:
            self.out.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()).replace("|", "/"))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            line = "| " + " | ".join(self.row) + " |"
            if self.rows_done == 0:
                line = "\n\n" + line + "\n|" + "---|" * len(self.row)
            self.out.append(line + "\n")
            self.rows_done += 1
            self.row = None
        elif tag == "table":
            self.rows_done = 0
            self.out.append("\n")
        elif tag in ("b", "strong", "dt"):
            self._put("**" if tag != "dt" else ":**\n")
        elif tag in ("i", "em"):
            self._put("*")
        elif tag == "a":
            self._put(f"]({self.href})" if self.href else "]")
        elif tag in _HTML_BLOCKS and tag not in ("br", "span"):
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        self._put(data if self.cell is not None else re.sub(r"\s*\n\s*", " ", data))


def _html_as_markdown(text: str) -> str | None:
    tags = {m.group(1).casefold() for m in _HTML_TAG.finditer(text)}
    if not tags & (_HTML_BLOCKS | _HTML_INLINE):
        return None
    parser = _HtmlToMarkdown()
    parser.feed(text)
    parser.close()
    return re.sub(r"\n{3,}", "\n\n", "".join(parser.out)).strip()


_LATEX_DOCUMENT = re.compile(r"\\(?:bibitem|begin\s*\{)")
_LATEX_MARK = re.compile(r"\\(?:bibitem|begin|end|emph|textbf|textit|cite|section|newblock|item)\b")
_LATEX_WRAP = re.compile(
    r"\\(?:emph|textit|textsl|textsc|text|mbox|url|href\{[^}]*\})\s*\{([^{}]*)\}"
)


_BIBITEM = re.compile(
    r"\\bibitem\s*(?:\[[^\]]*\])?\s*\{[^}]*\}(.*?)(?=\\bibitem|\\end\s*\{thebibliography\}|\Z)",
    re.DOTALL,
)


def _bibitem_fields(m: re.Match[str]) -> str:
    """A ``\\bibitem`` whose blocks ``\\newblock`` separates (the BibTeX styles' layout: the
    people, the title, then where it appeared) as labelled fields; one block stays a reference."""
    blocks = [b.strip() for b in re.split(r"\\newblock\b", m.group(1)) if b.strip()]
    if len(blocks) < 2:
        return m.group(0)
    fields = ("author", "title", "venue", "venue", "venue")
    lines = [f"**{fields[min(i, 4)]}:** {b.rstrip('.')}" for i, b in enumerate(blocks)]
    return "\n\n" + "\n".join(lines) + "\n\n"


def _latex_as_markdown(text: str) -> str | None:
    """A LaTeX reply: each ``\\bibitem`` a reference line (its key dropped), sections headings,
    ``\\item`` list items, commands taken off their text."""
    if not _LATEX_MARK.search(text):
        return None
    t = re.sub(r"(?<!\\)%[^\n]*", "", text)
    t = _BIBITEM.sub(_bibitem_fields, t)
    t = re.sub(r"\\bibitem\s*(?:\[[^\]]*\])?\s*\{[^}]*\}", "\n\n- ", t)
    t = re.sub(r"\\(?:sub)*section\*?\s*\{([^{}]*)\}", r"\n\n## \1\n\n", t)
    t = re.sub(r"\\item\b\s*", "\n- ", t)
    t = re.sub(r"\\(?:begin|end)\s*\{[^}]*\}(?:\{[^}]*\})?", "\n\n", t)
    t = re.sub(r"\\(?:cite[pt]?|ref|label)\s*(?:\[[^\]]*\])?\{[^}]*\}", "", t)
    t = re.sub(r"\\newblock\b\s*", " ", t)
    t = re.sub(r"\\textbf\s*\{([^{}]*)\}", r"**\1**", t)
    for _ in range(3):
        t = _LATEX_WRAP.sub(r"\1", t)
    t = re.sub(r"\\[\"'`^~=.]\{?([A-Za-z])\}?", r"\1", t)  # accents: \"o -> o
    t = t.replace("~", " ").replace("\\\\", "\n").replace("\\&", "&").replace("--", "–")
    t = re.sub(r"\\[a-zA-Z]+\*?", "", t).replace("{", "").replace("}", "")
    lines = [" ".join(line.split()) for line in t.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# --- RIS (reference managers) -------------------------------------------------------------------

_RIS_LINE = re.compile(r"^([A-Z][A-Z0-9])  ?-(?: (.*))?$")
#: The RIS tags of a title and of a person (the format's own, not a word list).
_RIS_ROLES = {
    "TI": "title", "T1": "title", "CT": "title", "BT": "title",
    "AU": "author", "A1": "author", "A2": "editor", "ED": "editor",
}  # fmt: skip


def _ris(text: str) -> Structure | None:
    lines = text.strip().splitlines()
    tagged = [_RIS_LINE.match(line.strip()) for line in lines]
    if sum(m is not None for m in tagged) < 2 or not any(m and m.group(1) == "TY" for m in tagged):
        return None
    spans = []
    for line, m in zip(lines, tagged, strict=True):
        if m is None:
            if line.strip():
                spans.append(Span(line.strip(), "line"))
            continue
        value = (m.group(2) or "").strip()
        role = _RIS_ROLES.get(m.group(1))
        if value and role == "author":
            value = _inverted(value)
        spans.append(Span(value, "value" if role else "identifier", role or m.group(1)))
    return Structure("ris", tuple(s for s in spans if s.text), document=True)


def _inverted(name: str) -> str:
    """ "Last, First" as "First Last" (one comma: a person, not a list)."""
    parts = [p.strip() for p in name.split(",")]
    return f"{parts[1]} {parts[0]}" if len(parts) == 2 and parts[1] else name


# --- Markdown (and what HTML and LaTeX were rewritten to) --------------------------------------

_BOLD_LABEL = re.compile(r"^\s*(\*\*|__)([^*_\n]{1,60}?)\s*[:：]?\s*\1\s*[:：\-–—]?\s*(.*)$")
_PLAIN_LABEL = re.compile(r"^\s*([^:：\n]{1,40}?)\s*[:：]\s+(.+)$")
# An emoji code (":wave:"), not a clock ("15:59:57") or a ratio.
_EMOJI = re.compile(r"(?<!\w):[a-z_][a-z0-9_+-]{1,29}:(?!\w)")
#: A chat message's opening address: "@asker", "Hey @you", "Hi!" (a short greeting that ends
#: in "!" or "," before the answer on the same line).
_ADDRESS = re.compile(
    r"^(?:\s*(?:@[\w.-]+[,:!]?|\w{1,12}\s+@[\w.-]+[,:!]?|\w{1,12}\s*[!,](?=\s)))+(?=\s)"
)
_SLACK_LINK = re.compile(r"<(https?://[^|>\s]+)\|([^>]+)>")
_URL = re.compile(r"^(?:https?://|www\.|doi:|arxiv:)\S*$", re.IGNORECASE)
_MARKUP = re.compile(
    r"^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|>|\|)|\*\*|__|\]\(|```|^\s*[=\-~^]{3,}\s*$", re.M
)


def _inline_text(token: Any) -> tuple[str, list[Span]]:
    """An inline token's text without emphasis marks, and its links (text and URL)."""
    parts: list[str] = []
    links: list[Span] = []
    href = ""
    for child in token.children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            parts.append("\x01")
        elif child.type == "link_close":
            parts.append("\x02")
            links.append(Span(href, "url"))
    return "".join(parts), links


def _lines_of(token: Any) -> list[tuple[str, str]]:
    """The inline token's lines, each with a bold lead that labels it ("**Title:** X")."""
    out = []
    raw_lines = token.content.split("\n")
    text, _links = _inline_text(token)
    for raw, line in zip(raw_lines, text.split("\n"), strict=False):
        line = line.replace("\x01", "").replace("\x02", "")
        bold = _BOLD_LABEL.match(raw)
        if bold and (raw.rstrip().endswith(("**", "__")) is False or bold.group(3)):
            label = bold.group(2).strip().rstrip(":：")
            lead = bold.group(2)
            value = line[line.find(lead) + len(lead) :] if lead in line else bold.group(3)
            out.append((label, value.strip().lstrip(":：-–— ").strip()))
        else:
            out.append(("", line.strip()))
    return out


def _markdown(text: str) -> Structure:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    spans: list[Span] = []
    headers: list[str] = []
    column = 0
    in_header = False
    context: list[str] = []
    for i, tok in enumerate(tokens):
        if tok.type.endswith("_open") and tok.type != "inline":
            context.append(tok.type[: -len("_open")])
            if tok.type == "thead_open":
                in_header, headers = True, []
            elif tok.type == "tbody_open":
                in_header = False
            elif tok.type == "tr_open":
                column = 0
        elif tok.type.endswith("_close"):
            if context:
                context.pop()
        elif tok.type in ("fence", "code_block"):
            inner = _document(f"```{tok.info}\n{tok.content}```")
            spans.extend(inner.spans if inner else [Span(tok.content.strip(), "line")])
        elif tok.type == "inline":
            parent = context[-1] if context else ""
            if parent == "heading":
                spans.append(Span(_inline_text(tok)[0].strip(), "heading"))
            elif parent in ("th", "td"):
                cell, links = _inline_text(tok)
                cell = cell.replace("\x01", "").replace("\x02", "").strip()
                if in_header:
                    headers.append(cell)
                    spans.append(Span(cell, "label"))
                else:
                    key = headers[column] if column < len(headers) else ""
                    spans.append(Span(cell, "cell", key))
                    spans.extend(links)
                column += 1
            else:
                role = "item" if "list_item" in context else "line"
                _text, links = _inline_text(tok)
                for label, value in _lines_of(tok):
                    if label:
                        spans.append(Span(label, "label"))
                        spans.append(Span(value, "value", label))
                    elif value:
                        spans.append(Span(value, role))
                spans.extend(links)
        del i
    return Structure("markdown", tuple(s for s in spans if s.text))


# --- the reply read whole ------------------------------------------------------------------------


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
    for reader in (_document, _ris, _xml):
        found = reader(text)
        if found is not None:
            return found
    # A chat message's address: emoji codes, @mentions, a greeting before the answer.
    addressed = _ADDRESS.sub("", _EMOJI.sub("", text)).strip()
    framed = addressed != text
    body, lettered = _without_letter_frame(addressed)
    framed = framed or lettered
    for kind, convert in (("latex", _latex_as_markdown), ("html", _html_as_markdown)):
        converted = convert(body)
        if converted is not None:
            whole = body.lstrip().startswith("<") or bool(_LATEX_DOCUMENT.search(body))
            return replace(_markdown(converted), kind=kind, framed=framed, document=whole)
    if framed or _MARKUP.search(body) or any(_URL.match(x.strip()) for x in body.splitlines()):
        return replace(_markdown(body), framed=framed)
    return _fields(body)


# A label holds no quote or bracket of a quoted title ('The sentence "X: Y" is ...').
_FIELD_LINE = re.compile(r"^\s*([^:：\n\"“”«»<>]{1,80}?)\s*[:：]\s+(\S.*)$")


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
_WANTED = {"title": ("title", "titel", "paper"), "authors": ("author", "creator", "name")}


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
    spans = [s for s in found.spans if s.role in ANSWER_ROLES and not _URL.match(s.text)]
    # A question (the one asked, restated) is never the answer; a lead-in that ends in a colon
    # introduces what follows it ("my best guess for the cited paper:").
    answers = [s for s in spans if not s.text.rstrip().endswith(_QUESTION_MARKS)]
    spans = answers or spans
    leads = [s for s in spans[:-1] if s.role == "line" and s.text.rstrip().endswith((":", "："))]
    spans = [s for s in spans if s not in leads] or spans
    keyed = [s for s in spans if s.key and _wanted_key(s.key, want, prefer)]
    if keyed and want == "title":
        # A title field names one paper; other keyed values ("paper_title" and "paper_id")
        # keep to the title's key.
        titled = [s for s in keyed if "title" in s.key.casefold()] or keyed
        keyed = titled[:1] if len({s.key for s in titled}) == 1 else titled
    chosen = keyed or spans
    placed = bool(keyed) or found.framed or found.document
    placed = placed or (bool(chosen) and all(s.role in ("value", "cell") for s in chosen))
    if want == "authors" and keyed and all(_one_person(s.text) for s in keyed):
        return Reading(", ".join(s.text for s in keyed), found.kind, placed, found.document)
    return Reading("\n".join(s.text for s in chosen), found.kind, placed, found.document)


_QUESTION_MARKS = ("?", "？", "؟", "\u037e")


def _one_person(text: str) -> bool:
    return "," not in text and " and " not in text and 1 <= len(text.split()) <= 5


def plain(text: str) -> str:
    """``text`` with HTML entities decoded (a reply written for a web page)."""
    return html.unescape(text)
