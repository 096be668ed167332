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

REASONS_METRICS: Mapping[str, str] = {
    "hr_paper": "hallucination rate, the paper's formula (answered items)",
    "hr_code": "hallucination rate, the REASONS code's |H-R|/|H| (answered items)",
    "f1": "token-set F1 against the gold answer (answered items)",
    "bleu": "BLEU-4, nltk, no smoothing (answered items)",
}

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


class _Reasons:
    """Shared by the REASONS tasks: what the gold is, how an answer is cleaned and compared."""

    name: str
    kind: str  # "direct" (title -> authors) or "indirect" (sentence -> title)
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = REASONS_FIELDS
    metrics = REASONS_METRICS

    def messages(self, item: Item) -> list[Message]:
        if self.kind == "direct":
            return [
                Message("system", DIRECT_SYSTEM.render(cited_title=item["cited_title"])),
                Message("user", DIRECT_USER.render()),
            ]
        return [
            Message("system", INDIRECT_SYSTEM.render(citing_title=item["citing_title"])),
            Message("user", item["sentence"]),
        ]

    def expected(self, item: Item) -> str:
        return str(item["cited_authors"] if self.kind == "direct" else item["cited_title"])

    def parse(self, name: str, raw: str) -> Stage:
        return stage(name, raw, clean_authors if self.kind == "direct" else clean_title)

    def is_correct(self, item: Item, answer: str) -> bool:
        if self.kind == "direct":
            gold = author_keys(item["cited_authors"])
            return bool(gold) and author_keys(answer) == gold
        return normalize(answer) == normalize(item["cited_title"])

    def hint(self, item: Item, corpus: str | None, **extra: str) -> Hint:
        query = item["cited_title"] if self.kind == "direct" else item["sentence"]
        return Hint(self.kind, query, item.suite, corpus, extra)

    async def solve(self, item: Item, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        raw = await generate(self.messages(item), hint=self.hint(item, suite_corpus))
        return Attempt((self.parse(self.kind, raw),))

    def score(self, item: Item, attempt: Attempt) -> ItemScore:
        final = attempt.final
        return _score(self.is_correct(item, final.answer), self.expected(item), final)


class Indirect(_Reasons):
    name = "indirect"
    kind = "indirect"


class Direct(_Reasons):
    name = "direct"
    kind = "direct"


class Escalating(_Reasons):
    """Ask; if the model abstains, ask again in the same conversation with more metadata.

    Deployable by default: only an abstention escalates. ``oracle=True`` is the paper's protocol,
    which also escalates a wrong answer, judged against the gold; that peeks at the answer key,
    so it is its own task name and is labelled in every report.
    """

    def __init__(self, name: str, kind: str, steps: tuple[str, ...], *, oracle: bool) -> None:
        self.name = name
        self.kind = kind
        self.steps = steps
        self.oracle = oracle
        self.stages = (kind, *steps)
        self.fields = {**REASONS_FIELDS, **{f"cited_{s}": str for s in steps}}
        if oracle:
            self.label = (
                "oracle protocol: escalates wrong answers too, judged against the gold "
                "(the paper's rule); not achievable in deployment"
            )

    def _escalate(self, item: Item, current: Stage) -> bool:
        if current.abstained:
            return True
        return self.oracle and not self.is_correct(item, current.answer)

    async def solve(self, item: Item, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        messages = self.messages(item)
        raw = await generate(messages, hint=self.hint(item, suite_corpus))
        stages = [self.parse(self.kind, raw)]
        given: dict[str, str] = {}
        for step in self.steps:
            if not self._escalate(item, stages[-1]):
                break
            template = ESCALATION[(self.kind, step)]
            given[step] = item[f"cited_{step}"]
            messages = [
                *messages,
                Message("assistant", stages[-1].raw),
                Message("user", template.render(value=given[step])),
            ]
            raw = await generate(messages, hint=self.hint(item, suite_corpus, **given))
            stages.append(self.parse(step, raw))
        return Attempt(tuple(stages))


# The follow-up turns, worded as the REASONS code words them.
ESCALATION = {
    ("direct", "abstract"): NamedTemplate(
        "reasons.direct.abstract",
        "let me give you some more context by providing the abstract of the research paper. $value",
    ),
    ("indirect", "abstract"): NamedTemplate(
        "reasons.sid.abstract",
        "let me give you some more context by providing the abstract of the research paper it is "
        "citing to. $value",
    ),
    ("indirect", "authors"): NamedTemplate(
        "reasons.sid.authors",
        "let me give you some more context by providing the author names of the research paper "
        "it is citing to. $value",
    ),
}

TASKS = (
    Indirect(),
    Direct(),
    Escalating("direct_metadata", "direct", ("abstract",), oracle=False),
    Escalating("direct_metadata_oracle", "direct", ("abstract",), oracle=True),
    Escalating("sid", "indirect", ("abstract", "authors"), oracle=False),
    Escalating("sid_oracle", "indirect", ("abstract", "authors"), oracle=True),
)
for _task in TASKS:
    registry.register(_task)
