"""Decide whether a DOI exists and what title it is registered under.

The chain is: agency lookup (Crossref's ``/works/{doi}/agency`` route, falling back to the doi.org
handle API) -> the agency's own registry (Crossref or DataCite; both when the agency is unknown)
-> OpenAlex -> Unpaywall, the last two only while existence or a title is still missing.

Three answers are kept apart on purpose, because a benchmark that counts "invented DOIs" must
never count an outage as an invention:

* **found** -- a registry returned the work;
* **not found** -- a registry that would hold the DOI answered 404 with its normal not-found body
  (JSON, or Crossref's plain-text "Resource not found.", even under a JSON content type);
* **error** -- network failure, 429 after the bounded Retry-After retries, 5xx, an HTML error
  page, a malformed body.  Errors are never cached and never turn into "not found".

An OpenAlex 404 alone is not evidence: OpenAlex lags registration and answers transient 404s for
DOIs that exist, so it can confirm existence but never deny it.

Every way of getting a response -- live HTTP (:class:`Resolver`), a directory of recorded
responses (:class:`OfflineDirResolver`), vcrpy cassettes read through an index
(:class:`CassetteResolver`) -- feeds the same :func:`classify` and the same chain, so offline
answers are exactly what the live path would conclude from the same bytes.

The response types and :func:`~pytest_citebench.doi.records.classify` live in
:mod:`~pytest_citebench.doi.records`; the resolvers that answer from recordings or a fixed
registry (:class:`~pytest_citebench.doi.offline.OfflineDirResolver`,
:class:`~pytest_citebench.doi.offline.CassetteResolver`,
:class:`~pytest_citebench.doi.offline.RegistryResolver`) in :mod:`~pytest_citebench.doi.offline`.
The chain's order and how its answers combine live in
:func:`~pytest_citebench.doi.chain.run_chain`; this module holds the resolvers that drive it:
:class:`BaseResolver` and the live :class:`Resolver`.

Importing this module is cheap: ``requests`` and ``crossref`` are imported on the first live
request only.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from pytest_citebench.doi.chain import run_chain
from pytest_citebench.doi.extract import normalize_doi
from pytest_citebench.doi.records import (
    ALL_SOURCES,
    DOICheck,
    DOIRecord,
    Outcome,
    RawResponse,
    classify,
)
from pytest_citebench.doi.titles import DEFAULT_THRESHOLD, best_title_score

__all__ = [
    "BaseResolver",
    "RateLimiter",
    "Resolver",
    "TransportError",
    "polite_headers",
]


class TransportError(Exception):
    """The request got no HTTP response at all (DNS, refused, reset, timeout)."""


class BaseResolver:
    """Shared ``check`` logic on top of a ``resolve(doi) -> DOIRecord``."""

    threshold: float = DEFAULT_THRESHOLD

    def resolve(self, doi: str) -> DOIRecord:
        """The registries' answer for ``doi``; ``exists`` is None when it could not be decided."""
        raise NotImplementedError

    def check(self, doi: str, title: str | None = None, threshold: float | None = None) -> DOICheck:
        """Existence of ``doi`` and, if ``title`` is given, whether it is the registered title."""
        rec = self.resolve(doi)
        titles = rec.all_titles()
        match: bool | None = None
        score: float | None = None
        error = rec.error
        if title is not None and rec.exists:
            if titles:
                score = best_title_score(title, rec.titles, rec.subtitles, rec.original_titles)
                match = score >= (self.threshold if threshold is None else threshold)
            elif error is None:
                error = "DOI exists but no source returned a title to compare"
        return DOICheck(
            doi=rec.doi,
            exists=rec.exists,
            agency=rec.agency,
            registered_titles=titles,
            title_match=match,
            source=rec.source,
            error=error,
            claimed_title=title,
            title_score=None if score is None else round(score, 4),
            subtitles=rec.subtitles,
            lookups=rec.lookups,
        )

    def check_many(
        self, items: Iterable[tuple[str, str | None]], threshold: float | None = None
    ) -> list[DOICheck]:
        """Check (doi, claimed title) pairs in order; repeated DOIs are answered from cache."""
        return [self.check(doi, title, threshold) for doi, title in items]


