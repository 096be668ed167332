"""citation-guard (Goo et al., seed paper 002) as pytest tasks: validate a verifier on gold,
calibrate the split-conformal flag rule, re-attribute claims, and guard generated answers.

The design choice that shapes everything here: **the verifier is the model under test.** A
verifier is an instrument whose numbers mean nothing until it has been validated on gold (the
paper: the unsupported-citation rate moves from ~3% to ~18% with verifier strictness alone), so it
gets the same treatment as any model: side-by-side columns, cassettes, gates. Concretely:

* ``verify`` asks the model "does this passage support this claim?". An LLM answers
  SUPPORTED / PARTIAL / UNSUPPORTED through litellm (recorded in cassettes like every model call,
  with the guard library's own judge prompt); the offline verifier models
  ``citebench/verifier-lexical`` and ``citebench/verifier-embedding`` answer their score. Per
  model: recall on supported, specificity, Cohen's kappa, ROC-AUC, each with a bootstrap CI.
* ``calibrate`` is ``verify`` without a decision: labelled calibration points whose score is
  either precomputed in the suite (the paper's QASA scores) or asked of the model. It prints the
  split-conformal table (alpha, k, tau, held-out catch, flag rate, conformal vs naive at small n).
* ``reattribute`` asks the model to rank candidate passages for a claim: recall@1/@5 (Wilson).
* ``guard`` asks the model for a cited answer, then the guard library verifies every citation
  with a *named, fixed* verifier and threshold (from the item, never from the model under test)
  and flags ``[n UNVERIFIED]``; per model: the unsupported-citation rate, always printed with
  the verifier's name and tau.

The built-in ``citebench/bm25`` and ``citebench/dense`` answer all four tasks too (lexical
verifier / BM25 ranking / a BM25-citing extractive answerer, and the embedding equivalents), so
the default offline run covers these suites. See ``docs/guard.md``.

This module holds the four tasks; the rest of the paper has a module per concept: reading
labels and scores (``verdicts``), the ``CITEBENCH_GUARD_*`` settings (``settings``), the set
metrics (``setstats``), the offline models (``offline``), the terminal tables (``summary``),
the report section (``report``), the prompts and echo removal (``prompts``).

Importing this module loads no numpy, torch or model: those come with the first score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from pytest_citebench.api import (
    Aggregate,
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    MetricSpec,
    Outcome,
    Records,
    Sample,
    Stage,
    Stat,
    Task,
)
from pytest_citebench.errors import ResponseError
from pytest_citebench.papers.guard.answers import guard_answer
from pytest_citebench.papers.guard.offline import shared_verifier
from pytest_citebench.papers.guard.prompts import (
    GUARD_PROMPT,
    REATTRIBUTE_PROMPT,
    judge_messages,
    own_answer,
    uncited_sentences,
)
from pytest_citebench.papers.guard.setstats import (
    CALIBRATION_SPECS,
    VALIDATION_SPECS,
    calibration_stats,
    reattribution_stats,
    scored_records,
    unsupported_rate,
    validation_stats,
)
from pytest_citebench.papers.guard.settings import guard_config
from pytest_citebench.papers.guard.summary import (
    calibrate_summary,
    guard_summary,
    reattribute_summary,
    verify_summary,
)
from pytest_citebench.papers.guard.verdicts import (
    item_threshold,
    numbered,
    parse_label,
    parse_ranking,
    parse_score,
    passages_of,
    stage_score,
    verdict_word,
)
from pytest_citebench.papers.guard.verifiers import VerifierUnavailable
from pytest_citebench.parsing import is_abstention

#: The version of the citation-guard scoring rules (see ``Task.scorer_version``).
SCORER_VERSION = "4"

PAPER = (
    "citation-guard: Goo, Kim, Han, Jo, Kim, Kim, Evaluating and Guarding Citation Faithfulness "
    "in Agentic Scientific Synthesis (arXiv 2607.20527)"
)

# The ``example`` samples' texts (bibliographic facts: abstracts of three real papers), so the
# sample ``new-suite`` writes for each task is one the offline baselines answer sensibly.
_ATTENTION_ABSTRACT = (
    "We propose the Transformer, a network architecture based solely on attention "
    "mechanisms, dispensing with recurrence and convolutions entirely, for machine "
    "translation."
)
_BERT_ABSTRACT = (
    "We introduce BERT, bidirectional encoder representations from transformers, "
    "pre-trained on unlabeled text by masked language modeling and next sentence "
    "prediction."
)
_RESNET_ABSTRACT = (
    "We present a residual learning framework to ease the training of very deep "
    "convolutional networks for image recognition on ImageNet."
)
_CLAIM = "The Transformer dispenses with recurrence and relies on attention mechanisms."

# --------------------------------------------------------------------------- verify / calibrate


async def _ask_score(item: Sample, generate: Generate, task: str) -> Stage:
    """One verifier call: the judge prompt to a remote model, (claim, passage) to a local one.

    The stage's answer reads ``supported (score 0.81)`` for ``verify`` (the verdict at the
    item's threshold, so a failure report is readable) and ``score 0.81`` for ``calibrate``.
    """
    hint = Hint(task, item["claim"], item.suite, None, {"passage": item["passage"]})
    raw = await generate(judge_messages(item["claim"], item["passage"]), hint=hint)
    if is_abstention(raw):
        return Stage("verify", raw, "pass", True)
    score = parse_score(raw)
    if score is None:
        raise ResponseError(
            f"verifier answer {raw.strip()[:200]!r} is neither a score in [0, 1] nor "
            "SUPPORTED / PARTIAL / UNSUPPORTED"
        )
    if task == "verify":
        return Stage(
            "verify", raw, f"{verdict_word(score > item_threshold(item))} (score {score!r})", False
        )
    return Stage("verify", raw, f"score {score!r}", False)


class Verify(Task):
    """Verifier validation on gold: is ``P(supported) > threshold`` the gold label?

    Items: ``claim``, ``passage`` (the whole cited passage: truncation inflated the unsupported
    rate severalfold in the paper), ``label``; optional ``threshold`` (default 0.5, the decision
    point of a probability). Predicted supported = ``score > threshold``, so a tie is flagged,
    as in the guard. ROC-AUC and the matched-catch frontier do not depend on the threshold.
    """

    name = "verify"
    # Judged by its set metrics: correct/hallucinated here is no citation verdict.
    outcome_shares = False
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {"claim": str, "passage": str, "label": str}
    scorer_version = SCORER_VERSION
    set_metric_specs = VALIDATION_SPECS

    example: Mapping[str, Any] = {
        "claim": _CLAIM,
        "passage": _ATTENTION_ABSTRACT,
        "label": "supported",
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        return Attempt((await _ask_score(item, generate, self.name),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        gold = parse_label(item["label"])
        expected = verdict_word(gold)
        stage = attempt.final
        if stage.abstained:
            return ItemScore("abstained", expected, {})
        s, threshold = stage_score(stage), item_threshold(item)
        predicted = s > threshold
        metrics = {"score": s, "label": float(gold), "threshold": threshold}
        reason = (
            f"score {s:.3g} {'>' if predicted else '<='} threshold {threshold:g}: "
            f"{verdict_word(predicted)}, gold {expected}"
        )
        outcome: Outcome = "correct" if predicted == gold else "hallucinated"
        return ItemScore(outcome, expected, metrics, reason)

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        return validation_stats(scored_records(records))

    def summary_lines(self, aggregates: Sequence[Aggregate], records: Records) -> list[str]:
        return verify_summary(aggregates, records)


class Calibrate(Task):
    """Calibration points for the split-conformal flag rule; no per-item decision is made.

    Items: ``label`` plus either ``score`` (precomputed by the verifier that produced the
    calibration file; the model under test is then not asked) or ``claim`` + ``passage`` (the
    model is asked, exactly as in ``verify``). Every scored point counts as *correct*: the
    accuracy column is meaningless here; read the conformal table and the set metrics.
    """

    name = "calibrate"
    # Judged by its set metrics: correct/hallucinated here is no citation verdict.
    outcome_shares = False
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {"label": str}
    scorer_version = SCORER_VERSION
    set_metric_specs = CALIBRATION_SPECS

    example: Mapping[str, Any] = {
        "label": "unsupported",
        "score": 0.12,
        "scored_by": "TODO: the verifier that produced this score",
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        if "score" in item.fields:
            value = item["score"]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ResponseError(f"item {item.id!r}: 'score' must be a number")
            if not 0.0 <= float(value) <= 1.0:
                raise ResponseError(f"item {item.id!r}: 'score' {value} is not in [0, 1]")
            by = str(item.fields.get("scored_by", "the calibration file"))
            raw = json.dumps({"score": float(value), "scored_by": by})
            return Attempt((Stage("precomputed", raw, f"score {float(value)!r}", False),))
        if "claim" not in item.fields or "passage" not in item.fields:
            raise ResponseError(
                f"item {item.id!r}: a calibration item needs 'score', or 'claim' and 'passage'"
            )
        return Attempt((await _ask_score(item, generate, self.name),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        gold = parse_label(item["label"])
        stage = attempt.final
        if stage.abstained:
            return ItemScore("abstained", verdict_word(gold), {})
        metrics = {
            "score": stage_score(stage),
            "label": float(gold),
            "precomputed": float(stage.name == "precomputed"),
        }
        return ItemScore(
            "correct", verdict_word(gold), metrics, "a calibration point (no decision)"
        )

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        return calibration_stats(scored_records(records))

    def summary_lines(self, aggregates: Sequence[Aggregate], records: Records) -> list[str]:
        return calibrate_summary(records)


# --------------------------------------------------------------------------- reattribute


class Reattribute(Task):
    """Re-attribution: rank candidate passages for a claim; is the gold passage on top?

    Items: ``claim``, ``passages`` (list of strings, numbered from 1 in the prompt), ``gold``
    (the 1-based number of the supporting passage). The model answers a ranking of numbers; a
    gold passage it leaves out counts as not retrieved. A lexical ranker cannot tell support
    from contradiction, so build these suites from supported claims only.
    """

    name = "reattribute"
    # Judged by its set metrics: correct/hallucinated here is no citation verdict.
    outcome_shares = False
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {"claim": str, "passages": list, "gold": int}
    scorer_version = SCORER_VERSION
    set_metric_specs: Mapping[str, MetricSpec] = {
        "recall_at_1": MetricSpec(
            "reattribute: share of claims whose gold passage is ranked first (Wilson)",
            higher_is_better=True,
        ),
        "recall_at_5": MetricSpec(
            "reattribute: share of claims whose gold passage is in the top 5 (Wilson)",
            higher_is_better=True,
        ),
    }

    example: Mapping[str, Any] = {
        "claim": _CLAIM,
        "passages": [_RESNET_ABSTRACT, _ATTENTION_ABSTRACT, _BERT_ABSTRACT],
        "gold": 2,
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        passages = passages_of(item)
        prompt = REATTRIBUTE_PROMPT.render(claim=item["claim"], passages=numbered(passages))
        hint = Hint(
            self.name, item["claim"], item.suite, None, {"passages": json.dumps(item["passages"])}
        )
        raw = await generate([Message("user", prompt)], hint=hint)
        if is_abstention(raw):
            return Attempt((Stage("rank", raw, "pass", True),))
        ranking = parse_ranking(raw, len(passages))
        if not ranking:
            raise ResponseError(f"no passage number in the ranking {raw.strip()[:200]!r}")
        return Attempt((Stage("rank", raw, ", ".join(map(str, ranking)), False),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        gold = int(item["gold"])
        n = len(item["passages"])
        if not 1 <= gold <= n:
            raise ResponseError(f"item {item.id!r}: 'gold' {gold} is not a passage number 1..{n}")
        stage = attempt.final
        if stage.abstained:
            return ItemScore("abstained", str(gold), {"rank": 0.0, "candidates": float(n)})
        ranking = [int(x) for x in stage.answer.split(", ")]
        rank = ranking.index(gold) + 1 if gold in ranking else 0
        outcome: Outcome = "correct" if rank == 1 else "hallucinated"
        reason = f"gold passage {gold} ranked {rank}" if rank else f"gold passage {gold} not ranked"
        return ItemScore(outcome, str(gold), {"rank": float(rank), "candidates": float(n)}, reason)

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        return reattribution_stats(records)

    def summary_lines(self, aggregates: Sequence[Aggregate], records: Records) -> list[str]:
        return reattribute_summary(aggregates, records)


class Guard(Task):
    """The guard on generated answers: split into cited sentences, verify, re-attribute, flag.

    Items: ``question``, ``passages``, ``tau`` and optionally ``verifier`` (default
    ``lexical``) and ``alpha``. The model writes an answer with ``[n]`` markers; the named
    verifier (never the model under test) scores every (sentence, cited passage) and flags those
    with score <= tau as ``[n UNVERIFIED]``. Only the model's own words count: text it echoed
    from the prompt (the instructions, the question, a "[n] passage" line) is removed first, so
    an echoed "[2]" is never a citation (:func:`own_answer`). Outcomes: *abstained* when the
    model passes; *unanswered* when its own answer has no citation marker; *hallucinated* when
    any citation is flagged; *partial* when every citation verifies but some sentence of the
    answer cites nothing (the prompt asks for a marker on every sentence); else *correct*. The
    answer in the record is the guarded answer; the first stage (``audit``) holds the
    per-citation trail as JSON.
    """

    name = "guard"
    paper = PAPER
    fields: Mapping[str, type | tuple[type, ...]] = {
        "question": str,
        "passages": list,
        "tau": (int, float),
    }
    scorer_version = SCORER_VERSION
    set_metric_specs: Mapping[str, MetricSpec] = {
        "unsupported_rate": MetricSpec(
            "guard: flagged citations / all citations (answers with citations; "
            "item bootstrap 95% CI); relative to the named verifier and tau",
            higher_is_better=False,
        ),
    }

    example: Mapping[str, Any] = {
        "question": "Which network architecture relies solely on attention mechanisms?",
        "passages": [_ATTENTION_ABSTRACT, _RESNET_ABSTRACT],
        "tau": 0.4,
        "verifier": "lexical",
        "alpha": 0.1,
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        passages = passages_of(item)
        guard_config(item)  # a bad configuration fails before the model is called
        prompt = GUARD_PROMPT.render(question=item["question"], passages=numbered(passages))
        hint = Hint(
            self.name,
            item["question"],
            item.suite,
            None,
            {"passages": json.dumps(item["passages"])},
        )
        raw = await generate([Message("user", prompt)], hint=hint)
        return self.audit(item, raw)

    def restage(self, item: Sample, attempt: Attempt, corpus: str | None) -> Attempt:
        """Verify the recorded raw answer again under today's rules (``rescore``)."""
        return self.audit(item, attempt.final.raw)

    def audit(self, item: Sample, raw: str) -> Attempt:
        """The guard on one raw answer: echo removed, citations verified and flagged."""
        passages = passages_of(item)
        verifier_name, tau, alpha = guard_config(item)
        audit: dict[str, Any] = {"verifier": verifier_name, "tau": tau, "alpha": alpha}
        if is_abstention(raw):
            audit["citations"] = []
            return Attempt(
                (Stage("audit", json.dumps(audit), "", True), Stage("guard", raw, "pass", True))
            )
        own = own_answer(raw, item["question"], passages)
        audit["echo_removed"] = len(raw.strip()) - len(own)
        audit["uncited_sentences"] = uncited_sentences(own)
        try:
            result = guard_answer(own, passages, shared_verifier(verifier_name), tau)
        except VerifierUnavailable as exc:
            raise ResponseError(f"guard verifier {verifier_name!r}: {exc}") from None
        audit["citations"] = [_jsonable(asdict(r)) for r in result.records]
        notes = [
            f"[{r.marker}] -> passage {r.best_alternative} (score {r.alternative_score:.3f})"
            for r in result.flagged
            if r.best_alternative is not None
            and r.alternative_score is not None
            and r.alternative_score > tau
        ]
        return Attempt(
            (
                Stage("audit", json.dumps(audit), "; ".join(notes), False),
                Stage("guard", raw, result.answer, False),
            )
        )

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        audit = json.loads(attempt.stages[0].raw)
        citations = audit["citations"]
        tau = float(audit["tau"])
        flagged = [c for c in citations if c["flagged"]]
        reattributable = [
            c
            for c in flagged
            if c.get("alternative_score") is not None and c["alternative_score"] > tau
        ]
        expected = f"every citation verified by {audit['verifier']} at tau={tau:.4g}"
        metrics = {
            "citations": float(len(citations)),
            "flagged": float(len(flagged)),
            "missing": float(sum(bool(c["missing"]) for c in citations)),
            "reattributable": float(len(reattributable)),
            "tau": tau,
        }
        if attempt.final.abstained:
            return ItemScore("abstained", expected, metrics, "the model wrote 'pass'")
        if not citations:
            return ItemScore(
                "unanswered", expected, metrics, "no citation marker in the model's own answer"
            )
        if flagged:
            return ItemScore(
                "hallucinated",
                expected,
                metrics,
                f"{len(flagged)} of {len(citations)} citation(s) not verified by "
                f"{audit['verifier']} at tau={tau:.4g}",
            )
        uncited = int(audit.get("uncited_sentences", 0))
        if uncited:
            return ItemScore(
                "partial",
                expected,
                metrics,
                f"all {len(citations)} citation(s) verified, but {uncited} sentence(s) cite "
                "nothing",
            )
        return ItemScore("correct", expected, metrics, f"all {len(citations)} citation(s) verified")

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        return {"unsupported_rate": unsupported_rate(records)}

    def summary_lines(self, aggregates: Sequence[Aggregate], records: Records) -> list[str]:
        return guard_summary(aggregates, records)


def _jsonable(record: dict[str, Any]) -> dict[str, Any]:
    """NaN (a marker naming no passage) as null, so the audit trail is strict JSON."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in record.items()}


TASKS = (Verify(), Calibrate(), Reattribute(), Guard())
