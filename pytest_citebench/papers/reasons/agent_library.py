"""What the agentic task's ``search`` and ``read`` tools look in: the suite's corpus (bm25 by
default, dense or hybrid by option; offline) or OpenAlex (the open world, recorded).

A search returns papers with id, title, authors and year; a read adds the abstract. The corpus
has no year: it is read off the arXiv id (``0912.3995`` is 2009, ``hep-th/9901001`` 1999).
OpenAlex is asked through ``requests``, so inside an item its requests are recorded into (and on
replay come from) the item's cassette like the model's; a replay with no recording of one is the
item's cassette miss, never a request to the network.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from pytest_citebench.errors import CitebenchError

#: The searches a library may run: three over the suite's corpus, one open-world.
SEARCHES = ("bm25", "dense", "hybrid", "openalex")
OPENALEX_URL = "https://api.openalex.org"
#: Reciprocal rank fusion's constant (Cormack et al. 2009), and how deep each list is fused.
RRF_K = 60
_FUSED_DEPTH = 4


@dataclass(frozen=True)
class Found:
    """One paper a tool shows the model."""

    id: str
    title: str
    authors: str
    year: int | None
    abstract: str = ""

    def listing(self) -> dict[str, Any]:
        """As a search result shows it (no abstract: reading it is a step of its own)."""
        return {"id": self.id, "title": self.title, "authors": self.authors, "year": self.year}

    def full(self) -> dict[str, Any]:
        """As a read shows it."""
        return {**self.listing(), "abstract": self.abstract}


class Library(Protocol):
    """Where the tools look: ``search`` (best first) and ``read`` (None: no such id)."""

    def search(self, query: str, k: int) -> list[Found]: ...

    def read(self, paper_id: str) -> Found | None: ...


_NEW_ID = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}")
_OLD_ID = re.compile(r"^[a-z\-]+(?:\.[A-Z]{2})?/(\d{2})\d{5}")


def arxiv_year(arxiv_id: str) -> int | None:
    """The year an arXiv id was issued in, or None for an id of no arXiv shape."""
    found = _NEW_ID.match(arxiv_id) or _OLD_ID.match(arxiv_id)
    if found is None:
        return None
    yy = int(found.group(1))
    return 1900 + yy if yy >= 91 else 2000 + yy


def _papers(corpus: str) -> Mapping[str, Found]:
    """The corpus by id, read once per version of the file (a corpus edited between two runs
    in one process is read again)."""
    stat = Path(corpus).stat()
    return _read_papers(corpus, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _read_papers(corpus: str, mtime_ns: int, size: int) -> Mapping[str, Found]:
    from pytest_citebench.retrieval import load_papers

    return {
        p.id: Found(p.id, p.title, p.authors, arxiv_year(p.id), p.abstract)
        for p in load_papers(corpus)
    }


class CorpusLibrary:
    """The suite's ``corpus.jsonl``, searched over title and abstract."""

    def __init__(self, corpus: str, kind: str) -> None:
        self.corpus = corpus
        self.kind = kind

    def _ranked(self, kind: Any, query: str, k: int) -> list[str]:
        from pytest_citebench.retrieval import get_retriever

        hits = get_retriever(kind, Path(self.corpus)).search(query, k=k, field="full")
        return [hit.paper.id for hit in hits]

    def search(self, query: str, k: int) -> list[Found]:
        papers = _papers(self.corpus)
        if self.kind != "hybrid":
            ids = self._ranked(self.kind, query, k)
        else:
            ids = fuse(
                [self._ranked(kind, query, k * _FUSED_DEPTH) for kind in ("bm25", "dense")], k
            )
        return [papers[i] for i in ids if i in papers]

    def read(self, paper_id: str) -> Found | None:
        return _papers(self.corpus).get(paper_id.strip())


