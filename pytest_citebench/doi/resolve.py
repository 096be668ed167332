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

Importing this module is cheap: ``requests`` and ``crossref`` are imported on the first live
request only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from pytest_citebench.doi.extract import normalize_doi
from pytest_citebench.doi.titles import DEFAULT_THRESHOLD, best_title_score

__all__ = [
    "ALL_SOURCES",
    "CASSETTE_FILTERS",
    "BaseResolver",
    "CassetteResolver",
    "DOICheck",
    "DOIRecord",
    "OfflineDirResolver",
    "Outcome",
    "RateLimiter",
    "RawResponse",
    "RegistryResolver",
    "Resolver",
    "TransportError",
    "classify",
    "retry_after_seconds",
]

Source = Literal["agency", "handle", "crossref", "datacite", "openalex", "unpaywall"]
#: Every source the chain can consult, in chain order.
ALL_SOURCES: tuple[Source, ...] = (
    "agency",
    "handle",
    "crossref",
    "datacite",
    "openalex",
    "unpaywall",
)
_AGENCY_SOURCES: tuple[Source, ...] = ("agency", "handle")
_FALLBACKS: tuple[Source, ...] = ("openalex", "unpaywall")
# Sources whose 404 means "this DOI is not registered here" (OpenAlex's does not).
_AUTHORITATIVE_404 = frozenset({"crossref", "datacite", "unpaywall"})
_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
_DROP_REPLAY_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection"}
)

Kind = Literal["found", "not_found", "error", "unavailable"]


class TransportError(Exception):
    """The request got no HTTP response at all (DNS, refused, reset, timeout)."""


@dataclass(frozen=True)
class RawResponse:
    """One HTTP response as the classifier needs it: status, lower-cased headers, text body."""

    status: int
    headers: Mapping[str, str]
    body: str
    url: str = ""

    @classmethod
    def from_recording(cls, response: Mapping[str, Any], url: str = "") -> RawResponse:
        """Build from the ``response`` object of a recorded file (header values are lists).

        Content-encoding/length are dropped: the stored body is already decoded text.
        """
        headers: dict[str, str] = {}
        for key, value in (response.get("headers") or {}).items():
            if key.lower() in _DROP_REPLAY_HEADERS:
                continue
            headers[key.lower()] = ", ".join(value) if isinstance(value, list) else str(value)
        return cls(int(response["status"]), headers, str(response.get("body") or ""), url)


@dataclass
class Outcome:
    """What one source said about one DOI."""

    source: str
    kind: Kind
    titles: list[str] = field(default_factory=list)
    subtitles: list[str] = field(default_factory=list)
    original_titles: list[str] = field(default_factory=list)
    agency: str | None = None
    message: str | None = None
    retryable: bool = False
    retry_after: float | None = None


@dataclass
class DOIRecord:
    """What the chain concluded about a DOI.

    ``exists`` is None exactly when ``error`` says why no conclusion was possible.
    ``original_titles`` holds original-language and translated titles; ``lookups`` is the trail
    of (source, result) so a surprising answer can be explained.
    """

    doi: str
    exists: bool | None
    agency: str | None
    titles: list[str]
    subtitles: list[str]
    source: str
    error: str | None
    original_titles: list[str] = field(default_factory=list)
    lookups: list[list[str]] = field(default_factory=list)

    def all_titles(self) -> list[str]:
        """Registered titles and original-language titles, de-duplicated, non-empty."""
        return list(dict.fromkeys(t for t in (*self.titles, *self.original_titles) if t.strip()))


@dataclass
class DOICheck:
    """The answer of ``doi check``: existence plus, when a title was claimed, whether it matches.

    ``title_match`` is None when no title was claimed or none could be compared.
    """

    doi: str
    exists: bool | None
    agency: str | None
    registered_titles: list[str]
    title_match: bool | None
    source: str
    error: str | None
    claimed_title: str | None = None
    title_score: float | None = None
    subtitles: list[str] = field(default_factory=list)
    lookups: list[list[str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "doi": self.doi,
            "exists": self.exists,
            "agency": self.agency,
            "registered_title": self.registered_titles[0] if self.registered_titles else None,
            "registered_titles": self.registered_titles,
        }
        out.update(asdict(self))
        out.pop("lookups")
        out["lookups"] = self.lookups
        return out

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)


