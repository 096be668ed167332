"""One retrieval API over a suite corpus: BM25, a bi-encoder (dense) and bi-encoder + cross-encoder.

The offline baselines (``citebench/bm25|dense|rerank``), the RAG wrappers and the reranker's
training all search the same ``corpus.jsonl`` files, so they share one implementation here:
``get_retriever(kind, corpus_path, **options).search(query, k=..., field=...)``.

Why it is built the way it is:

* Importing this module stays cheap (no numpy, torch or sentence-transformers at import time):
  the pytest plugin imports it on every run, most of which never retrieve anything.
* Retrievers are cached per (kind, corpus file, options) and built once even when several threads
  ask at the same time: the plugin answers items from an asyncio loop thread, and building a dense
  index means loading a model and encoding a corpus (seconds).
* Corpus embeddings are cached on disk under ``.citebench/cache/`` (or ``$CITEBENCH_CACHE``),
  keyed by the corpus file's hash and the model, so a second pytest run does not re-encode.
* The cross-encoder is never downloaded behind the user's back: by default it is the one
  ``python -m pytest_citebench train-reranker`` saved locally, and a hub id is only used when the
  user names it explicitly.

The package is split by stage: ``corpus`` (papers, words, ``Hit``, the ``Retriever`` interface),
``bm25``, ``dense`` (bi-encoder and its embedding cache), ``rerank`` (cross-encoder) and
``cache`` (``get_retriever``); this module re-exports what callers use.

May import: errors. The packaged MiniLM encoder (``encoders.py``) is here; the
similarity metrics read it too.
"""

from __future__ import annotations

from pytest_citebench.retrieval.bm25 import BM25Retriever, FastOkapi
from pytest_citebench.retrieval.cache import clear_cache, get_retriever
from pytest_citebench.retrieval.corpus import (
    KINDS,
    STOPWORDS,
    CorpusPaper,
    Field,
    Hit,
    Kind,
    RerankerMissing,
    Retriever,
    load_papers,
    paper_text,
    tokens,
)
from pytest_citebench.retrieval.dense import (
    CACHE_ENV,
    DEFAULT_CACHE_DIR,
    DenseRetriever,
    embedding_cache_dir,
)
from pytest_citebench.retrieval.encoders import minilm_path, quiet_transformers
from pytest_citebench.retrieval.rerank import (
    DEFAULT_CANDIDATES,
    DEFAULT_RERANKER_DIR,
    FUSION_FILE,
    RERANKER_ENV,
    RerankRetriever,
    cross_scores,
    default_reranker_dir,
    resolve_reranker,
    saved_fusion,
)

__all__ = [
    "CACHE_ENV",
    "DEFAULT_CACHE_DIR",
    "DEFAULT_CANDIDATES",
    "DEFAULT_RERANKER_DIR",
    "FUSION_FILE",
    "KINDS",
    "RERANKER_ENV",
    "STOPWORDS",
    "BM25Retriever",
    "CorpusPaper",
    "DenseRetriever",
    "FastOkapi",
    "Field",
    "Hit",
    "Kind",
    "RerankRetriever",
    "RerankerMissing",
    "Retriever",
    "clear_cache",
    "cross_scores",
    "default_reranker_dir",
    "embedding_cache_dir",
    "get_retriever",
    "load_papers",
    "minilm_path",
    "paper_text",
    "quiet_transformers",
    "resolve_reranker",
    "saved_fusion",
    "tokens",
]
