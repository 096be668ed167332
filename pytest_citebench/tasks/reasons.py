"""REASONS (Saxena et al.): sentence-level citation attribution.

*direct*: given a cited paper's title, name its authors. *indirect*: given the citing paper's title
and one sentence of its related work, name the cited paper's title. Both allow "pass". The prompts
follow the paper and its public code word for word where they can, so numbers stay comparable.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from pytest_citebench.metrics.attribution import bleu4, token_f1
from pytest_citebench.metrics.hallucination import hr_code, hr_paper
from pytest_citebench.metrics.text import normalize
from pytest_citebench.suites import Item
from pytest_citebench.tasks import registry
from pytest_citebench.tasks.base import (
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    NamedTemplate,
    Stage,
)
from pytest_citebench.tasks.parsing import clean_authors, clean_title, is_abstention

PAPER = "REASONS: Saxena et al., Attribution in Scientific Literature: New Benchmark and Methods"

INDIRECT_SYSTEM = NamedTemplate(
    "reasons.indirect.system",
    'I have taken a sentence from the research paper titled "$citing_title", give me the title '
    "of the possible research paper that this sentence is citing to. If you are not able to come "
    "up with the paper title write 'pass'. Don't write anything else.",
)
DIRECT_SYSTEM = NamedTemplate(
    "reasons.direct.system", 'Who were the authors of the research paper "$cited_title"'
)
DIRECT_USER = NamedTemplate(
    "reasons.direct.user",
    "list only author names, formatted as <first name><last name>, separated by comma. Do not "
    "mention the paper in the title, also if you don't know write 'pass'.",
)

REASONS_FIELDS: Mapping[str, type | tuple[type, ...]] = {
    "citing_title": str,
    "sentence": str,
    "cited_title": str,
    "cited_authors": str,
}


def text_metrics(expected: str, answer: str) -> dict[str, float]:
    """The paper's four per-answer numbers; only computed for answers that did not abstain."""
    return {
        "bleu": bleu4(expected, answer),
        "f1": token_f1(expected, answer),
        "hr_paper": hr_paper(expected, answer),
        "hr_code": hr_code(expected, answer),
    }


def _score(correct: bool, expected: str, stage: Stage) -> ItemScore:
    if stage.abstained:
        return ItemScore("abstained", expected, {})
    return ItemScore(
        "correct" if correct else "hallucinated", expected, text_metrics(expected, stage.answer)
    )


def _name_key(name: str) -> str:
    """'Myléne Mathieu' and 'M. Mathieu' both become 'm mathieu'."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    tokens = re.findall(r"[a-z]+", ascii_name.lower())
    if not tokens:
        return ""
    return f"{tokens[0][0]} {tokens[-1]}" if len(tokens) > 1 else tokens[0]


def author_keys(authors: str) -> frozenset[str]:
    """An author list as a set of (first initial, surname) keys; order and accents don't count."""
    authors = re.sub(r"\bet\.?\s+al\b\.?", " ", authors)
    parts = re.split(r",|;|\band\b|&|\n", authors)
    return frozenset(k for k in (_name_key(p) for p in parts) if k)


def stage(name: str, raw: str, clean: object) -> Stage:
    abstained = is_abstention(raw)
    answer = "pass" if abstained else clean(raw)  # type: ignore[operator]
    return Stage(name=name, raw=raw, answer=answer, abstained=abstained)


class Indirect:
    name = "indirect"
    paper = PAPER
    fields = REASONS_FIELDS

    def messages(self, item: Item) -> list[Message]:
        return [
            Message("system", INDIRECT_SYSTEM.render(citing_title=item["citing_title"])),
            Message("user", item["sentence"]),
        ]

    async def solve(self, item: Item, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        hint = Hint(self.name, item["sentence"], item.suite, suite_corpus)
        raw = await generate(self.messages(item), hint=hint)
        return Attempt((stage("indirect", raw, clean_title),))

    def score(self, item: Item, attempt: Attempt) -> ItemScore:
        expected = item["cited_title"]
        final = attempt.final
        return _score(normalize(final.answer) == normalize(expected), expected, final)


class Direct:
    name = "direct"
    paper = PAPER
    fields = REASONS_FIELDS

    def messages(self, item: Item) -> list[Message]:
        return [
            Message("system", DIRECT_SYSTEM.render(cited_title=item["cited_title"])),
            Message("user", DIRECT_USER.render()),
        ]

    async def solve(self, item: Item, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        hint = Hint(self.name, item["cited_title"], item.suite, suite_corpus)
        raw = await generate(self.messages(item), hint=hint)
        return Attempt((stage("direct", raw, clean_authors),))

    def score(self, item: Item, attempt: Attempt) -> ItemScore:
        expected = item["cited_authors"]
        final = attempt.final
        gold = author_keys(expected)
        return _score(bool(gold) and author_keys(final.answer) == gold, expected, final)


registry.register(Indirect())
registry.register(Direct())
