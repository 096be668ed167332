"""The agentic task's prompts and tools, each written once and referred to by name.

The tools are part of every recorded request (their schemas for function calling, their text for
the text protocol), so a changed word here is a cassette miss that names it, never a replay of
answers to other tools.
"""

from __future__ import annotations

from pytest_citebench.api import NamedTemplate, ToolSpec
from pytest_citebench.models.agent import RESULT_HEAD

AGENT_SYSTEM = NamedTemplate(
    "reasons.agentic.system",
    'I have taken a sentence from the research paper titled "$citing_title". Find the research '
    "paper this sentence is citing. You can search $library, read a paper's abstract, and then "
    "cite the paper: by its id from a search, or by its title if you know it otherwise. If you "
    "cannot find it, cite the title 'pass'. You have at most $steps turns.",
)
#: What the search looks in, as the prompt and the tool's description say it.
LIBRARY = {
    "corpus": "a library of research papers",
    "openalex": "OpenAlex, a catalogue of the world's scholarly works",
}
#: The text protocol: the tools described in the system turn, one action a reply, parsed.
AGENT_TEXT_TOOLS = NamedTemplate(
    "reasons.agentic.text_tools",
    "Take each turn by writing exactly one action: a JSON object on one line, nothing else.\n"
    '{"tool": "search", "query": "..."} searches $library ($k results, each with id, title, '
    "authors and year)\n"
    '{"tool": "read", "id": "..."} reads one paper: its title, authors, year and abstract\n'
    '{"tool": "cite", "id": "..."} or {"tool": "cite", "title": "..."} cites the paper and '
    "finishes\n"
    "The result of each action comes back in the next message.",
)
#: A tool's result as the text protocol sends it back, in a user turn.
TOOL_RESULT = NamedTemplate("reasons.agentic.result", RESULT_HEAD + "$tool:\n$result")
#: What a limit or a bad call is told (the tool's result in its place).
UNKNOWN_TOOL = NamedTemplate(
    "reasons.agentic.unknown_tool", "unknown tool '$name': the tools are search, read and cite"
)
BAD_ARGUMENTS = NamedTemplate(
    "reasons.agentic.bad_arguments", "could not read the arguments of $name: $problem"
)
NO_ACTION = NamedTemplate(
    "reasons.agentic.no_action",
    'could not read an action: write one JSON object such as {"tool": "search", "query": "..."}',
)


def tool_specs(library: str, k: int) -> tuple[ToolSpec, ...]:
    """search, read and cite, as function calling offers them."""
    where = LIBRARY[library]
    return (
        ToolSpec(
            "search",
            f"Search {where} for papers matching a query. Returns up to {k} papers, each with "
            "its id, title, authors and year.",
            {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "what to search for"}},
                "required": ["query"],
            },
        ),
        ToolSpec(
            "read",
            "Read one paper found by a search: its title, authors, year and abstract.",
            {
                "type": "object",
                "properties": {"id": {"type": "string", "description": "the paper's id"}},
                "required": ["id"],
            },
        ),
        ToolSpec(
            "cite",
            "Cite the paper the sentence cites, and finish: its id from a search, or its title "
            "(the title 'pass' if you cannot find it).",
            {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "the paper's id from a search"},
                    "title": {"type": "string", "description": "the paper's title"},
                },
            },
        ),
    )
