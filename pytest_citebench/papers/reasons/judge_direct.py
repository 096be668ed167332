"""REASONS direct: a reply naming the authors of a cited title, judged against the gold authors.

The rules (docs/outcomes.md) are the functions of ``RULES``, tried in order: a reply that names
nobody (a template placeholder, the title repeated, an echo of the prompt) is *unanswered*; one
author not in the gold makes it *hallucinated*; the same set is *correct*, a subset *partial*.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from pytest_citebench.api import Sample
from pytest_citebench.metrics.text import normalize
from pytest_citebench.papers.reasons.authors import (
    AuthorList,
    AuthorVerdict,
    compare_authors,
    parse_authors,
    same_person,
)
from pytest_citebench.papers.reasons.echoes import echoes
from pytest_citebench.papers.reasons.identifiers import with_ids
from pytest_citebench.papers.reasons.judgement import Judgement, Rule, first_judgement, short
from pytest_citebench.parsing import clean_authors, final_text, has_letters, is_placeholder
from pytest_citebench.parsing import find_title as _find_title
from pytest_citebench.parsing.names import bare_names


@dataclass(frozen=True)
class AuthorsReply:
    """One raw reply to a direct prompt and what the rules read of it, each read once."""

    item: Sample
    raw: str
    sources: Sequence[str]
    instructions: Sequence[str]
    corpus: frozenset[str] = frozenset()
    corpus_tails: frozenset[str] = frozenset()

    @cached_property
    def text(self) -> str:
        """The names around the cited title: before it (a reference string), or after it
        ("<title> by A, B", 'The research paper "<title>" was authored by Dr. A, a ...',
        '... are:\\n- A')."""
        return clean_authors(self.raw, self.item["cited_title"])

    @cached_property
    def final(self) -> str:
        """The reply's last word on it (a revised answer replaces the first)."""
        return final_text(self.raw)

    @cached_property
    def names(self) -> str:
        """The cleaned text without empty ``<>`` placeholders."""
        return re.sub(r"(?:^|,\s*)<>(?=,|$)", "", self.text).strip(" ,")

    @cached_property
    def listed_first(self) -> AuthorList | None:
        """The names of a reply that lists them, then gives the paper as a formatted reference
        ("A, B, C\n\nReference: A, et al. (2017) 'Title' ..."): the list is the answer, which
        the reference's "et al." does not shorten; None for any other reply."""
        paragraphs = [p for p in re.split(r"\n[ \t]*\n", self.final.strip()) if p.strip()]
        if len(paragraphs) < 2 or not bare_names(paragraphs[0].strip()):
            return None
        title_words = tuple(normalize(self.item["cited_title"]).split())
        if not title_words or not any(_find_title(title_words, p) for p in paragraphs[1:]):
            return None
        return parse_authors(clean_authors(paragraphs[0]))

    @cached_property
    def parsed(self) -> AuthorList:
        read = parse_authors(self.text)
        listed = self.listed_first
        if listed is None or not listed.persons:
            return read
        # The reference's people are given too: one the list does not name is judged.
        more = tuple(p for p in read.persons if not any(same_person(p, q) for q in listed.persons))
        return AuthorList(listed.persons + more, listed.et_al, listed.junk)

    @cached_property
    def verdict(self) -> AuthorVerdict:
        gold = parse_authors(self.item["cited_authors"]).persons
        return compare_authors(self.parsed.persons, gold)

    @cached_property
    def answer(self) -> str:
        """The names as the metrics read them."""
        persons = ", ".join(p.text for p in self.parsed.persons)
        return persons + (", et al." if self.parsed.et_al else "")


def only_a_placeholder(r: AuthorsReply) -> Judgement | None:
    if not has_letters(r.names) and ("<>" in r.text or is_placeholder(r.final)):
        return Judgement("unanswered", f"template placeholder: {short(r.final)}", "")
    return None


def repeats_the_cited_title(r: AuthorsReply) -> Judgement | None:
    title_words = tuple(normalize(r.item["cited_title"]).split())
    if not has_letters(r.names) and title_words and _find_title(title_words, r.final):
        return Judgement("unanswered", "repeats the cited title, names no author", "")
    return None


def nothing_name_like(r: AuthorsReply) -> Judgement | None:
    if not has_letters(r.names):
        return Judgement("unanswered", "nothing name-like left after cleaning", "")
    return None


