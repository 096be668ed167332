"""Replies that are documents: JSON, YAML, TOML, Python, XML, RIS records, and the envelopes
programs write (an SQL INSERT, logfmt, RDF Turtle, a wiki citation template, CSV).

Each is read by its own grammar into :class:`~pytest_citebench.parsing.spans.Span`\\ s: a key, a
tag, a column or a record code is a label; the text it holds is a value under it. A document has
one reading, its parser's (``parsing.structure``).
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from collections.abc import Iterator
from typing import Any

from pytest_citebench.parsing.spans import Span, Structure

HTML_BLOCKS = frozenset(
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
HTML_INLINE = frozenset(
    ["a", "b", "strong", "i", "em", "u", "small", "code", "sup", "sub", "q", "abbr", "time", "mark"]
)


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


def _parsed(text: str) -> Structure | None:
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
    keys = re.findall(r"^([\w\"'.-]+)\s*:", text, re.MULTILINE)
    if len(keys) != len(set(keys)):
        raise ValueError("a key given twice: protobuf text or a log, not YAML")
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
    if root.tag.casefold() in HTML_BLOCKS | HTML_INLINE:
        return None  # an HTML fragment that happens to be well-formed: read as HTML
    return Structure("xml", tuple(spans), document=True) if spans else None


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


def document(text: str) -> Structure | None:
    """The reply read as the first document format that parses it whole, or None."""
    for reader in (_parsed, _ris, _xml):
        found = reader(text)
        if found is not None:
            return found
    return None


# --- what programs write: SQL, logfmt, RDF Turtle, wiki templates, CSV ----------------------

_SQL_INSERT = re.compile(
    r"^\s*INSERT\s+INTO\s+[\w.\"`\[\]]+\s*\(([^)]*)\)\s*VALUES\s*\((.*)\)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_SQL_VALUE = re.compile(r"'((?:[^']|'')*)'|(NULL|[-\d.]+)", re.IGNORECASE)
_LOGFMT_PAIR = re.compile(r'([\w.-]+)=("(?:[^"\\]|\\.)*"|\S+)')
_TURTLE_LITERAL = re.compile(r'(?:[\w-]*:)?([\w-]+)\s+"((?:[^"\\]|\\.)*)"')
_TEMPLATE = re.compile(r"^\s*\{\{\s*cite\s*[\w ]*\|(.*)\}\}\s*$", re.IGNORECASE | re.DOTALL)
_CSV_HEADER = re.compile(r"^\s*\"?[A-Za-z_][\w ]*\"?(?:\s*,\s*\"?[A-Za-z_][\w ]*\"?)*\s*$")


def code(text: str) -> Structure | None:
    """A reply in the envelope a program asked for, read by its grammar: an SQL INSERT (values
    under their columns), logfmt (key=value), RDF Turtle (literals under their predicates), a
    wiki citation template (|key=value; lastN/firstN one person), CSV (cells under the header)."""
    for reader in (_sql, _template, _turtle, _logfmt, _csv, assignments):
        found = reader(text.strip())
        if found is not None:
            return found
    return None


def _sql(text: str) -> Structure | None:
    found = _SQL_INSERT.match(text)
    if found is None:
        return None
    columns = [c.strip(' "`[]') for c in found.group(1).split(",")]
    values = [(q or "").replace("''", "'") if q is not None else v for q, v in _SQL_VALUE.findall(
        found.group(2)
    )]  # fmt: skip
    spans = [Span(c, "label") for c in columns]
    spans += [Span(v, "value", c) for c, v in zip(columns, values, strict=False) if v]
    return Structure("sql", tuple(spans), document=True)


def _logfmt(text: str) -> Structure | None:
    if "\n" in text or not re.fullmatch(r'(?:\s*[\w.-]+=(?:"(?:[^"\\]|\\.)*"|\S+))+\s*', text):
        return None
    spans = []
    for key, value in _LOGFMT_PAIR.findall(text):
        spans += [Span(key, "label"), Span(_unquoted(value), "value", key)]
    return Structure("logfmt", tuple(spans), document=True)


def _unquoted(value: str) -> str:
    if value.startswith('"') and value.endswith('"'):
        try:
            return str(json.loads(value))
        except ValueError:
            return value[1:-1]
    return value


def _turtle(text: str) -> Structure | None:
    if not re.search(r"^\s*@prefix\b|^\s*[\w-]*:[\w-]+\s+[\w-]*:[\w-]+", text, re.MULTILINE):
        return None
    spans = []
    for predicate, literal in _TURTLE_LITERAL.findall(text):
        spans += [Span(predicate, "label"), Span(_unquoted(f'"{literal}"'), "value", predicate)]
    return Structure("turtle", tuple(spans), document=True) if spans else None


def _template(text: str) -> Structure | None:
    found = _TEMPLATE.match(text)
    if found is None:
        return None
    params: dict[str, str] = {}
    for part in found.group(1).split("|"):
        key, sep, value = part.partition("=")
        if sep and value.strip():
            params[key.strip().casefold()] = value.strip()
    spans = []
    for n in range(1, 100):
        last = params.pop(f"last{n}", None) or (params.pop("last", None) if n == 1 else None)
        first = params.pop(f"first{n}", None) or (params.pop("first", None) if n == 1 else None)
        if last is None:
            break
        spans.append(Span(f"{first or ''} {last}".strip(), "value", "author"))
    spans += [Span(v, "value", k) for k, v in params.items()]
    return Structure("template", tuple(spans), document=True)


def _one_cell(line: str) -> str:
    """A line of a one-column CSV: its quoted cell unquoted, else the line as it is."""
    import csv

    cells = next(csv.reader([line.strip()]))
    return cells[0] if len(cells) == 1 else line.strip()


def _csv(text: str) -> Structure | None:
    """CSV: a header row of column names, then rows of as many cells. One column only when its
    name is a program's ("cited_title"), each line below it one cell (a title may hold commas);
    a heading's underline ("Authors" over "=======") is no CSV."""
    import csv

    lines = [x for x in text.splitlines() if x.strip()]
    if len(lines) < 2 or not _CSV_HEADER.match(lines[0]):
        return None
    header = [h.strip().strip('"') for h in next(csv.reader([lines[0]]))]
    if len(header) == 1:
        if not re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*", header[0]):
            return None
        rows = [[_one_cell(x)] for x in lines[1:]]
    else:
        rows = list(csv.reader(lines[1:]))
        if any(len(r) != len(header) for r in rows):
            return None
    spans = [Span(h, "label") for h in header]
    for row in rows:
        spans += [Span(c.strip(), "cell", h) for h, c in zip(header, row, strict=True) if c.strip()]
    return Structure("csv", tuple(spans), document=True)


