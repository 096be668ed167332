"""The deployable guard: verify each cited sentence, re-attribute, flag.

Given an answer citing provided passages as ``[n]``, ``[n, m]`` or ``[n-m]``, every (sentence,
cited passage) pair is scored by a :class:`~pytest_citebench.papers.guard.verifiers.Verifier`;
a citation whose score is ``<= tau`` (ties flagged; ``tau`` typically from
:func:`~pytest_citebench.papers.guard.stats.conformal_threshold`) is rewritten as
``[n UNVERIFIED]``.
The claim text is never changed or removed: the guard triages for a human reviewer, it does not
judge conclusions. Re-attribution ranks all provided passages with BM25 and reports the best
alternative; it only *proposes* (a lexical ranker cannot tell support from contradiction), and
the alternative is re-scored by the verifier so a reviewer can see whether the move would verify.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_citebench.papers.guard._text import bm25_rank
from pytest_citebench.papers.guard.verifiers import Verifier

__all__ = [
    "CitationRecord",
    "CitedSentence",
    "GuardResult",
    "guard_answer",
    "parse_marker_group",
    "split_cited_sentences",
]

# One citation group: [3], [1, 2], [1-3], [1–3], [2,4-6]. Anything else in brackets is prose.
_GROUP = re.compile(r"\[\s*(\d+(?:\s*[-–,]\s*\d+)*)\s*\]")
# A sentence ends at . ! ? (plus closing quotes/brackets), optionally followed by citation groups
# placed after the full stop ("... shown. [3] Next"), then whitespace; or at a newline.
_BOUNDARY = re.compile(
    r"(?P<punct>[.!?]+)[\"')\u201d\u2019]*"
    r"(?P<cites>(?:\s*\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\])*+)(?:\s+|$)"
    r"|(?P<nl>\s*\n\s*)"
)
_ABBREV_TEXT = (
    "e.g i.e et al fig figs eq eqs vs cf approx ca dr mr mrs ms prof vol pp ref refs sec resp "
    "incl est"
)
_ABBREV = frozenset(_ABBREV_TEXT.split())
_MAX_RANGE = 200  # "[3-9000]" is a typo or a year range, not 8998 citations


def parse_marker_group(inner: str) -> list[int]:
    """Expand the inside of one bracket group: ``"1, 3-5"`` -> ``[1, 3, 4, 5]`` (order kept,
    duplicates dropped). Reversed or huge ranges keep just their endpoints."""
    out: list[int] = []
    for part in re.split(r"\s*,\s*", inner.strip()):
        bounds = [int(x) for x in re.split(r"\s*[-–]\s*", part) if x]
        if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= _MAX_RANGE:
            nums = list(range(bounds[0], bounds[1] + 1))
        else:
            nums = bounds
        out.extend(n for n in nums if n not in out)
    return out


@dataclass(frozen=True)
class CitedSentence:
    """A sentence of the answer carrying citation markers.

    ``text`` is the sentence exactly as in the answer (markers included); ``start``/``end`` are
    its character offsets there; ``markers`` are the cited passage numbers in order of first
    appearance. :attr:`claim` is what gets verified.
    """

    text: str
    markers: list[int]
    start: int = 0
    end: int = 0

    @property
    def claim(self) -> str:
        """The sentence with citation groups removed and spacing repaired."""
        s = _GROUP.sub("", self.text)
        s = re.sub(r"\s+([.,;:!?])", r"\1", s)
        s = re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", s)  # list bullets
        return re.sub(r"\s+", " ", s).strip()


def _is_abbreviation(answer: str, end: int) -> bool:
    """True when the '.' just before ``end`` closes an abbreviation like "e.g." or "et al."."""
    m = re.search(r"([A-Za-z][A-Za-z.]*)\.$", answer[:end])
    return m is not None and m.group(1).lower() in _ABBREV


def _sentence_spans(answer: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(answer):
        if m.group("punct") is not None:
            if m.group("punct") == "." and _is_abbreviation(answer, m.end("punct")):
                continue
            cut = m.end("cites")
        else:
            cut = m.start()
        if answer[start:cut].strip():
            spans.append((start, cut))
        start = m.end()
    if answer[start:].strip():
        spans.append((start, len(answer.rstrip())))
    return spans


def split_cited_sentences(answer: str) -> list[CitedSentence]:
    """The sentences of ``answer`` that carry at least one ``[n]``-style marker.

    Markers placed after the full stop ("... effect. [2]") belong to the preceding sentence.
    Abbreviations ("e.g.", "et al.", "Fig.") and decimals do not end sentences; newlines do.
    """
    out: list[CitedSentence] = []
    for start, end in _sentence_spans(answer):
        text = answer[start:end]
        markers: list[int] = []
        for g in _GROUP.finditer(text):
            markers.extend(n for n in parse_marker_group(g.group(1)) if n not in markers)
        if markers:
            out.append(CitedSentence(text=text, markers=markers, start=start, end=end))
    return out


@dataclass(frozen=True)
class CitationRecord:
    """One (sentence, cited passage) check.

    ``score`` is NaN and ``missing`` True when the marker names no provided passage (always
    flagged). ``best_alternative`` is the top BM25 passage other than ``marker`` (None without
    re-ranking or without any lexical overlap); ``alternative_score`` is the verifier's score for
    it, computed only for flagged citations, where it matters.
    """

    sentence: str
    marker: int
    score: float
    flagged: bool
    best_alternative: int | None = None
    alternative_score: float | None = None
    missing: bool = False


@dataclass(frozen=True)
class GuardResult:
    """The guarded answer plus an auditable per-citation trail."""

    answer: str
    original: str
    tau: float
    records: list[CitationRecord] = field(default_factory=list)

    @property
    def flagged(self) -> list[CitationRecord]:
        """At or below ``tau``, or with no passage: the ones marked UNVERIFIED for a reviewer."""
        return [r for r in self.records if r.flagged]

    @property
    def flag_rate(self) -> float:
        """Share of checked citations flagged (the review budget); NaN with no citations."""
        return len(self.flagged) / len(self.records) if self.records else math.nan


def _rewrite_group(inner: str, flagged: set[int]) -> str:
    nums = parse_marker_group(inner)
    if not flagged.intersection(nums):
        return f"[{inner}]"
    return "[" + ", ".join(f"{n} UNVERIFIED" if n in flagged else str(n) for n in nums) + "]"


def guard_answer(
    answer: str,
    passages: Mapping[int, str],
    verifier: Verifier,
    tau: float,
    *,
    rerank: bool = True,
) -> GuardResult:
    """Verify every cited sentence of ``answer`` against its cited ``passages`` (numbered as in
    the markers) and flag citations scoring ``<= tau`` as ``[n UNVERIFIED]``.

    All verifier calls go through one ``score_many`` batch (plus one for alternatives).
    """
    sentences = split_cited_sentences(answer)
    todo: list[tuple[int, int]] = []  # (sentence index, marker) with a passage to score
    for si, sent in enumerate(sentences):
        todo.extend((si, m) for m in sent.markers if m in passages)
    scores = verifier.score_many([(sentences[si].claim, passages[m]) for si, m in todo])
    score_of = dict(zip(todo, scores, strict=True))

    rankings: dict[int, list[tuple[int, float]]] = {}
    if rerank and passages:
        rankings = {si: bm25_rank(s.claim, passages) for si, s in enumerate(sentences)}

    drafts: list[tuple[int, int, float, bool, int | None]] = []
    for si, sent in enumerate(sentences):
        for m in sent.markers:
            s = score_of.get((si, m), math.nan)
            flagged = math.isnan(s) or s <= tau
            alt = next((pid for pid, bs in rankings.get(si, []) if pid != m and bs > 0), None)
            drafts.append((si, m, s, flagged, alt))

    alt_pairs = sorted({(si, alt) for si, _, _, f, alt in drafts if f and alt is not None})
    alt_scores = dict(
        zip(
            alt_pairs,
            verifier.score_many([(sentences[si].claim, passages[a]) for si, a in alt_pairs]),
            strict=True,
        )
    )
    records = [
        CitationRecord(
            sentence=sentences[si].claim,
            marker=m,
            score=s,
            flagged=f,
            best_alternative=alt,
            alternative_score=alt_scores.get((si, alt)) if f and alt is not None else None,
            missing=m not in passages,
        )
        for si, m, s, f, alt in drafts
    ]

    flagged_by_sentence: dict[int, set[int]] = {}
    for si, m, _, f, _ in drafts:
        if f:
            flagged_by_sentence.setdefault(si, set()).add(m)
    pieces: list[str] = []
    pos = 0
    for si, sent in enumerate(sentences):
        flagged_here = flagged_by_sentence.get(si)
        if not flagged_here:
            continue
        for g in _GROUP.finditer(sent.text):
            a, b = sent.start + g.start(), sent.start + g.end()
            pieces.append(answer[pos:a])
            pieces.append(_rewrite_group(g.group(1), flagged_here))
            pos = b
    pieces.append(answer[pos:])
    return GuardResult(answer="".join(pieces), original=answer, tau=tau, records=records)
