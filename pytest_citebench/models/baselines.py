"""Offline retrieval baselines: answer a citation question by searching the suite's own corpus.

They exist so the whole pipeline (collect, run, score, aggregate, gate) runs with no key and no
network, and as the floor a real model has to beat. They answer from the structured ``Hint``
(the sentence or title the prompt was built from) rather than parsing their prompt back apart.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pytest_citebench.tasks.base import Hint

_TOKEN = re.compile(r"[a-z0-9]+")
# Words that match everywhere and carry no evidence about which paper is cited.
_STOPWORDS = frozenset(
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
# Minimum share of the query's distinct words found in the best match before the baseline answers.
# A share, not a BM25 score: raw BM25 scores shift with corpus size, so a fixed score floor would
# make the baseline abstain on small suites and never on large ones.
DEFAULT_FLOOR = {"indirect": 0.2, "direct": 0.5}


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


@dataclass(frozen=True)
class CorpusPaper:
    id: str
    title: str
    abstract: str
    authors: str
    doi: str | None


class BM25Index:
    """Two BM25 indexes over one corpus: titles (for title lookups) and title+abstract (for
    sentences, whose words come from what the cited paper did, not just its name)."""

    def __init__(self, papers: Sequence[CorpusPaper]) -> None:
        from rank_bm25 import BM25Okapi

        if not papers:
            raise ValueError("empty corpus: a BM25 baseline needs the suite's corpus.jsonl")
        self.papers = list(papers)
        self._title_words = [set(tokens(p.title)) for p in papers]
        self._full_words = [set(tokens(f"{p.title} {p.abstract}")) for p in papers]
        self._titles = BM25Okapi([tokens(p.title) or ["_"] for p in papers])
        self._full = BM25Okapi([tokens(f"{p.title} {p.abstract}") or ["_"] for p in papers])

    def search(
        self, query: str, *, field: str, k: int = 1
    ) -> list[tuple[CorpusPaper, float, float]]:
        """Top-k (paper, BM25 score, share of the query's distinct words the paper contains)."""
        index, words = (
            (self._titles, self._title_words)
            if field == "title"
            else (self._full, self._full_words)
        )
        q = tokens(query)
        if not q:
            return []
        scores = index.get_scores(q)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        distinct = set(q)
        return [
            (self.papers[i], float(scores[i]), len(distinct & words[i]) / len(distinct))
            for i in order
        ]


_LOCK = threading.Lock()


@lru_cache(maxsize=64)
def _load_index(corpus_path: str) -> BM25Index:
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
    return BM25Index(papers)


def index_for(corpus_path: str | Path) -> BM25Index:
    with _LOCK:  # building an index twice in two threads wastes a second; one is enough
        return _load_index(str(Path(corpus_path).resolve()))


def bm25_answer(hint: Hint, options: dict[str, Any]) -> str:
    """The bm25 model: best-matching paper's title (indirect) or authors (direct), else 'pass'."""
    if hint.corpus is None:
        raise ValueError(
            f"suite {hint.suite!r} has no corpus; citebench/bm25 needs 'corpus = ...' in suite.toml"
        )
    index = index_for(hint.corpus)
    floor = float(options.get("floor", DEFAULT_FLOOR.get(hint.task, 0.2)))
    field = "title" if hint.task == "direct" else "full"
    hits = index.search(hint.query, field=field)
    if not hits or hits[0][2] < floor:
        return "pass"
    paper = hits[0][0]
    return paper.authors if hint.task == "direct" else paper.title


# name (after "citebench/") -> answer function; later baselines (dense, rerank) add themselves.
BASELINES: dict[str, Callable[[Hint, dict[str, Any]], str]] = {"bm25": bm25_answer}
