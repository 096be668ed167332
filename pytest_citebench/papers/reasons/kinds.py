"""Which kind of wrong citation a hallucinated REASONS answer gives: misattributed, fabricated or
unverified, with the evidence that says so.

Why: *hallucinated* lumps two failures a model team must tell apart. A frontier chat model's
wrong answers mostly name a real paper that is not the gold (often the one the sentence
describes); SmolLM2-135M invents people and titles. The same hallucinated share can mean either,
so every hallucinated record gets a ``kind``, decided after the judge has said *hallucinated*
(the rules in ``judge_*.py`` never read it), from what the judge found wrong
(``Judgement.wrong_title``, ``wrong_authors``, ``wrong_id``):

* ``misattributed``: the named title (or author list) belongs to a real paper other than the
  gold;
* ``fabricated``: a title lookup found no such work (or the recorded registry responses say a
  DOI given with it does not exist);
* ``unverified``: nothing the run can see says either. Never presented as fabricated: an
  unknown title is not an invented one, and a lookup outage is no evidence.

The evidence, in order (the first that speaks decides): the item's own prompt (a title copied
from a sentence that is a reference entry of another paper); the suite's corpus; the packaged
index of every paper the committed suites know (``known_papers``); the run's recorded registry
responses (``--citebench-doi-offline-dir``); the live title lookup, when the run asked for one
(``--citebench-title-lookup live``, recorded on the final stage, ``title_lookup.py``); then the
identifiers given with the answer. With retrieval in the prompt (``--citebench-rag``) the
retrieved papers come from the suite's corpus, so a retrieved paper copied as the answer is
found there. For authors (direct): misattributed when at least half of the people not in the
gold, and at least one, are authors of other known papers by full name; a name lookup is not
made, so otherwise unverified.

Pure: a function of the item, the judgement, the corpus file, the recorded responses and the
stage's recorded lookup, so ``rescore`` gives the same kind from the same record.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_citebench.api import HallucinationKind, Sample
from pytest_citebench.papers.reasons.identifiers import MISSING_DOI, OTHER_ARXIV, OTHER_DOI
from pytest_citebench.papers.reasons.judgement import Judgement, short

if TYPE_CHECKING:
    from pytest_citebench.doi.title_search import TitleLookup
    from pytest_citebench.papers.reasons.known_papers import KnownPaper, KnownPapers

#: Where a stage keeps its live title lookup (``ScoredStage.details``).
LOOKUP_KEY = "title_lookup"
#: Fewest words a title copied from the sentence needs to count as a paper's title.
MIN_COPIED_WORDS = 3
_NO_EVIDENCE = (
    "no evidence: not in the prompt, the suite's corpus, the index of known papers or the "
    "recorded registry responses"
)
_ASK_LIVE = " (--citebench-title-lookup live asks OpenAlex and Crossref)"


@dataclass(frozen=True)
class KindOf:
    """A hallucinated answer's kind of wrong citation and the one-line evidence for it."""

    kind: HallucinationKind
    evidence: str

    def reason(self, judged: str) -> str:
        """The record's reason: the judge's, then the kind and its evidence."""
        return f"{judged}; {self.kind}: {self.evidence}"


# --------------------------------------------------------------------------- evidence sources


def _same(a: str, b: str) -> bool:
    from pytest_citebench.papers.reasons.known_papers import title_key

    return bool(title_key(a)) and title_key(a) == title_key(b)


def copied_from_sentence(title: str, sentence: str) -> bool:
    """The title stands in the sentence (word for word, or as the gold audit compares), and the
    sentence is a reference entry (``audit.is_reference_entry``): the model named the paper the
    entry describes. Prose copied back ("Visualization techniques have been developed to ...")
    is no paper's title."""
    from pytest_citebench.metrics.text import title_words
    from pytest_citebench.papers.reasons.audit import is_reference_entry, stands_in

    words = title_words(title)
    if len(words) < MIN_COPIED_WORDS:
        return False
    inside = f" {' '.join(title_words(sentence))} "
    # Word for word, or as the gold audit compares (spacing and lost ligatures ignored): the
    # sentence is a PDF extraction, and "scaolds" there is the "scaffolds" of the title.
    there = f" {' '.join(words)} " in inside or stands_in(title, sentence)
    return there and is_reference_entry(sentence)