def fuse(rankings: Sequence[Sequence[str]], k: int) -> list[str]:
    """Reciprocal rank fusion: each id scores the sum of 1 / (RRF_K + rank) over the rankings
    that hold it; best first, ties by first appearance."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, paper_id in enumerate(ranking, start=1):
            scores[paper_id] = scores.get(paper_id, 0.0) + 1.0 / (RRF_K + rank)
    order = {pid: i for i, pid in enumerate(dict.fromkeys(p for r in rankings for p in r))}
    return sorted(scores, key=lambda pid: (-scores[pid], order[pid]))[:k]


class OpenAlexLibrary:
    """OpenAlex's works search and a work by id; recorded in the item's cassette."""

    _FIELDS = "id,display_name,authorships,publication_year"

    def __init__(self, base_url: str = OPENALEX_URL, mailto: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.mailto = mailto

    def _get(self, path: str, params: dict[str, str]) -> Any:
        import requests

        from pytest_citebench import recording

        if recording.current_item() is None:
            raise CitebenchError(
                "--citebench-agent-search openalex asks OpenAlex inside the item, recorded in "
                "its cassette; this item has none open (a bug: tell the maintainers)"
            )
        if self.mailto:
            params = {**params, "mailto": self.mailto}
        url = f"{self.base_url}{path}?{urlencode(params)}"
        misses = recording.miss_count()
        try:
            response = requests.get(url, timeout=30, headers={"Accept": "application/json"})
        except Exception as exc:
            if recording.miss_count() > misses:
                raise recording.miss_error() from None
            failed = f"{type(exc).__name__}: {exc}"
            raise CitebenchError(f"the OpenAlex search failed: {failed}") from None
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise CitebenchError(
                f"OpenAlex answered HTTP {response.status_code} to {url}; the item is an error "
                "(record it again later)"
            )
        try:
            return response.json()
        except ValueError:
            raise CitebenchError(f"OpenAlex answered {url} with a body that is not JSON") from None

    def search(self, query: str, k: int) -> list[Found]:
        data = self._get("/works", {"search": query, "per-page": str(k), "select": self._FIELDS})
        results = data.get("results") if isinstance(data, dict) else None
        return [w for w in (work_of(r) for r in results or []) if w is not None][:k]

    def read(self, paper_id: str) -> Found | None:
        paper_id = paper_id.strip().rsplit("/", 1)[-1]
        if not re.fullmatch(r"[Ww]\d+", paper_id):
            return None
        data = self._get(
            f"/works/{quote(paper_id.upper())}",
            {"select": self._FIELDS + ",abstract_inverted_index"},
        )
        return work_of(data) if isinstance(data, dict) else None


def work_of(data: Any) -> Found | None:
    """An OpenAlex work as a tool shows it: the id's last segment (``W2741809807``), the
    display name, authors in order, year and the abstract rebuilt from its inverted index."""
    if not isinstance(data, dict) or not data.get("id"):
        return None
    authors = [
        str((a.get("author") or {}).get("display_name") or "")
        for a in data.get("authorships") or []
        if isinstance(a, dict)
    ]
    year = data.get("publication_year")
    return Found(
        str(data["id"]).rsplit("/", 1)[-1],
        str(data.get("display_name") or data.get("title") or ""),
        ", ".join(a for a in authors if a),
        year if isinstance(year, int) else None,
        abstract_of(data.get("abstract_inverted_index")),
    )


def abstract_of(index: Any) -> str:
    """OpenAlex's ``abstract_inverted_index`` (word -> positions) as text."""
    if not isinstance(index, dict):
        return ""
    words: dict[int, str] = {}
    for word, positions in index.items():
        for position in positions if isinstance(positions, list) else []:
            if isinstance(position, int):
                words[position] = str(word)
    return " ".join(words[i] for i in sorted(words))


def library(search: str, corpus: str | None, *, openalex_url: str, mailto: str | None) -> Library:
    """The library of one item: its suite's corpus, or OpenAlex."""
    if search == "openalex":
        return OpenAlexLibrary(openalex_url, mailto)
    if corpus is None:
        raise CitebenchError("the agentic task searches the suite's corpus: add 'corpus = ...'")
    return CorpusLibrary(corpus, search)
