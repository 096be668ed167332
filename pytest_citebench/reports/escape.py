"""Model answers, expected strings and error texts are untrusted: shown as text, never as markup
or as terminal commands.

Why a module of its own: the Markdown summary, the terminal summary and the failure reports all
print the same fields, and each used to guard against a different subset (``|`` only, or
nothing). An ESC sequence in an answer could recolour or rewrite a CI log, ``\\r`` split a
Markdown table row, and ``</details>`` or ``<img onerror=...>`` reached the step summary as HTML.
"""

from __future__ import annotations

import html
import re

# C0 and C1 control characters but newline and tab, DEL, and the bidirectional overrides that
# can make a line read differently from what it holds (the "trojan source" characters).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: object) -> str:
    """``text`` with every control character written as its escape (ESC -> ``\\x1b``,
    NUL -> ``\\x00``, CR -> ``\\x0d``); newlines and tabs are kept."""
    return _UNSAFE.sub(_visible, str(text))


def one_line(text: object) -> str:
    """``text`` as one terminal line: controls made visible (``terminal``) and each line break
    written as ``\\n``. For a field printed after a label ("why:", "expected:"): a registry
    title or a model's answer with a line break could otherwise print a line of its own that
    reads as the run's ("verdict: all gates passed")."""
    return terminal(re.sub(r"\r\n|[\n\r]", "\\\\n", str(text)))


def indented(text: object, indent: str) -> str:
    """``text`` (several lines kept) with every line after the first under ``indent``, so no
    line of it starts where the run's own lines start."""
    return terminal(("\n" + indent).join(str(text).splitlines()))


def markdown_cell(text: object) -> str:
    """``text`` as one Markdown table cell: controls made visible, line breaks flattened, HTML
    shown as text (``&lt;script&gt;``), ``|`` escaped so the row keeps its columns."""
    flat = re.sub(r"[\r\n\t]+", " ", str(text))
    return html.escape(terminal(flat), quote=False).replace("|", "\\|").strip()


def markdown_code(text: object) -> str:
    """``text`` as an inline code span, whatever backticks it holds (CommonMark: a fence longer
    than any run of backticks inside; HTML is inert inside a code span)."""
    flat = terminal(re.sub(r"[\r\n\t]+", " ", str(text)))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