@functools.lru_cache(maxsize=16)
def _recorded(dirs: tuple[str, ...]) -> KnownPapers:
    """The works of the recorded registry responses (every 200 a registry answered with a
    title), read once per set of directories."""
    from pytest_citebench.doi.offline import load_recordings
    from pytest_citebench.doi.records import RawResponse, classify
    from pytest_citebench.papers.reasons.known_papers import KnownPapers

    papers = []
    for directory in dirs:
        try:
            recordings = load_recordings(directory)
        except (OSError, ValueError):
            continue  # a broken directory is no evidence; the DOI checks report it
        for rec in recordings:
            try:
                raw = RawResponse.from_recording(rec["response"], rec["request"]["url"])
                outcome = classify(str(rec["api"]), raw)
            except (KeyError, TypeError, ValueError):
                continue
            origin = f"recorded {rec.get('api')} {rec.get('doi')}"
            papers += [(t, [origin], ()) for t in (*outcome.titles, *outcome.original_titles)]
    return KnownPapers.of(papers)


def recorded_papers() -> KnownPapers:
    """The works of this run's recorded registry responses (the DOI setting's offline
    directories); none without any."""
    from pytest_citebench.doi.config import doi_config

    return _recorded(tuple(doi_config().offline_dirs))


def _known(corpus: str | None) -> list[tuple[str, KnownPapers]]:
    """Where a real paper is looked for, in order: the corpus, the packaged index, the recorded
    responses; each with the words a reason says it with."""
    from pytest_citebench.papers.reasons.known_papers import corpus_papers, packaged

    return [
        ("in the suite's corpus", corpus_papers(corpus)),
        ("in the packaged index of known papers", packaged()),
        ("registered (the run's recorded registry responses)", recorded_papers()),
    ]


def _paper_text(paper: KnownPaper, where: str) -> str:
    return f"{short(paper.title)!r} is a real paper, {where} ({paper.where()})"


# --------------------------------------------------------------------------- titles (indirect)


def title_evidence(item: Sample, title: str, corpus: str | None, reply: str = "") -> KindOf | None:
    """Offline evidence that ``title`` is a real paper other than the gold, or None; ``reply``
    (the raw answer) is searched for a known title written in full of which ``title`` is the
    piece the judge read."""
    gold = str(item["cited_title"])
    if not title.strip() or _same(title, gold):
        return None
    if _same(title, str(item.fields.get("citing_title") or "")):
        return KindOf("misattributed", "the citing paper's own title")
    if copied_from_sentence(title, str(item.fields.get("sentence") or "")):
        return KindOf(
            "misattributed",
            "copied from the item's sentence, a reference entry of another paper",
        )
    for where, papers in _known(corpus):
        paper = papers.find_title(title)
        if paper is not None and not _same(paper.title, gold):
            return KindOf("misattributed", _paper_text(paper, where))
    for where, papers in _known(corpus) if reply else ():
        paper = papers.named_in(title, reply)
        if paper is not None and not _same(paper.title, gold):
            return KindOf(
                "misattributed", "the reply writes it in full: " + _paper_text(paper, where)
            )
    return None


def lookup_of(details: Mapping[str, Any] | None, title: str) -> TitleLookup | None:
    """The live lookup a stage recorded for this very title (a rescore may judge another title
    than the one looked up; that lookup says nothing about it)."""
    if not details or not isinstance(details.get(LOOKUP_KEY), Mapping):
        return None
    from pytest_citebench.doi.title_search import TitleLookup

    lookup = TitleLookup.from_json(details[LOOKUP_KEY])
    return lookup if lookup is not None and lookup.title == title else None


def lookup_evidence(lookup: TitleLookup, gold: str = "") -> KindOf:
    """A recorded live lookup as evidence: found is a real work, not found an invented one, a
    failed lookup (a 429, an outage, no recording to replay) nothing. A near miss of the gold
    that the registry matched to the gold's own entry is no evidence either: the gold itself is
    never evidence of another paper."""
    if lookup.verdict == "found" and gold and _same(lookup.matched_title, gold):
        return KindOf(
            "unverified",
            f"the title lookup matched the gold's own entry ({lookup.source} has "
            f"{short(lookup.matched_title)!r}): no evidence of another paper",
        )
    if lookup.verdict == "found":
        doi = f", {lookup.doi}" if lookup.doi else ""
        return KindOf(
            "misattributed",
            f"a real work: {lookup.source} has {short(lookup.matched_title)!r}{doi} (title "
            f"score {lookup.score or 0:.2f})",
        )
    if lookup.verdict == "not_found":
        return KindOf(
            "fabricated",
            f"a title lookup found no such work (OpenAlex and Crossref answered; {lookup.note})",
        )
    return KindOf("unverified", f"the title lookup failed ({lookup.note}): no evidence either way")


# --------------------------------------------------------------------------- authors (direct)


