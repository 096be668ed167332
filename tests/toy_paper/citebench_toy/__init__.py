"""A paper from outside pytest-citebench, as a third-party package would add one.

Nothing in pytest_citebench names it: it is found through the entry-point group
``pytest_citebench.tasks`` declared in ``citebench_toy-0.1.dist-info/entry_points.txt`` (what
``pip install`` writes from a ``[project.entry-points."pytest_citebench.tasks"]`` table). One
task, its own offline answer (so the built-in model runs it with no corpus), a report section
and a command: every hook a paper uses, in one file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import (
    Aggregate,
    Attempt,
    Command,
    FieldType,
    Generate,
    Hint,
    ItemScore,
    Message,
    MetricSpec,
    NamedTemplate,
    Paper,
    Records,
    Sample,
    Search,
    Section,
    Stage,
    Task,
)

PROMPT = NamedTemplate("toy.echo", "Give the exact title of the paper about: $topic")


class Echo(Task):
    """Name the paper on a topic; the built-in model "knows" only titles without a '?'."""

    name = "toy_echo"
    paper = "Toy: a third-party paper"
    fields: Mapping[str, FieldType] = {"topic": str, "title": str}
    metrics: Mapping[str, MetricSpec] = {
        "exact": MetricSpec("1 when the answer is the gold title", higher_is_better=True)
    }
    scorer_version = "1"
    example: Mapping[str, Any] = {"topic": "attention", "title": "Attention Is All You Need"}

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        prompt = PROMPT.render(topic=item["topic"])
        hint = Hint(self.name, item["title"], item.suite, suite_corpus)
        raw = await generate([Message("user", prompt)], hint=hint)
        answer = raw.strip()
        return Attempt((Stage(self.name, raw, answer, answer.lower() == "pass"),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        final = attempt.final
        if final.abstained:
            return ItemScore("abstained", item["title"], {}, "passed")
        exact = final.answer == item["title"]
        outcome = "correct" if exact else "hallucinated"
        reason = "the gold title" if exact else f"names another title: {final.answer}"
        return ItemScore(outcome, item["title"], {"exact": float(exact)}, reason)

    def offline_answer(
        self, kind: str, hint: Hint, options: Mapping[str, Any], search: Search
    ) -> str | None:
        if "?" in hint.query:
            return "pass"
        return hint.query if not hint.query.startswith("Wrong") else "A Made-Up Title"


def sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    rows = tuple(
        (a.suite, a.model, str(a.counts.get("correct", 0)), str(len(records)))
        for a in aggregates
        if a.task == Echo.name and a.stage is None
    )
    if not rows:
        return []
    return [Section("toy", "Toy echo table", ("suite", "model", "correct", "records"), rows)]


def _hello(argv: list[str]) -> int:
    print("toy says hello", *argv)
    return 0


PAPER = Paper(
    name="toy",
    title=Echo.paper,
    tasks=(Echo(),),
    sections=sections,
    commands=(Command("toy-hello", "print a greeting", _hello),),
)
