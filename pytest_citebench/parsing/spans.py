"""The seam between the parsers of a reply's format and the rules: pieces of text with a role.

Roles: ``label`` (a field's name, a key, a table's header cell, a bold lead "**Authors:**"),
``heading``, ``url``, ``identifier`` (a bibliography key, a function's name) never name a paper
or a person; ``value`` (under its label), ``cell`` (under its column's header), ``item``,
``link`` (a link's text) and ``line`` (a line of prose) may.
"""

from __future__ import annotations

from dataclasses import dataclass

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
