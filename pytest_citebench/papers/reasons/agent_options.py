"""The agentic task's options: what the search looks in, and the limits of one item.

``--citebench-agent-search`` bm25 (default), dense or hybrid search the suite's corpus offline;
openalex asks OpenAlex, recorded in each item's cassette (``--citebench-agent-openalex-url``
points it at another server, a loopback stub in tests). ``--citebench-agent-steps`` caps the
model turns of an item, ``--citebench-agent-tokens`` the tokens its turns may spend in all, and
``--citebench-agent-k`` the papers a search returns. The limits are in the prompt and the
tools, hence in every recorded request: a changed limit is a cassette miss that says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_citebench.papers.reasons.agent_library import OPENALEX_URL, SEARCHES

if TYPE_CHECKING:
    import pytest


@dataclass
class AgentSettings:
    """This run's agent settings, set whole by :func:`configure`."""

    search: str = "bm25"
    steps: int = 8
    tokens: int = 60_000
    k: int = 5
    openalex_url: str = OPENALEX_URL


SETTINGS = AgentSettings()


def add_options(group: pytest.OptionGroup) -> None:
    """The options, in the core's ``citebench`` group."""
    group.addoption(
        "--citebench-agent-search",
        choices=SEARCHES,
        help="what the agentic task's search tool looks in: the suite's corpus by bm25 (default), "
        "dense or hybrid (reciprocal rank fusion of both), or openalex (OpenAlex's works "
        "search, recorded in each item's cassette)",
    )
    group.addoption(
        "--citebench-agent-steps",
        type=int,
        help=f"model turns an agentic item may take (default {AgentSettings.steps})",
    )
    group.addoption(
        "--citebench-agent-tokens",
        type=int,
        help="tokens an agentic item's turns may spend in all, as the provider counts them "
        f"(characters / 4 where it does not; default {AgentSettings.tokens})",
    )
    group.addoption(
        "--citebench-agent-k",
        type=int,
        help=f"papers a search returns (default {AgentSettings.k})",
    )
    group.addoption(
        "--citebench-agent-openalex-url",
        help=f"the OpenAlex API the openalex search asks (default {OPENALEX_URL})",
    )


def configure(config: pytest.Config) -> None:
    """Read the options (workers too); a limit below 1 is a usage error."""
    import pytest

    defaults = AgentSettings()
    values = {
        "search": config.getoption("citebench_agent_search", None) or defaults.search,
        "steps": config.getoption("citebench_agent_steps", None),
        "tokens": config.getoption("citebench_agent_tokens", None),
        "k": config.getoption("citebench_agent_k", None),
        "openalex_url": config.getoption("citebench_agent_openalex_url", None)
        or defaults.openalex_url,
    }
    for name, flag, most in (("steps", "steps", 100), ("tokens", "tokens", None), ("k", "k", 50)):
        value = values[name]
        if value is None:
            values[name] = getattr(defaults, name)
        elif value < 1 or (most is not None and value > most):
            limit = f"from 1 to {most}" if most else "at least 1"
            raise pytest.UsageError(f"--citebench-agent-{flag} {value}: must be {limit}")
    SETTINGS.__dict__.update(values)
