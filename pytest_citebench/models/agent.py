"""The built-in agent: how a ``citebench/*`` model takes a turn of a tool-using task, and the
text protocol a model without function calling uses instead.

The agent is deterministic and needs no key: it searches with the item's query, reads the top
``READS`` hits, and cites the one whose title and abstract cover most of the query's words
(ties: the search's order), or answers "pass" when even that one covers less than ``floor``
(0.2, bm25's floor for titles; ``--citebench-param floor=...``). It is the floor a real agent
has to beat, and it lets the tool-using tasks run on a fresh clone with no key.

It works with any task that offers tools named ``search`` (``{"query"}``), ``read``
(``{"id"}``) and ``cite`` (``{"id"}`` or ``{"title"}``) and answers each call with a JSON
object: ``{"results": [{"id", "title", ...}]}`` for a search, ``{"id", "title", "abstract"}``
for a read. Given no tools, it writes the same calls as text actions (``format_action``), the
protocol the text fallback of a tool-using task parses (``parse_action``), and reads the
results from the user turns that carry them (``RESULT_HEAD``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import Hint, Message, Reply, ToolCall, ToolSpec

#: Hits the agent reads before it cites.
READS = 3
#: The share of the query's distinct words the best read paper must cover, else "pass".
FLOOR = 0.2
#: How a user turn of the text protocol starts when it carries a tool's result.
RESULT_HEAD = "Result of "

_ACTION = re.compile(r"\{.*\}", re.S)


def format_action(name: str, arguments: Mapping[str, Any]) -> str:
    """One action of the text protocol: a JSON object naming the tool, then its arguments."""
    return json.dumps({"tool": name, **arguments}, ensure_ascii=False)


def parse_action(text: str) -> tuple[str, str] | None:
    """The first action in a reply of the text protocol: (tool name, arguments as JSON text), or
    None when the reply holds no JSON object naming a tool. The reply may wrap the object in
    prose or a code fence; the outermost braces are taken, then narrowed to the first object
    that parses."""
    found = _ACTION.search(text)
    if found is None:
        return None
    candidate = found.group(0)
    decoder = json.JSONDecoder()
    for start in [m.start() for m in re.finditer(r"\{", candidate)]:
        try:
            value, _ = decoder.raw_decode(candidate[start:])
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("tool"), str):
            arguments = {k: v for k, v in value.items() if k != "tool"}
            return value["tool"], json.dumps(arguments, ensure_ascii=False)
    return None


def _results(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Every tool result of the conversation, as JSON objects, in order."""
    out = []
    for message in messages:
        text = ""
        if message.role == "tool":
            text = message.content
        elif message.role == "user" and message.content.startswith(RESULT_HEAD):
            text = message.content.split("\n", 1)[1] if "\n" in message.content else ""
        if not text:
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _calls_made(messages: Sequence[Message]) -> list[tuple[str, dict[str, Any]]]:
    """The calls the assistant turns made, as tool calls or as text actions."""
    made = []
    for message in messages:
        if message.role != "assistant":
            continue
        pairs = [(c.name, c.arguments) for c in message.tool_calls]
        if not pairs:
            action = parse_action(message.content)
            pairs = [action] if action else []
        for name, arguments in pairs:
            try:
                value = json.loads(arguments)
            except ValueError:
                continue
            made.append((name, value if isinstance(value, dict) else {}))
    return made


def _coverage(query: str, text: str) -> float:
    from pytest_citebench.retrieval import tokens

    wanted = set(tokens(query))
    return len(wanted & set(tokens(text))) / len(wanted) if wanted else 0.0


def agent_turn(
    messages: Sequence[Message],
    *,
    tools: Sequence[ToolSpec],
    hint: Hint,
    options: Mapping[str, Any],
) -> Reply:
    """The built-in agent's next turn in this conversation (see the module's docstring)."""
    results = _results(messages)
    searched = [r for r in results if isinstance(r.get("results"), list)]
    read = {str(r["id"]): r for r in results if "abstract" in r and "id" in r}
    step = sum(1 for m in messages if m.role == "assistant") + 1
    if not searched:
        return _act([("search", {"query": hint.query})], tools, step)
    hits = [h for h in searched[0]["results"] if isinstance(h, dict) and "id" in h][:READS]
    asked = {str(args.get("id")) for name, args in _calls_made(messages) if name == "read"}
    # A read asked once is not asked again, even when it failed: the agent moves on.
    pending = [str(h["id"]) for h in hits if str(h["id"]) not in set(read) | asked]
    if pending:
        reads = [("read", {"id": p}) for p in pending]
        return _act(reads if tools else reads[:1], tools, step)
    floor = float(options.get("floor", FLOOR))
    best: tuple[float, int, str] | None = None
    for rank, hit in enumerate(hits):
        paper = read.get(str(hit["id"]), hit)
        text = f"{paper.get('title', '')}\n{paper.get('abstract', '')}"
        score = _coverage(hint.query, text)
        if best is None or score > best[0]:
            best = (score, rank, str(hit["id"]))
    if best is None or best[0] < floor:
        return Reply("pass")
    return _act([("cite", {"id": best[2]})], tools, step)


def _act(
    calls: Sequence[tuple[str, Mapping[str, Any]]], tools: Sequence[ToolSpec], step: int
) -> Reply:
    if not tools:
        name, arguments = calls[0]
        return Reply(format_action(name, arguments))
    return Reply(
        "",
        tuple(
            ToolCall(f"call_{step}_{i}", name, json.dumps(arguments, ensure_ascii=False))
            for i, (name, arguments) in enumerate(calls)
        ),
    )
