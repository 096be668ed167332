"""A loopback HTTP server that plays recorded registry responses to the live :class:`Resolver`.

Why a real server and not mocks: the live path's URL building (percent-encoded SICI DOIs),
headers, status handling, Retry-After parsing and body decoding are exactly what breaks against
real registries, and only real HTTP exercises them.  The server sends each recording's status,
headers (minus the transfer ones: bodies are stored decoded) and body bytes untouched.

It binds 127.0.0.1 on an ephemeral port, so nothing outside the machine can reach it.  One
server stands in for every registry; each lives under its own path prefix, which
:meth:`RecordedResponseServer.resolver_kwargs` turns into the Resolver's base URLs.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from pytest_citebench.doi.extract import normalize_doi
from pytest_citebench.doi.offline import load_recordings
from pytest_citebench.doi.records import RawResponse
from pytest_citebench.testing.loopback import LoopbackServer

__all__ = ["RecordedResponseServer", "route"]

Lookup = Callable[[str, str], Sequence[RawResponse] | None]
_SKIP = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection"})


def route(path: str) -> tuple[str, str] | None:
    """(source, DOI) addressed by a request path under this server's prefixes, or None."""
    p = unquote(urlsplit(path).path)
    rules = (
        ("/crossref/works/", "crossref"),
        ("/handle/api/handles/", "handle"),
        ("/datacite/dois/", "datacite"),
        ("/openalex/works/https://doi.org/", "openalex"),
        ("/openalex/works/doi:", "openalex"),
        ("/unpaywall/v2/", "unpaywall"),
    )
    for prefix, source in rules:
        if p.startswith(prefix):
            rest = p[len(prefix) :]
            if source == "crossref" and rest.endswith("/agency"):
                source, rest = "agency", rest[: -len("/agency")]
            doi = normalize_doi(rest)
            return (source, doi) if doi else None
    return None


class RecordedResponseServer(LoopbackServer):
    """Serves recordings keyed by (source, DOI); repeated requests walk through the list.

    Unrecorded requests get 501, which the Resolver classifies as an error -- never a silent
    "not found".
    """

    def __init__(
        self,
        recordings: Mapping[tuple[str, str], Sequence[RawResponse]] | None = None,
        *,
        lookup: Lookup | None = None,
    ) -> None:
        table = dict(recordings or {})
        self._lookup: Lookup = lookup or (lambda source, doi: table.get((source, doi)))
        self.hits: Counter[tuple[str, str]] = Counter()
        #: (raw request path with query, request headers) of every request, for assertions.
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._lock = threading.Lock()

    @classmethod
    def from_dirs(cls, *dirs: str | os.PathLike[str]) -> RecordedResponseServer:
        """Serve the same recording directories ``OfflineDirResolver`` reads, over real HTTP."""
        table: dict[tuple[str, str], list[RawResponse]] = {}
        for d in dirs:
            for rec in load_recordings(d):
                key = (str(rec["api"]), normalize_doi(str(rec["doi"])) or str(rec["doi"]))
                raw = RawResponse.from_recording(rec["response"], rec["request"]["url"])
                table.setdefault(key, []).append(raw)
        return cls(table)

    def _next(self, source: str, doi: str) -> RawResponse | None:
        recs = self._lookup(source, doi)
        with self._lock:
            n = self.hits[(source, doi)]
            self.hits[(source, doi)] += 1
        if not recs:
            return None
        return recs[min(n, len(recs) - 1)]

    def reset(self) -> None:
        """Forget how often each recording was served (start sequences over)."""
        with self._lock:
            self.hits.clear()
            self.requests.clear()

    def resolver_kwargs(self) -> dict[str, Any]:
        """Base-URL keyword arguments that point a :class:`Resolver` at this server."""
        r = self.root
        return {
            "crossref_url": f"{r}/crossref",
            "datacite_url": f"{r}/datacite",
            "openalex_url": f"{r}/openalex",
            "unpaywall_url": f"{r}/unpaywall",
            "handle_url": f"{r}/handle",
        }

    def start(self) -> RecordedResponseServer:
        """Serve on a free loopback port in a daemon thread; an unrecorded request gets a 501,
        which the resolver reads as an error, never as "not found"."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One buffered write per response and no Nagle: otherwise keep-alive requests on
            # loopback stall ~40 ms each on delayed ACKs (measured: 1,857 requests took 87 s).
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                with server._lock:
                    server.requests.append((self.path, dict(self.headers.items())))
                target = route(self.path)
                raw = server._next(*target) if target else None
                if raw is None:
                    body = f"no recording for {target or self.path}".encode()
                    self.send_response_only(501)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                data = raw.body.encode("utf-8")
                try:
                    phrase = HTTPStatus(raw.status).phrase
                except ValueError:
                    phrase = ""
                self.send_response_only(raw.status, phrase)
                for key, value in raw.headers.items():
                    if key not in _SKIP:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return self._serve(Handler)
