"""Reading a detector's answer: ``{"label", "confidence", "reason"}`` however it was wrapped.

Why tolerant: models put the JSON in code fences, write prose around it, use lower case, leave
trailing commas, or answer with a bare label. Each of those is still a clear verdict, and an
answer read as *unanswered* because of a stray comma would score the parser, not the model.
What is not a verdict stays one: no label, or two different bare labels ("VALID or
HALLUCINATED?"), is ``None`` (the item is *unanswered*), never a guess.

Negations are never read as the label they negate (``{"label": "NOT VALID"}`` once counted as
VALID, because the word VALID was all the parser looked for). A label field, or a whole answer,
that is one negated label reads as the other label of the pair (``NOT VALID`` is HALLUCINATED,
``not hallucinated`` VALID; ``not uncertain`` names no label). In prose a negated label word
("it is not valid, I think") makes the answer no verdict: which of the other labels a sentence
means is a guess.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from pytest_citebench.metrics.detection import Label

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_BARE_CONFIDENCE = re.compile(
    r"confidence\W{0,3}\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?\s*%?)", re.IGNORECASE
)
_WORD = re.compile(r"\b(VALID|HALLUCINATED|UNCERTAIN|INVALID|HALLUCINATION)\b", re.IGNORECASE)
# Words a detector uses for the three labels; INVALID/HALLUCINATION read as HALLUCINATED.
_SYNONYMS: dict[str, Label] = {
    "valid": "VALID",
    "hallucinated": "HALLUCINATED",
    "hallucination": "HALLUCINATED",
    "invalid": "HALLUCINATED",
    "uncertain": "UNCERTAIN",
}


@dataclass(frozen=True)
class Verdict:
    """What a detector said about one entry; ``confidence`` None when it gave none."""

    label: Label
    confidence: float | None = None
    reason: str = ""

    def to_json(self) -> str:
        """The canonical answer text (what the stage stores as the parsed answer)."""
        obj: dict[str, Any] = {"label": self.label}
        if self.confidence is not None:
            obj["confidence"] = self.confidence
        if self.reason:
            obj["reason"] = self.reason
        return json.dumps(obj, ensure_ascii=False)


#: The other label of the binary pair: what a negated label field means.
_OPPOSITE: dict[Label, Label] = {"VALID": "HALLUCINATED", "HALLUCINATED": "VALID"}
# A label slot holding one negated label: "NOT VALID", "not_hallucinated", "non-valid",
# "is not a hallucination", "isn't valid".
_NEGATED_LABEL = re.compile(
    r"(?:(?:it|this|the entry)\s+)?(?:is\s+not|isn't|is\s+no|not|non|no)\s+(?:an?\s+)?"
    r"(?P<word>[a-z]+)"
)
#: Words that negate a label word up to three words after them in the same clause.
_NEGATIONS = frozenset(
    {"not", "no", "never", "non", "neither", "nor", "without", "cannot", "hardly", "nothing"}
)
_CLAUSE_END = re.compile(r"[.;:!?,\n()\[\]{}\"]")


def _normal(value: str) -> str:
    """Lower case, ``_``/``-`` as spaces, one space between words, no edge punctuation."""
    text = " ".join(re.sub(r"[_\-]+", " ", value).split()).lower()
    return text.strip(" .!\"'`*")


def _label(value: Any) -> Label | None:
    """The label a label slot holds: a label word, or a negated one read as the other label of
    the pair; None for anything else (a negated UNCERTAIN names no label)."""
    if not isinstance(value, str):
        return None
    text = _normal(value)
    if text in _SYNONYMS:
        return _SYNONYMS[text]
    negated = _NEGATED_LABEL.fullmatch(text)
    if negated is not None:
        word = _SYNONYMS.get(negated["word"])
        return _OPPOSITE.get(word) if word is not None else None
    return None


# A belief denied before the label, anywhere in its clause: "I don't think this is
# hallucinated", "I would not say it is valid". The label word is then several words past the
# negation, out of the three-word window.
_DENIED_BELIEF = re.compile(
    r"\b(?:don't|doesn't|didn't|won't|wouldn't|can't|cannot|do not|does not|did not|would not"
    r"|will not|can not)\s+(?:really\s+|honestly\s+)?"
    r"(?:think|believe|suppose|consider|feel|say|expect|call|see|find)\b"
)


def _negated(text: str, start: int) -> bool:
    """Whether the label word at ``start`` is negated: a negation among the three words before
    it in its clause ("is not VALID", "not at all valid", "isn't valid", "non-valid"), or a
    belief denied before it in its clause ("I don't think this is hallucinated")."""
    clause = _CLAUSE_END.split(text[:start])[-1].lower().replace("-", " ").replace("’", "'")
    words = clause.split()[-3:]
    if any(w in _NEGATIONS or w.endswith("n't") for w in words):
        return True
    return _DENIED_BELIEF.search(clause) is not None


def confidence_of(value: Any) -> float | None:
    """A confidence in [0, 1]; a percentage (1 < x <= 100, or "85%") is divided by 100;
    anything else (negative, NaN, a word) is no confidence."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            return None
        if percent:
            number /= 100
    elif isinstance(value, int | float):
        number = float(value)
    else:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    if number > 1:
        number = number / 100 if number <= 100 else math.nan
    return number if math.isfinite(number) else None


def _objects(text: str) -> list[dict[str, Any]]:
    """JSON objects in ``text``, in order: a JSON value starting at each ``{``, first in the text
    as written, then in the text with trailing commas removed. (A brace inside a string can only
    decode as ``{}`` or the like, with no label, since its quotes are escaped.)"""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    for variant in (text, _TRAILING_COMMA.sub(r"\1", text)):
        for start in (i for i, char in enumerate(variant) if char == "{"):
            try:
                obj, _ = decoder.raw_decode(variant, start)
            except ValueError:
                continue
            if isinstance(obj, dict):
                found.append(obj)
    return found


def _field(obj: dict[str, Any], name: str) -> Any:
    for key, value in obj.items():
        if isinstance(key, str) and key.strip().lower() == name:
            return value
    return None


def parse_verdict(raw: str) -> Verdict | None:
    """The verdict in a detector's answer, or None when it names no single label."""
    text = (raw or "").strip()
    if not text:
        return None
    for obj in _objects(text):
        label = _label(_field(obj, "label"))
        if label is not None:
            reason = _field(obj, "reason")
            return Verdict(
                label,
                confidence_of(_field(obj, "confidence")),
                reason.strip() if isinstance(reason, str) else "",
            )
    whole = _label(text)
    if whole is not None:  # the answer is one (possibly negated) label: "Not valid."
        return Verdict(whole)
    found_words = list(_WORD.finditer(text))
    if any(_negated(text, m.start()) for m in found_words):
        return None  # never the label a negation negates, nor a guess at what it meant
    words = {_SYNONYMS[m.group(1).lower()] for m in found_words}
    if len(words) != 1:
        return None
    (label,) = words
    found = _BARE_CONFIDENCE.search(text)
    return Verdict(label, confidence_of(found.group(1)) if found else None, "")
