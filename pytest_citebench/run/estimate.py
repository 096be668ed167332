"""``--collect-only --citebench-estimate``: what a run would call and cost, before it is paid for.

Each selected case's task is run against a stand-in model that always abstains, so an escalating
strategy asks every one of its stages: the count is the most calls the run can make. Prompt tokens
are estimated as characters / 4 (no tokenizer download: tiktoken fetches its tables from the
network) and completion tokens as ``max_tokens`` per call, both upper-end guesses; dollars come
from litellm's local cost map and are "n/a" for models it does not price. RAG context is not
counted (it is retrieved at run time). A tool-using task is counted at its step limit: the
stand-in searches every turn and never cites, so every turn's request (the tools and the
results sent back included) is counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.reports.table import text_table

CHARS_PER_TOKEN = 4


@dataclass
class Estimate:
    """One model's upper-end totals; ``cost`` is None when litellm's cost map lacks the model."""

    model: str
    cases: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0


class _Abstaining:
    """The stand-in model: it abstains when asked for an answer, and in a tool-using task it
    searches on every turn and never cites, so the task takes every turn its limit allows (each
    turn's request counted with the tools and every tool result sent back before it)."""

    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0

    async def __call__(self, messages: Sequence[Any], *, hint: Any) -> str:
        self.calls += 1
        self.chars += sum(len(m.content) for m in messages)
        return "pass"

    async def converse(self, messages: Sequence[Any], *, hint: Any, tools: Sequence[Any]) -> Any:
        import json

        from pytest_citebench.api import Reply, ToolCall
        from pytest_citebench.models.agent import format_action

        self.calls += 1
        self.chars += sum(len(m.content) for m in messages)
        self.chars += len(json.dumps([t.to_openai() for t in tools]))
        query = str(getattr(hint, "query", ""))[:200]
        if not tools:
            return Reply(format_action("search", {"query": query}))
        arguments = json.dumps({"query": query})
        return Reply("", (ToolCall(f"estimate_{self.calls}", "search", arguments),))


async def _calls(job: Any) -> tuple[int, int]:
    generate = _Abstaining()
    try:
        await job.task.solve(job.item, generate, suite_corpus=job.corpus)
    except Exception:  # a task that cannot run offline still makes at least its first call
        generate.calls = max(generate.calls, 1)
    return generate.calls, generate.chars


def estimate(jobs: Sequence[Any]) -> list[Estimate]:
    """Per model: cases, the most calls, tokens in and out, and dollars (None when unknown)."""
    by_model: dict[str, Estimate] = {}

    async def run() -> list[tuple[int, int]]:
        return [await _calls(job) for job in jobs]

    counted = asyncio.run(run())
    for job, (calls, chars) in zip(jobs, counted, strict=True):
        model = job.model
        row = by_model.setdefault(model.name, Estimate(model.name))
        row.cases += 1
        row.calls += calls
        row.prompt_tokens += chars // CHARS_PER_TOKEN
        row.completion_tokens += calls * model.params.max_tokens
    for job in jobs:
        row = by_model[job.model.name]
        if not job.model.traits.priced:
            row.cost = 0.0
    for name, row in by_model.items():
        model = next(j.model for j in jobs if j.model.name == name)
        if model.traits.priced:
            row.cost = _price(model.litellm_model or model.name, row)
    return list(by_model.values())


def _price(model: str, row: Estimate) -> float | None:
    from pytest_citebench.models.litellm_backend import litellm

    try:
        prompt, completion = litellm().cost_per_token(
            model=model,
            prompt_tokens=row.prompt_tokens,
            completion_tokens=row.completion_tokens,
        )
    except Exception:  # not in the local cost map
        return None
    return float(prompt + completion)


def lines(rows: Sequence[Estimate]) -> list[str]:
    """The table printed under ``--collect-only``; its headers say which numbers are bounds."""
    header = ("model", "cases", "calls (at most)", "prompt tok (~)", "completion tok (max)", "USD")
    table = [header] + [
        (
            r.model,
            str(r.cases),
            str(r.calls),
            str(r.prompt_tokens),
            str(r.completion_tokens),
            "n/a" if r.cost is None else f"{r.cost:.4f}",
        )
        for r in rows
    ]
    return text_table(table[0], table[1:], right_from=1)
