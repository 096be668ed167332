"""A suite corpus as every retriever sees it: the papers of ``corpus.jsonl``, the words a query
is matched on, the ``Hit`` a search returns, and the ``Retriever`` interface all kinds share.

Kept apart from the retrievers so that code which only reads a corpus or its words (the
baselines, the reranker's training pairs) never pulls in a model.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_citebench.errors import CitebenchError

Kind = Literal["bm25", "dense", "rerank"]
Field = Literal["title", "full"]
KINDS: tuple[Kind, ...] = ("bm25", "dense", "rerank")
# Bump when paper_text() changes: cached embeddings of the old text must not be reused.
_TEXT_VERSION = 1

_TOKEN = re.compile(r"[a-z0-9]+")
# Words that match everywhere and carry no evidence about which paper is cited.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "this",
        "to",
        "was",
        "were",
        "which",
        "with",
        "we",
        "our",
        "these",
        "those",
        "can",
        "using",
        "based",
        "via",
        "into",
        "than",
        "also",
        "such",
        "not",
    ]
)


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric words minus stopwords: what BM25 and ``coverage`` count."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class RerankerMissing(CitebenchError):
    """No cross-encoder on disk where one was expected; the message says how to train one."""


@dataclass(frozen=True)
class CorpusPaper:
    """One line of ``corpus.jsonl``: what a retriever can return and a prompt can show."""

    id: str
    title: str
    abstract: str
    authors: str
    doi: str | None


@dataclass(frozen=True)
class Hit:
    """One retrieved paper.

    ``score`` is on the retriever's own scale: BM25 score (bm25), cosine similarity (dense), or
    the cross-encoder's softmax probability over the re-ranked candidates (rerank).
    ``coverage`` is the same for every kind: the share of the query's distinct words (see
    ``tokens``) that the paper's searched text contains. It is a scale-free abstention signal.
    """

    paper: CorpusPaper
    score: float
    coverage: float


def paper_text(paper: CorpusPaper, field: Field) -> str:
    """The text a paper is represented by: its title, or title and abstract."""
    return paper.title if field == "title" else f"{paper.title}\n{paper.abstract}"


def load_papers(corpus_path: str | Path) -> list[CorpusPaper]:
    """Read a suite's ``corpus.jsonl`` (id, title, abstract, authors, doi per line)."""
    papers = []
    with open(corpus_path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                obj = json.loads(line)
                papers.append(
                    CorpusPaper(
                        obj["id"], obj["title"], obj["abstract"], obj["authors"], obj.get("doi")
                    )
                )
    if not papers:
        raise ValueError(f"{corpus_path}: empty corpus; retrieval needs at least one paper")
    return papers


def _check(k: int, field: str) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if field not in ("title", "full"):
        raise ValueError(f"field must be 'title' or 'full', got {field!r}")


class Retriever(ABC):
    """Search one corpus. ``search_many`` exists because models encode a batch far faster than
    the same queries one by one; ``search`` is the one-query case of it."""

    kind: Kind

    def __init__(self, papers: Sequence[CorpusPaper], corpus_path: str | Path) -> None:
        self.papers = list(papers)
        self.corpus_path = Path(corpus_path)
        self._words: dict[Field, list[frozenset[str]]] = {
            "title": [frozenset(tokens(p.title)) for p in self.papers],
            "full": [frozenset(tokens(paper_text(p, "full"))) for p in self.papers],
        }

    def coverage(self, query: str, index: int, field: Field) -> float:
        """Share of the query's distinct words in paper ``index``'s text; 0 for an empty query."""
        distinct = set(tokens(query))
        if not distinct:
            return 0.0
        return len(distinct & self._words[field][index]) / len(distinct)

    def search(self, query: str, *, k: int, field: Field = "full") -> list[Hit]:
        """One query; prefer ``search_many`` when there are several."""
        return self.search_many([query], k=k, field=field)[0]

    @abstractmethod
    def search_many(
        self, queries: Sequence[str], *, k: int, field: Field = "full"
    ) -> list[list[Hit]]:
        """The top-k hits of each query, best first; ties keep corpus order."""
