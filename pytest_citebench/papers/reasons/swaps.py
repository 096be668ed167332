"""Adversarial swaps (REASONS §7): replace a field with the most similar *other* value of the same
field in the same suite, so a model that matches on surface similarity is caught answering for
the wrong paper.

Similarity is Ratcliff-Obershelp (difflib.SequenceMatcher) with ``autojunk=False``: with the
default autojunk, long strings such as abstracts score 0.01-0.10 and nothing would ever pass the
paper's 0.70 threshold. Items with no candidate at or above the threshold are not silently
dropped: they come back with the reason, and the plugin reports them as skipped.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_citebench.api import Derived, Sample

# transform name -> the item field it replaces
SWAPS = {"title": "citing_title", "abstract": "cited_abstract"}
DEFAULT_THRESHOLD = 0.70
# Pruning for long texts (abstracts); see most_similar.
CANDIDATES = 10
LONG = 300
JACCARD_FLOOR = 0.3


@dataclass(frozen=True)
class Swapped(Derived):
    """One item after the transform: the new item, or None with the reason it was skipped.

    A :class:`~pytest_citebench.api.Derived`, so the core runs it as any paper's variant; the
    similarity of the swapped-in value (0.0 when skipped) is kept for tests and diagnostics.
    """

    similarity: float = 0.0


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", text.lower()))


def most_similar(
    values: Sequence[str], threshold: float, *, candidates: int = CANDIDATES
) -> dict[str, tuple[str, float] | None]:
    """For each distinct value, its most similar other value, if any reaches ``threshold``.

    Exact Ratcliff-Obershelp costs milliseconds for a pair of 1,000-character abstracts, and
    difflib's cheap upper bounds prune nothing for English prose, so all pairs of a 1,000-paper
    suite would take most of an hour. For long texts (over ``LONG`` characters) we therefore score
    exactly only the ``candidates`` values with the highest word overlap, and only those sharing
    at least ``JACCARD_FLOOR`` of their words: measured on REASONS NLP, the most word-similar
    abstract pairs below that floor score at most 0.42, far below 0.70. Short texts (titles) are
    scored exactly against every other value. Ties go to the alphabetically first value, so the
    result never depends on input order.
    """
    distinct = sorted(set(values))
    words = [_words(v) for v in distinct]
    best: dict[str, tuple[str, float] | None] = {}
    for i, value in enumerate(distinct):
        if len(value) > LONG:
            overlap = []
            for j, other_words in enumerate(words):
                if j != i and len(distinct[j]) > LONG:
                    jaccard = len(words[i] & other_words) / (len(words[i] | other_words) or 1)
                    if jaccard >= JACCARD_FLOOR:
                        overlap.append((-jaccard, j))
            pool = [distinct[j] for _, j in sorted(overlap)[:candidates]]
        else:
            pool = [other for other in distinct if other != value]
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(value)
        found: tuple[str, float] | None = None
        for other in pool:
            matcher.set_seq1(other)
            floor = found[1] if found else threshold
            if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
                continue
            score = matcher.ratio()
            if score >= threshold and (
                found is None or score > found[1] or (score == found[1] and other < found[0])
            ):
                found = (other, score)
        best[value] = found
    return best


def _cache_path(cache_dir: Path, values: Sequence[str], threshold: float) -> Path:
    digest = hashlib.sha256(
        json.dumps(
            [sorted(set(values)), threshold, CANDIDATES, LONG, JACCARD_FLOOR], ensure_ascii=False
        ).encode()
    ).hexdigest()[:24]
    return cache_dir / f"swap-{digest}.json"


def swap(
    items: Sequence[Sample],
    kind: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    cache_dir: Path | None = None,
) -> list[Swapped]:
    """Apply one swap to every item; deterministic, cached on disk by content when asked."""
    field = SWAPS[kind]
    values = [str(item[field]) for item in items]
    best: dict[str, tuple[str, float] | None] | None = None
    path = _cache_path(cache_dir, values, threshold) if cache_dir else None
    if path is not None and path.is_file():
        raw = json.loads(path.read_text(encoding="utf-8"))
        best = {k: ((str(v[0]), float(v[1])) if v else None) for k, v in raw.items()}
    if best is None:
        best = most_similar(values, threshold)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(best, ensure_ascii=False), encoding="utf-8")
    out: list[Swapped] = []
    for item, value in zip(items, values, strict=True):
        match = best.get(value)
        if match is None:
            out.append(
                Swapped(
                    item=None,
                    original=item,
                    similarity=0.0,
                    reason=f"no other {kind} in suite {item.suite} with similarity >= "
                    f"{threshold:.2f}",
                )
            )
            continue
        other, score = match
        fields = {**item.fields, field: other, f"original_{field}": value}
        out.append(
            Swapped(item=replace(item, fields=fields), original=item, similarity=round(score, 4))
        )
    return out
