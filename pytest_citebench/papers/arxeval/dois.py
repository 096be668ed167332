"""How the mixed-titles task checks the DOIs an answer gives: offline against the suite, or live.

Set by ``CITEBENCH_DOI`` or :func:`~pytest_citebench.doi.config.configure_doi` (the
``--citebench-doi`` options; the setting is the core's, REASONS reads its recorded responses too):

* ``offline`` (default): a closed-world registry made of the suite corpus's DOIs (each arXiv
  paper's ``10.48550/arXiv.<id>`` and any journal DOI) plus, optionally, directories of recorded
  registry responses (``CITEBENCH_DOI_OFFLINE_DIR``, ``os.pathsep``-separated). A DOI in neither
  counts as *not found*: offline results are only as complete as that registry, so a real DOI
  outside it reads as invented. Use it for baselines and CI, not to publish a model's Table 5.
* ``live``: Crossref / DataCite / OpenAlex / Unpaywall through
  :class:`~pytest_citebench.doi.Resolver` (set ``CITEBENCH_MAILTO`` for Crossref's polite pool).
  Lookups run inside the item, so for a remote model they are recorded into, and replayed from,
  that item's cassette. A fresh resolver per item (sharing only the rate limiter) keeps each
  cassette complete on its own. ``CITEBENCH_DOI_BASE_URL`` sends every registry to one mirror.

A lookup that fails (network, 429, 5xx, cassette miss) is :class:`DOILookupError`, never a
"does not exist": an outage must not be counted as an invented DOI.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pytest_citebench.api import Sample

# The DOI setting is the core's (doi/config.py): REASONS checks identifiers against it too.
from pytest_citebench.doi.config import DoiConfig, DOILookupError
from pytest_citebench.doi.extract import extract_title_doi_pairs, normalize_doi
from pytest_citebench.doi.offline import OfflineDirResolver, RegistryResolver
from pytest_citebench.doi.records import DOICheck, DOIRecord
from pytest_citebench.doi.resolve import BaseResolver, RateLimiter, Resolver
from pytest_citebench.doi.titles import DEFAULT_THRESHOLD
from pytest_citebench.models import blocking


class OfflineSuiteResolver(BaseResolver):
    """Closed world: the suite's registry, then recorded responses, then "does not exist".

    The registry (``closed_world=False``) says "unknown" for DOIs it lacks; recorded responses
    answer those they hold (a recorded 429 stays an error); anything left is *not found*.
    """

    def __init__(
        self,
        registry: RegistryResolver,
        recorded: OfflineDirResolver | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.registry = registry
        self.recorded = recorded
        self.threshold = threshold

    def resolve(self, doi: str) -> DOIRecord:
        """A recording that says only "unavailable" is no answer: the DOI falls to *not found*."""
        record = self.registry.resolve(doi)
        if record.exists is not None:
            return record
        if self.recorded is not None:
            answer = self.recorded.resolve(record.doi)
            if any(kind != "unavailable" for _, kind in answer.lookups):
                return answer
        return DOIRecord(
            record.doi,
            False,
            None,
            [],
            [],
            "registry",
            None,
            lookups=[["registry", "not_found"]],
        )


def corpus_registry(paths: Iterable[str | os.PathLike[str]]) -> dict[str, list[str]]:
    """DOI -> titles from suite corpus files; ``doi`` and ``journal_doi`` both map to the title."""
    mapping: dict[str, list[str]] = {}
    from pytest_citebench import jsonl

    for path in paths:
        for _, record in jsonl.iter_objects(Path(path)):
            title = str(record.get("title") or "")
            for key in ("doi", "journal_doi"):
                doi = normalize_doi(str(record.get(key) or ""))
                if doi and title:
                    titles = mapping.setdefault(doi, [])
                    if title not in titles:
                        titles.append(title)
    return mapping


_OFFLINE: dict[tuple[Any, ...], OfflineSuiteResolver] = {}
_OFFLINE_LOCK = threading.Lock()


def offline_resolver(corpus: str | None, config: DoiConfig) -> OfflineSuiteResolver:
    """The offline resolver of one corpus, built once per (corpus file version, config)."""
    key: tuple[Any, ...] = (config.offline_dirs, config.threshold)
    if corpus is not None:
        stat = Path(corpus).stat()
        key = (str(Path(corpus).resolve()), stat.st_size, stat.st_mtime_ns, *key)
    with _OFFLINE_LOCK:
        found = _OFFLINE.get(key)
        if found is None:
            mapping = corpus_registry([corpus] if corpus else [])
            recorded = OfflineDirResolver(*config.offline_dirs) if config.offline_dirs else None
            found = OfflineSuiteResolver(
                RegistryResolver(mapping, threshold=config.threshold),
                recorded,
                threshold=config.threshold,
            )
            _OFFLINE[key] = found
        return found


class _WithGold(BaseResolver):
    """The item's own two papers are always known, even to a suite without a corpus."""

    def __init__(self, gold: Mapping[str, str], inner: BaseResolver) -> None:
        self.gold = RegistryResolver(gold) if gold else None
        self.inner = inner
        self.threshold = inner.threshold

    def resolve(self, doi: str) -> DOIRecord:
        if self.gold is not None:
            record = self.gold.resolve(doi)
            if record.exists is not None:
                return record
        return self.inner.resolve(doi)


