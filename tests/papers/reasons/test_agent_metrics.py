"""The agent's numbers: hand-computed golden values, properties over random trajectories, the
text protocol's parser, bad calls, and the estimate counting every turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_citebench.api import Hint, Message, Reply, Sample, ToolCall, ToolSpec
from pytest_citebench.metrics.stats import wilson_ci
from pytest_citebench.models.agent import format_action, parse_action
from pytest_citebench.papers.reasons.agent_library import arxiv_year, fuse
from pytest_citebench.papers.reasons.agent_metrics import (
    Trace,
    agent_metrics,
    agent_set_metrics,
    steps_histogram,
)
from pytest_citebench.papers.reasons.agentic import Agentic, AgenticText

GOLD = ("1706.03762", "Attention Is All You Need")


def test_golden_values_of_one_trajectory() -> None:
    trace = Trace(
        steps=4,
        ended="cite",
        calls=[
            {"tool": "search", "ok": True, "shown": [["1810.04805", "BERT"], list(GOLD)]},
            {"tool": "read", "ok": True, "id": "1810.04805", "title": "BERT"},
            {"tool": "fetch", "ok": False, "bad": True},
            {"tool": "read", "ok": False, "bad": True},
            {"tool": "cite", "ok": True, "id": "1810.04805"},
        ],
        cited={"id": "1810.04805", "title": "BERT"},
    )
    assert agent_metrics(trace, gold_id=GOLD[0], gold_title=GOLD[1], correct=False) == {
        "steps": 4.0,
        "searches": 1.0,
        "reads": 1.0,
        "gold_shown": 1.0,
        "gold_read": 0.0,
        "found_not_chosen": 1.0,
        "cited_unseen": 0.0,
        "bad_calls": 2.0,
        "unfinished": 0.0,
    }


def test_a_title_from_memory_is_cited_unseen_and_a_limit_unfinished() -> None:
    memory = Trace(steps=1, ended="cite", cited={"id": None, "title": GOLD[1]})
    numbers = agent_metrics(memory, gold_id=GOLD[0], gold_title=GOLD[1], correct=True)
    assert (numbers["cited_unseen"], numbers["gold_shown"], numbers["found_not_chosen"]) == (
        1.0,
        0.0,
        0.0,
    )
    # A pass is no citation; the step limit leaves the item unfinished.
    passed = Trace(steps=2, ended="cite", cited={"id": None, "title": "pass"})
    assert agent_metrics(passed, gold_id=None, gold_title=GOLD[1], correct=False)[
        "cited_unseen"
    ] == (0.0)
    limit = Trace(steps=8, ended="steps")
    assert agent_metrics(limit, gold_id=None, gold_title=GOLD[1], correct=False)["unfinished"] == 1


def test_set_metrics_are_shares_with_wilson_cis_and_means_over_every_scored_item() -> None:
    records = [
        {"metrics": {"gold_shown": 1.0, "steps": 3.0}},
        {"metrics": {"gold_shown": 0.0, "steps": 5.0}},
        {"metrics": {"gold_shown": 1.0, "steps": 4.0}},
        {"metrics": {}},  # scored before the agent's numbers existed: not counted
    ]
    stats = agent_set_metrics(records)
    assert stats["gold_shown"].value == pytest.approx(2 / 3)
    assert (stats["gold_shown"].lo, stats["gold_shown"].hi) == pytest.approx(wilson_ci(2, 3))
    assert stats["steps"].value == 4.0 and stats["steps"].n == 3
    assert stats["steps"].lo <= 4.0 <= stats["steps"].hi
    assert steps_histogram(records) == {3: 1, 4: 1, 5: 1}


papers = st.tuples(st.sampled_from(["a", "b", GOLD[0]]), st.sampled_from(["A", "B", GOLD[1]]))
calls = st.one_of(
    st.builds(
        lambda s: {"tool": "search", "ok": True, "shown": [list(p) for p in s]},
        st.lists(papers, max_size=3),
    ),
    st.builds(lambda p: {"tool": "read", "ok": True, "id": p[0], "title": p[1]}, papers),
    st.just({"tool": "nope", "ok": False, "bad": True}),
)


@given(
    st.lists(calls, max_size=6),
    st.one_of(st.none(), papers),
    st.booleans(),
    st.sampled_from(["cite", "text", "steps", "tokens"]),
)
def test_properties_of_the_funnel(
    made: list[dict[str, Any]], cited: Any, correct: bool, ended: str
) -> None:
    trace = Trace(steps=len(made) + 1, ended=ended, calls=made)
    if cited is not None:
        trace.cited = {"id": cited[0], "title": cited[1]}
    m = agent_metrics(trace, gold_id=GOLD[0], gold_title=GOLD[1], correct=correct)
    assert m["gold_read"] <= m["gold_shown"]  # a read shows what it reads
    assert m["found_not_chosen"] <= m["gold_shown"]
    assert m["found_not_chosen"] == (m["gold_shown"] and not correct)
    assert m["bad_calls"] + m["searches"] + m["reads"] == len(made)
    assert m["unfinished"] == (ended in ("steps", "tokens"))
    if cited is not None and any(cited == tuple(p) for c in made for p in c.get("shown", [])):
        assert m["cited_unseen"] == 0


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ('{"tool": "search", "query": "attention"}', ("search", '{"query": "attention"}')),
        ('I will read it.\n```json\n{"tool": "read", "id": "1"}\n```', ("read", '{"id": "1"}')),
        ("Attention Is All You Need", None),
        ('{"query": "no tool named"}', None),
    ],
)
def test_the_text_protocol_reads_one_action(text: str, parsed: Any) -> None:
    assert parse_action(text) == parsed
    if parsed is not None:
        assert parse_action(format_action(parsed[0], json.loads(parsed[1]))) == parsed


def test_arxiv_years_and_rank_fusion() -> None:
    assert (arxiv_year("0912.3995"), arxiv_year("hep-th/9901001"), arxiv_year("W1")) == (
        2009,
        1999,
        None,
    )
    # c: 1/63 + 1/61 = 0.032266; b: 2/62 = 0.032258; a: 1/61 = 0.016393.
    assert fuse([["a", "b", "c"], ["c", "b"]], 2) == ["c", "b"]


ITEM = Sample(
    "tiny",
    "x",
    {
        "citing_title": "A Survey",
        "sentence": "attention only",
        "cited_title": GOLD[1],
        "cited_authors": "Ashish Vaswani",
        "cited_arxiv_id": GOLD[0],
    },
    1,
)


class Library:
    def search(self, query: str, k: int) -> list[Any]:
        from pytest_citebench.papers.reasons.agent_library import Found

        return [Found(GOLD[0], GOLD[1], "Ashish Vaswani", 2017)]

    def read(self, paper_id: str) -> Any:
        return self.search("", 1)[0] if paper_id == GOLD[0] else None


def converse_with(replies: Sequence[Reply], seen: list[list[Message]]) -> Any:
    queue = list(replies)

    async def converse(
        messages: Sequence[Message], *, hint: Hint, tools: Sequence[ToolSpec]
    ) -> Reply:
        seen.append(list(messages))
        return queue.pop(0)

    return converse


def test_bad_calls_are_answered_counted_and_the_conversation_goes_on() -> None:
    seen: list[list[Message]] = []
    replies = [
        Reply("", (ToolCall("1", "browse", "{}"), ToolCall("2", "search", "not json"))),
        Reply("", (ToolCall("3", "search", '{"query": ""}'),)),
        Reply("", (ToolCall("4", "cite", json.dumps({"id": GOLD[0]})),)),
    ]
    task = Agentic()
    trace = asyncio.run(
        task.run_agent(ITEM, converse_with(replies, seen), Library(), task.hint(ITEM, None))
    )
    assert (trace.steps, trace.ended, trace.cited) == (3, "cite", {"id": GOLD[0], "title": GOLD[1]})
    assert sum(1 for c in trace.calls if c.get("bad")) == 3
    results = [m for m in seen[1] if m.role == "tool"]
    assert [m.tool_call_id for m in results] == ["1", "2"]
    assert "unknown tool 'browse'" in results[0].content
    assert "could not read the arguments of search" in results[1].content
    # Cited by id, never shown by a search: from memory.
    assert (
        agent_metrics(trace, gold_id=GOLD[0], gold_title=GOLD[1], correct=True)["cited_unseen"]
        == 1.0
    )


def test_text_protocol_malformed_action_then_a_limit() -> None:
    seen: list[list[Message]] = []
    replies = [Reply('{"tool": "search", query}'), Reply(format_action("search", {"query": "q"}))]
    task = AgenticText()
    from pytest_citebench.papers.reasons import agent_options

    old = agent_options.SETTINGS.steps
    agent_options.SETTINGS.steps = 2
    try:
        trace = asyncio.run(
            task.run_agent(ITEM, converse_with(replies, seen), Library(), task.hint(ITEM, None))
        )
    finally:
        agent_options.SETTINGS.steps = old
    assert (trace.steps, trace.ended) == (2, "steps")
    assert seen[1][-1].role == "user" and "could not read an action" in seen[1][-1].content
    assert "Result of search:" not in seen[1][-1].content
    assert "search" in seen[0][0].content and "JSON object" in seen[0][0].content


def _scored_text_answer(task: Agentic, item: Sample, reply: str) -> Any:
    """How ``task`` scores a one-turn trajectory whose model answered ``reply`` in text, no call."""
    from pytest_citebench.api import Attempt, ScoredStage
    from pytest_citebench.papers.reasons.agent_metrics import TRACE_KEY

    trace = Trace(steps=1, ended="text", cited={"text": reply})
    first = task.parse(task.name, reply)
    final = ScoredStage(
        first.name, first.raw, first.answer, first.abstained, {TRACE_KEY: trace.to_json()}
    )
    return task.score(item, Attempt((final,), corpus=None))


@pytest.mark.parametrize("task", [Agentic(), AgenticText()])
def test_a_text_answer_that_repeats_the_tools_text_is_an_echo(task: Agentic) -> None:
    # SmolLM2-135M on agentic_text, reasons/nlp 2212.06972v2-s8, its whole reply: the last line
    # of the tools' text. Read as a title not the gold (hallucinated) while the tools' text was
    # not among the prompt's instructions; what the model was shown is an echo.
    reply = "The result of each action comes back in the next message."
    scored = _scored_text_answer(task, ITEM, reply)
    if task.protocol == "text":
        assert scored.outcome == "unanswered", scored.reason
        assert "echoes the prompt" in scored.reason
    else:  # under function calling the model was never shown that text
        assert scored.outcome == "hallucinated", scored.reason


GEMMA_ECHO = (
    '\n[INST] <<SYS>>\nI have taken a sentence from the research paper titled "A Survey of the '
    'Usages of Deep Learning in Natural Language Processing". Find the research paper this '
    "sentence is citing. You can search a library of research papers, read a paper's abstract, "
    "and then cite the paper: by its id from a search, or by its title if you know it otherwise. "
    "If you cannot find it, cite the title 'pass'.\n<</SYS>> achieved state ofart in QA "
    "experiments on SQuAD 1.1 and SQuAD 2.0 datasets. Yang et al.  [/INST]\n"
)


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        # Gemma 3 270M on agentic, reasons/nlp 1807.10854v3-s239 (its reply, cut): the agent's
        # system turn echoed whole, its 'pass' the instructions' own. It had read as abstained.
        (GEMMA_ECHO * 2, "unanswered"),
        # 1811.08619v2-s48's (its end): the instructions without the citing title, so the quoted
        # 'pass' rule reads it first. It had read as abstained too.
        (
            "Find the research paper this sentence is citing. You can search a library of "
            "research papers, read a paper's abstract, and then cite the paper: by its id from a "
            "search, or by its title if you know it otherwise. If you cannot find it, cite the "
            "title 'pass'.\n<",
            "unanswered",
        ),
        # The citing title echoed, then the model's own 'pass': still a pass.
        (
            'The sentence is from "A Survey of the Usages of Deep Learning in Natural Language '
            "Processing\". I cannot find the cited paper, so: 'pass'",
            "abstained",
        ),
        # SmolLM2-135M's form (reasons/adversarial 1801.06353v4-s21, indirect): the question's
        # words, then its own answer "Pass": a pass, though it repeats the instructions.
        (
            'The sentence is referencing a paper titled "A Survey of the Usages of Deep Learning '
            'in Natural Language Processing" and the title of the possible research paper that '
            'this sentence is citing to is "Pass".',
            "abstained",
        ),
    ],
)
def test_a_pass_copied_with_the_instructions_is_an_echo_not_a_pass(
    reply: str, outcome: str
) -> None:
    task = Agentic()
    item = Sample(
        "reasons/nlp",
        "1807.10854v3-s239",
        {
            "citing_title": "A Survey of the Usages of Deep Learning in Natural Language Processing",
            "sentence": "achieved state ofart in QA experiments on SQuAD 1.1 and SQuAD 2.0 "
            "datasets. Yang et al.",
            "cited_title": "End-to-End Open-Domain Question Answering with BERTserini",
            "cited_authors": "Wei Yang",
            "cited_arxiv_id": "1902.01718",
        },
        1,
    )
    scored = _scored_text_answer(task, item, reply)
    assert scored.outcome == outcome, scored.reason


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        # Gemma 3 270M on agentic_text, reasons/nlp 1812.05634v2-s29, its whole reply: a tag.
        ('<img src="https://i.imgur.com/2416308.png">', "unanswered"),
        # A title inside markup is still read.
        ("<b>Attention Is All You Need</b>", "correct"),
    ],
)
def test_markup_alone_names_no_paper(reply: str, outcome: str) -> None:
    task = AgenticText()
    scored = _scored_text_answer(task, ITEM, reply)
    assert scored.outcome == outcome, scored.reason


def test_a_quoted_sentence_opened_by_a_connective_is_no_title() -> None:
    # SmolLM2-135M on agentic, reasons/nlp 2308.14089v2-s27 (its reply's end): a rephrasing of
    # the prompt's sentence, quoted, had read as a title that is not the gold (hallucinated).
    reply = (
        "The sentence is not entirely incorrect. The original text implies that the use of EHRs "
        "as context for question generation limits scalability.\n\nThe original text could have "
        'been rephrased to avoid this ambiguity: "However, requiring EHRs as context for '
        'question generation limits scalability" instead of "This sentence is not entirely '
        'incorrect." The revised sentence would be: "However, requiring EHRs as context for '
        'question generation limits scalability"'
    )
    task = Agentic()
    scored = _scored_text_answer(task, ITEM, reply)
    assert scored.outcome == "unanswered", scored.reason
