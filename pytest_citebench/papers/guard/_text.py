"""Tokenising, word windows and BM25 shared by the lexical verifier and re-attribution.

Pure Python on purpose: the guard must import without numpy/torch, and the lexical path must stay
deterministic and dependency-free so a CPU-only CI run gives byte-identical scores.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from functools import lru_cache

__all__ = [
    "STOPWORDS",
    "bm25_rank",
    "content_terms",
    "sliding_windows",
    "split_to_token_budget",
    "stem",
    "tokenize",
]

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")

# A small, fixed English stopword list: function words carry no evidence of support, and a fixed
# list (rather than nltk's downloadable corpus) keeps the verifier offline and reproducible.
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    either few for from further had has have having he her here hers herself him himself his
    how however i if in into is it its itself just may me might more most must my myself no
    nor not of off on once only or other our ours ourselves out over own per same she should
    so some such than that the their theirs them themselves then there these they this those
    through thus to too under until up upon us very via was we were what when where whether
    which while who whom why will with within without would yet you your yours yourself
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

# Ordered longest-first so that e.g. "ations" wins over "s".
_SUFFIXES: tuple[str, ...] = (
    "ational",
    "ations",
    "ation",
    "ments",
    "ment",
    "ings",
    "ing",
    "edly",
    "ness",
    "ies",
    "ed",
    "es",
    "ly",
    "s",
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light suffix stripping capped at 6 characters.

    Not a linguistic stemmer: it only needs to map inflections of the same scientific term
    ("associated", "association", "associations") to one key, identically on claim and passage.
    The 6-character cap is the classic "truncation stemmer" trick; it conflates rarely but is
    much cheaper than Porter and needs no data files.
    """
    w = word.lower()
    if len(w) > 4 and not w.isdigit():
        for suf in _SUFFIXES:
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                if suf == "s" and w.endswith(("ss", "us", "is")):
                    continue
                w = w[: -len(suf)] + ("y" if suf == "ies" else "")
                break
    return w[:6]


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens (hyphen/apostrophe-joined words kept whole)."""
    return _WORD.findall(text.lower())


def content_terms(text: str) -> list[str]:
    """Stemmed non-stopword tokens, in order (duplicates kept, for term frequencies)."""
    return [stem(t) for t in tokenize(text) if t not in STOPWORDS]


def sliding_windows(passage: str, size: int | None, stride: int) -> list[str]:
    """Split ``passage`` into overlapping word windows that together cover every word.

    Why: the paper found that verifying against a fixed prefix inflates the unsupported rate
    severalfold, because support often sits late in the passage. Windows start every ``stride``
    words; a final window is anchored at the end so the tail is never dropped. ``size=None`` (or a
    passage no longer than ``size``) yields the whole passage as one window.
    """
    if size is not None and size < 1:
        raise ValueError(f"window size must be >= 1 or None, got {size}")
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    words = passage.split()
    if size is None or len(words) <= size:
        return [" ".join(words)]
    starts = list(range(0, len(words) - size + 1, stride))
    if starts[-1] + size < len(words):
        starts.append(len(words) - size)
    return [" ".join(words[s : s + size]) for s in starts]


def split_to_token_budget(text: str, count_tokens: Callable[[str], int], budget: int) -> list[str]:
    """Halve a window (by words) until every piece fits ``budget`` model tokens.

    Why: a word window can still exceed a transformer's max sequence length on token-dense text
    (chemical names, numbers), and the model would then truncate silently. Halving without
    overlap is enough because the outer windows already overlap.
    """
    if budget < 1:
        raise ValueError(f"token budget must be >= 1, got {budget}")
    words = text.split()
    if len(words) <= 1 or count_tokens(text) <= budget:
        return [text]
    mid = len(words) // 2
    left, right = " ".join(words[:mid]), " ".join(words[mid:])
    return split_to_token_budget(left, count_tokens, budget) + split_to_token_budget(
        right, count_tokens, budget
    )


def bm25_rank(
    query: str, passages: Mapping[int, str], *, k1: float = 1.5, b: float = 0.75
) -> list[tuple[int, float]]:
    """Rank passage ids for ``query`` by Okapi BM25, best first (ties: lower id first).

    Uses the Lucene idf ``log(1 + (N - df + 0.5) / (df + 0.5))``, which stays positive. We do not
    use ``rank_bm25.BM25Okapi``: its idf is ``log((N - df + 0.5) / (df + 0.5))``, which is zero or
    negative for a term found in half or more of the passages, and an answer's context set is
    small (often 2-10 passages), so a shared key term would be ignored or even penalised.
    """
    docs = {pid: content_terms(text) for pid, text in passages.items()}
    if not docs:
        return []
    q = content_terms(query)
    n_docs = len(docs)
    avgdl = sum(len(d) for d in docs.values()) / n_docs or 1.0
    df: Counter[str] = Counter()
    for d in docs.values():
        df.update(set(d))
    scored: list[tuple[int, float]] = []
    for pid, d in docs.items():
        tf = Counter(d)
        norm = k1 * (1.0 - b + b * len(d) / avgdl)
        s = 0.0
        for t in q:
            f = tf.get(t, 0)
            if f:
                idf = math.log(1.0 + (n_docs - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * f * (k1 + 1.0) / (f + norm)
        scored.append((pid, s))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored
