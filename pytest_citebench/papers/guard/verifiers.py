"""Swappable citation verifiers: ``score(claim, passage) -> P(supported)`` in ``[0, 1]``.

The paper treats the verifier as an instrument to be *validated on gold*, not trusted: the
unsupported-citation rate it yields moves from ~3% to ~18% with verifier strictness alone. So the
verifier is a registry slot selected by name, and every verifier shares one passage protocol:
the passage is split into overlapping word windows and the passage score is the **max over
windows**. Passages are never truncated, because truncation inflated the unsupported rate
severalfold in the paper (support often sits late in an abstract).

Heavy dependencies (sentence-transformers, transformers, torch, litellm) are imported lazily,
when a verifier first scores something, so importing this module is cheap and offline-safe.

The registry and the passage protocol live here with the lexical baseline; the model-backed
verifiers (:mod:`.model_verifiers`: embedding, NLI, cross-encoder; :mod:`.judge`: an LLM judge)
register themselves from their own modules, which the package imports, so every built-in name
is available once anything of ``pytest_citebench.papers.guard`` is imported.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pytest_citebench.papers.guard._text import content_terms, sliding_windows

__all__ = [
    "LexicalVerifier",
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

    def score(self, claim: str, passage: str) -> float:
        """``P(supported)`` of one (claim, whole passage) pair, in ``[0, 1]``."""
        ...

    def score_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """:meth:`score` of every pair, in order, batched through the model."""
        ...


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
        """Every window of every pair in one batch; a pair's score is its best window's, and a
        passage with no window scores 0. A NaN is raised, never taken as a score."""
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