class RateLimiter:
    """Spaces requests to one host at most ``rate`` per second (None or 0: unlimited).

    A fixed spacing rather than a token bucket: registries' published limits are per second
    and polite-pool etiquette prefers an even stream to bursts.
    """

    def __init__(
        self,
        rate: float | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Claim the next slot under the lock but sleep outside it, so threads queue in order."""
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self._sleep(slot - now)


def polite_headers(mailto: str | None) -> dict[str, str]:
    """The request headers of every registry client: crossrefapi's ``Etiquette`` User-Agent
    (the polite pool's contact, ``mailto``) and JSON. Shared by the DOI resolver and the title
    search, so both introduce themselves the same way."""
    from crossref.restful import Etiquette

    from pytest_citebench import __version__

    ua = str(
        Etiquette(
            "pytest-citebench",
            __version__,
            "https://pypi.org/project/pytest-citebench/",
            mailto or "anonymous",
        )
    )
    return {"User-Agent": ua, "Accept": "application/json"}


def _quote_doi(doi: str) -> str:
    # SICI/BioOne DOIs hold ( ) [ ] < > ; : that must not reach a URL raw.
    return quote(doi, safe="/")


class Resolver(BaseResolver):
    """Live resolver over HTTP, with caching, rate limiting and bounded retries.

    Why ``requests`` and not crossrefapi's ``Works().doi()``: ``Works`` builds every URL from the
    hard-coded ``https://api.crossref.org`` (so tests cannot point it at a loopback server),
    returns None for *any* 404 (so an HTML error page would read as "not found"), raises a JSON
    error on 429/5xx bodies (losing Retry-After), puts the DOI in the path unescaped, and sleeps
    after each call unless throttling is off.  We keep crossrefapi's ``Etiquette`` to format the
    polite-pool User-Agent, and send ``mailto`` as a query parameter as Crossref asks.

    ``sources`` restricts the chain (e.g. drop ``"openalex"``); Unpaywall is consulted only with a
    mailto, which it requires.  ``sleep`` is injectable so tests of Retry-After do not wait.
    """

    DEFAULT_URLS: Mapping[str, str] = {
        "crossref": "https://api.crossref.org",
        "datacite": "https://api.datacite.org",
        "openalex": "https://api.openalex.org",
        "unpaywall": "https://api.unpaywall.org",
        "handle": "https://doi.org",
    }

    def __init__(
        self,
        *,
        mailto: str | None = None,
        crossref_url: str | None = None,
        datacite_url: str | None = None,
        openalex_url: str | None = None,
        unpaywall_url: str | None = None,
        handle_url: str | None = None,
        sources: Collection[str] = ALL_SOURCES,
        rate_limit: float | None = 5.0,
        max_tries: int = 3,
        max_retry_wait: float = 30.0,
        timeout: float = 15.0,
        cache_dir: str | os.PathLike[str] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        sleep: Callable[[float], None] = time.sleep,
        session: Any = None,
    ) -> None:
        unknown = set(sources) - set(ALL_SOURCES)
        if unknown:
            raise ValueError(f"unknown DOI sources: {sorted(unknown)}")
        self.mailto = mailto if mailto is not None else (os.environ.get("CITEBENCH_MAILTO") or None)
        given = {
            "crossref": crossref_url,
            "datacite": datacite_url,
            "openalex": openalex_url,
            "unpaywall": unpaywall_url,
            "handle": handle_url,
        }
        self.urls = {k: (v or self.DEFAULT_URLS[k]).rstrip("/") for k, v in given.items()}
        self.sources = frozenset(sources)
        self.max_tries = max(1, max_tries)
        self.max_retry_wait = max_retry_wait
        self.timeout = timeout
        self.threshold = threshold
        self._sleep = sleep
        self._session = session
        self._rate = rate_limit
        self._limiters: dict[str, RateLimiter] = {}
        self._memory: dict[str, DOIRecord] = {}
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._headers: dict[str, str] | None = None

    # -- transport hooks (overridden by the offline resolvers) --

    def request_url(self, source: str, doi: str) -> tuple[str, dict[str, str]]:
        """URL and query parameters of ``source``'s lookup of ``doi``."""
        q = _quote_doi(doi)
        polite = {"mailto": self.mailto} if self.mailto else {}
        if source == "agency":
            return f"{self.urls['crossref']}/works/{q}/agency", polite
        if source == "crossref":
            return f"{self.urls['crossref']}/works/{q}", polite
        if source == "handle":
            return f"{self.urls['handle']}/api/handles/{q}", {}
        if source == "datacite":
            return f"{self.urls['datacite']}/dois/{q}", {}
        if source == "openalex":
            return f"{self.urls['openalex']}/works/https://doi.org/{q}", polite
        if source == "unpaywall":
            return f"{self.urls['unpaywall']}/v2/{q}", {"email": self.mailto or ""}
        raise ValueError(source)

    def _http_headers(self) -> dict[str, str]:
        if self._headers is None:
            self._headers = polite_headers(self.mailto)
        return self._headers

    def fetch(self, source: str, doi: str, attempt: int) -> RawResponse | None:
        """One HTTP exchange; None when the source cannot be asked (Unpaywall without mailto)."""
        if source == "unpaywall" and not self.mailto:
            return None
        import requests

        if self._session is None:
            self._session = requests.Session()
        url, params = self.request_url(source, doi)
        host = urlsplit(url).netloc
        limiter = self._limiters.get(host)
        if limiter is None:
            limiter = self._limiters[host] = RateLimiter(self._rate)
        limiter.wait()
        try:
            r = self._session.get(
                url, params=params, headers=self._http_headers(), timeout=self.timeout
            )
        except requests.RequestException as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        # JSON is UTF-8 by definition; requests' charset guessing is slow and sometimes wrong.
        body = r.content.decode("utf-8", errors="replace")
        return RawResponse(r.status_code, {k.lower(): v for k, v in r.headers.items()}, body, r.url)

    def sleep(self, seconds: float) -> None:
        """The retry wait, through the injected ``sleep`` (a no-op for offline resolvers)."""
        self._sleep(seconds)

    # -- chain --

    def query(self, source: str, doi: str) -> Outcome:
        """Ask one source, retrying 429/5xx/network errors up to ``max_tries`` times.

        Waits what Retry-After says (else 1, 2, 4 s ...); a Retry-After beyond ``max_retry_wait``
        ends the retries at once.  The last failure is returned as an error, never a 404.
        """
        outcome = Outcome(source, "unavailable", message="source disabled")
        if source not in self.sources:
            return outcome
        tries = 0
        for attempt in range(self.max_tries):
            tries += 1
            try:
                raw = self.fetch(source, doi, attempt)
            except TransportError as exc:
                outcome = Outcome(source, "error", message=str(exc), retryable=True)
            else:
                if raw is None:
                    return Outcome(source, "unavailable", message="no response available")
                outcome = classify(source, raw)
            if not outcome.retryable or attempt == self.max_tries - 1:
                break
            wait = outcome.retry_after if outcome.retry_after is not None else 2.0**attempt
            if wait > self.max_retry_wait:
                outcome.message = f"{outcome.message}; Retry-After {wait:.0f}s > max_retry_wait"
                break
            self.sleep(wait)
        if outcome.kind == "error" and tries > 1:
            outcome.message = f"{outcome.message} (after {tries} tries)"
        return outcome

    def resolve(self, doi: str) -> DOIRecord:
        """Run the chain; only decided answers are cached, so an outage is asked again next time."""
        norm = normalize_doi(doi)
        if norm is None:
            return DOIRecord(doi, False, None, [], [], "syntax", None, lookups=[["syntax", "bad"]])
        cached = self._cache_get(norm)
        if cached is not None:
            return cached
        rec = run_chain(norm, self.query, self.sources)
        if rec.error is None and rec.exists is not None:
            self._cache_put(rec)
        return rec

    # -- cache --

    def _cache_path(self, doi: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{hashlib.sha256(doi.encode()).hexdigest()[:32]}.json"

    def _cache_get(self, doi: str) -> DOIRecord | None:
        rec = self._memory.get(doi)
        if rec is not None:
            return rec
        path = self._cache_path(doi)
        if path is None or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            rec = DOIRecord(**data)
        except (OSError, ValueError, TypeError):
            return None  # a damaged cache entry is a miss, not a failure
        if rec.doi != doi:
            return None
        self._memory[doi] = rec
        return rec

    def _cache_put(self, rec: DOIRecord) -> None:
        self._memory[rec.doi] = rec
        path = self._cache_path(rec.doi)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(rec), ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)  # atomic, so parallel runs never read half an entry
