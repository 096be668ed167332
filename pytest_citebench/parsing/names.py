"""What a person's name looks like, for the readers of author lists and of replies: the
lower-case particles a surname may hold, and a line that is nothing but people.

Kept apart from ``authors`` (which reads a reply's author list) so that ``reply`` (which
finds the answer paragraph of a reply) can tell a list of names continued after a blank line
without importing the author reader.
"""

from __future__ import annotations

import re

#: Lower-case particles of surnames ("van", "de la", "ibn"): part of a name, not prose.
_PARTICLES_TEXT = "van von der den de del della di da dos das du la le ten ter bin ibn al el st mac"
SURNAME_PARTICLES = frozenset(_PARTICLES_TEXT.split())

# A capital, Latin letters with diacritics included ("Łukasz", "Åsa", "Đặng").
_CAPITAL = "[A-ZÀ-ÖØ-ÞĀ-ſ]"
_BARE_NAME = re.compile(
    _CAPITAL
    + r"[\w'’\-]*\.?(?:\s+(?:"
    + _CAPITAL
    + r"[\w'’\-]*\.?|"
    + "|".join(sorted(SURNAME_PARTICLES))
    + r")){1,4}"
)
_BULLET = re.compile(r"^\s*(?:[-*•+–·]|\d+\s*[.)](?!\d)|\(\d+\))\s*|^\s*[#>]+\s*|\*\*|__")


def bare_names(line: str) -> bool:
    """A line that is only a list of two or more people ("A B, C D and E F"): no lead-in, no
    verb, no title; every piece two to five capitalized words (particles allowed)."""
    line = _BULLET.sub("", line).strip().rstrip(".")
    pieces = [p.strip() for p in re.split(r",|;|\band\b|&", line) if p.strip()]
    return len(pieces) >= 2 and all(_BARE_NAME.fullmatch(p) for p in pieces)
