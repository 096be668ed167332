"""The agentic tasks: the model searches, reads and cites, every turn recorded (issue 45).

CiteME measured what tools change (LMs alone 4.2-18.5%, CiteAgent 35.3%, humans 69.7%). Here
the model gets the citing title and the sentence (as *indirect* does) and three tools: ``search``
the suite's corpus (or OpenAlex), ``read`` one paper's abstract, ``cite`` an id or a title to
finish; at most ``--citebench-agent-steps`` turns and ``--citebench-agent-tokens`` tokens.

* ``agentic``: the tools through function calling (one request per turn, each in the item's
  cassette with its tools and the tool results the harness sent back).
* ``agentic_text``: the fallback for a model without function calling: the same tools described
  in the system turn, one JSON action a reply, parsed (``models.agent.parse_action``).

The answer is the cited paper's title (an id is looked up in the library), judged by the
indirect task's rules; the trajectory rides on the final stage (``agent_metrics.Trace``), so
the agent's numbers (``gold_shown``, ``found_not_chosen``, ``cited_unseen``, ...) are computed
in ``score``, pure, and ``rescore`` recomputes them with no call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from pytest_citebench.api import (
    Attempt,
    Converse,
    Generate,
    Hint,
    ItemScore,
    Message,
    Records,
    Sample,
    ScoredStage,
    Stat,
    ToolCall,
    ToolSpec,
    converse_of,
)
from pytest_citebench.errors import CitebenchError, ProviderError
from pytest_citebench.metricspec import MetricSpec
from pytest_citebench.models import blocking
from pytest_citebench.models.agent import parse_action
from pytest_citebench.papers.reasons.agent_library import Found, Library, library
from pytest_citebench.papers.reasons.agent_metrics import (
    AGENT_METRICS,
    TRACE_KEY,
    Trace,
    agent_metrics,
    agent_set_metrics,
)
from pytest_citebench.papers.reasons.agent_options import SETTINGS
from pytest_citebench.papers.reasons.agent_prompts import (
    AGENT_SYSTEM,
    AGENT_TEXT_TOOLS,
    BAD_ARGUMENTS,
    LIBRARY,
    NO_ACTION,
    TOOL_RESULT,
    UNKNOWN_TOOL,
    tool_specs,
)
from pytest_citebench.papers.reasons.specs import REASONS_SET_METRICS
from pytest_citebench.papers.reasons.tasks import Indirect

#: Characters per token where the provider counts none (the built-in agent, some servers).
CHARS_PER_TOKEN = 4
_TOOLS = ("search", "read", "cite")


def _json(value: Any) -> str:
    """A tool's result as sent: compact and deterministic, so a replay sends the same bytes."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


