"""Attribution metrics of REASONS, defined exactly as the paper's public code computes them.

The paper's tables were produced by its code, not by its prose, so these follow the code: tokens
from ``nltk.word_tokenize`` (see :func:`~pytest_citebench.metrics.text.tokenize`), case-sensitive,
compared as sets for F1. The gold string is the text after the ``"Title:"``/``"Authors:"`` prefix;
stripping it is the caller's job.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from pytest_citebench.metrics.text import load_nltk, tokenize

__all__ = ["bleu4", "token_f1"]


def bleu4(reference: str, hypothesis: str) -> float:
    """Sentence BLEU-4 against a single reference, as the REASONS code scores it.

    Uniform 4-gram weights and no smoothing, so any hypothesis with no matching 4-gram (including
    every answer shorter than four tokens) scores essentially 0: exactly 0.0 when no unigram
    matches, otherwise below 1e-76, because nltk substitutes the smallest float for a zero n-gram
    count. This harshness is part of the published numbers and is kept for comparability.

    nltk's default "no smoothing" (``SmoothingFunction.method0``) warns on every such zero. We pass
    a copy of method0 that does the same substitution without the warning: ``catch_warnings``
    is not thread-safe, and scores are computed on the plugin's engine thread while pytest
    records warnings on the main one.
    """
    return _bleu4(reference, hypothesis)


# Pure: every strategy of an item that gives the same answer scores the same pair again.
@functools.lru_cache(maxsize=16384)
def _bleu4(reference: str, hypothesis: str) -> float:
    load_nltk()
    from nltk.translate.bleu_score import sentence_bleu

    score = sentence_bleu(
        [tokenize(reference)], tokenize(hypothesis), smoothing_function=_no_smoothing
    )
    # nltk returns the int 0 on its early exits; callers average these, so keep the type stable.
    return float(score)


def _no_smoothing(p_n: list[Any], *args: Any, **kwargs: Any) -> list[Any]:
    """nltk's method0, silent: a zero n-gram precision becomes the smallest positive float."""
    return [p if p.numerator != 0 else sys.float_info.min for p in p_n]


def token_f1(reference: str, hypothesis: str) -> float:
    """Harmonic mean of set precision and set recall, as the REASONS code defines F1.

    Sets, not multisets: a repeated token earns no extra credit and costs no penalty. An empty
    answer or one sharing no token with the gold scores 0 rather than raising, since both are
    plain failures of attribution. An empty gold string with a non-empty answer also scores 0
    (the code would divide by zero there; no overlap is the only consistent reading).
    """
    hyp = set(tokenize(hypothesis))
    ref = set(tokenize(reference))
    overlap = len(hyp & ref)
    if not hyp or overlap == 0:
        return 0.0
    precision = overlap / len(hyp)
    recall = overlap / len(ref)
    return 2 * precision * recall / (precision + recall)
