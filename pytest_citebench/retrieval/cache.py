"""Retrievers built once per (kind, corpus file, options), even when several threads ask at the
same time: the plugin answers items from an asyncio loop thread, and building a dense index means
loading a model and encoding a corpus (seconds).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from pytest_citebench.retrieval.bm25 import BM25Retriever
from pytest_citebench.retrieval.corpus import KINDS, Kind, Retriever, load_papers
from pytest_citebench.retrieval.dense import DenseRetriever
from pytest_citebench.retrieval.encoders import clear_encoders
from pytest_citebench.retrieval.rerank import (
    _MODELS,
    _MODELS_LOCK,
    DEFAULT_CANDIDATES,
    RerankRetriever,
    resolve_reranker,
)

_RETRIEVERS: dict[Hashable, Retriever] = {}
_BUILD_LOCKS: dict[Hashable, threading.Lock] = {}
_CACHE_LOCK = threading.Lock()
_OPTIONS: dict[str, frozenset[str]] = {
    "bm25": frozenset(),
    "dense": frozenset({"model", "cache_dir", "batch_size"}),
    "rerank": frozenset(
        {
            "model",
            "cache_dir",
            "batch_size",
            "reranker",
            "candidates",
            "rerank_batch_size",
            "fusion",
        }
    ),
}


def _option_value(value: Any) -> Hashable:
    return str(Path(value).resolve()) if isinstance(value, Path) else value


def get_retriever(kind: Kind, corpus_path: str | Path, **options: Any) -> Retriever:
    """The retriever of ``kind`` over ``corpus_path``, built once per (kind, corpus, options).

    Options: dense and rerank take ``model`` (bi-encoder folder; default the packaged MiniLM),
    ``cache_dir`` and ``batch_size``; rerank also ``reranker`` (folder or explicit hub id),
    ``candidates`` (default 40), ``rerank_batch_size`` and ``fusion`` (the bi-encoder's weight
    in the re-ranking score; default: the model's ``fusion.json``, else 0). The key includes
    the corpus file's size and mtime, so an edited corpus gets a fresh index.
    """
    if kind not in _OPTIONS:
        raise ValueError(f"unknown retriever {kind!r}; choose one of {', '.join(KINDS)}")
    unknown = set(options) - _OPTIONS[kind]
    if unknown:
        raise TypeError(
            f"{kind} retriever got unknown option(s) {sorted(unknown)}; "
            f"it accepts {sorted(_OPTIONS[kind]) or 'none'}"
        )
    if kind == "rerank":
        # Resolved before the cache lookup: the default location depends on the working directory.
        options = {**options, "reranker": resolve_reranker(options.get("reranker"))[0]}
    path = _resolved(corpus_path)
    stat = path.stat()
    key = (
        kind,
        str(path),
        stat.st_size,
        stat.st_mtime_ns,
        tuple(sorted((k, _option_value(v)) for k, v in options.items())),
    )
    with _CACHE_LOCK:
        found = _RETRIEVERS.get(key)
        if found is not None:
            _RETRIEVERS[key] = _RETRIEVERS.pop(key)  # most recently used last
            return found
        lock = _BUILD_LOCKS.setdefault(key, threading.Lock())
    with lock:  # one build per key; other keys build in parallel
        with _CACHE_LOCK:
            found = _RETRIEVERS.get(key)
        if found is not None:
            return found
        built = _build(kind, path, options)
        with _CACHE_LOCK:
            _RETRIEVERS[key] = built
            _forget_old_bm25()
        return built


#: BM25 indexes kept at once. A run goes through its suites one after another, and each corpus's
#: index is 1-35 MB: keeping all of them made the main job's memory grow with every suite
#: (266 MB for the 15 committed corpora). One evicted and asked for again is rebuilt, the same
#: index (in about a second); dense and re-ranking retrievers, which load models, are kept.
BM25_KEPT = 3


def _forget_old_bm25() -> None:
    """Under ``_CACHE_LOCK``: the least recently used BM25 indexes beyond ``BM25_KEPT``."""
    bm25 = [k for k, r in _RETRIEVERS.items() if isinstance(r, BM25Retriever)]
    for key in bm25[: max(0, len(bm25) - BM25_KEPT)]:
        del _RETRIEVERS[key]
        _BUILD_LOCKS.pop(key, None)


# (working folder, corpus path) -> the file it names, links resolved: a baseline asks for its
# retriever once or twice a case, and resolving walks every folder of the path (an lstat each:
# 1.5 s of a 9,924-case suite). The file's size and mtime are still read every time (an edited
# corpus gets a fresh index).
_RESOLVED: dict[tuple[str, str], Path] = {}


def _resolved(corpus_path: str | Path) -> Path:
    name = str(corpus_path)
    key = ("", name) if os.path.isabs(name) else (os.getcwd(), name)
    found = _RESOLVED.get(key)
    if found is None:
        found = _RESOLVED[key] = Path(name).resolve()
    return found


def _build(kind: Kind, path: Path, options: dict[str, Any]) -> Retriever:
    if kind == "bm25":
        return BM25Retriever(load_papers(path), path)
    dense_options = {k: options[k] for k in ("model", "cache_dir", "batch_size") if k in options}
    if kind == "dense":
        return DenseRetriever(load_papers(path), path, **dense_options)
    dense = get_retriever("dense", path, **dense_options)
    assert isinstance(dense, DenseRetriever)
    return RerankRetriever(
        dense,
        reranker=options.get("reranker"),
        candidates=int(options.get("candidates", DEFAULT_CANDIDATES)),
        batch_size=int(options.get("rerank_batch_size", 32)),
        fusion=None if options.get("fusion") is None else float(options["fusion"]),
    )


def clear_cache() -> None:
    """Forget built retrievers and loaded models (tests; a long process that retrained)."""
    with _CACHE_LOCK:
        _RETRIEVERS.clear()
        _BUILD_LOCKS.clear()
        _RESOLVED.clear()
    with _MODELS_LOCK:
        _MODELS.clear()
    clear_encoders()