# --- any program's assignments: key = value, key: "value", (:key "value") ------------------------

# A key where a program puts one: at a line's start (after "const", "let", ...), or after an
# opening bracket or a separator, never inside a sentence ('a paper titled "X"'); then "=" or
# ":", or an EDN keyword (":authors [...]"), or an HCL block's label ('answer "x" {'); the
# value on the same line ("Abstract:" over a paragraph is a heading, not a key).
_ASSIGNMENT = re.compile(
    r"(?:^[ \t]*(?:(?:const|let|var|val|export\s+const)\s+)?|(?<=[{(\[;,])[ \t]*)"
    r"(?::(?P<ekey>[A-Za-z_][\w.-]*)[ \t]+|(?P<key>[A-Za-z_][\w.-]*)[ \t]*(?:=|:(?!//))[ \t]*"
    r"|(?P<bkey>[A-Za-z_][\w.-]*)[ \t]+(?=\"[^\"\n]*\"[ \t]*\{))"
    r"(?P<value>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\[[^\]\n]*\]|[^\s\"'\[{(;,][^\n;]*)",
    re.MULTILINE,
)
_QUOTED = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")
_SECTION = re.compile(r"^\s*\[[\w .-]+\]\s*$", re.MULTILINE)


def assignments(text: str) -> Structure | None:
    """What any program writes as key and value, whatever its language: INI and HCL
    (``title = X``), protobuf text (``authors: "A" authors: "B"``), JavaScript (``const title =
    "X";``), S-expressions and EDN (``(:authors ["A" "B"])``). Read only when the assignments
    are most of the reply (a program's output, not prose with a colon in it)."""
    found = list(_ASSIGNMENT.finditer(text))
    if not found:
        return None
    covered = sum(len(m.group(0)) for m in found) + sum(
        len(m.group(0)) for m in _SECTION.finditer(text)
    )
    code_marks = sum(text.count(c) for c in '={}()[];"')
    if covered < 0.6 * len(text.strip()) or code_marks < 2:
        return None
    spans = []
    for m in found:
        key = m.group("ekey") or m.group("key") or m.group("bkey")
        value = m.group("value").strip()
        spans.append(Span(key, "label"))
        quoted = [a or b for a, b in _QUOTED.findall(value)]
        block = text[m.end() :].lstrip().startswith("{")
        if value.startswith(("[", '"', "'")) and quoted:
            for q in (q.strip() for q in quoted if q.strip()):
                # A block's quoted label ('answer "authors" {') names the block, no answer.
                named = block or (_IDENTIFIER.fullmatch(q) is not None and not q.isalpha())
                spans.append(Span(q, "identifier" if named else "value", key))
        elif value and not value.startswith(("{", "(")):
            spans.append(Span(value.rstrip(" }),"), "value", key))
    values = [s for s in spans if s.role == "value"]
    return Structure("assignments", tuple(spans), document=True) if values else None
