"""Resolvers that answer without a network: recorded responses, cassettes, a fixed registry.

The recorded ones replay real registry bytes through the live
:class:`~pytest_citebench.doi.Resolver` chain (only ``fetch`` differs), so an offline answer is
what the live path would conclude from the same responses; :class:`RegistryResolver` answers
from a DOI -> titles mapping (every paper a suite cites) for the closed-world offline checks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pytest_citebench.doi.extract import normalize_doi
from pytest_citebench.doi.records import DOIRecord, RawResponse
from pytest_citebench.doi.resolve import BaseResolver, Resolver
from pytest_citebench.doi.titles import DEFAULT_THRESHOLD

__all__ = [
    "CASSETTE_FILTERS",
    "CassetteResolver",
    "OfflineDirResolver",
    "RegistryResolver",
    "load_recordings",
]


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
        """The ``attempt``-th recording for (source, DOI), the last one repeating; None if none."""
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
        """Look the live request's URL up, minus the contact parameters the cassettes filter out."""
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
        """A miss goes to ``fallback``, else is "not found" (closed world) or an error (open)."""
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
