"""Replies in markup: Markdown read with markdown-it-py (headings, list items, tables with
their header row, links, bold leads that label a line), and HTML and LaTeX rewritten as
Markdown first, so one reader reads all three.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from pytest_citebench.parsing.documents import HTML_BLOCKS, HTML_INLINE, document
from pytest_citebench.parsing.spans import Span, Structure

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
        elif tag in HTML_BLOCKS:
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
        elif tag in HTML_BLOCKS and tag not in ("br", "span"):
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        self._put(data if self.cell is not None else re.sub(r"\s*\n\s*", " ", data))


def html_as_markdown(text: str) -> str | None:
    tags = {m.group(1).casefold() for m in _HTML_TAG.finditer(text)}
    if not tags & (HTML_BLOCKS | HTML_INLINE):
        return None
    parser = _HtmlToMarkdown()
    parser.feed(text)
    parser.close()
    return re.sub(r"\n{3,}", "\n\n", "".join(parser.out)).strip()


LATEX_DOCUMENT = re.compile(r"\\(?:bibitem|begin\s*\{)")
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


def latex_as_markdown(text: str) -> str | None:
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


# --- Markdown (and what HTML and LaTeX were rewritten to) --------------------------------------

_BOLD_LABEL = re.compile(r"^\s*(\*\*|__)([^*_\n]{1,60}?)\s*[:：]?\s*\1\s*[:：\-–—]?\s*(.*)$")
URL = re.compile(r"^(?:https?://|www\.|doi:|arxiv:)\S*$", re.IGNORECASE)
#: Signs of Markdown (or reStructuredText) markup in a reply.
MARKUP = re.compile(
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


def markdown(text: str) -> Structure:
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
            inner = document(f"```{tok.info}\n{tok.content}```")
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


# --- troff (man pages) and Jira wiki markup, rewritten as Markdown ------------------------------

_TROFF_MACRO = re.compile(r"^\.(?P<macro>[A-Z]{1,2})\b[ \t]*(?P<rest>.*)$", re.MULTILINE)
_JIRA_HEADING = re.compile(r"^h([1-6])\.\s+", re.MULTILINE)
_JIRA_HEADER_ROW = re.compile(r"^\s*\|\|(.+?)\|\|\s*$", re.MULTILINE)


def troff_as_markdown(text: str) -> str | None:
    """A man page: ``.SH`` sections as headings, ``.TH`` (the page's own header) dropped, font
    macros (``.B``, ``.I``) taken off their text."""
    if not re.match(r"\s*\.(?:TH|SH)\b", text):
        return None

    def macro(m: re.Match[str]) -> str:
        name, rest = m.group("macro"), m.group("rest")
        if name in ("SH", "SS"):
            return f"\n## {rest}\n"
        if name in ("TH", "PP", "LP", "P", "TP", "IP", "br"):
            return "\n"
        return rest

    # The NAME section holds the page's own name ("citation \- cited paper"), like .TH.
    text = re.sub(r"^\.SH\s+\"?NAME\"?\s*\n(?:[^.\n][^\n]*\n?)*", "", text, flags=re.MULTILINE)
    body = _TROFF_MACRO.sub(macro, text).replace("\\-", "-").replace("\\(em", "—")
    return re.sub(r"\\f[BIRP]", "", body)


def jira_as_markdown(text: str) -> str | None:
    """Jira wiki markup: ``h2.`` headings, ``||header||`` rows, ``|cell|`` rows, ``*bold*``."""
    if not _JIRA_HEADING.search(text) and not _JIRA_HEADER_ROW.search(text):
        return None
    out = _JIRA_HEADING.sub(lambda m: "#" * int(m.group(1)) + " ", text)

    def header(m: re.Match[str]) -> str:
        cells = [c.strip() for c in m.group(1).split("||")]
        return "\n| " + " | ".join(cells) + " |\n|" + "---|" * len(cells)

    out = _JIRA_HEADER_ROW.sub(header, out)
    out = re.sub(r"(?<![*\w])\*([^*\n]+?)\*(?![*\w])", r"**\1**", out)
    return re.sub(r"\{\{(.+?)\}\}", r"`\1`", out)
