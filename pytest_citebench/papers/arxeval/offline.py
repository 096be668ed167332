"""How the built-in retrieval baselines answer ArxEval prompts: a title search over the corpus.

A jumbled title holds every word of one real title and a mixed title the words of two, so the
offline baselines answer both by searching titles (the core passes its search in through
``Task.offline_answer``) rather than the abstract search the REASONS tasks use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from pytest_citebench.api import Hint
from pytest_citebench.papers.arxeval.prompts import ARXEVAL_TASKS, DOIS_ASKED


class _PaperLike(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def abstract(self) -> str: ...
    @property
    def doi(self) -> str | None: ...


class _HitLike(Protocol):
    @property
    def paper(self) -> _PaperLike: ...
    @property
    def coverage(self) -> float: ...


#: ``search(query, k)``: the top-k corpus hits for a query, best first (a title search).
Search = Callable[[str, int], Sequence[_HitLike]]

#: Abstention floors on word coverage (share of the query's distinct words in the hit's title).
#: A jumbled title holds all the words of its original, so the right paper covers ~1.0; a mixed
#: title holds two titles' words, so each source paper covers about half of them.
ARXEVAL_FLOORS: Mapping[str, float] = {"jumbled": 0.5, "mixed": 0.2}


def arxeval_answer(hint: Hint, options: Mapping[str, Any], search: Search) -> str:
    """What a retrieval baseline answers to an ArxEval prompt, from its own corpus search.

    jumbled: the best title match's title and abstract ('pass' below the floor).
    mixed: "Title: ... DOI: ..." for the top two title matches above the floor ('pass' if none).
    ``options['floor']`` overrides :data:`ARXEVAL_FLOORS`.
    """
    if hint.task not in ARXEVAL_TASKS:
        raise ValueError(f"not an ArxEval task: {hint.task!r}")
    floor = float(options.get("floor", ARXEVAL_FLOORS[hint.task]))
    if hint.task == "jumbled":
        hits = list(search(hint.query, 1))
        if not hits or hits[0].coverage < floor:
            return "pass"
        best = hits[0].paper
        return f'"{best.title}". {best.abstract}'
    lines = [
        f"{rank}. Title: {hit.paper.title} DOI: {hit.paper.doi}"
        for rank, hit in enumerate(
            (h for h in search(hint.query, DOIS_ASKED) if h.coverage >= floor and h.paper.doi),
            start=1,
        )
    ]
    return "\n".join(lines) if lines else "pass"
