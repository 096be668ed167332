"""Reading what a verifier, a ranker or a gold file says: labels, scores, rankings, verdicts.

Why one module: ``verify``, ``calibrate``, ``reattribute`` and the suite builders must read a
label or a score the same way, or one suite's "supported" would be another's error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_citebench.api import Sample, Stage
from pytest_citebench.errors import ResponseError
from pytest_citebench.papers.guard.settings import DEFAULT_THRESHOLD

_POSITIVE = frozenset(
    {"supported", "support", "supports", "true", "1", "yes", "entailment", "attributable"}
)
_NEGATIVE = frozenset(
    {
        "unsupported",
        "not supported",
        "contradicted",
        "contradict",
        "contradiction",
        "refuted",
        "false",
        "0",
        "no",
        "not attributable",
        "unattributable",
    }
)


def parse_label(value: object) -> bool:
    """Gold label as ``True`` (supported) / ``False`` (unsupported).

    Accepts SciFact's ``"true"/"false"``, ``SUPPORT/CONTRADICT`` and the plain words, so a user's
    gold file needs no rewriting; anything else is an error rather than a silent negative.
    """
    text = str(value).strip().lower()
    if text in _POSITIVE:
        return True
    if text in _NEGATIVE:
        return False
    raise ResponseError(
        f"label {value!r} is neither supported nor unsupported; use 'supported' or 'unsupported'"
    )


_NUMBER = re.compile(r"^\s*(?:score\s*[:=]\s*)?([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
_VERDICT = re.compile(
    r"\b(not\s+supported|unsupported|supported|partial(?:ly\s+supported)?)\b", re.IGNORECASE
)
_VERDICT_SCORE = {"unsupported": 0.0, "supported": 1.0, "partial": 0.5}


def parse_score(raw: str) -> float | None:
    """A verifier's answer as ``P(supported)`` in ``[0, 1]``, or None when it is neither.

    A bare number is a verifier score (the offline verifier models answer that way); otherwise
    the first verdict word counts, SUPPORTED / PARTIAL / UNSUPPORTED -> 1 / 0.5 / 0, as the guard
    library's ``judge_score`` maps an LLM judge ("not supported" reads as unsupported).
    """
    m = _NUMBER.match(raw)
    if m:
        value = float(m.group(1))
        return value if 0.0 <= value <= 1.0 else None
    v = _VERDICT.search(raw)
    if v is None:
        return None
    word = re.sub(r"\s+", " ", v.group(1).lower())
    if word == "not supported":
        return 0.0
    return _VERDICT_SCORE["partial" if word.startswith("partial") else word]


def parse_ranking(raw: str, n_candidates: int) -> list[int]:
    """Passage numbers in the order the model gave them: in range, first mention wins."""
    out: list[int] = []
    for token in re.findall(r"\d+", raw):
        number = int(token)
        if 1 <= number <= n_candidates and number not in out:
            out.append(number)
    return out


def passages_of(item: Sample) -> dict[int, str]:
    """An item's ``passages`` as ``{1: text, 2: text, ...}`` (the [n] numbering of prompts)."""
    value = item["passages"]
    if not value or not all(isinstance(p, str) for p in value):
        raise ResponseError(f"item {item.id!r}: 'passages' must be a non-empty list of strings")
    return {i: p for i, p in enumerate(value, start=1)}


def numbered(passages: Mapping[int, str]) -> str:
    """The passages as the prompts number them: ``[1] text``, a blank line between."""
    return "\n\n".join(f"[{i}] {text}" for i, text in passages.items())


def item_threshold(item: Sample) -> float:
    """An item's decision threshold (default 0.5, the decision point of a probability)."""
    value = item.fields.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ResponseError(f"item {item.id!r}: 'threshold' must be a number in [0, 1]")
    return float(value)


_STAGE_SCORE = re.compile(r"score ([-+0-9.eE]+)")


def stage_score(stage: Stage) -> float:
    """The score a stage's answer carries (``score 0.81``), so ``score`` needs no re-parse."""
    match = _STAGE_SCORE.search(stage.answer)
    if match is None:
        raise ResponseError(f"no score in stage answer {stage.answer!r}")
    return float(match.group(1))


def verdict_word(supported: bool) -> str:
    """The word shown as expected/given: a gold label or a decision reads the same."""
    return "supported" if supported else "unsupported"
