"""The two hallucination rates of REASONS, and the aggregates its tables report.

The paper's prose and its public code define HR differently, and its tables came from the code.
Both are offered, under distinct names, so that a run can be compared with the published tables
(:func:`hr_code`) and with the paper's stated definition (:func:`hr_paper`).

All per-item values and aggregates are shares in [0, 1]; the paper prints them as percentages.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence

from pytest_citebench.metrics.text import normalize, tokenize

__all__ = ["accuracy", "hr_code", "hr_paper", "mean", "pass_percentage"]


def hr_code(reference: str, hypothesis: str) -> float:
    """Share of the answer's distinct tokens absent from the gold: the REASONS code's HR.

    This is 1 - set precision over case-sensitive nltk tokens, so it is what the published HR
    numbers measure. It never penalises omissions, only invented tokens. An empty answer invents
    nothing and scores 0, as in the code.
    """
    hyp = set(tokenize(hypothesis))
    if not hyp:
        return 0.0
    return len(hyp - set(tokenize(reference))) / len(hyp)


def _unique_words(text: str) -> set[str]:
    # The paper speaks of "unique words": case and compatibility forms are not different words,
    # and tokens with no letter or digit (",", "``", "--") are not words at all.
    tokens = tokenize(unicodedata.normalize("NFKC", text))
    return {tok.casefold() for tok in tokens if any(ch.isalnum() for ch in tok)}


def hr_paper(reference: str, hypothesis: str, *, exact: bool | None = None) -> float:
    """One item's term of the paper's HR formula.

    The paper defines HR = 1/2 * (mean of 1[ĉ != c] + mean word-level mismatch over the unique
    words of ĉ ∪ c). The word-level mismatch over H ∪ R is the Jaccard distance
    1 - |H ∩ R| / |H ∪ R|, so this returns 0.5 * (1[normalize(ĉ) != normalize(c)] + that
    distance). Because a mean is linear, the mean of this value over the scored (non-abstained)
    items equals the paper's HR exactly, with both of its averages taken over those items.

    Unlike :func:`hr_code` it penalises omissions as well as inventions, and it ignores case and
    punctuation, which the paper's wording ("words") implies. Two answers with no words at all
    have nothing to mismatch, so their word term is 0.

    ``exact`` is the task's own verdict on "is this the gold answer" (REASONS direct: the same
    people, in any order or spelling). Without it the exact term is normalized string equality,
    which calls a reordered or initialised author list wrong while the task calls it correct.
    """
    hyp = _unique_words(hypothesis)
    ref = _unique_words(reference)
    union = hyp | ref
    word_mismatch = 1.0 - len(hyp & ref) / len(union) if union else 0.0
    if exact is None:
        exact = normalize(hypothesis) == normalize(reference)
    wrong = 0.0 if exact else 1.0
    return 0.5 * (wrong + word_mismatch)


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean that returns NaN, not an error, for no values.

    A suite in which every item abstained has no F1 or HR; NaN says "undefined" in the report and
    propagates visibly, where 0 would silently read as a perfect or a failing score. ``fsum``
    keeps the result independent of summation order.
    """
    items = list(values)
    if not items:
        return math.nan
    return math.fsum(items) / len(items)


def pass_percentage(abstained: Sequence[bool]) -> float:
    """Share of items answered with "pass" (PP), as a fraction in [0, 1]; NaN for no items.

    Returned as a fraction like every other metric here; multiply by 100 to compare with the
    paper's tables. Deciding what counts as a pass (the code: ``answer.lower() == "pass"``) is the
    caller's job, so this stays a pure count.
    """
    return mean(1.0 if flag else 0.0 for flag in abstained)


def accuracy(correct: Sequence[bool]) -> float:
    """Share of items judged correct, as a fraction in [0, 1]; NaN for no items.

    NaN rather than 0 for an empty suite, for the same reason as :func:`mean`.
    """
    return mean(1.0 if flag else 0.0 for flag in correct)
