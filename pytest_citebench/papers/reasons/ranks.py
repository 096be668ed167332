"""A reply that cites a retrieved paper by its number: "The answer is: [2]".

Under ``--citebench-rag`` the prompt lists the retrieved papers as ``[1] Title: ...``, and a
small model (SmolLM2 under llama.cpp) may answer with the numbers alone. The numbers name papers
as surely as their titles do, but only the list the model was shown says which ones: the
retrieval wrapper hands it over (``api.show_papers``), the task keeps it on the stage
(``ScoredStage.details["shown"]``), and the judge reads a number-only reply as the titles (or
authors) it points to. A number no shown paper has names nothing. A reply that says anything but
numbers and a few connecting words ("none of [1], [2] fits") is left to the other rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_citebench.api import ShownPaper

#: Where a stage keeps the papers its prompt showed (``ScoredStage.details``).
SHOWN_KEY = "shown"

_RANK = re.compile(r"\[(\d{1,3})\]")
# The words a number-only answer wraps its numbers in. No negation ("not", "none", "neither"):
# a reply that rules papers out is not citing them.
_CONNECTING = frozenset(
    """
    the a an answer answers is are it this that its paper papers retrieved reference references
    entry entries number numbers see cited cite cites citation citations work works sentence
    source sources one both and or most likely probably i think believe title titles author
    authors of in from by as library list above given context correct relevant best match
    matches fits fit final here which those these they was were
    """.split()  # noqa: SIM905 (a word list reads better as prose)
)


@dataclass(frozen=True)
class CitedByRank:
    """What a number-only reply points to: the text to judge in its place, and the numbers."""

    ranks: tuple[int, ...]
    found: tuple[ShownPaper, ...]

    @property
    def missing(self) -> tuple[int, ...]:
        shown = {p.rank for p in self.found}
        return tuple(r for r in self.ranks if r not in shown)

    def text(self, answers: Literal["title", "authors"]) -> str:
        """The cited papers' titles (or author lists), a line each, as if the model wrote them."""
        return "\n".join(p.title if answers == "title" else p.authors for p in self.found)

    def note(self) -> str:
        """How the reason says the reply was read."""
        cited = ", ".join(f"[{r}]" for r in self.ranks)
        said = f"cites retrieved paper{'s' if len(self.ranks) > 1 else ''} {cited} by number"
        if self.missing:
            absent = ", ".join(f"[{r}]" for r in self.missing)
            said += f" ({absent}: no paper shown under that number)"
        return said


def shown_papers(details: Mapping[str, Any] | None) -> tuple[ShownPaper, ...]:
    """The papers a stage's prompt showed, from what the stage recorded beside its raw text."""
    if not details or not isinstance(details.get(SHOWN_KEY), list):
        return ()
    return tuple(ShownPaper.from_json(p) for p in details[SHOWN_KEY])


def cited_by_rank(raw: str, shown: Sequence[ShownPaper]) -> CitedByRank | None:
    """The shown papers a reply names by number, when numbers are all it says; None otherwise
    (no list was shown, no number, or words beyond the connecting ones)."""
    if not shown:
        return None
    ranks = tuple(dict.fromkeys(int(r) for r in _RANK.findall(raw)))
    if not ranks:
        return None
    words = re.findall(r"[^\W\d_]+", _RANK.sub(" ", raw).lower())
    if any(w not in _CONNECTING for w in words):
        return None
    by_rank = {p.rank: p for p in shown}
    return CitedByRank(ranks, tuple(by_rank[r] for r in ranks if r in by_rank))
