"""Scoring the trained re-ranker: the fused score's weight and the held-out recall@1.

The saved re-ranker scores a candidate as cross-encoder logit + w x bi-encoder cosine; ``w`` is
chosen on validation queries over :data:`FUSION_GRID` (``choose_fusion``), and ``evaluate``
reports recall@1 of the bi-encoder, the cross-encoder alone and the fused score on the test split.
Each query's candidates are scored once (``rank_candidates``), so any weight costs no rescoring.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_citebench.papers.reasons.pairs import Log, Query, quiet
from pytest_citebench.retrieval import DEFAULT_CANDIDATES, RerankRetriever, get_retriever

# Candidate bi-encoder weights for the fused score (see the module docstring). A cosine gap of
# 0.05 between two candidates is worth 1 logit at w = 20; 0 is the cross-encoder alone.
FUSION_GRID: tuple[float, ...] = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0)
VALIDATION_SALT = 1_000_003  # added to the split seed for the validation coin


@dataclass(frozen=True)
class Ranked:
    """One query's re-ranking candidates: the cross-encoder's log-softmax and the cosines.

    ``positive`` is the cited paper's index among the candidates, or None when the bi-encoder
    did not retrieve it (no weight can then rank it first).
    """

    positive: int | None
    log_probs: tuple[float, ...]
    cosines: tuple[float, ...]

    def top(self, weight: float) -> int:
        """The index ranked first by log_probs + weight x cosine (ties: the bi-encoder's order)."""
        scores = [lp + weight * c for lp, c in zip(self.log_probs, self.cosines, strict=True)]
        return max(range(len(scores)), key=lambda i: (scores[i], -i))


def choose_fusion(
    rows: Sequence[Ranked], grid: Sequence[float] = FUSION_GRID
) -> tuple[float, dict[str, float]]:
    """The grid weight with the best recall@1 on ``rows`` (ties: the smaller weight, the one
    that trusts the trained cross-encoder more), and recall@1 for every weight tried."""
    if not grid:
        raise ValueError("the fusion grid is empty")
    n = max(len(rows), 1)
    recall = {
        str(w): sum(r.positive is not None and r.top(w) == r.positive for r in rows) / n
        for w in grid
    }
    best = max(grid, key=lambda w: (recall[str(w)], -w))
    return best, recall


def rank_candidates(
    queries: Sequence[Query],
    reranker: str | Path,
    *,
    candidates: int = DEFAULT_CANDIDATES,
    cache_dir: str | Path | None = None,
) -> list[Ranked]:
    """Score every query's top-``candidates`` once with the cross-encoder alone (fusion 0),
    keeping the bi-encoder's cosines, so any fusion weight can be evaluated without rescoring.

    One corpus at a time (each has its own embeddings); the result is in ``queries`` order.
    """
    options: dict[str, Any] = {"reranker": str(reranker), "candidates": candidates, "fusion": 0.0}
    if cache_dir:
        options["cache_dir"] = cache_dir
    by_corpus: dict[str, list[int]] = {}
    for index, q in enumerate(queries):
        by_corpus.setdefault(q.corpus, []).append(index)
    rows: list[Ranked | None] = [None] * len(queries)
    for corpus, indices in by_corpus.items():
        rerank = get_retriever("rerank", corpus, **options)
        texts = [queries[i].query for i in indices]
        assert isinstance(rerank, RerankRetriever)
        first = rerank.dense.search_many(texts, k=candidates)
        second = rerank.search_many(texts, k=candidates)
        for i, dense_hits, hits in zip(indices, first, second, strict=True):
            log_prob = {h.paper.id: math.log(max(h.score, 1e-300)) for h in hits}
            ids = [h.paper.id for h in dense_hits]  # the bi-encoder's order
            positive = queries[i].positive
            rows[i] = Ranked(
                positive=ids.index(positive) if positive in ids else None,
                log_probs=tuple(log_prob[pid] for pid in ids),
                cosines=tuple(h.score for h in dense_hits),
            )
    return [row for row in rows if row is not None]


def evaluate(
    test: Sequence[Query],
    reranker: str | Path,
    *,
    fusion: float,
    candidates: int = DEFAULT_CANDIDATES,
    cache_dir: str | Path | None = None,
    log: Log = quiet,
) -> dict[str, Any]:
    """Held-out recall@1 of the bi-encoder alone, the cross-encoder alone and the fused score
    with weight ``fusion`` (what ``citebench/rerank`` uses), overall and per suite, plus the
    share of queries whose cited paper is among the re-ranked candidates at all (the ceiling
    no re-ranker can pass)."""
    by_suite: dict[str, list[Query]] = {}
    for q in test:
        by_suite.setdefault(q.suite, []).append(q)
    per_suite: dict[str, dict[str, float | int]] = {}
    totals = {"queries": 0, "bi_encoder": 0, "cross_encoder": 0, "reranker": 0, "in_candidates": 0}
    for suite, queries in sorted(by_suite.items()):
        started = time.perf_counter()
        rows = rank_candidates(queries, reranker, candidates=candidates, cache_dir=cache_dir)
        counts = {
            "queries": len(queries),
            "bi_encoder": sum(r.positive == 0 for r in rows),
            "cross_encoder": sum(r.positive is not None and r.top(0.0) == r.positive for r in rows),
            "reranker": sum(r.positive is not None and r.top(fusion) == r.positive for r in rows),
            "in_candidates": sum(r.positive is not None for r in rows),
        }
        for key, value in counts.items():
            totals[key] += value
        per_suite[suite] = _rates(counts)
        log(
            f"  eval {suite}: {len(queries)} queries, R@1 bi-encoder "
            f"{per_suite[suite]['bi_encoder_recall@1']:.3f}, cross-encoder "
            f"{per_suite[suite]['cross_encoder_recall@1']:.3f}, fused "
            f"{per_suite[suite]['reranker_recall@1']:.3f} ({time.perf_counter() - started:.0f} s)"
        )
    return {"candidates": candidates, "fusion": fusion, **_rates(totals), "per_suite": per_suite}


def _rates(counts: dict[str, int]) -> dict[str, float | int]:
    n = max(counts["queries"], 1)
    return {
        "queries": counts["queries"],
        "bi_encoder_recall@1": counts["bi_encoder"] / n,
        "cross_encoder_recall@1": counts["cross_encoder"] / n,
        "reranker_recall@1": counts["reranker"] / n,
        "candidate_recall": counts["in_candidates"] / n,
    }
