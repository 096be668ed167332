"""BM25 over a corpus: ``rank_bm25``'s index, scored through an inverted index that gives the
same floats an order of magnitude faster (the main job spends most of its time here).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.retrieval.corpus import (
    CorpusPaper,
    Field,
    Hit,
    Kind,
    Retriever,
    _check,
    paper_text,
    tokens,
)


class FastOkapi:
    """``rank_bm25.BM25Okapi.get_scores`` over an inverted index, to the last bit.

    rank_bm25 scores a query by walking every document's term dictionary once per query word,
    in Python: two thirds of the main job's time. The index (idf, lengths, term frequencies)
    stays rank_bm25's; this only visits the documents that hold each word. Every document's sum
    gets the same terms, computed by the same elementwise float operations in the same order
    (a document without the word adds an exact 0 there), so the scores are bit-identical;
    ``tests/retrieval/test_retrieval.py`` checks it on random corpora.
    """

    def __init__(self, okapi: Any) -> None:
        import numpy as np

        self.okapi = okapi
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, freqs in enumerate(okapi.doc_freqs):
            for term, count in freqs.items():
                docs, counts = postings.setdefault(term, ([], []))
                docs.append(i)
                counts.append(count)
        self._postings = {
            term: (np.array(docs, dtype=np.intp), np.array(counts))
            for term, (docs, counts) in postings.items()
        }
        doc_len = np.array(okapi.doc_len)
        # rank_bm25's denominator term, computed on the whole array exactly as it does.
        self._norm = okapi.k1 * (1 - okapi.b + okapi.b * doc_len / okapi.avgdl)

    def get_scores(self, query: Sequence[str]) -> Any:
        """Same array as rank_bm25's, bit for bit; a repeated query word counts again, as there."""
        import numpy as np

        okapi = self.okapi
        score = np.zeros(okapi.corpus_size)
        for q in query:
            idf = okapi.idf.get(q) or 0
            posting = self._postings.get(q)
            if posting is None or not idf:
                continue  # every document adds an exact zero for this word
            docs, q_freq = posting
            score[docs] += idf * (q_freq * (okapi.k1 + 1) / (q_freq + self._norm[docs]))
        return score


class BM25Retriever(Retriever):
    """Okapi BM25 over titles (title lookups) and title+abstract (sentences, whose words come
    from what the cited paper did, not just its name)."""

    kind: Kind = "bm25"

    def __init__(self, papers: Sequence[CorpusPaper], corpus_path: str | Path) -> None:
        from rank_bm25 import BM25Okapi

        super().__init__(papers, corpus_path)
        self._index = {
            "title": FastOkapi(BM25Okapi([tokens(p.title) or ["_"] for p in self.papers])),
            "full": FastOkapi(
                BM25Okapi([tokens(paper_text(p, "full")) or ["_"] for p in self.papers])
            ),
        }
        for fast in self._index.values():
            # rank_bm25's per-document term dictionaries: the postings above hold the same
            # counts, and nothing scores through rank_bm25 itself (191 -> 149 MB for the 11
            # REASONS corpora's indexes).
            fast.okapi.doc_freqs = []
        self._lock = threading.Lock()
        # (query, k, field) -> hits. The strategies of one item search its sentence or title
        # again (sid's first stage is indirect's, the metadata strategies start as direct's):
        # 11,403 searches of the IR suite's 9,924 cases are 4,011 distinct. Bounded: the oldest
        # entry goes first.
        self._hits: dict[tuple[str, int, Field], list[Hit]] = {}

    #: How many searches ``_hits`` keeps.
    HITS_KEPT = 8192

    def search_many(
        self, queries: Sequence[str], *, k: int, field: Field = "full"
    ) -> list[list[Hit]]:
        """One query at a time (BM25 gains nothing from batching); a query with no word gets no
        hits rather than k arbitrary ones."""
        import numpy as np

        _check(k, field)
        results: list[list[Hit]] = []
        for query in queries:
            key = (query, k, field)
            known = self._hits.get(key)
            if known is not None:
                results.append(list(known))
                continue
            q = tokens(query)
            if not q:
                results.append([])
                continue
            with self._lock:  # rank_bm25 objects are not documented as thread-safe
                scores = self._index[field].get_scores(q)
            # Best first, ties in corpus order (a stable sort of the negated scores).
            order = [int(i) for i in np.argsort(-scores, kind="stable")[:k]]
            hits = [
                Hit(self.papers[i], float(scores[i]), self.coverage(query, i, field)) for i in order
            ]
            with self._lock:
                if len(self._hits) >= self.HITS_KEPT:
                    del self._hits[next(iter(self._hits))]
                self._hits[key] = hits
            results.append(list(hits))
        return results
