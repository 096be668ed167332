"""What a DOI lookup returns, and the one function that reads an HTTP response into an answer.

Every way of getting a response (live HTTP, recorded files, cassettes) builds a
:class:`RawResponse` and hands it to :func:`classify`, which alone decides *found*, *not found*
or *error* (an outage, a rate limit, an HTML error page: never counted as "not found"). The
resolvers (:mod:`~pytest_citebench.doi.resolve`, :mod:`~pytest_citebench.doi.offline`) turn those
outcomes into a :class:`DOIRecord`, and a claimed title into a :class:`DOICheck`.

Stdlib only: importing this module costs nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = [
    "ALL_SOURCES",
    "DOICheck",
    "DOIRecord",
    "Outcome",
    "RawResponse",
    "Source",
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
_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
_DROP_REPLAY_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection"}
)

Kind = Literal["found", "not_found", "error", "unavailable"]


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
        """The verdict fields first, a single ``registered_title`` for scripts, the trail last."""
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
        """What ``doi check`` prints; non-ASCII titles are kept readable."""
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
