"""What the guard tasks send a model, and what of its reply is its own.

The two belong together: the guard must not count a citation marker the model merely echoed
from the prompt (the instructions say "for example [2]"; a base model repeats the "[n] passage"
lines), so :func:`own_answer` needs the prompt's exact words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_citebench.api import Message, NamedTemplate
from pytest_citebench.papers.guard.answers import _GROUP, _sentence_spans
from pytest_citebench.papers.guard.judge import JUDGE_PROMPT

REATTRIBUTE_PROMPT = NamedTemplate(
    "guard.reattribute",
    "Which of the numbered passages supports the claim? Rank all passages from the one that "
    "best supports the claim to the one that least supports it. Answer with the passage numbers "
    "only, separated by commas (for example: 3, 1, 2).\n\nClaim: $claim\n\nPassages:\n$passages"
    "\n\nRanking:",
)
GUARD_PROMPT = NamedTemplate(
    "guard.answer",
    "Answer the question using only the numbered passages below, in two to four sentences. End "
    "every sentence with the number of the passage that supports it in square brackets, for "
    "example [2]. Cite a passage only if it states what the sentence says. If the passages do "
    "not answer the question, write 'pass'.\n\nQuestion: $question\n\nPassages:\n$passages"
    "\n\nAnswer:",
)


def judge_messages(claim: str, passage: str) -> list[Message]:
    """The guard library's LLM-judge prompt, word for word, on the whole passage (never cut)."""
    return [Message("user", JUDGE_PROMPT.format(claim=claim, passage=passage))]


_CHAT_TOKENS = re.compile(r"\[/?INST\]|<start_of_turn>|<end_of_turn>|<s>|</s>")
_LEADING_LABELS = re.compile(r"^\s*(?:\[\s*\d+\s*\]\s*)+")


def _has_words(line: str) -> bool:
    return sum(ch.isalpha() for ch in line) >= 3


_PROMPT_HEAD = re.compile(r"^(?:answer\s+the\s+question|question\s*:|passages\s*:)", re.I)


def own_answer(raw: str, question: str, passages: Mapping[int, str]) -> str:
    """The model's answer without what it echoed from the prompt.

    Removed: everything up to the prompt's closing "Answer:" when the reply repeats the prompt;
    lines that restate the question or a "[n] <passage n>" entry; sentences that are a run of
    the instructions (which contain "for example [2]"). A sentence the model copied from a
    passage and cited *after* it ("X is Y [2].") is its own answer and stays.
    """
    from pytest_citebench.metrics.text import normalize

    text = _CHAT_TOKENS.sub(" ", raw).strip()
    if _PROMPT_HEAD.match(text) and re.search(r"(?im)^\s*answer\s*:", text):
        text = re.split(r"(?im)^\s*answer\s*:", text)[-1].strip()
    instructions = normalize(GUARD_PROMPT.render(question="", passages=""))
    norm_question = normalize(question)
    norm_passages = {n: normalize(p) for n, p in passages.items()}
    kept_lines = []
    for line in text.splitlines():
        stripped = line.strip()
        head = re.match(r"^\[\s*(\d+)\s*\]\s*(.*)$", stripped)
        if head:
            body = normalize(head.group(2))
            passage = norm_passages.get(int(head.group(1)), "")
            if body and len(body.split()) >= 3 and body in passage:
                continue
        body = normalize(re.sub(r"^(?:question|passages|answer)\s*:\s*", "", stripped, flags=re.I))
        if len(body.split()) >= 3 and norm_question and body in norm_question:
            continue
        # "[4] Some text" opening a line is a passage entry in the prompt's own format (a base
        # model writes a fourth passage, or copies one), not a sentence citing passage 4; a line
        # of bare markers ("[1] [2] ... [18]") cites nothing either.
        line = _LEADING_LABELS.sub("", line)
        if not _has_words(line):
            continue
        kept_lines.append(line)
    text = "\n".join(kept_lines)
    pieces = re.split(r"(?<=[.!?])\s+", text)
    kept = [
        p for p in pieces if not (len(normalize(p).split()) >= 4 and normalize(p) in instructions)
    ]
    return " ".join(kept).strip() if len(kept) != len(pieces) else text.strip()


def uncited_sentences(answer: str) -> int:
    """Sentences of the answer with words but no [n] marker (the prompt asks for one on each)."""
    count = 0
    for start, end in _sentence_spans(answer):
        sentence = answer[start:end]
        if sum(ch.isalpha() for ch in sentence) >= 12 and not _GROUP.search(sentence):
            count += 1
    return count