def author_evidence(item: Sample, names: tuple[str, ...], corpus: str | None) -> KindOf:
    """Misattributed when at least half of the people not in the gold (and at least one) are,
    by full name, authors of known papers other than the gold; unverified otherwise (names are
    not looked up). Half, not one: an invented list may hold a common name a real author
    shares (SmolLM2's "John Wright" beside two invented people)."""
    from pytest_citebench.papers.reasons.authors import parse_authors

    gold = str(item["cited_title"])
    matched: list[str] = []
    for name in names:
        persons = parse_authors(name).persons
        if not persons:
            continue
        for where, papers in _known(corpus):
            other = [p for p in papers.papers_of(persons[0]) if not _same(p.title, gold)]
            if other:
                shown = short(other[0].title, 60)
                matched.append(f"{name} of {shown!r} ({where.split(' (')[0]})")
                break
    count = f"{len(matched)} of {len(names)} people not in the gold"
    if matched and 2 * len(matched) >= len(names):
        return KindOf(
            "misattributed",
            f"{count} are authors of other real papers: " + "; ".join(matched[:3]),
        )
    if matched:
        why = f"only {count} are authors of other known papers (fewer than half: no evidence)"
    else:
        why = f"none of the {len(names)} people not in the gold is an author of a known paper"
    return KindOf("unverified", f"{why}; names are not looked up")


# --------------------------------------------------------------------------- identifiers


def id_evidence(wrong_id: str) -> KindOf | None:
    """What a wrong identifier given with the answer says, if the title or authors said
    nothing: a DOI recorded as not existing is invented, one registered to another title a real
    other paper; an arXiv id that is not the cited paper's may be either."""
    if wrong_id == MISSING_DOI:
        return KindOf("fabricated", "its DOI does not exist (recorded registry responses)")
    if wrong_id == OTHER_DOI:
        return KindOf("misattributed", "its DOI is registered to another paper")
    if wrong_id == OTHER_ARXIV:
        return KindOf("unverified", "an arXiv id that is not the cited paper's, not looked up")
    return None


# --------------------------------------------------------------------------- the kind


def kind_of(
    item: Sample,
    verdict: Judgement,
    *,
    corpus: str | None,
    details: Mapping[str, Any] | None = None,
    reply: str = "",
) -> KindOf:
    """The kind of a hallucinated judgement (the evidence order: the module docstring);
    ``reply`` is the raw answer judged, ``details`` what its stage recorded beside it."""
    notes: list[str] = []
    if verdict.wrong_authors:
        by_authors = author_evidence(item, verdict.wrong_authors, corpus)
        if by_authors.kind != "unverified":
            return by_authors
        notes.append(by_authors.evidence)
    title = verdict.wrong_title
    if title:
        by_title = title_evidence(item, title, corpus, reply)
        if by_title is not None:
            return by_title
        lookup = lookup_of(details, title)
        if lookup is None:
            notes.append(_NO_EVIDENCE + _ASK_LIVE)
        else:
            looked = lookup_evidence(lookup, str(item["cited_title"]))
            if looked.kind != "unverified":
                return looked
            notes.append(looked.evidence)
    by_id = id_evidence(verdict.wrong_id)
    if by_id is not None and by_id.kind != "unverified":
        return by_id
    if by_id is not None:
        notes.append(by_id.evidence)
    return KindOf("unverified", "; ".join(notes) or "nothing names the wrong element")


def needs_lookup(
    item: Sample, verdict: Judgement, corpus: str | None, reply: str = ""
) -> str | None:
    """The title a live lookup should ask about: a hallucinated answer's wrong title that no
    offline evidence places; None when there is nothing to ask (a lookup is a request to a
    registry, made only where it can decide the kind)."""
    title = verdict.wrong_title
    if verdict.outcome != "hallucinated" or not title.strip():
        return None
    if _same(title, str(item["cited_title"])):
        return None  # the gold itself, wrong only by an identifier: the title needs no lookup
    if title_evidence(item, title, corpus, reply) is not None:
        return None
    return title


def fabricated_unmeasured(records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a group's *fabricated* share was not measured: some wrong citation stayed
    *unverified*, and no record asked a registry (no live title lookup) or was found invented.
    Such a run could give only 0; a gate on it passed at 0 (``fabricated<=0.05``) though
    nothing was looked up. Its share is then undefined, as any metric with nothing to measure
    on, and a gate on it fails saying so."""
    kinds = {r.get("kind") for r in records if r.get("outcome") == "hallucinated"}
    if "fabricated" in kinds or "unverified" not in kinds:
        return False
    for record in records:
        stages = record.get("stages")
        last = stages[-1] if isinstance(stages, list) and stages else None
        details = last.get("details") if isinstance(last, Mapping) else None
        if isinstance(details, Mapping) and LOOKUP_KEY in details:
            return False
    return True
