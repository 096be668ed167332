"""The structure a deployment wraps its answer in, taken off before any rule reads the answer.

Reasoning models write their thinking in ``<think>`` tags before the reply (DeepSeek-R1 and its
distillations, Qwen3, served by vLLM or Ollama); products ask for ``<answer>`` tags or a JSON
object with the answer and a confidence. Read whole, such a reply is misread three ways: the
thinking's own mentions of papers and systems count as the answer ("SeqCLR" read as an
author), a tag reads as a template placeholder, and a JSON object reads as no names at all.
Each envelope has one reading a person would give it: the reply after the thinking, the tagged
text, the answer field's value. A reply with none is returned as it is.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

_THINK_TAGS = "think|thinking|reasoning|thought"
# Every opening or closing think tag, in one linear pass (see _blocks).
_THINK_TAG = re.compile(rf"<(/?)({_THINK_TAGS})>", re.IGNORECASE)
# A chat template that opens the block itself leaves only the closing tag in the reply.
_THINK_CLOSE = re.compile(rf"</(?:{_THINK_TAGS})>", re.IGNORECASE)
_THINK_OPEN = re.compile(rf"<(?:{_THINK_TAGS})>", re.IGNORECASE)
_ANSWER_TAGS = "answer|final_answer|final-answer|final|response|result"
_ANSWER_TAG = re.compile(rf"<(/?)({_ANSWER_TAGS})>", re.IGNORECASE)
# An answer tag the reply never closed (cut by the token limit, or forgotten) runs to the end.
_ANSWER_OPEN = re.compile(rf"<(?:{_ANSWER_TAGS})>(.*)\Z", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"\A```[a-zA-Z]*\s*\n?(.*?)\n?```\s*\Z", re.DOTALL)
#: The fields a JSON reply may hold its answer in, most specific first.
ANSWER_KEYS = (
    "answer",
    "final_answer",
    "title",
    "paper_title",
    "cited_title",
    "authors",
    "author_names",
    "paper",
    "citation",
    "response",
    "result",
)
# A JSON reply cut before its end still shows its answer field: "answer": "...".
_ANSWER_FIELD = re.compile(
    r'"(' + "|".join(ANSWER_KEYS) + r')"\s*:\s*"((?:[^"\\]|\\.)*)"', re.IGNORECASE
)


@dataclass(frozen=True)
class Unwrapped:
    """The answer as the rules should read it, and which envelope it came out of ("" if none)."""

    text: str
    envelope: str = ""


@functools.lru_cache(maxsize=4096)
def unwrap(raw: str, prefer: tuple[str, ...] = ()) -> Unwrapped:
    """The reply's answer without its envelope: thinking removed, then the last ``<answer>``
    tag's text, or a JSON object's answer field (``prefer``'s keys first: a task asking for
    authors reads "authors" before "title"); ``raw`` itself when it has no envelope. Cached:
    a stage's parse and its judgement read the same reply."""
    text, envelope = raw, ""
    thinking = _blocks(text, _THINK_TAG)
    if thinking or _THINK_CLOSE.search(text):
        for start, _, _, end in reversed(thinking):
            text = text[:start] + " " + text[end:]
        closes = list(_THINK_CLOSE.finditer(text))
        if closes:
            text = text[closes[-1].end() :]
        envelope = "the reply after its reasoning block"
    elif _THINK_OPEN.search(text):
        # Thinking never closed: the model ran out of tokens, or never answered.
        return Unwrapped("", "the reply after a reasoning block that never ends")
    tagged = _blocks(text, _ANSWER_TAG)
    if tagged:
        # Tags nested in tags (<response><answer>...</answer></response>): the innermost text.
        while tagged:
            _, inner_start, inner_end, _ = tagged[-1]
            text = text[inner_start:inner_end]
            tagged = _blocks(text, _ANSWER_TAG)
        return Unwrapped(text.strip(), "the text of its <answer> tag")
    cut = _ANSWER_OPEN.search(text)
    if cut:
        return Unwrapped(cut.group(1).strip(), "the text of its unclosed <answer> tag")
    found = _json_answer(text, prefer)
    if found is not None:
        return Unwrapped(found, "the answer field of its JSON")
    return Unwrapped(text.strip() if envelope else raw, envelope)


def _json_answer(text: str, prefer: tuple[str, ...]) -> str | None:
    """The answer field of a reply that is one JSON object (fenced or not), or of one cut
    short; None when the reply is no JSON or has no answer field."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body.startswith("{"):
        return None
    try:
        data = json.loads(body)
    except RecursionError:
        # Nested deeper than the parser goes (a model looping on "[" or "{"): no answer field
        # a person could point at, and never an error that ends the item.
        return None
    except ValueError:
        field = _ANSWER_FIELD.search(body)
        if field is None:
            return None
        try:
            return str(json.loads(f'"{field.group(2)}"'))
        except ValueError:
            return field.group(2)
    try:
        return _field(data, prefer) if isinstance(data, dict) else None
    except RecursionError:
        return None


def _field(data: dict[str, Any], prefer: tuple[str, ...]) -> str | None:
    by_key = {str(k).casefold(): v for k, v in data.items()}
    for key in (*prefer, *ANSWER_KEYS):
        if key in by_key:
            return _as_text(by_key[key], prefer)
    return None


def _as_text(value: Any, prefer: tuple[str, ...]) -> str:
    """A field's value as a reply would write it: a list a line per entry, null as nothing."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(_as_text(v, prefer) for v in value)
    if isinstance(value, dict):
        found = _field(value, prefer)
        return found if found is not None else ""
    return str(value)


def _blocks(text: str, tag: re.Pattern[str]) -> list[tuple[int, int, int, int]]:
    """The blocks ``<t>...</t>`` of ``tag``'s names in ``text``, as a lazy regex with a
    backreference finds them (left to right, each from an opening tag to the first closing tag
    of the same name, case ignored, not overlapping): (start, inner start, inner end, end).

    One pass over the tags with a search per opening tag, instead of that regex: on a reply of
    one tag repeated (a model looping on a special token) the regex tried every opening tag
    against the whole rest of the reply, and scoring one reply took minutes."""
    opens: list[tuple[int, int, str]] = []
    closes: dict[str, list[tuple[int, int]]] = {}
    for found in tag.finditer(text):
        name = found.group(2).casefold()
        if found.group(1):
            closes.setdefault(name, []).append((found.start(), found.end()))
        else:
            opens.append((found.start(), found.end(), name))
    blocks: list[tuple[int, int, int, int]] = []
    after = 0
    for start, inner, name in opens:
        if start < after:
            continue
        ends = closes.get(name, [])
        at = bisect.bisect_left(ends, (inner, inner))
        if at < len(ends):
            blocks.append((start, inner, ends[at][0], ends[at][1]))
            after = ends[at][1]
    return blocks