# --- classification ----------------------------------------------------------------------------


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date), or None.

    An HTTP-date is measured from the response's own Date header when it has one, so a replayed
    recording waits what the server asked for then, not "since 2025".
    """
    value = headers.get("retry-after")
    if not value:
        return None
    import email.utils  # deferred: it pulls in socket, a third of this module's import time

    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    ref: datetime | None = None
    if headers.get("date"):
        try:
            ref = email.utils.parsedate_to_datetime(headers["date"])
        except (TypeError, ValueError):
            ref = None
    ref = ref or now or datetime.now(UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if ref.tzinfo is None:
        ref = ref.replace(tzinfo=UTC)
    return max(0.0, (when - ref).total_seconds())


def _looks_html(raw: RawResponse) -> bool:
    if "html" in raw.headers.get("content-type", "").lower():
        return True
    head = raw.body.lstrip()[:64].lower()
    return head.startswith(("<!doctype", "<html", "<head", "<body", "<title", "<?xml"))


_TAGS = re.compile(r"<[^<>]*>")


def _snippet(body: str) -> str:
    # HTML error pages: keep their words, not their markup.
    return " ".join(_TAGS.sub(" ", body).split())[:120]


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _parse_found(source: str, data: Any) -> Outcome:
    """Read titles (or the agency) out of a 200 JSON body; structural surprises are errors."""
    if not isinstance(data, dict):
        return Outcome(source, "error", message="unexpected JSON shape")
    if source in ("crossref", "agency"):
        msg = data.get("message")
        if data.get("status") != "ok" or not isinstance(msg, dict):
            return Outcome(source, "error", message=f"status {data.get('status')!r}")
        if source == "agency":
            agency = msg.get("agency")
            agency_id = agency.get("id") if isinstance(agency, dict) else None
            if not isinstance(agency_id, str) or agency_id.lower() in ("", "unknown"):
                return Outcome(source, "unavailable", message="agency unknown")
            return Outcome(source, "found", agency=agency_id.lower())
        return Outcome(
            source,
            "found",
            titles=[t for t in _str_list(msg.get("title")) if t.strip()],
            subtitles=[t for t in _str_list(msg.get("subtitle")) if t.strip()],
            original_titles=[t for t in _str_list(msg.get("original-title")) if t.strip()],
            agency="crossref",
        )
    if source == "handle":
        code = data.get("responseCode")
        if code == 1:
            return Outcome(source, "found")
        if code == 100:
            return Outcome(source, "not_found", message="handle not found")
        return Outcome(source, "error", message=f"handle responseCode {code!r}")
    if source == "datacite":
        payload = data.get("data")
        attrs = payload.get("attributes") if isinstance(payload, dict) else None
        if not isinstance(attrs, dict):
            return Outcome(source, "error", message="no data.attributes")
        titles: list[str] = []
        subtitles: list[str] = []
        others: list[str] = []
        for entry in attrs.get("titles") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("title"), str):
                continue
            text, kind = entry["title"], entry.get("titleType")
            if not text.strip():
                continue
            if kind == "Subtitle":
                subtitles.append(text)
            elif kind == "TranslatedTitle":
                others.append(text)
            else:
                titles.append(text)
        return Outcome(source, "found", titles, subtitles, others, agency="datacite")
    # OpenAlex and Unpaywall: one plain title each.
    title = data.get("title") or data.get("display_name")
    return Outcome(source, "found", titles=[title] if isinstance(title, str) and title else [])


def classify(source: str, raw: RawResponse) -> Outcome:
    """Turn one HTTP response into found / not found / error.  The single place that decides."""
    status = raw.status
    if status in _RETRYABLE_STATUS or status >= 500:
        what = "rate limited (429)" if status == 429 else f"server error {status}"
        return Outcome(
            source,
            "error",
            message=f"{what}: {_snippet(raw.body)}" if raw.body else what,
            retryable=status in _RETRYABLE_STATUS,
            retry_after=retry_after_seconds(raw.headers),
        )
    if status in (404, 410):
        if _looks_html(raw):
            # A proxy/CDN error page, not the registry saying "no such DOI".
            return Outcome(source, "error", message=f"HTML error page with {status}")
        if source == "handle":
            try:
                data = json.loads(raw.body)
            except ValueError:
                data = None
            if isinstance(data, dict) and data.get("responseCode") not in (None, 100):
                return Outcome(source, "error", message=f"handle {data.get('responseCode')!r}")
        return Outcome(source, "not_found", message=_snippet(raw.body) or str(status))
    if status != 200:
        return Outcome(source, "error", message=f"unexpected HTTP {status}: {_snippet(raw.body)}")
    if _looks_html(raw):
        return Outcome(source, "error", message="HTML page instead of JSON")
    try:
        data = json.loads(raw.body)
    except ValueError:
        return Outcome(source, "error", message=f"malformed JSON: {_snippet(raw.body)}")
    return _parse_found(source, data)


# --- resolvers ---------------------------------------------------------------------------------


class BaseResolver:
    """Shared ``check`` logic on top of a ``resolve(doi) -> DOIRecord``."""

    threshold: float = DEFAULT_THRESHOLD

    def resolve(self, doi: str) -> DOIRecord:
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
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self._sleep(slot - now)


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
            from crossref.restful import Etiquette

            from pytest_citebench import __version__

            ua = str(
                Etiquette(
                    "pytest-citebench",
                    __version__,
                    "https://pypi.org/project/pytest-citebench/",
                    self.mailto or "anonymous",
                )
            )
            self._headers = {"User-Agent": ua, "Accept": "application/json"}
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
        norm = normalize_doi(doi)
        if norm is None:
            return DOIRecord(doi, False, None, [], [], "syntax", None, lookups=[["syntax", "bad"]])
        cached = self._cache_get(norm)
        if cached is not None:
            return cached
        rec = self._resolve_uncached(norm)
        if rec.error is None and rec.exists is not None:
            self._cache_put(rec)
        return rec

    def _resolve_uncached(self, doi: str) -> DOIRecord:
        outcomes: list[Outcome] = []

        def ask(source: str) -> Outcome:
            o = self.query(source, doi)
            if o.kind != "unavailable" or source in self.sources:
                outcomes.append(o)
            return o

        agency: str | None = None
        agency_exists: bool | None = None
        for name in _AGENCY_SOURCES:
            o = ask(name)
            if o.kind == "found":
                agency_exists, agency = True, o.agency
                break
            if o.kind == "not_found":
                return self._record(doi, False, None, None, o.source, outcomes)
        if agency in ("crossref", "datacite"):
            registries: list[str] = [agency]
        elif agency is None:
            registries = ["crossref", "datacite"]
        else:
            registries = []  # mEDRA, JaLC, ...: the agency already proved existence
        found: Outcome | None = None
        for source in registries:
            o = ask(source)
            if o.kind == "found":
                found = o
                break
        titled = found if found is not None and (found.titles or found.original_titles) else None
        if titled is None:
            for source in _FALLBACKS:
                o = ask(source)
                if o.kind == "found":
                    found = found or o
                    if o.titles:
                        titled = o
                        break
        if agency_exists or found is not None:
            agency = agency or (found.agency if found else None)
            best = titled or found
            return self._record(
                doi, True, agency, best, best.source if best else "agency", outcomes
            )
        errors = [o for o in outcomes if o.kind == "error"]
        if errors:
            msg = "; ".join(f"{o.source}: {o.message}" for o in errors)
            return self._record(doi, None, None, None, "", outcomes, error=msg)
        denied = [o.source for o in outcomes if o.kind == "not_found"]
        if any(s in _AUTHORITATIVE_404 for s in denied):
            return self._record(doi, False, None, None, "+".join(denied), outcomes)
        if denied:
            msg = "only OpenAlex answered (404), which does not prove a DOI does not exist"
        else:
            msg = "no source could answer (none enabled or recorded)"
        return self._record(doi, None, None, None, "", outcomes, error=msg)

    @staticmethod
    def _record(
        doi: str,
        exists: bool | None,
        agency: str | None,
        best: Outcome | None,
        source: str,
        outcomes: Sequence[Outcome],
        error: str | None = None,
    ) -> DOIRecord:
        return DOIRecord(
            doi=doi,
            exists=exists,
            agency=agency,
            titles=list(best.titles) if best else [],
            subtitles=list(best.subtitles) if best else [],
            source=source,
            error=error,
            original_titles=list(best.original_titles) if best else [],
            lookups=[[o.source, o.kind] for o in outcomes],
        )

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


class OfflineDirResolver(Resolver):
    """Answers from directories of recorded responses (the ``shared/data/doi`` format).

    Each directory holds ``index.jsonl`` (or just ``*.json``) with one file per response:
    ``{"api", "doi", "request": {"url"}, "response": {"status", "headers", "body"}}``.  A source
    with no recording for a DOI is "unavailable" (skipped), exactly like a disabled source.
    Several recordings for one (api, DOI) are served in order, one per retry (a 429 then a 200);
    the last one repeats.  Nothing sleeps: the recorded waits are honoured in order, not in time.
    """

    def __init__(self, *dirs: str | os.PathLike[str], **kwargs: Any) -> None:
        kwargs.setdefault("rate_limit", None)
        kwargs.setdefault("sleep", lambda _s: None)
        super().__init__(**kwargs)
        self.recordings: dict[tuple[str, str], list[RawResponse]] = {}
        for d in dirs:
            for rec in load_recordings(d):
                key = (str(rec["api"]), normalize_doi(str(rec["doi"])) or str(rec["doi"]))
                raw = RawResponse.from_recording(rec["response"], rec["request"]["url"])
                self.recordings.setdefault(key, []).append(raw)

    def fetch(self, source: str, doi: str, attempt: int) -> RawResponse | None:
        recs = self.recordings.get((source, doi))
        if not recs:
            return None
        return recs[min(attempt, len(recs) - 1)]


def load_recordings(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The recorded-response files of ``directory``, in index order."""
    root = Path(directory)
    index = root / "index.jsonl"
    if index.is_file():
        from pytest_citebench import jsonl

        names = [row["file"] for _, row in jsonl.iter_objects(index)]
    else:
        names = sorted(p.name for p in root.glob("*.json"))
    return [json.loads((root / name).read_text(encoding="utf-8")) for name in names]