def echoes_the_prompt(r: AuthorsReply) -> Judgement | None:
    if echoes(r.names, r.sources, r.instructions):
        return Judgement("unanswered", f"echoes the prompt: {short(r.names)}", "")
    return None


def placeholder_among_words(r: AuthorsReply) -> Judgement | None:
    if not r.parsed.persons and "<>" in r.text:
        return Judgement("unanswered", f"template placeholder: {short(r.final)}", "")
    return None


def no_name_like_span(r: AuthorsReply) -> Judgement | None:
    if not r.parsed.persons:
        return Judgement("unanswered", f"no name-like span: {short(r.names)}", "")
    return None


def invents_authors(r: AuthorsReply) -> Judgement | None:
    verdict = r.verdict
    if not verdict.invented:
        return None
    shown = [
        name + (f" (repeated {n} times)" if n > 1 else "")
        for name, n in zip(verdict.invented, verdict.repeats or (1,) * 99, strict=False)
    ]
    names_shown = ", ".join(shown[:4]) + (", …" if len(shown) > 4 else "")
    return Judgement(
        "hallucinated",
        f"{len(verdict.invented)} author(s) not in the gold: {names_shown}",
        r.answer,
        wrong_authors=verdict.invented,
    )


def _whole_title(tail: str, corpus: frozenset[str]) -> str | None:
    return next((t for t in sorted(corpus) if t.endswith(" " + tail)), None)


def credits_them_to_another_paper(r: AuthorsReply) -> Judgement | None:
    """The names laid out as a reference, another paper's title on the line right after them
    (SmolLM2 under RAG: "<the gold authors>\nTransformer Generators with Convolutional
    Discriminators\n2019-08-31 ..."): the reply gives them as that paper's authors, a wrong
    citation whoever they are. Only a whole line that is the title of a paper of the suite's
    corpus (or that title without its first word or two), not the asked one, right under a line
    of names, counts: an aside in prose about another paper, or a title set apart by a blank
    line (a heading for the retrieved context pasted back), is not judged."""
    if not r.corpus:
        return None
    cited = normalize(str(r.item["cited_title"]))
    lines = r.final.splitlines()
    for before, line in zip(["", *lines], lines, strict=False):
        if not bare_names(before.strip().rstrip(",")):
            continue  # a reference line follows its names at once; a block of its own does not
        title = normalize(line.strip(" *_\"'“”.,;:"))
        known = title in r.corpus or title in r.corpus_tails
        if title and title != cited and known and len(title.split()) >= 3:
            # Cut at its start, it names the corpus paper whose title it ends: that one's kind.
            whole = title if title in r.corpus else _whole_title(title, r.corpus)
            return Judgement(
                "hallucinated",
                f"gives the names as another paper's authors: {short(line.strip())}",
                r.answer,
                wrong_title=whole or line.strip(),
            )
    return None


def names_every_gold_author(r: AuthorsReply) -> Judgement | None:
    if r.verdict.matched == r.verdict.gold:
        return Judgement("correct", f"the same {r.verdict.gold} author(s) as the gold", r.answer)
    return None


def names_some_gold_authors(r: AuthorsReply) -> Judgement:
    """The last rule: real gold authors, none invented, not all of them."""
    et_al = ' with "et al."' if r.parsed.et_al else ""
    return Judgement(
        "partial",
        f"names {r.verdict.matched} of {r.verdict.gold} gold authors{et_al}, none invented",
        r.answer,
    )


#: In order; the first that judges the reply wins, and the last judges every reply.
RULES: tuple[Rule[AuthorsReply], ...] = (
    only_a_placeholder,
    repeats_the_cited_title,
    nothing_name_like,
    echoes_the_prompt,
    placeholder_among_words,
    no_name_like_span,
    invents_authors,
    credits_them_to_another_paper,
    names_every_gold_author,
    names_some_gold_authors,
)


def judge_direct(
    item: Sample,
    raw: str,
    sources: Sequence[str],
    instructions: Sequence[str],
    corpus: frozenset[str] = frozenset(),
    corpus_tails: frozenset[str] = frozenset(),
) -> Judgement:
    """The outcome of a direct reply that is not a 'pass', its identifiers checked; ``corpus``
    holds the normalized titles of the suite's corpus and ``corpus_tails`` those titles cut at
    their start (a line naming one is read)."""
    reply = AuthorsReply(item, raw, sources, instructions, corpus, corpus_tails)
    judgement = first_judgement(RULES, reply)
    return with_ids(judgement, item, final_text(raw))
