"""``--citebench-title-lookup live``: ask a registry whether a wrong title names any work, inside
the item, recorded in its cassette like ArxEval's live DOI checks.

Why inside ``solve``: the lookup is a request, and a request made while the item runs goes into
(and on replay comes from) that item's cassette, so a recorded run replays offline with no
network and the same kinds. It is made only where it can decide the kind: the final stage is
hallucinated, names a title, and no offline evidence (prompt, corpus, packaged index, recorded
responses) places it. Its verdict is kept on the final stage (``ScoredStage.details``,
``kinds.LOOKUP_KEY``), so ``score`` stays pure and ``rescore`` reads it back with no request.

The registries' base URLs, the polite-pool contact and the title threshold are the run's DOI
setting (``--citebench-mailto``/``CITEBENCH_MAILTO``, ``CITEBENCH_DOI_BASE_URL``, 0.9). Off by
default (``offline``); ``CITEBENCH_TITLE_LOOKUP=live`` when the option is not given. A lookup
that fails (a 429 after the retries, an outage, a replay with no recording of it) is recorded as
failed: its kind is ``unverified``, never ``fabricated``, and the item is scored as usual.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_citebench.api import Attempt, Sample, ScoredStage, Stage
from pytest_citebench.models import blocking
from pytest_citebench.papers.reasons.judgement import Judgement

if TYPE_CHECKING:
    import pytest

    from pytest_citebench.doi.title_search import TitleSearch

MODES = ("offline", "live")
ENV = "CITEBENCH_TITLE_LOOKUP"


@dataclass
class LookupSettings:
    """This run's choice, set whole by :func:`configure` (None: the environment decides)."""

    mode: str | None = None


SETTINGS = LookupSettings()


def add_options(group: pytest.OptionGroup) -> None:
    """The option, in the core's ``citebench`` group."""
    group.addoption(
        "--citebench-title-lookup",
        choices=MODES,
        help="how the kind of a wrong REASONS title is told: offline (the prompt, the corpus, the "
        "packaged index of known papers, recorded registry responses; default) or live (also "
        "ask OpenAlex, then Crossref; recorded in each item's cassette)",
    )


def configure(config: pytest.Config) -> None:
    """Read the option (workers too); unset, ``CITEBENCH_TITLE_LOOKUP`` decides at lookup time
    (an earlier in-process run's choice is never kept)."""
    SETTINGS.mode = config.getoption("citebench_title_lookup", None)


def mode() -> str:
    """``live`` or ``offline``: the option, else the environment, else offline."""
    if SETTINGS.mode is not None:
        return SETTINGS.mode
    return "live" if (os.environ.get(ENV) or "").strip().lower() == "live" else "offline"


def environment_problems() -> list[str]:
    """A value of ``CITEBENCH_TITLE_LOOKUP`` that is neither mode, said before any call."""
    value = (os.environ.get(ENV) or "").strip().lower()
    if value and value not in MODES:
        return [f"{ENV}={value!r}: expected 'offline' or 'live'"]
    return []


#: One rate limiter per registry host for the whole process (items share them; each item gets
#: its own searcher, so its cassette holds every request it needs).
_LIMITERS: dict[str, Any] = {}


def _replaying() -> bool:
    """Inside an item whose cassette only replays, nothing leaves the process: no rate limit,
    no retry waits."""
    from pytest_citebench import recording

    current = recording.current_item()
    record_mode = getattr(getattr(current, "cassette", None), "record_mode", None)
    return str(getattr(record_mode, "value", record_mode)) == "none"


def searcher() -> TitleSearch:
    """A title search for one item, from the run's DOI setting."""
    from pytest_citebench.doi.config import doi_config
    from pytest_citebench.doi.title_search import TitleSearch

    config = doi_config()
    urls: dict[str, Any] = {}
    if config.base_url:
        base = config.base_url.rstrip("/")
        urls = {"openalex_url": f"{base}/openalex", "crossref_url": f"{base}/crossref"}
    if _replaying():
        return TitleSearch(
            mailto=config.mailto, threshold=config.threshold, rate_limit=None, max_tries=1, **urls
        )
    return TitleSearch(mailto=config.mailto, threshold=config.threshold, limiters=_LIMITERS, **urls)


Judge = Callable[[Sample, Stage, "str | None"], Judgement]


async def with_lookup(judge: Judge, item: Sample, attempt: Attempt) -> Attempt:
    """The attempt, its final stage carrying a live title lookup when the run asked for one and
    the kind needs it; unchanged otherwise. The lookup runs in a worker thread inside this
    item's context, hence its cassette."""
    if mode() != "live":
        return attempt
    from pytest_citebench.papers.reasons.kinds import LOOKUP_KEY, needs_lookup

    final = attempt.final
    title = needs_lookup(item, judge(item, final, attempt.corpus), attempt.corpus, final.raw)
    if title is None:
        return attempt
    lookup = await blocking(searcher().lookup, title)
    details = dict(final.details) if isinstance(final, ScoredStage) else {}
    details[LOOKUP_KEY] = lookup.to_json()
    looked = ScoredStage(final.name, final.raw, final.answer, final.abstained, details)
    return Attempt((*attempt.stages[:-1], looked), corpus=attempt.corpus)