def _canonical_url(url: str) -> str:
    """URL without the mailto/email parameters (filtered out of cassettes) and sorted query."""
    parts = urlsplit(url)
    query = sorted((k, v) for k, v in parse_qsl(parts.query) if k not in ("mailto", "email"))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


#: vcrpy options that keep the contact address (query parameter and User-Agent) out of cassettes.
CASSETTE_FILTERS: Mapping[str, Any] = {
    "filter_query_parameters": ["mailto", "email"],
    "filter_headers": ["user-agent"],
}


class CassetteResolver(Resolver):
    """Replays vcrpy cassettes through an index keyed by URL.

    vcrpy itself scans every interaction of a cassette for each request (measured: 52 ms per
    call at 500 interactions), so 1,000 DOIs through ``vcr.use_cassette`` take minutes.  Loading
    the same cassette files once and indexing them by URL makes a replayed lookup a dict access.
    Base URLs must be the ones the cassettes were recorded against.  Unrecorded requests are
    "unavailable", as in :class:`OfflineDirResolver`.
    """

    def __init__(self, *cassettes: str | os.PathLike[str], **kwargs: Any) -> None:
        kwargs.setdefault("rate_limit", None)
        kwargs.setdefault("sleep", lambda _s: None)
        super().__init__(**kwargs)
        self.index: dict[str, list[RawResponse]] = {}
        for path in cassettes:
            self._load(Path(path))

    def _load(self, path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            data = yaml.load(text, Loader=loader)  # a safe loader (C-accelerated when built)
        for inter in data.get("interactions") or []:
            req, resp = inter["request"], inter["response"]
            body = resp.get("body", {}).get("string", "")
            if isinstance(body, bytes):
                body = body.decode("utf-8", errors="replace")
            headers = {
                k.lower(): ", ".join(v) if isinstance(v, list) else str(v)
                for k, v in (resp.get("headers") or {}).items()
            }
            raw = RawResponse(int(resp["status"]["code"]), headers, body or "", req["uri"])
            self.index.setdefault(f"{req['method']} {_canonical_url(req['uri'])}", []).append(raw)

    def fetch(self, source: str, doi: str, attempt: int) -> RawResponse | None:
        url, params = self.request_url(source, doi)
        if params:
            url = f"{url}?{urlencode(params)}"
        recs = self.index.get(f"GET {_canonical_url(url)}")
        if not recs:
            return None
        return recs[min(attempt, len(recs) - 1)]


def _arxiv_doi(arxiv_id: str) -> str:
    ident = arxiv_id.strip()
    for prefix in ("arXiv:", "arxiv:", "https://arxiv.org/abs/", "http://arxiv.org/abs/"):
        if ident.startswith(prefix):
            ident = ident[len(prefix) :]
    head, sep, tail = ident.rpartition("v")
    if sep and head and tail.isdigit() and (head[-1:].isdigit()):
        ident = head  # drop the version: the DOI names the paper, not a revision
    return f"10.48550/arxiv.{ident}".lower()


class RegistryResolver(BaseResolver):
    """Offline registry from known (DOI -> titles), e.g. every paper a suite cites.

    A DOI absent from the registry is, by default, unknown (an error) -- the registry is a subset
    of the world.  ``closed_world=True`` makes absence mean "does not exist", which is the right
    reading only when the registry is the complete set of admissible answers.  ``fallback``
    answers the misses instead (e.g. a live or cassette resolver).
    """

    def __init__(
        self,
        mapping: Mapping[str, str | Sequence[str]],
        *,
        closed_world: bool = False,
        fallback: BaseResolver | None = None,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.titles: dict[str, list[str]] = {}
        for doi, titles in mapping.items():
            norm = normalize_doi(doi)
            if norm is None:
                raise ValueError(f"not a DOI: {doi!r}")
            self.titles.setdefault(norm, []).extend([titles] if isinstance(titles, str) else titles)
        self.closed_world = closed_world
        self.fallback = fallback
        self.threshold = threshold

    @classmethod
    def from_arxiv(cls, papers: Iterable[tuple[str, str]], **kwargs: Any) -> RegistryResolver:
        """Registry of arXiv papers (arXiv id, title): every arXiv paper has DataCite DOI
        ``10.48550/arXiv.<id>``."""
        mapping: dict[str, list[str]] = {}
        for arxiv_id, title in papers:
            mapping.setdefault(_arxiv_doi(arxiv_id), []).append(title)
        return cls(mapping, **kwargs)

    def resolve(self, doi: str) -> DOIRecord:
        norm = normalize_doi(doi)
        if norm is None:
            return DOIRecord(doi, False, None, [], [], "syntax", None, lookups=[["syntax", "bad"]])
        titles = self.titles.get(norm)
        if titles is not None:
            agency = "datacite" if norm.startswith("10.48550/") else None
            return DOIRecord(
                norm,
                True,
                agency,
                list(titles),
                [],
                "registry",
                None,
                lookups=[["registry", "found"]],
            )
        if self.fallback is not None:
            return self.fallback.resolve(norm)
        if self.closed_world:
            return DOIRecord(
                norm, False, None, [], [], "registry", None, lookups=[["registry", "not_found"]]
            )
        return DOIRecord(
            norm,
            None,
            None,
            [],
            [],
            "",
            "not in the offline registry",
            lookups=[["registry", "unavailable"]],
        )
