"""Is there a work with this title? A live title lookup in open scholarly indexes.

Why: a wrong citation that names no paper any suite knows is either a real work the suites do not
hold or an invented one, and only a registry can tell. :class:`TitleSearch` asks OpenAlex's
works search (``/works?search=``), then Crossref's bibliographic query
(``/works?query.bibliographic=``) whenever OpenAlex does not find the title, and reads every
result with the project's title matcher (:func:`~pytest_citebench.doi.titles.best_title_score`:
markup, LaTeX, accents and punctuation normalized, a Ratcliff-Obershelp ratio, a subtitle
allowed) against ``threshold`` (0.9 by default, the DOI checks' bar).

Three verdicts, kept apart as the DOI chain keeps its three:

* **found** -- a source returned a work whose title matches;
* **not found** -- every source asked answered (a 200 with its result list) and none matched;
* **error** -- any source asked could not answer: a 429 after the bounded Retry-After retries, a
  5xx, an HTML page, a malformed body, no connection, no recording to replay. An outage is
  never "not found", so it can never make a title read as invented.

The requests go through ``requests``, so inside a citebench item they are recorded into, and
replayed from, the item's cassette (the contact address is filtered out of it). Importing this
module is cheap: ``requests`` loads on the first lookup.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from pytest_citebench.doi.records import RawResponse, retry_after_seconds
from pytest_citebench.doi.titles import DEFAULT_THRESHOLD, best_title_score

__all__ = ["SOURCES", "SourceAnswer", "TitleLookup", "TitleSearch", "read_search"]

#: The sources asked, in order: OpenAlex's works search, then Crossref's bibliographic query.
SOURCES = ("openalex", "crossref")
Verdict = Literal["found", "not_found", "error"]
_RETRYABLE = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class SourceAnswer:
    """What one source said: ``found`` (a matching work), ``no_match`` (it answered, nothing
    matched) or ``error``; the best result seen, with its score, either way."""

    source: str
    kind: Literal["found", "no_match", "error"]
    title: str = ""
    doi: str = ""
    score: float | None = None
    message: str = ""
    retryable: bool = False
    retry_after: float | None = None


@dataclass(frozen=True)
class TitleLookup:
    """The verdict on one title and how it was reached, as plain JSON for a stage's details
    (``to_json``/``from_json``): a rescore reads it back without asking anyone again."""

    title: str
    verdict: Verdict
    source: str = ""  # the source that found it
    matched_title: str = ""  # the best-matching registered title (found) or best seen
    doi: str = ""
    score: float | None = None
    note: str = ""  # why, for a reason: the failure, or the best near miss
    trail: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (source, kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "verdict": self.verdict,
            "source": self.source,
            "matched_title": self.matched_title,
            "doi": self.doi,
            "score": self.score,
            "note": self.note,
            "trail": [list(t) for t in self.trail],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TitleLookup | None:
        """The lookup a stage recorded, or None for anything that is not one (a hand-edited
        or foreign record is no evidence)."""
        verdict = data.get("verdict")
        if verdict not in ("found", "not_found", "error") or not isinstance(data.get("title"), str):
            return None
        score = data.get("score")
        return cls(
            title=str(data["title"]),
            verdict=verdict,
            source=str(data.get("source") or ""),
            matched_title=str(data.get("matched_title") or ""),
            doi=str(data.get("doi") or ""),
            score=float(score) if isinstance(score, int | float) else None,
            note=str(data.get("note") or ""),
            trail=tuple(
                (str(t[0]), str(t[1]))
                for t in data.get("trail") or ()
                if isinstance(t, list | tuple) and len(t) == 2
            ),
        )


def _looks_html(raw: RawResponse) -> bool:
    head = raw.body.lstrip()[:64].lower()
    return "html" in raw.headers.get("content-type", "").lower() or head.startswith(
        ("<!doctype", "<html", "<head", "<body")
    )


def _works(source: str, data: Any) -> list[tuple[list[str], list[str], str]] | None:
    """(titles, subtitles, DOI) of every result of a search body; None when the body is not a
    search result list of that source (an error, never "no match")."""
    if not isinstance(data, dict):
        return None
    if source == "openalex":
        results = data.get("results")
        if not isinstance(results, list):
            return None
        out: list[tuple[list[str], list[str], str]] = []
        for work in results:
            if isinstance(work, dict):
                titles = [t for t in (work.get("title"), work.get("display_name")) if t]
                out.append(([str(t) for t in titles], [], str(work.get("doi") or "")))
        return out
    message = data.get("message")
    items = message.get("items") if isinstance(message, dict) else None
    if data.get("status") != "ok" or not isinstance(items, list):
        return None
    out = []
    for work in items:
        if isinstance(work, dict):
            titles = [str(t) for t in work.get("title") or [] if isinstance(t, str)]
            titles += [str(t) for t in work.get("original-title") or [] if isinstance(t, str)]
            subtitles = [str(t) for t in work.get("subtitle") or [] if isinstance(t, str)]
            out.append((titles, subtitles, str(work.get("DOI") or "")))
    return out


def read_search(
    source: str, raw: RawResponse, title: str, threshold: float = DEFAULT_THRESHOLD
) -> SourceAnswer:
    """One search response read into found / no match / error: the single place that decides.

    A 429 or a 5xx is a retryable error (Retry-After read), any other status that is not 200
    an error (a search endpoint answers "nothing" with an empty list, never a 404), and so is
    an HTML page or a body that is not the source's result list.
    """
    status = raw.status
    if status in _RETRYABLE or status >= 500:
        what = "rate limited (429)" if status == 429 else f"server error {status}"
        return SourceAnswer(
            source,
            "error",
            message=what,
            retryable=status in _RETRYABLE,
            retry_after=retry_after_seconds(raw.headers),
        )
    if status != 200:
        return SourceAnswer(source, "error", message=f"unexpected HTTP {status}")
    if _looks_html(raw):
        return SourceAnswer(source, "error", message="HTML page instead of JSON")
    try:
        works = _works(source, json.loads(raw.body))
    except ValueError:
        works = None
    if works is None:
        return SourceAnswer(source, "error", message="not a search result list")
    best: tuple[float, str, str] | None = None
    for titles, subtitles, doi in works:
        if not titles:
            continue
        score = best_title_score(title, titles, subtitles)
        if best is None or score > best[0]:
            best = (score, titles[0], doi)
    if best is None:
        return SourceAnswer(source, "no_match", message="no result")
    score, found, doi = best
    kind: Literal["found", "no_match"] = "found" if score >= threshold else "no_match"
    return SourceAnswer(source, kind, found, doi, round(score, 4))


class TransportError(Exception):
    """No response at all: refused, reset, timed out (retried)."""


class TitleSearch:
    """Live title lookups: OpenAlex, then Crossref, bounded retries, polite pool, rate limited.

    ``mailto`` goes to both as the polite-pool contact (a ``mailto`` query parameter, and the
    User-Agent); ``limiters`` may be shared between instances (one per item keeps each item's
    cassette complete, one limiter per host keeps the whole run polite); ``rate_limit=None``
    and ``max_tries=1`` suit a replay, where nothing leaves the process.
    """

    DEFAULT_URLS: Mapping[str, str] = {
        "openalex": "https://api.openalex.org",
        "crossref": "https://api.crossref.org",
    }

    def __init__(
        self,
        *,
        mailto: str | None = None,
        openalex_url: str | None = None,
        crossref_url: str | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        rows: int = 5,
        rate_limit: float | None = 5.0,
        max_tries: int = 3,
        max_retry_wait: float = 30.0,
        timeout: float = 15.0,
        sleep: Callable[[float], None] = time.sleep,
        limiters: dict[str, Any] | None = None,
        session: Any = None,
    ) -> None:
        given = {"openalex": openalex_url, "crossref": crossref_url}
        self.urls = {k: (v or self.DEFAULT_URLS[k]).rstrip("/") for k, v in given.items()}
        self.mailto = mailto
        self.threshold = threshold
        self.rows = rows
        self.max_tries = max(1, max_tries)
        self.max_retry_wait = max_retry_wait
        self.timeout = timeout
        self._sleep = sleep
        self._rate = rate_limit
        self._limiters: dict[str, Any] = {} if limiters is None else limiters
        self._session = session
        self._headers: dict[str, str] | None = None

    def request(self, source: str, title: str) -> tuple[str, dict[str, str]]:
        """URL and query parameters of ``source``'s search for ``title`` (a few fields only, so
        a recorded answer stays small)."""
        polite = {"mailto": self.mailto} if self.mailto else {}
        if source == "openalex":
            params = {"search": title, "per-page": str(self.rows), "select": "id,doi,title"}
            return f"{self.urls['openalex']}/works", {**params, **polite}
        if source == "crossref":
            params = {
                "query.bibliographic": title,
                "rows": str(self.rows),
                "select": "DOI,title,subtitle,original-title",
            }
            return f"{self.urls['crossref']}/works", {**params, **polite}
        raise ValueError(source)

    def fetch(self, source: str, title: str) -> RawResponse:
        """One HTTP exchange; :class:`TransportError` when no response came (retried), any
        other failure (a replay with no recording of the request) as it is raised."""
        import requests

        from pytest_citebench.doi.resolve import RateLimiter, polite_headers

        if self._session is None:
            self._session = requests.Session()
        if self._headers is None:
            self._headers = polite_headers(self.mailto)
        url, params = self.request(source, title)
        host = urlsplit(url).netloc
        limiter = self._limiters.get(host)
        if limiter is None:
            limiter = self._limiters.setdefault(host, RateLimiter(self._rate))
        limiter.wait()
        try:
            r = self._session.get(url, params=params, headers=self._headers, timeout=self.timeout)
        except requests.RequestException as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        body = r.content.decode("utf-8", errors="replace")
        return RawResponse(r.status_code, {k.lower(): v for k, v in r.headers.items()}, body, r.url)

    def ask(self, source: str, title: str) -> SourceAnswer:
        """One source, retried on 429/5xx/no connection up to ``max_tries``: Retry-After is
        waited (else 1, 2, 4 s ...), and one beyond ``max_retry_wait`` ends the retries. The
        last failure is returned as an error."""
        answer = SourceAnswer(source, "error", message="not asked")
        tries = 0
        for attempt in range(self.max_tries):
            tries += 1
            try:
                raw = self.fetch(source, title)
            except TransportError as exc:
                answer = SourceAnswer(source, "error", message=str(exc), retryable=True)
            except Exception as exc:  # a cassette with no recording of it, a bug: not retried
                return SourceAnswer(source, "error", message=f"{type(exc).__name__}: {exc}")
            else:
                answer = read_search(source, raw, title, self.threshold)
            if not answer.retryable or attempt == self.max_tries - 1:
                break
            wait = answer.retry_after if answer.retry_after is not None else 2.0**attempt
            if wait > self.max_retry_wait:
                answer = _with_message(answer, f"; Retry-After {wait:.0f}s > {self.max_retry_wait}")
                break
            self._sleep(wait)
        if answer.kind == "error" and tries > 1:
            answer = _with_message(answer, f" (after {tries} tries)")
        return answer

    def lookup(self, title: str) -> TitleLookup:
        """OpenAlex, then Crossref unless OpenAlex found it: found if either finds it, not
        found only if both answered and neither did, an error otherwise."""
        answers: list[SourceAnswer] = []
        for source in SOURCES:
            answer = self.ask(source, title)
            answers.append(answer)
            if answer.kind == "found":
                break
        trail = tuple((a.source, a.kind) for a in answers)
        scored = [a for a in answers if a.score is not None]
        best = max(scored, key=lambda a: a.score or 0.0) if scored else None
        found = next((a for a in answers if a.kind == "found"), None)
        if found is not None:
            return TitleLookup(
                title, "found", found.source, found.title, found.doi, found.score, "", trail
            )
        errors = [a for a in answers if a.kind == "error"]
        near = (
            f"best match {best.score:.2f} ({best.source}): {best.title}"
            if best is not None
            else "no result"
        )
        if errors:
            why = "; ".join(f"{a.source}: {a.message}" for a in errors)
            return TitleLookup(
                title,
                "error",
                matched_title=best.title if best else "",
                score=best.score if best else None,
                note=why,
                trail=trail,
            )
        return TitleLookup(
            title,
            "not_found",
            matched_title=best.title if best else "",
            doi=best.doi if best else "",
            score=best.score if best else None,
            note=near,
            trail=trail,
        )


def _with_message(answer: SourceAnswer, more: str) -> SourceAnswer:
    from dataclasses import replace

    return replace(answer, message=answer.message + more)
