"""Offline retrieval baselines: answer a citation question by searching the suite's own corpus.

They exist so the whole pipeline (collect, run, score, aggregate, gate) runs with no key and no
network, and as the floor a real model has to beat. They answer from the structured ``Hint``
(the sentence or title the prompt was built from) rather than parsing their prompt back apart.

Three of them, one per retriever in ``pytest_citebench.retrieval``:

* ``citebench/bm25``: Okapi BM25.
* ``citebench/dense``: cosine similarity of all-MiniLM-L6-v2 embeddings (the packaged weights).
* ``citebench/rerank``: the dense top-40 re-ranked by the cross-encoder that
  ``python -m pytest_citebench train-reranker`` fine-tunes (the paper's advanced RAG retriever).

What they answer: for ``direct`` the authors of the paper whose title best matches the query
(a title search); for every other task the best paper's title (a search over title + abstract).
Each abstains ("pass") when its best hit is below a floor on its own score scale (see ``FLOORS``).

Escalation stages (SID, direct with metadata) put more into ``Hint.extra``; the baselines use it:

* ``abstract``: appended to the query, and the search covers title + abstract even for ``direct``
  (the abstract describes the paper, so it is matched against the corpus abstracts).
* ``authors``: among the top ``AUTHOR_POOL`` hits, the best one sharing a surname with the given
  authors wins; without any such hit the ranking is unchanged. Names are not in the searched
  text, so appending them to the query would only dilute it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from pytest_citebench import registry
from pytest_citebench.api import AnswerFn, Hint
from pytest_citebench.retrieval import (
    CorpusPaper,
    Field,
    Hit,
    Kind,
    RerankRetriever,
    Retriever,
    get_retriever,
    tokens,
)

# Abstention floors, per retriever and task, each on a scale that does not drift with corpus size:
# * bm25: share of the query's distinct words found in the best match ("coverage"). Not the BM25
#   score: raw scores grow with corpus size, so a fixed score floor would abstain on small suites
#   and never on large ones.
# * dense: cosine similarity of the MiniLM embeddings. A title looked up by its own title scores
#   ~1.0 and other titles fall well below 0.9. For sentences the cosine says little about being
#   right (on 1,500 training-split REASONS sentences top-1 precision is 0.21 at any floor up to
#   0.35, 0.24 at 0.5); 0.3 only drops the off-topic ~5% (boilerplate, author lists, page
#   headers), costing under one point of accuracy, much as bm25's 0.2 coverage floor does.
# * rerank: the lift of the best candidate's softmax probability over a uniform guess among the
#   re-ranked candidates (probability x number of candidates; 1.0 = no preference). The
#   probability is what the localized contrastive loss trains; the lift keeps the floor's
#   meaning when ``candidates`` changes. On 400 validation queries (training citing papers the
#   cross-encoder never saw, none held out) the fused re-ranker's lift has median 10.4 and 5th
#   percentile 2.6; a floor of 3 passes on 8% of them and raises top-1 precision from 0.27 to
#   0.29 (4: 16% and 0.30; 1.5 never passes), the same trade as the dense floor's.
# Keyed by what the search answers (``Hint.answer``): a title found from a sentence (REASONS
# indirect and every task answering a title), or the authors of a paper found by its title
# (REASONS direct).
FLOORS: Mapping[Kind, Mapping[str, float]] = {
    "bm25": {"title": 0.2, "authors": 0.5},
    "dense": {"title": 0.3, "authors": 0.9},
    "rerank": {"title": 3.0, "authors": 3.0},
}
# How many hits the author preference looks through.
AUTHOR_POOL = 10
# Options read from the model's extra params; anything else there (temperature, max_tokens...)
# is for remote models and ignored.
_RETRIEVER_OPTIONS = {"bm25": (), "dense": (), "rerank": ("candidates", "reranker", "fusion")}

__all__ = [
    "BASELINES",
    "FLOORS",
    "CorpusPaper",
    "all_baselines",
    "answer_with",
    "confidence",
    "tokens",
]


def _surnames(authors: str) -> frozenset[str]:
    """Lower-case ASCII surnames (last word of each name) of an author list."""
    ascii_text = unicodedata.normalize("NFKD", authors).encode("ascii", "ignore").decode().lower()
    ascii_text = re.sub(r"\bet\.?\s+al\b\.?", " ", ascii_text)
    names = re.split(r",|;|\band\b|&|\n", ascii_text)
    return frozenset(words[-1] for words in (re.findall(r"[a-z]+", n) for n in names) if words)


def _query(hint: Hint) -> tuple[str, Field]:
    abstract = hint.extra.get("abstract", "").strip()
    if abstract:
        return f"{hint.query}\n{abstract}", "full"
    # A query for authors is the paper's title: match it against titles alone.
    return hint.query, "title" if hint.answer == "authors" else "full"


def _pick(hits: list[Hit], authors: str) -> Hit | None:
    if not hits:
        return None
    wanted = _surnames(authors) if authors.strip() else frozenset()
    if wanted:
        for hit in hits:
            if wanted & _surnames(hit.paper.authors):
                return hit
    return hits[0]


def confidence(retriever: Retriever, hit: Hit, *, k: int) -> float:
    """The number ``FLOORS`` applies to: coverage (bm25), cosine (dense), or the lift of the
    cross-encoder's probability over uniform among the candidates it re-ranked for a top-k search
    (rerank)."""
    if isinstance(retriever, RerankRetriever):
        return hit.score * min(max(k, retriever.candidates), len(retriever.papers))
    return hit.coverage if retriever.kind == "bm25" else hit.score


def _retriever(kind: Kind, hint: Hint, options: Mapping[str, Any]) -> Retriever:
    """The suite corpus's ``kind`` retriever (cached per corpus by ``get_retriever``)."""
    if hint.corpus is None:
        raise ValueError(
            f"suite {hint.suite!r} has no corpus; citebench/{kind} needs 'corpus = ...' in "
            "suite.toml"
        )
    retriever_options = {k: options[k] for k in _RETRIEVER_OPTIONS[kind] if k in options}
    if "candidates" in retriever_options:
        retriever_options["candidates"] = int(retriever_options["candidates"])
    if "fusion" in retriever_options:
        retriever_options["fusion"] = float(retriever_options["fusion"])
    return get_retriever(kind, Path(hint.corpus), **retriever_options)


