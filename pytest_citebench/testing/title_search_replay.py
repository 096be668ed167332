"""A loopback server that answers title searches (OpenAlex ``/works?search=``, Crossref
``/works?query.bibliographic=``) from recorded registry responses.

Why a real server: the live :class:`~pytest_citebench.doi.title_search.TitleSearch` builds URLs,
sends the polite-pool contact, reads statuses, Retry-After and bodies; only real HTTP exercises
that, and a test must never reach the internet. The works it serves are the recorded single-work
responses of ``fixtures/doi`` (the shared Crossref and OpenAlex records, the format
:func:`~pytest_citebench.doi.offline.load_recordings` reads): each recorded work body, unchanged,
is one hit inside the search envelope each source wraps its results in (OpenAlex ``{"meta",
"results"}``, Crossref ``{"status", "message": {"items"}}``), so the result shapes are the
registries' own.

A work is a hit when the title matcher scores it at least ``min_score`` against the query
(0.5: a near miss comes back, as from a real search, and the client's threshold decides), best
first. ``failures`` makes a source answer with given statuses first (``{"openalex": [429,
429]}``: two rate limits, then answers), ``down`` sources always answer 503; every request is
kept in ``requests`` (path with query, headers) for assertions. It binds 127.0.0.1 on an
ephemeral port; point a client at it with ``CITEBENCH_DOI_BASE_URL=<root>`` (``<root>/openalex``,
``<root>/crossref``) or :meth:`RecordedSearchServer.search_kwargs`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pytest_citebench.testing.loopback import LoopbackServer

__all__ = ["RecordedSearchServer"]


def _titles(source: str, work: Mapping[str, Any]) -> list[str]:
    if source == "openalex":
        return [str(t) for t in (work.get("title"), work.get("display_name")) if t]
    return [str(t) for t in work.get("title") or [] if isinstance(t, str)]


class RecordedSearchServer(LoopbackServer):
    """Serves search results built from recorded works; see the module docstring."""

    def __init__(
        self,
        works: Mapping[str, Sequence[Mapping[str, Any]]],
        *,
        failures: Mapping[str, Sequence[int]] | None = None,
        down: Iterable[str] = (),
        retry_after: str = "0",
        min_score: float = 0.5,
    ) -> None:
        self.works = {source: list(found) for source, found in works.items()}
        self.failures = {source: list(codes) for source, codes in (failures or {}).items()}
        self.down = frozenset(down)
        self.retry_after = retry_after
        self.min_score = min_score
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._lock = threading.Lock()

    @classmethod
    def from_dirs(cls, *dirs: str | os.PathLike[str], **kwargs: Any) -> RecordedSearchServer:
        """The recorded 200 work responses of the directories (Crossref's ``message``, OpenAlex's
        work object), by source."""
        from pytest_citebench.doi.offline import load_recordings

        works: dict[str, list[Mapping[str, Any]]] = {"openalex": [], "crossref": []}
        for directory in dirs:
            for rec in load_recordings(directory):
                api, response = rec.get("api"), rec.get("response") or {}
                if api not in works or response.get("status") != 200:
                    continue
                body = json.loads(response["body"])
                work = body.get("message") if api == "crossref" else body
                if isinstance(work, dict):
                    works[str(api)].append(work)
        return cls(works, **kwargs)

    def hits(self, source: str, query: str) -> list[Mapping[str, Any]]:
        """The recorded works of ``source`` the title matcher scores ``min_score`` or more
        against ``query``, best first."""
        from pytest_citebench.doi.titles import best_title_score

        scored: list[tuple[float, int, Mapping[str, Any]]] = []
        for work in self.works.get(source, []):
            titles = _titles(source, work)
            if titles:
                score = best_title_score(query, titles)
                if score >= self.min_score:
                    scored.append((-score, len(scored), work))
        return [work for _, _, work in sorted(scored, key=lambda s: s[:2])]

    def envelope(self, source: str, query: str, rows: int) -> dict[str, Any]:
        """The search response body: the source's own envelope around the hits."""
        found = self.hits(source, query)[:rows]
        if source == "openalex":
            meta = {"count": len(found), "db_response_time_ms": 1, "page": 1, "per_page": rows}
            return {"meta": meta, "results": found, "group_by": []}
        return {
            "status": "ok",
            "message-type": "work-list",
            "message-version": "1.0.0",
            "message": {
                "facets": {},
                "total-results": len(found),
                "items": found,
                "items-per-page": rows,
                "query": {"start-index": 0, "search-terms": query},
            },
        }

    def search_kwargs(self) -> dict[str, str]:
        """Keyword arguments that point a ``TitleSearch`` at this server."""
        return {"openalex_url": f"{self.root}/openalex", "crossref_url": f"{self.root}/crossref"}

    def _answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(path)
        source = parts.path.strip("/").split("/")[0]
        query = parse_qs(parts.query)
        with self._lock:
            failing = self.failures.get(source)
            status = failing.pop(0) if failing else None
        if source in self.down:
            status = 503
        if status is not None:
            headers = {"Content-Type": "text/plain"}
            if status in (429, 503):
                headers["Retry-After"] = self.retry_after
            return status, headers, f"status {status}".encode()
        key = {"openalex": "search", "crossref": "query.bibliographic"}.get(source)
        if key is None or parts.path.rstrip("/") != f"/{source}/works" or key not in query:
            return 404, {"Content-Type": "text/plain"}, b"no such route"
        rows = int((query.get("per-page") or query.get("rows") or ["5"])[0])
        body = json.dumps(self.envelope(source, query[key][0], rows)).encode()
        return 200, {"Content-Type": "application/json"}, body

    def start(self) -> RecordedSearchServer:
        """Serve on a free loopback port in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                with server._lock:
                    server.requests.append((self.path, dict(self.headers.items())))
                status, headers, body = server._answer(self.path)
                self.send_response_only(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return self._serve(Handler)
