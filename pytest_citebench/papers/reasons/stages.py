"""One REASONS stage as the tasks read it: the model's call with the papers a retrieval wrapper
showed, the stage parsed from the raw reply (inside its envelope), and what the record keeps
beside it; the answers' text metrics; when a reply is one the rules could not read; and the
fields a REASONS item holds, with the sample item ``new-suite`` writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import (
    Generate,
    Hint,
    Message,
    ScoredStage,
    ShownPaper,
    Stage,
    papers_shown,
)
from pytest_citebench.metrics.attribution import bleu4, token_f1
from pytest_citebench.metrics.hallucination import hr_code, hr_paper
from pytest_citebench.papers.reasons.authors import compare_authors, parse_authors
from pytest_citebench.papers.reasons.ranks import SHOWN_KEY
from pytest_citebench.parsing import has_letters, is_abstention
from pytest_citebench.parsing.envelope import unwrap

#: The reason an unanswered verdict starts with when the rules could not read the reply.
NOT_READ = "not read"
# The unanswered reasons that mean "named nothing the rules could read", as opposed to an echo,
# a placeholder or an empty reply, which are the model's own failures.
_UNREAD_REASONS = (
    "written in another script",
    "a sentence, not a title",
    "nothing name-like left",
    "no title-like span",
    "no name-like span",
)


_LATIN_NAME_RUN = re.compile(r"[A-Z][\w'’\-]+(?:[\s,:]+[A-Za-z][\w'’\-]+){1,}")


def _latin_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    latin = sum(c.isascii() or "\u00c0" <= c <= "\u024f" for c in letters)
    return latin / len(letters) if letters else 1.0


def _other_script(raw: str) -> bool:
    """A reply written mostly in another script (Cyrillic, CJK, ...) with no run of Latin
    words in it (a title or names kept in Latin, as the prompt's language would write them):
    the rules read Latin titles and names only, so it is *unanswered*, never a guess at a
    title (scorer 5; "「Trust Region Policy Optimization」です" is read, it holds one)."""
    return _latin_share(raw) < 0.5 and _LATIN_NAME_RUN.search(raw) is None


def _not_read(raw: str, reason: str) -> bool:
    """An unanswered reply of substance (twelve words or more, or mostly in a non-Latin script)
    whose reason is that nothing readable was found in it: the style defeated the rules."""
    if not reason.startswith(_UNREAD_REASONS):
        return False
    return len(raw.split()) >= 12 or _latin_share(raw) < 0.7


REASONS_FIELDS: Mapping[str, type | tuple[type, ...]] = {
    "citing_title": str,
    "sentence": str,
    "cited_title": str,
    "cited_authors": str,
}

#: The sample ``new-suite`` writes for every REASONS task (one item serves all six, so it carries
#: the escalations' abstract and the retrieval ids too); a real paper, so bm25 can answer it.
EXAMPLE: Mapping[str, Any] = {
    "citing_title": "An Example Survey of Sequence Models",
    "sentence": "a network architecture based solely on attention mechanisms, dispensing with "
    "recurrence and convolutions",
    "cited_title": "Attention Is All You Need",
    "cited_authors": "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones, "
    "Aidan N. Gomez, Lukasz Kaiser, Illia Polosukhin",
    "cited_abstract": "We propose the Transformer, a network architecture based solely on "
    "attention mechanisms, dispensing with recurrence and convolutions entirely, for machine "
    "translation.",
    "cited_arxiv_id": "1706.03762",
    "cited_doi": "10.48550/arXiv.1706.03762",
}


def text_metrics(expected: str, answer: str, *, exact: bool | None = None) -> dict[str, float]:
    """The paper's four per-answer numbers; only for answers that name something (correct,
    partial, hallucinated), never for an empty parse: an empty answer would read as "nothing
    invented" (hr_code 0) beside "all wrong" (hr_paper 1)."""
    if not has_letters(answer):
        return {}
    return {
        "bleu": bleu4(expected, answer),
        "f1": token_f1(expected, answer),
        "hr_paper": hr_paper(expected, answer, exact=exact),
        "hr_code": hr_code(expected, answer),
    }


def same_authors(answer: str, gold: str) -> bool:
    """The same set of people, in any order, spelling or initialling."""
    persons = parse_authors(answer).persons
    gold_persons = parse_authors(gold).persons
    verdict = compare_authors(persons, gold_persons)
    return bool(gold_persons) and not verdict.invented and verdict.matched == len(gold_persons)


def stage(name: str, raw: str, clean: object, prefer: tuple[str, ...] = ()) -> Stage:
    """A stage from raw text: "pass" when the model abstained, else the cleaned answer (both
    read inside the reply's envelope: a ``<think>`` block, ``<answer>`` tags, JSON)."""
    text = unwrap(raw, prefer).text
    abstained = is_abstention(text)
    answer = "pass" if abstained else clean(text)  # type: ignore[operator]
    return Stage(name=name, raw=raw, answer=answer, abstained=abstained)


async def ask(
    generate: Generate, messages: Sequence[Message], hint: Hint
) -> tuple[str, list[ShownPaper]]:
    """One model call, with the papers a retrieval wrapper numbered in its prompt (none without
    one): a reply may cite them by number (``ranks``)."""
    with papers_shown() as shown:
        raw = await generate(messages, hint=hint)
    return raw, list(shown)


def with_shown(parsed: Stage, shown: Sequence[ShownPaper]) -> Stage:
    """The stage with the papers its prompt showed kept beside its raw text, so that a rescore,
    which calls no model, still knows what "[2]" was."""
    if not shown:
        return parsed
    details = {SHOWN_KEY: [p.to_json() for p in shown]}
    return ScoredStage(parsed.name, parsed.raw, parsed.answer, parsed.abstained, details)
