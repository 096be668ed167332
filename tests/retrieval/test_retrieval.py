"""The retrieval API (bm25, dense, rerank) and the baselines built on it, on the tiny corpus."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_citebench import retrieval
from pytest_citebench.api import Hint
from pytest_citebench.errors import CitebenchError
from pytest_citebench.models.baselines import BASELINES, FLOORS
from pytest_citebench.retrieval import (
    DenseRetriever,
    RerankerMissing,
    get_retriever,
    load_papers,
)
from pytest_citebench.retrieval.encoders import Encoder
from tests.conftest import REPO

TINY_CORPUS = REPO / "fixtures" / "suites" / "tiny" / "corpus.jsonl"
ATTENTION, BERT, RESNET, WORD2VEC = "1706.03762", "1810.04805", "1512.03385", "1301.3781"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture(scope="module")
def dense(cache: Path) -> DenseRetriever:
    found = get_retriever("dense", TINY_CORPUS, cache_dir=cache)
    assert isinstance(found, DenseRetriever)
    return found


def hint(task: str, query: str, **extra: str) -> Hint:
    answer: Literal["title", "authors"] = "authors" if task == "direct" else "title"
    return Hint(task, query, "tiny", str(TINY_CORPUS), extra, answer)


def test_import_is_cheap() -> None:
    code = (
        "import sys, pytest_citebench.retrieval, pytest_citebench.models.baselines\n"
        "heavy = {'numpy', 'torch', 'sentence_transformers', 'transformers', 'rank_bm25'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bm25_ranks_by_shared_rare_words_with_coverage() -> None:
    bm25 = get_retriever("bm25", TINY_CORPUS)
    hits = bm25.search("residual learning for very deep convolutional networks", k=2)
    assert [h.paper.id for h in hits][:1] == [RESNET]
    assert len(hits) == 2 and hits[0].score > hits[1].score
    assert hits[0].coverage == 1.0
    title = bm25.search("Attention Is All You Need", k=1, field="title")
    assert title[0].paper.id == ATTENTION
    assert bm25.search("the of and", k=3) == []  # stopwords only: nothing to match on
    with pytest.raises(ValueError, match="k must be"):
        bm25.search("x", k=0)


def test_bm25_baseline_answers_as_before() -> None:
    answer = BASELINES["bm25"]
    sentence = (
        "a network architecture based solely on attention mechanisms, dispensing with recurrence"
    )
    assert answer(hint("indirect", sentence), {}) == "Attention Is All You Need"
    assert (
        answer(hint("indirect", "tomatoes grow well in sunny gardens during summer"), {}) == "pass"
    )
    assert answer(hint("direct", "Deep Residual Learning for Image Recognition"), {}).startswith(
        "Kaiming He"
    )
    assert FLOORS["bm25"] == {"title": 0.2, "authors": 0.5}


def test_retrievers_are_cached_per_kind_corpus_and_options(cache: Path) -> None:
    first = get_retriever("bm25", TINY_CORPUS)
    assert get_retriever("bm25", str(TINY_CORPUS)) is first
    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(get_retriever("bm25", TINY_CORPUS)))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is first for r in results)
    with pytest.raises(TypeError, match="unknown option"):
        get_retriever("bm25", TINY_CORPUS, candidates=3)
    with pytest.raises(ValueError, match="unknown retriever"):
        get_retriever("splade", TINY_CORPUS)  # type: ignore[arg-type]


def test_bm25_keeps_a_few_indexes_and_rebuilds_the_same_one(tmp_path: Path) -> None:
    """A run goes through its suites one by one: only the last ``BM25_KEPT`` indexes stay, and
    one asked for again after eviction answers as the first did (issue 46)."""
    from pytest_citebench.retrieval import cache as retriever_cache

    corpora = []
    for i in range(retriever_cache.BM25_KEPT + 1):
        corpus = tmp_path / f"corpus{i}.jsonl"
        corpus.write_bytes(TINY_CORPUS.read_bytes())
        corpora.append(corpus)
    first = get_retriever("bm25", corpora[0])
    before = first.search("attention transformer", k=2)
    for corpus in corpora[1:]:
        get_retriever("bm25", corpus)
    again = get_retriever("bm25", corpora[0])
    assert again is not first  # evicted, rebuilt
    assert [(h.paper, h.score, h.coverage) for h in again.search("attention transformer", k=2)] == [
        (h.paper, h.score, h.coverage) for h in before
    ]
    assert get_retriever("bm25", corpora[0]) is again


def test_dense_finds_the_paper_of_a_paraphrase(dense: DenseRetriever) -> None:
    hits = dense.search(
        "sequence transduction built only from attention layers, without any recurrent units",
        k=4,
    )
    assert hits[0].paper.id == ATTENTION
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert -1.0 <= hits[-1].score < hits[0].score <= 1.0
    vectors = dense.search("learning embeddings of words from huge text collections", k=1)
    assert vectors[0].paper.id == WORD2VEC
    exact = dense.search("Deep Residual Learning for Image Recognition", k=1, field="title")
    assert exact[0].paper.id == RESNET and exact[0].score > 0.99
    batch = dense.search_many(["deep residual networks for images", "masked language model"], k=1)
    assert [h[0].paper.id for h in batch] == [RESNET, BERT]


def test_dense_baseline_answers_titles_authors_and_passes(dense: DenseRetriever) -> None:
    answer = BASELINES["dense"]
    assert answer(
        hint("indirect", "training very deep conv nets with shortcut connections"), {}
    ) == ("Deep Residual Learning for Image Recognition")
    assert answer(hint("direct", "Attention Is All You Need"), {}).startswith("Ashish Vaswani")
    assert answer(hint("direct", "A Study of Tomato Cultivation"), {}) == "pass"
    assert (
        answer(hint("indirect", "tomatoes grow well in sunny gardens during summer"), {}) == "pass"
    )


def test_escalation_extras_abstract_and_authors() -> None:
    answer = BASELINES["bm25"]
    garden = "tomatoes grow well in sunny gardens during summer"
    abstract = "We present a residual learning framework to ease the training of deep networks."
    assert answer(hint("indirect", garden, abstract=abstract), {}) == (
        "Deep Residual Learning for Image Recognition"
    )
    query = "pre-trained vector representations of words and language from large data"
    plain = answer(hint("indirect", query), {"floor": 0.0})
    by_author = answer(hint("indirect", query, authors="T. Mikolov, K. Chen"), {"floor": 0.0})
    assert by_author == "Efficient Estimation of Word Representations in Vector Space"
    by_other = answer(hint("indirect", query, authors="Jacob Devlin"), {"floor": 0.0})
    assert by_other.startswith("BERT")
    assert plain in (by_author, by_other)


def test_embedding_cache_is_reused(
    dense: DenseRetriever, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dense.matrix("full")
    dense.matrix("title")
    files = sorted(p.name for p in cache.glob("dense-*.npy"))
    assert len(files) == 2 and files[0].endswith("-full.npy") and files[1].endswith("-title.npy")
    encoded: list[int] = []
    real = Encoder.embed

    def spy(encoder: Encoder, texts: list[str], *, batch_size: int = 32) -> object:
        encoded.append(len(texts))
        return real(encoder, texts, batch_size=batch_size)

    monkeypatch.setattr(Encoder, "embed", spy)
    fresh = DenseRetriever(load_papers(TINY_CORPUS), TINY_CORPUS, cache_dir=cache)
    assert fresh.search("a new query about residual networks", k=1)[0].paper.id == RESNET
    assert encoded == [1]  # the query only; the corpus came from disk
    fresh.search("a new query about residual networks", k=1)
    assert encoded == [1]  # a repeated query is not encoded again
    (cache / files[0]).write_bytes(b"not an array")
    other = DenseRetriever(load_papers(TINY_CORPUS), TINY_CORPUS, cache_dir=cache)
    other.matrix("full")
    assert encoded == [1, 4]  # a damaged cache file is re-encoded and replaced


def test_rerank_without_a_model_says_how_to_train_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(retrieval.RERANKER_ENV, raising=False)
    with pytest.raises(RerankerMissing, match="python -m pytest_citebench train-reranker"):
        get_retriever("rerank", TINY_CORPUS)
    with pytest.raises(CitebenchError, match="train-reranker"):  # an item error, not a crash
        BASELINES["rerank"](hint("indirect", "attention"), {})
    monkeypatch.setenv(retrieval.RERANKER_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(RerankerMissing, match="nowhere"):
        get_retriever("rerank", TINY_CORPUS)
    monkeypatch.delenv(retrieval.RERANKER_ENV)
    assert retrieval.resolve_reranker("cross-encoder/ms-marco-MiniLM-L6-v2") == (
        "cross-encoder/ms-marco-MiniLM-L6-v2",
        False,
    )  # an explicit hub id is taken as given (it loads only with network)


def test_metrics_and_retrieval_share_one_loaded_encoder(dense: DenseRetriever) -> None:
    from pytest_citebench.metrics.similarity import load_encoder

    assert load_encoder() is dense._encoder  # one copy of MiniLM per process, not one per user


# -- the inverted-index BM25 is rank_bm25's BM25Okapi, bit for bit ------------------------------

_WORDS = st.sampled_from(["graph", "neural", "the", "of", "attention", "bert", "x", "y", "z"])


@settings(max_examples=200, deadline=None)
@given(
    corpus=st.lists(st.lists(_WORDS, min_size=1, max_size=12), min_size=1, max_size=25),
    queries=st.lists(st.lists(st.one_of(_WORDS, st.just("unseen")), max_size=8), max_size=6),
)
def test_fast_okapi_scores_are_rank_bm25s_to_the_last_bit(
    corpus: list[list[str]], queries: list[list[str]]
) -> None:
    import numpy as np
    from rank_bm25 import BM25Okapi

    from pytest_citebench.retrieval import FastOkapi

    okapi = BM25Okapi(corpus)
    fast = FastOkapi(okapi)
    for query in queries:
        expected, got = okapi.get_scores(query), fast.get_scores(query)
        assert expected.dtype == got.dtype
        assert (expected.view(np.int64) == got.view(np.int64)).all(), (query, expected, got)
        # and the ranking the retriever takes from them: best first, ties in corpus order
        order = sorted(range(len(expected)), key=lambda i: (-expected[i], i))
        assert [int(i) for i in np.argsort(-got, kind="stable")] == order
