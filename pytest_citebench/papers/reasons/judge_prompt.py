"""The judge model's prompt, written once and versioned, and the reading of its reply.

The prompt gives a judge model what the human readers of the adjudicated corpus see
(``fixtures/answers/frontier/labelling.md``): the question as sent, what it asks (a title or an
author list), the gold, the model's answer and the outcome definitions; it asks for one JSON
object ``{"outcome", "answer", "why"}``. Pure (no pytest, no litellm): the plugin
(``judge_model``) and the measurement scripts (``fixtures/answers/judge/``) build the same
messages from here.

Bump :data:`JUDGE_PROMPT` (``reasons-judge-v1``) with any change to the wording: the prompt's name
is in every judged record's reason, and a changed prompt sends other requests, so recorded
cassettes miss (an error) rather than replay another prompt's verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_citebench.api import Message, NamedTemplate

#: The prompt's name and version, as records and docs cite it.
JUDGE_PROMPT = "reasons-judge-v1"
#: The outcomes a judge may give (an ``error`` is never a judge's to give).
JUDGE_OUTCOMES = ("correct", "partial", "abstained", "unanswered", "hallucinated")

JUDGE_SYSTEM = NamedTemplate(
    f"{JUDGE_PROMPT}.system",
    """You grade one answer of a language model to a citation question, as a careful human \
reader would: by what the answer says, whatever its language, layout, markup or length.

You are given the question as it was sent to the model, what it asks for (a paper's title, or \
a paper's author list), the gold (the right title, or the right author list) and the model's \
answer. Give the answer exactly one outcome:

- correct: the answer's final answer names the gold. Titles: the gold title, written any way \
(case, punctuation, quotes of any language, inside a sentence, as a formatted reference, in \
bold); its main title without the subtitle also counts, when it names the same paper. Authors: \
every gold author, in any name format (initials, order, "Last, First"), nobody else.
- partial: nothing wrong is named, but the answer is incomplete: some of the gold authors only \
(or "X et al."), or the paper named only by its system's short name (e.g. "BERT", "YOLO") \
without a title.
- abstained: the answer declines: "pass", "I don't know", "I can't identify it", including a \
short explanation followed by pass or a refusal, with no candidate named as the answer.
- unanswered: the answer names no citation at all: it echoes the question, restates the \
sentence, talks about the topic, or gives a placeholder, without naming any paper title or \
author as its answer.
- hallucinated: the answer's final answer names a citation element that is wrong: a paper that \
is not the gold (real or invented), or any author who is not a gold author (even if other \
authors are right).

Rules of reading:
- The final answer counts. Reasoning that mentions other papers before settling on one is not \
judged; the paper the answer settles on is. If it names two candidates as equally its answer, \
and one is wrong, it is hallucinated.
- An aside is judged too when it states a fact about this question: an authors answer that \
lists the right people and then adds "also by J. Smith" is hallucinated; mentioning another \
paper as another paper ("not to be confused with ...") is not an answer and is not judged.
- A hedge does not change the outcome: "probably X" is the answer X.
- Retrieved papers in the question may or may not contain the answer: copying the gold from \
them is correct, copying another retrieved paper is hallucinated.
- An answer in another language is judged by what it names.
- Headings, labels, greetings, sign-offs, table headers and markup are not part of the answer.

Reply with one JSON object and nothing else:
{"outcome": "<correct|partial|abstained|unanswered|hallucinated>", "answer": "<the title or \
the author list the answer gives as its final answer, copied from it; empty if none>", "why": \
"<one short line>"}""",
)

JUDGE_USER = NamedTemplate(
    f"{JUDGE_PROMPT}.user",
    """The question asks for: $asked

The question as sent to the model:
<question>
$question
</question>

The gold ($asked):
<gold>
$gold
</gold>

The model's answer:
<answer>
$answer
</answer>""",
)

_ASKED = {"title": "the title of the cited paper", "authors": "the authors of the paper"}


def question_text(messages: Sequence[Message]) -> str:
    """The conversation as sent, one turn a paragraph, each under its role."""
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)


def judge_messages(
    asked: Literal["title", "authors"], question: Sequence[Message], gold: str, answer: str
) -> list[Message]:
    """The judge's messages for one answer: the system prompt, then the case."""
    user = JUDGE_USER.render(
        asked=_ASKED[asked], question=question_text(question), gold=gold, answer=answer
    )
    return [Message("system", JUDGE_SYSTEM.text), Message("user", user)]


@dataclass(frozen=True)
class JudgeVerdict:
    """A judge's reply read: its outcome, the answer it read and why; or why it is no verdict
    (``problem``, and then ``outcome`` is empty)."""

    outcome: str
    answer: str = ""
    why: str = ""
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def _objects(text: str) -> list[dict[str, object]]:
    """Every JSON object in ``text`` that has an ``outcome`` key, in order (inside a code fence
    or in prose around it)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, object]] = []
    sources = [m.group(1) for m in _FENCE.finditer(text)] or [text]
    for source in sources:
        at = source.find("{")
        while at >= 0:
            try:
                value, end = decoder.raw_decode(source, at)
            except json.JSONDecodeError:
                at = source.find("{", at + 1)
                continue
            if isinstance(value, dict) and "outcome" in value:
                found.append(value)
            at = source.find("{", end)
    return found


def parse_verdict(reply: str) -> JudgeVerdict:
    """The judge's verdict: exactly one JSON object with a known ``outcome`` (several objects
    must agree); anything else is no verdict, with the problem said, never a guess."""
    objects = _objects(reply)
    if not objects:
        shown = " ".join(reply.split())[:80]
        return JudgeVerdict("", problem=f"no JSON object with an 'outcome' in its reply {shown!r}")
    outcomes = {str(o.get("outcome", "")).strip().lower() for o in objects}
    if len(outcomes) > 1:
        return JudgeVerdict("", problem=f"its reply gives several outcomes: {sorted(outcomes)}")
    outcome = outcomes.pop()
    if outcome not in JUDGE_OUTCOMES:
        return JudgeVerdict(
            "", problem=f"its outcome {outcome!r} is none of {', '.join(JUDGE_OUTCOMES)}"
        )
    last = objects[-1]
    answer, why = last.get("answer", ""), last.get("why", "")
    return JudgeVerdict(
        outcome,
        answer=answer.strip() if isinstance(answer, str) else "",
        why=" ".join(why.split()) if isinstance(why, str) else "",
    )