class ItemLiveResolver(Resolver):
    """A live resolver for one item: its own cache (so its cassette holds every lookup it needs)
    but the process's shared per-host rate limiters (so concurrency stays polite)."""

    _shared_limiters: ClassVar[dict[str, RateLimiter]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._limiters = self._shared_limiters


def _replaying() -> bool:
    """True inside an item whose cassette only replays: no request leaves the process, so
    rate limiting would only slow the replay down."""
    from pytest_citebench import recording

    current = recording.current_item()
    mode = getattr(getattr(current, "cassette", None), "record_mode", None)
    return str(getattr(mode, "value", mode)) == "none"


def live_resolver(config: DoiConfig) -> Resolver:
    """A resolver over the real registries (or ``base_url``'s mirror of them) for one item."""
    urls: dict[str, Any] = {}
    if config.base_url:
        base = config.base_url.rstrip("/")
        urls = {
            f"{source}_url": f"{base}/{source}"
            for source in ("crossref", "datacite", "openalex", "unpaywall", "handle")
        }
    if _replaying():
        return Resolver(mailto=config.mailto, threshold=config.threshold, rate_limit=None, **urls)
    return ItemLiveResolver(mailto=config.mailto, threshold=config.threshold, **urls)


def item_resolver(item: Sample, corpus: str | None, config: DoiConfig) -> BaseResolver:
    """The resolver one mixed item's DOIs are checked with (offline: the item's own two papers
    are always known, then the suite corpus and any recorded responses)."""
    if config.mode == "live":
        return live_resolver(config)
    gold = {str(item[f"doi{i}"]): str(item[f"title{i}"]) for i in (1, 2) if item[f"doi{i}"]}
    return _WithGold(gold, offline_resolver(corpus, config))


def _check_pairs(resolver: BaseResolver, pairs: Sequence[tuple[str | None, str]]) -> list[DOICheck]:
    return [resolver.check(doi, title) for title, doi in pairs]


def distinct_pairs(raw: str) -> list[tuple[str | None, str]]:
    """(title, DOI) pairs with each DOI once; a later mention may supply a missing title."""
    kept: dict[str, str | None] = {}
    for title, doi in extract_title_doi_pairs(raw):
        if doi not in kept or (kept[doi] is None and title):
            kept[doi] = title
    return [(title, doi) for doi, title in kept.items()]


async def check_dois(
    pairs: Sequence[tuple[str | None, str]], resolver: BaseResolver
) -> list[DOICheck]:
    """Look every DOI up in a worker thread (inside this item's context, hence its cassette).

    A cassette miss becomes the recording layer's own error (which says how to record); any
    other failure, or a DOI no source could decide, becomes :class:`DOILookupError`.
    """
    from pytest_citebench import recording

    before = recording.miss_count()
    try:
        checks = await blocking(_check_pairs, resolver, pairs)
    except Exception as exc:
        if recording.miss_count() > before:
            raise recording.miss_error() from None
        raise DOILookupError(f"DOI lookup failed: {type(exc).__name__}: {exc}") from exc
    if recording.miss_count() > before:
        raise recording.miss_error()
    undecided = [c for c in checks if c.exists is None]
    if undecided:
        raise DOILookupError(
            "DOI lookup failed, so the item is not scored: "
            + "; ".join(f"{c.doi}: {c.error}" for c in undecided)
        )
    return checks


def check_record(check: DOICheck) -> dict[str, Any]:
    """One DOI check as the mixed task stores it in its stage details (plain JSON)."""
    return {
        "doi": check.doi,
        "title": check.claimed_title,
        "exists": bool(check.exists),
        "agency": check.agency,
        "registered_title": check.registered_titles[0] if check.registered_titles else None,
        "title_match": bool(check.title_match),
        "title_score": check.title_score,
        "source": check.source,
        "note": check.error,
    }