class Agentic(Indirect):
    """Sentence -> the cited paper, found with search, read and cite tools (function calling)."""

    name = "agentic"
    kind = "indirect"
    #: ``tools``: function calling; ``text``: the tools described in text, actions parsed.
    protocol = "tools"
    set_metric_specs: Mapping[str, MetricSpec] = MappingProxyType(
        {**REASONS_SET_METRICS, **AGENT_METRICS}
    )

    def makes_requests(self) -> bool:
        return SETTINGS.search == "openalex"

    def _library_kind(self) -> str:
        return "openalex" if SETTINGS.search == "openalex" else "corpus"

    def messages(self, item: Sample) -> list[Message]:
        where = LIBRARY[self._library_kind()]
        system = AGENT_SYSTEM.render(
            citing_title=item["citing_title"], library=where, steps=str(SETTINGS.steps)
        )
        if self.protocol == "text":
            system += "\n\n" + AGENT_TEXT_TOOLS.render(library=where, k=str(SETTINGS.k))
        return [Message("system", system), Message("user", item["sentence"])]

    def tools(self) -> tuple[ToolSpec, ...]:
        return () if self.protocol == "text" else tool_specs(self._library_kind(), SETTINGS.k)

    def prompt_texts(self, item: Sample) -> tuple[list[str], list[str]]:
        """What an echo repeats: the text protocol's system turn holds the tools' text too (a
        reply that was only its last line had read as an invented title)."""
        instructions = [AGENT_SYSTEM.text]
        if self.protocol == "text":
            instructions.append(AGENT_TEXT_TOOLS.text)
        return [item["citing_title"], item["sentence"]], instructions

    def hint(self, item: Sample, corpus: str | None, **extra: str) -> Hint:
        return Hint(self.name, item["sentence"], item.suite, corpus, extra, "title")

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        converse = converse_of(generate)
        if converse is None:
            raise CitebenchError(f"{self.name} needs a model that takes turns; none was given")
        found = library(
            SETTINGS.search,
            suite_corpus,
            openalex_url=SETTINGS.openalex_url,
            mailto=_mailto(),
        )
        trace = await self.run_agent(item, converse, found, self.hint(item, suite_corpus))
        raw = str((trace.cited or {}).get("title") or "") if trace.ended == "cite" else ""
        if trace.ended == "text":
            raw = str((trace.cited or {}).get("text") or "")
        first = self.parse(self.name, raw)
        details = {TRACE_KEY: trace.to_json()}
        final = ScoredStage(first.name, first.raw, first.answer, first.abstained, details)
        return await self.looked_up(item, Attempt((final,), corpus=suite_corpus))

    async def run_agent(
        self, item: Sample, converse: Converse, found: Library, hint: Hint
    ) -> Trace:
        """The conversation: a turn, the tools it called run and answered, until a citation,
        a reply with no call, or a limit."""
        messages = self.messages(item)
        tools = self.tools()
        trace = Trace()
        schema_chars = len(_json([t.to_openai() for t in tools]))
        while trace.steps < SETTINGS.steps:
            try:
                reply = await converse(messages, hint=hint, tools=tools)
            except ProviderError as exc:
                if self.protocol == "tools" and _about_tools(str(exc)):
                    raise ProviderError(
                        f"{exc}\n  the model or its server refused the tools: run "
                        "--citebench-task agentic_text instead (the same tools described in "
                        "text, one JSON action a reply, parsed)"
                    ) from exc
                raise
            trace.steps += 1
            sent = schema_chars + sum(len(m.content) for m in messages)
            trace.tokens += (
                reply.tokens
                if reply.tokens
                else (sent + len(reply.text) + sum(len(c.arguments) for c in reply.tool_calls))
                // CHARS_PER_TOKEN
            )
            messages.append(Message("assistant", reply.text, tool_calls=reply.tool_calls))
            calls = list(reply.tool_calls)
            if self.protocol == "text":
                action = parse_action(reply.text)
                if action is not None:
                    calls = [ToolCall(f"text_{trace.steps}", *action)]
                elif _looks_like_action(reply.text):
                    trace.calls.append({"tool": "", "ok": False, "bad": True})
                    messages.append(
                        Message(
                            "user",
                            TOOL_RESULT.render(
                                tool="?", result=_json({"error": NO_ACTION.render()})
                            ),
                        )
                    )
                    continue
            if not calls:
                trace.ended, trace.cited = "text", {"text": reply.text}
                return trace
            for call in calls:
                result = await blocking(self._run_tool, call, found, trace)
                if trace.ended == "cite":
                    return trace
                text = _json(result)
                if self.protocol == "text":
                    result_turn = TOOL_RESULT.render(tool=call.name, result=text)
                    messages.append(Message("user", result_turn))
                else:
                    messages.append(Message("tool", text, tool_call_id=call.id))
            if trace.tokens >= SETTINGS.tokens:
                trace.ended = "tokens"
                return trace
        trace.ended = "steps"
        return trace

    def _run_tool(self, call: ToolCall, found: Library, trace: Trace) -> dict[str, Any]:
        """One tool call, answered; the trace notes what it showed. A call that cannot run (an
        unknown tool, arguments that are not a JSON object) is told so and counted as bad."""
        if call.name not in _TOOLS:
            trace.calls.append({"tool": call.name[:60], "ok": False, "bad": True})
            return {"error": UNKNOWN_TOOL.render(name=call.name[:60])}
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError as exc:
            arguments, problem = None, f"not JSON ({str(exc)[:80]})"
        else:
            problem = "" if isinstance(arguments, dict) else "not a JSON object"
        wanted = {"search": ("query",), "read": ("id",), "cite": ("id", "title")}[call.name]
        if not problem and not any(
            isinstance(arguments.get(k), str) and arguments[k].strip() for k in wanted
        ):
            problem = f"give {' or '.join(repr(k) for k in wanted)} as a non-empty string"
        if problem or not isinstance(arguments, dict):
            trace.calls.append({"tool": call.name, "ok": False, "bad": True})
            return {"error": BAD_ARGUMENTS.render(name=call.name, problem=problem)}
        if call.name == "search":
            hits = found.search(arguments["query"], SETTINGS.k)
            trace.calls.append(
                {
                    "tool": "search",
                    "ok": True,
                    "query": arguments["query"][:300],
                    "shown": [[h.id, h.title] for h in hits],
                }
            )
            return {"results": [h.listing() for h in hits]}
        if call.name == "read":
            paper = found.read(arguments["id"])
            if paper is None:
                trace.calls.append({"tool": "read", "ok": False, "id": arguments["id"][:100]})
                return {"error": f"no paper with id {arguments['id'][:100]!r}"}
            trace.calls.append({"tool": "read", "ok": True, "id": paper.id, "title": paper.title})
            return paper.full()
        return self._cite(arguments, found, trace)

    def _cite(self, arguments: Mapping[str, Any], found: Library, trace: Trace) -> dict[str, Any]:
        paper_id = arguments.get("id") if isinstance(arguments.get("id"), str) else None
        if paper_id and paper_id.strip():
            paper: Found | None = _shown_paper(trace, paper_id) or found.read(paper_id)
            if paper is None:
                trace.calls.append({"tool": "cite", "ok": False, "id": paper_id[:100]})
                return {"error": f"no paper with id {paper_id[:100]!r}; cite it by its title"}
            trace.calls.append({"tool": "cite", "ok": True, "id": paper.id})
            trace.ended, trace.cited = "cite", {"id": paper.id, "title": paper.title}
            return {}
        title = str(arguments["title"])
        trace.calls.append({"tool": "cite", "ok": True})
        trace.ended, trace.cited = "cite", {"id": None, "title": title}
        return {}

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        """The indirect rules on the cited title, and the agent's numbers from its trace."""
        scored = super().score(item, attempt)
        final = attempt.final
        details = final.details if isinstance(final, ScoredStage) else {}
        trace = Trace.from_json(details.get(TRACE_KEY) or {})
        numbers = agent_metrics(
            trace,
            gold_id=item.fields.get("cited_arxiv_id"),
            gold_title=str(item["cited_title"]),
            correct=scored.outcome == "correct",
        )
        reason = f"{trace.summary()}: {scored.reason}" if scored.reason else trace.summary()
        return replace(scored, metrics={**scored.metrics, **numbers}, reason=reason)

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        return {**super().set_metrics(records), **agent_set_metrics(records)}


class AgenticText(Agentic):
    """The same, for a model without function calling: the tools described in text."""

    name = "agentic_text"
    protocol = "text"


def _shown_paper(trace: Trace, paper_id: str) -> Found | None:
    """A paper a search showed under this id (OpenAlex's ids are found only through one)."""
    for shown_id, title in trace.shown():
        if shown_id == paper_id.strip():
            return Found(shown_id, title, "", None)
    return None


def _looks_like_action(text: str) -> bool:
    """A reply that tried to write an action and failed (a brace, or a tool named)."""
    return "{" in text or any(f'"{t}"' in text for t in ("tool", *_TOOLS))


def _about_tools(error: str) -> bool:
    """A provider's refusal that is about the tools (function calling unsupported)."""
    lowered = error.lower()
    return any(w in lowered for w in ("tool", "function call", "function_call", "functions"))


def _mailto() -> str | None:
    from pytest_citebench.doi.config import doi_config

    return doi_config().mailto or None
