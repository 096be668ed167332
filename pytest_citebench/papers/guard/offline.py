"""The guard tasks' offline models: how ``citebench/bm25`` / ``dense`` and the verifier models
``citebench/verifier-lexical`` / ``verifier-embedding`` answer verify, calibrate, reattribute
and guard (the paper's ``local_models`` hook).

Why these exist: the default offline run must cover the guard suites without a network or an
API key, with baselines that fail the way real systems do (an extractive answerer that cites the
most relevant document for every sentence, a lexical ranker that cannot tell support from
contradiction). Verifiers are built once per process; no model loads until the first score.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from pytest_citebench.api import AnswerFn, Hint
from pytest_citebench.errors import ProviderError, ResponseError
from pytest_citebench.papers.guard._text import bm25_rank
from pytest_citebench.papers.guard.verifiers import Verifier, VerifierUnavailable, get_verifier

TASK_NAMES = ("verify", "calibrate", "reattribute", "guard")

_VERIFIERS: dict[str, Verifier] = {}
_VERIFIERS_LOCK = threading.Lock()


def shared_verifier(name: str) -> Verifier:
    """One instance per verifier name per process (the embedding model loads once)."""
    with _VERIFIERS_LOCK:
        if name not in _VERIFIERS:
            try:
                _VERIFIERS[name] = get_verifier(name)
            except KeyError as exc:
                raise ResponseError(str(exc.args[0])) from None
            except TypeError as exc:
                raise ResponseError(
                    f"verifier {name!r} needs options (e.g. a model path) and cannot be named "
                    f"alone in a guard item: {exc}"
                ) from None
        return _VERIFIERS[name]


_FAMILY = {"bm25": "lexical", "lexical": "lexical", "dense": "embedding", "embedding": "embedding"}


def _rank_passages(kind: str, query: str, passages: Mapping[int, str]) -> list[int]:
    """Passage numbers best first: BM25 for ``bm25``, else the family verifier's score."""
    if kind == "bm25":
        return [pid for pid, _ in bm25_rank(query, passages)]
    ids = list(passages)
    scores = shared_verifier(_FAMILY[kind]).score_many([(query, passages[i]) for i in ids])
    return [pid for _, pid in sorted(zip(scores, ids, strict=True), key=lambda x: (-x[0], x[1]))]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_BRACKET_NUMBERS = re.compile(r"\s*\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]")


def passage_sentences(text: str) -> list[str]:
    """Rough sentences of a passage, stripped of bracketed numbers that would read as markers."""
    parts = (_BRACKET_NUMBERS.sub("", s).strip() for s in _SENTENCE_END.split(text))
    return [p for p in parts if len(p.split()) >= 4]


def extractive_answer(kind: str, question: str, passages: Mapping[int, str], n: int = 2) -> str:
    """The offline answerer: the ``n`` passage sentences that best match the question, each
    cited to the passage that best matches the *question* (BM25 or dense).

    A deliberately realistic failure: it cites the most relevant document for every sentence,
    so a sentence lifted from another passage carries a wrong citation, the mis-citation the
    guard exists to catch. Deterministic: ties go to the lower number.
    """
    sentences = [(pid, s) for pid, text in passages.items() for s in passage_sentences(text)]
    if not sentences:
        return "pass"
    texts = [s for _, s in sentences]
    if kind == "bm25":
        ranked = [i for i, score in bm25_rank(question, dict(enumerate(texts))) if score > 0]
    else:
        scores = shared_verifier(_FAMILY[kind]).score_many([(question, s) for s in texts])
        ranked = [
            i
            for _, i in sorted(
                zip(scores, range(len(texts)), strict=True), key=lambda x: (-x[0], x[1])
            )
        ]
    if not ranked:
        return "pass"
    cite = _rank_passages(kind, question, passages)[0]
    chosen = sorted(ranked[:n])
    return " ".join(f"{sentences[i][1].rstrip('.!?')} [{cite}]." for i in chosen)


def _hint_passages(hint: Hint) -> dict[int, str]:
    texts = json.loads(hint.extra["passages"])
    return {i: str(p) for i, p in enumerate(texts, start=1)}


def baseline_answer(kind: str, hint: Hint, options: Mapping[str, Any]) -> str:
    """What ``citebench/<kind>`` answers on a guard task (``kind``: bm25, dense, or a verifier
    family ``lexical`` / ``embedding`` for the ``verifier-*`` models).

    verify/calibrate: the family verifier's score of (claim, whole passage). reattribute: the
    ranking (BM25 for bm25, else the verifier score, the paper's "verifier as ranker"). guard:
    the extractive answerer for bm25/dense; the verifier models are not answerers and pass.
    """
    try:
        return _baseline_answer(kind, hint)
    except VerifierUnavailable as exc:
        raise ProviderError(f"citebench/{kind}: {exc}") from None


def _baseline_answer(kind: str, hint: Hint) -> str:
    family = _FAMILY[kind]
    if hint.task in ("verify", "calibrate"):
        return repr(shared_verifier(family).score(hint.query, hint.extra["passage"]))
    if hint.task == "reattribute":
        return ", ".join(map(str, _rank_passages(kind, hint.query, _hint_passages(hint))))
    if hint.task == "guard":
        if kind not in ("bm25", "dense"):
            return "pass"
        return extractive_answer(kind, hint.query, _hint_passages(hint))
    raise ProviderError(f"no citation-guard baseline for task {hint.task!r}")


def verifier_answer(family: str) -> AnswerFn:
    """The ``citebench/verifier-<family>`` model: answers only the guard tasks."""

    def answer(hint: Hint, options: dict[str, Any]) -> str:
        if hint.task not in TASK_NAMES:
            raise ProviderError(
                f"citebench/verifier-{family} is a verifier: it answers only the citation-guard "
                f"tasks ({', '.join(TASK_NAMES)}), not {hint.task!r}; run it on suites/guard"
            )
        return baseline_answer(family, hint, options)

    return answer


# The answerers route() made: wrapping one again (local_models called on models it already
# returned) must give it back unchanged, not a second layer.
_ROUTED: weakref.WeakSet[Callable[..., str]] = weakref.WeakSet()


def route(kind: str, fallback: AnswerFn) -> AnswerFn:
    """Wrap a retrieval baseline so that guard tasks get the guard baseline of the same kind."""
    if fallback in _ROUTED:
        return fallback

    def answer(hint: Hint, options: dict[str, Any]) -> str:
        if hint.task not in TASK_NAMES:
            return fallback(hint, options)
        if kind not in _FAMILY:
            raise ProviderError(
                f"citebench/{kind} has no citation-guard baseline; use citebench/bm25, "
                "citebench/dense or citebench/verifier-lexical|embedding"
            )
        return baseline_answer(kind, hint, options)

    _ROUTED.add(answer)
    return answer


def local_models(existing: Mapping[str, AnswerFn]) -> dict[str, AnswerFn]:
    """The paper's ``local_models`` hook: the core's retrieval baselines routed for guard tasks
    (guard suites have no corpus to search), plus ``verifier-lexical`` and
    ``verifier-embedding``."""
    out = {name: route(name, fn) for name, fn in existing.items()}
    out["verifier-lexical"] = verifier_answer("lexical")
    out["verifier-embedding"] = verifier_answer("embedding")
    return out