def answer_with(kind: Kind, hint: Hint, options: dict[str, Any]) -> str:
    """Answer ``hint`` with the ``kind`` retriever: a title, authors (direct) or 'pass'.

    ``options`` may hold ``floor`` (overrides ``FLOORS``) and, for rerank, ``candidates``,
    ``reranker`` (a saved model folder or an explicit hub id) and ``fusion`` (the bi-encoder's
    weight in the re-ranking score; 0 = the cross-encoder alone).
    """
    own = registry.find(hint.task).offline_answer(
        kind,
        hint,
        options,
        lambda q, k: _retriever(kind, hint, options).search(q, k=k, field="title"),
    )
    if own is not None:  # a task with its own use of the search (ArxEval: a title lookup)
        return own
    retriever = _retriever(kind, hint, options)
    floor = float(options.get("floor", FLOORS[kind][hint.answer]))
    query, field = _query(hint)
    authors = hint.extra.get("authors", "")
    hit = _pick(retriever.search(query, k=AUTHOR_POOL if authors else 1, field=field), authors)
    if hit is None:
        return "pass"
    if confidence(retriever, hit, k=AUTHOR_POOL if authors else 1) < floor:
        return "pass"
    return hit.paper.authors if hint.answer == "authors" else hit.paper.title


def bm25_answer(hint: Hint, options: dict[str, Any]) -> str:
    """The bm25 model: best-matching paper's title (indirect) or authors (direct), else 'pass'."""
    return answer_with("bm25", hint, options)


# name (after "citebench/") -> answer function.
BASELINES: dict[str, AnswerFn] = {
    "bm25": bm25_answer,
    "dense": partial(answer_with, "dense"),
    "rerank": partial(answer_with, "rerank"),
}


_ALL: tuple[tuple[tuple[str, AnswerFn], ...], dict[str, AnswerFn]] | None = None


def all_baselines() -> dict[str, AnswerFn]:
    """The built-in models (``citebench/<name>``): the retrieval baselines above, wrapped or
    extended by each paper's ``local_models`` (citation-guard routes its tasks to its own
    answerers and adds verifier-lexical / verifier-embedding).

    Built once and rebuilt only when ``BASELINES`` itself changes (a test or a user swapping
    in their own answerer), so a patched entry is never hidden behind a stale wrapper.
    """
    global _ALL
    key = tuple(BASELINES.items())
    if _ALL is None or _ALL[0] != key:
        models = dict(BASELINES)
        for paper in registry.papers():
            if paper.local_models is not None:
                models.update(paper.local_models(models))
        _ALL = (key, models)
    return _ALL[1]
