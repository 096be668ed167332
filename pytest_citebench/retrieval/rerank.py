"""The cross-encoder stage: dense candidates re-scored by a model that reads query and paper
together, optionally fused with the bi-encoder's cosine.

The cross-encoder is never downloaded behind the user's back: by default it is the one
``python -m pytest_citebench train-reranker`` saved locally, and a hub id is only used when the
user names it explicitly.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.retrieval.corpus import (
    Field,
    Hit,
    Kind,
    RerankerMissing,
    Retriever,
    _check,
    paper_text,
)
from pytest_citebench.retrieval.dense import DenseRetriever
from pytest_citebench.retrieval.encoders import quiet_transformers

RERANKER_ENV = "CITEBENCH_RERANKER"
DEFAULT_RERANKER_DIR = Path(".citebench") / "models" / "reranker"
# The paper's advanced RAG re-ranks the bi-encoder's top 40.
DEFAULT_CANDIDATES = 40


class _Loaded:
    """A cross-encoder plus the lock that serializes calls into it (fast tokenizers raise 'Already
    borrowed' when two threads use one at once)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.lock = threading.Lock()


_MODELS: dict[tuple[str, str], _Loaded] = {}
_MODELS_LOCK = threading.Lock()


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
        """Every candidate of every query goes to the cross-encoder in one ``predict`` call; ties
        keep the first stage's order."""
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
