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

Importing this module loads no numpy, torch or model: those come with the first score.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from pytest_citebench.api import (
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    NamedTemplate,
    Outcome,
    Sample,
    Stage,
    Task,
)
from pytest_citebench.errors import ProviderError, ResponseError
from pytest_citebench.papers.guard._text import bm25_rank
from pytest_citebench.papers.guard.answers import guard_answer
from pytest_citebench.papers.guard.stats import (
    bootstrap_ci,
    conformal_k,
    conformal_threshold,
    conformal_trials,
    matched_catch_frontier,
    recall_at_k,
)
from pytest_citebench.papers.guard.verifiers import (
    JUDGE_PROMPT,
    Verifier,
    VerifierUnavailable,
    get_verifier,
)
from pytest_citebench.parsing import is_abstention

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate, Stat

PAPER = (
    "citation-guard: Goo, Kim, Han, Jo, Kim, Kim, Evaluating and Guarding Citation Faithfulness "
    "in Agentic Scientific Synthesis (arXiv 2607.20527)"
)
TASK_NAMES = ("verify", "calibrate", "reattribute", "guard")

# Every interval of the protocol: item bootstrap, B = 2000, seed 0, 2.5/97.5 percentiles.
B = 2000
SEED = 0
DEFAULT_THRESHOLD = 0.5
FRONTIER_CATCH = (0.80, 0.90, 0.95)
DEFAULT_ALPHAS = (0.02, 0.10, 0.20, 0.30)
DEFAULT_ALPHA = 0.10
DEFAULT_TRIALS = 1000
SMALL_N_CAL = 25  # the paper's Table S4: the naive quantile under-covers here

EXCHANGEABILITY_WARNING = (
    "WARNING: the conformal guarantee (mean catch >= 1 - alpha) holds only if the calibration "
    "negatives are exchangeable with deployment negatives. Easy distractors make tau optimistic: "
    "in the paper a tau calibrated on easy QASA distractors caught 37% (not 90%) of harder SciFact "
    "negatives. Recalibrate on negatives from your own deployment (python -m pytest_citebench "
    "build-calibration, docs/guard.md)."
)

# --------------------------------------------------------------------------- labels and parsing

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


def _passages(item: Sample) -> dict[int, str]:
    """An item's ``passages`` as ``{1: text, 2: text, ...}`` (the [n] numbering of prompts)."""
    value = item["passages"]
    if not value or not all(isinstance(p, str) for p in value):
        raise ResponseError(f"item {item.id!r}: 'passages' must be a non-empty list of strings")
    return {i: p for i, p in enumerate(value, start=1)}


def _numbered(passages: Mapping[int, str]) -> str:
    return "\n\n".join(f"[{i}] {text}" for i, text in passages.items())


# --------------------------------------------------------------------------- prompts

REATTRIBUTE_PROMPT = NamedTemplate(
    "guard.reattribute",
    "Which of the numbered passages supports the claim? Rank all passages from the one that "
    "best supports the claim to the one that least supports it. Answer with the passage numbers "
    "only, separated by commas (for example: 3, 1, 2).\n\nClaim: $claim\n\nPassages:\n$passages"
    "\n\nRanking:",
)
GUARD_PROMPT = NamedTemplate(
    "guard.answer",
    "Answer the question using only the numbered passages below, in two to four sentences. End "
    "every sentence with the number of the passage that supports it in square brackets, for "
    "example [2]. Cite a passage only if it states what the sentence says. If the passages do "
    "not answer the question, write 'pass'.\n\nQuestion: $question\n\nPassages:\n$passages"
    "\n\nAnswer:",
)


def judge_messages(claim: str, passage: str) -> list[Message]:
    """The guard library's LLM-judge prompt, word for word, on the whole passage (never cut)."""
    return [Message("user", JUDGE_PROMPT.format(claim=claim, passage=passage))]


# --------------------------------------------------------------------------- verify / calibrate


def _threshold(item: Sample) -> float:
    value = item.fields.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ResponseError(f"item {item.id!r}: 'threshold' must be a number in [0, 1]")
    return float(value)


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
            "verify", raw, f"{_verdict(score > _threshold(item))} (score {score!r})", False
        )
    return Stage("verify", raw, f"score {score!r}", False)


_STAGE_SCORE = re.compile(r"score ([-+0-9.eE]+)")


def _stage_score(stage: Stage) -> float:
    match = _STAGE_SCORE.search(stage.answer)
    if match is None:
        raise ResponseError(f"no score in stage answer {stage.answer!r}")
    return float(match.group(1))


def _verdict(supported: bool) -> str:
    return "supported" if supported else "unsupported"


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
    metrics: Mapping[str, str] = {}
    set_metric_docs: Mapping[str, str] = {
        "recall_supported": "verify: share of gold-supported citations the verifier calls "
        "supported (score > threshold), bootstrap 95% CI",
        "specificity": "verify: share of gold-unsupported citations the verifier flags "
        "(score <= threshold), bootstrap 95% CI",
        "kappa": "verify: Cohen's kappa between gold and the verifier at its threshold, bootstrap",
        "auc": "verify: ROC-AUC of the verifier score against gold (threshold-free), bootstrap",
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        return Attempt((await _ask_score(item, generate, self.name),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        gold = parse_label(item["label"])
        expected = _verdict(gold)
        stage = attempt.final
        if stage.abstained:
            return ItemScore("abstained", expected, {})
        s, threshold = _stage_score(stage), _threshold(item)
        predicted = s > threshold
        metrics = {"score": s, "label": float(gold), "threshold": threshold}
        reason = (
            f"score {s:.3g} {'>' if predicted else '<='} threshold {threshold:g}: "
            f"{_verdict(predicted)}, gold {expected}"
        )
        outcome: Outcome = "correct" if predicted == gold else "hallucinated"
        return ItemScore(outcome, expected, metrics, reason)

    def set_metrics(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
        return validation_stats(_scored(records))

    def summary_lines(
        self, aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        return _verify_summary(aggregates, records)


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
    metrics: Mapping[str, str] = {}
    set_metric_docs: Mapping[str, str] = {
        "catch_rate": "calibrate: split-conformal rule at alpha (CITEBENCH_GUARD_ALPHA, 0.10): "
        "mean share of held-out unsupported items flagged over repeated seeded splits "
        "(interval: 5th-95th percentile over splits)",
        "flag_rate": "calibrate: same rule, mean share of supported items flagged (the review "
        "budget; interval: 5th-95th percentile over splits)",
        "tau": "calibrate: the conformal threshold tau(alpha) from all unsupported scores",
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
            return ItemScore("abstained", _verdict(gold), {})
        metrics = {
            "score": _stage_score(stage),
            "label": float(gold),
            "precomputed": float(stage.name == "precomputed"),
        }
        return ItemScore("correct", _verdict(gold), metrics, "a calibration point (no decision)")

    def set_metrics(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
        return calibration_stats(_scored(records))

    def summary_lines(
        self, aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        return _calibrate_summary(records)


def _scored(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records with a score, in item order (the bootstrap resamples rows, so order is fixed)."""
    rows = [r for r in records if "score" in (r.get("metrics") or {})]
    return sorted(rows, key=lambda r: str(r["item_id"]))


def _stat(interval: Any, n: int) -> Stat:
    from pytest_citebench.api import Stat

    estimate, low, high = interval
    return Stat(float(estimate), float(low), float(high), n)


def _nan_stat(n: int = 0) -> Stat:
    from pytest_citebench.api import Stat

    return Stat(math.nan, math.nan, math.nan, n)


def validation_stats(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """Recall on supported, specificity, kappa and ROC-AUC with paired bootstrap CIs."""
    if not records:
        return {name: _nan_stat() for name in Verify.set_metric_docs}
    # bootstrap_ci hands the statistics numpy arrays; they are written as array arithmetic (the
    # same definitions as guard.stats.recall_specificity / cohen_kappa, which the tests check)
    # because 2000 replicates of a Python loop per metric made the summary slow.
    y = [bool(r["metrics"]["label"]) for r in records]
    s = [float(r["metrics"]["score"]) for r in records]
    t = [float(r["metrics"].get("threshold", DEFAULT_THRESHOLD)) for r in records]
    n_pos = sum(y)
    n_neg = len(y) - n_pos

    def recall(yy: Any, ss: Any, tt: Any) -> float:
        return _share(ss[yy] > tt[yy])

    def specificity(yy: Any, ss: Any, tt: Any) -> float:
        return _share(ss[~yy] <= tt[~yy])

    def kappa(yy: Any, ss: Any, tt: Any) -> float:
        return _binary_agreement(yy, ss > tt)["kappa"]

    def auc(yy: Any, ss: Any, tt: Any) -> float:
        return _auc(yy, ss)

    def ci(fn: Callable[..., float]) -> Any:
        return bootstrap_ci(fn, y, s, t, B=B, seed=SEED)

    return {
        "recall_supported": _stat(ci(recall), n_pos),
        "specificity": _stat(ci(specificity), n_neg),
        "kappa": _stat(ci(kappa), len(y)),
        "auc": _stat(ci(auc), len(y)),
    }


def _share(hits: Any) -> float:
    """Mean of a boolean array; NaN when it is empty (a class absent from a resample)."""
    return float(hits.sum() / len(hits)) if len(hits) else math.nan


def _auc(y: Any, s: Any) -> float:
    """ROC-AUC of boolean ``y`` and float ``s`` arrays: ``guard.stats.roc_auc``'s Mann-Whitney
    formula (average ranks for ties) without its per-call list conversions."""
    import numpy as np

    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    avg_rank = np.cumsum(counts) - (counts - 1) / 2.0
    u_stat = float(avg_rank[inverse.reshape(-1)][y].sum()) - n_pos * (n_pos + 1) / 2.0
    return u_stat / (n_pos * n_neg)


def _binary_agreement(a: Any, b: Any) -> dict[str, float]:
    """Cohen's kappa, Gwet's AC1, PSA and NSA of two boolean arrays, vectorised.

    Same definitions as ``guard.stats`` (cohen_kappa, gwet_ac1 with categories {True, False},
    psa_nsa), restricted to binary ratings so one bootstrap replicate costs microseconds.
    """
    n = len(a)
    both_pos = float((a & b).sum())
    both_neg = float((~a & ~b).sum())
    disc = n - both_pos - both_neg
    po = (both_pos + both_neg) / n
    pa, pb = float(a.sum()) / n, float(b.sum()) / n
    pe_kappa = pa * pb + (1 - pa) * (1 - pb)
    pi = (pa + pb) / 2
    pe_ac1 = 2 * pi * (1 - pi)  # sum over the two categories of pi_q (1 - pi_q), / (Q - 1)
    return {
        "kappa": math.nan if math.isclose(pe_kappa, 1.0) else (po - pe_kappa) / (1 - pe_kappa),
        "ac1": (po - pe_ac1) / (1 - pe_ac1),
        "psa": 2 * both_pos / (2 * both_pos + disc) if (2 * both_pos + disc) else math.nan,
        "nsa": 2 * both_neg / (2 * both_neg + disc) if (2 * both_neg + disc) else math.nan,
    }


def _env_float(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ResponseError(f"{name}={text!r} is not a number") from None


def _env_int(name: str, default: int | None) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise ResponseError(f"{name}={text!r} is not an integer") from None


def calibration_settings() -> dict[str, Any]:
    """alpha grid, primary alpha, n_cal and trials, from ``CITEBENCH_GUARD_*`` or the defaults.

    Environment variables because calibration is a property of the deployment, not of a suite
    or a model: ``CITEBENCH_GUARD_ALPHAS=0.05,0.1``, ``CITEBENCH_GUARD_ALPHA=0.1``,
    ``CITEBENCH_GUARD_N_CAL=100`` (default: half the unsupported points),
    ``CITEBENCH_GUARD_TRIALS=1000``. Splits always use seed 0.
    """
    text = os.environ.get("CITEBENCH_GUARD_ALPHAS", "").strip()
    try:
        alphas = tuple(float(a) for a in text.split(",")) if text else DEFAULT_ALPHAS
    except ValueError:
        raise ResponseError(f"CITEBENCH_GUARD_ALPHAS={text!r}: expected e.g. 0.02,0.1") from None
    alpha = _env_float("CITEBENCH_GUARD_ALPHA", DEFAULT_ALPHA)
    for a in (*alphas, alpha):
        if not 0 < a < 1:
            raise ResponseError(f"alpha {a} must be in (0, 1)")
    trials = _env_int("CITEBENCH_GUARD_TRIALS", DEFAULT_TRIALS) or DEFAULT_TRIALS
    return {
        "alphas": alphas,
        "alpha": alpha,
        "n_cal": _env_int("CITEBENCH_GUARD_N_CAL", None),
        "trials": trials,
    }


GUARD_ENV = (
    "CITEBENCH_GUARD_ALPHAS",
    "CITEBENCH_GUARD_ALPHA",
    "CITEBENCH_GUARD_N_CAL",
    "CITEBENCH_GUARD_TRIALS",
    "CITEBENCH_GUARD_VERIFIER",
    "CITEBENCH_GUARD_TAU",
)


def environment_problems() -> list[str]:
    """Every problem with the ``CITEBENCH_GUARD_*`` variables, checked once at start.

    Why here and not only where they are read: they are read per item, so one bad value used to
    come back as a provider error on every guard item (and a misspelt name was ignored).
    """
    problems = [
        f"{name} is not a citebench setting; known: {', '.join(GUARD_ENV)}"
        for name in sorted(os.environ)
        if name.startswith("CITEBENCH_GUARD_") and name not in GUARD_ENV
    ]
    checks: list[Callable[[], Any]] = [calibration_settings, _env_guard_config]
    for check in checks:
        try:
            check()
        except ResponseError as exc:
            problems.append(str(exc))
    for name in ("CITEBENCH_GUARD_N_CAL", "CITEBENCH_GUARD_TRIALS"):
        try:
            value = _env_int(name, None)
        except ResponseError:
            continue  # reported above
        if value is not None and value < 1:
            problems.append(f"{name}={value}: must be at least 1")
    verifier = os.environ.get("CITEBENCH_GUARD_VERIFIER", "").strip()
    if verifier:
        from pytest_citebench.papers.guard.verifiers import available_verifiers

        if verifier not in available_verifiers():
            problems.append(
                f"CITEBENCH_GUARD_VERIFIER={verifier!r}: unknown verifier; available: "
                f"{', '.join(available_verifiers())}"
            )
    return problems


def _split_scores(records: Sequence[Mapping[str, Any]]) -> tuple[list[float], list[float]]:
    unsupported = [float(r["metrics"]["score"]) for r in records if not r["metrics"]["label"]]
    supported = [float(r["metrics"]["score"]) for r in records if r["metrics"]["label"]]
    return unsupported, supported


def _n_cal(n_unsupported: int, wanted: int | None) -> int | None:
    """Calibration size for the held-out splits: as asked (if it leaves a test set), else half."""
    if n_unsupported < 2:
        return None
    if wanted is not None and 1 <= wanted < n_unsupported:
        return wanted
    return max(1, n_unsupported // 2)


def calibration_stats(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """catch_rate / flag_rate (held-out, repeated splits) and tau at the primary alpha."""
    from pytest_citebench.api import Stat

    settings = calibration_settings()
    unsupported, supported = _split_scores(records)
    n_cal = _n_cal(len(unsupported), settings["n_cal"])
    if n_cal is None:
        return {name: _nan_stat(len(unsupported)) for name in Calibrate.set_metric_docs}
    alpha = settings["alpha"]
    run = conformal_trials(
        unsupported, supported, alpha, n_cal=n_cal, trials=settings["trials"], seed=SEED
    )
    tau = conformal_threshold(unsupported, alpha)
    catch = run["conformal"]["catch"]
    flags = run["conformal"]["flag_rate"]
    out = {
        "catch_rate": Stat(catch["mean"], catch["q05"], catch["q95"], run["n_test_unsupported"]),
        "tau": Stat(tau, tau, tau, len(unsupported)),
    }
    out["flag_rate"] = (
        Stat(flags["mean"], flags["q05"], flags["q95"], len(supported))
        if flags
        else _nan_stat(len(supported))
    )
    return out


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
    metrics: Mapping[str, str] = {}
    set_metric_docs: Mapping[str, str] = {
        "recall_at_1": "reattribute: share of claims whose gold passage is ranked first (Wilson)",
        "recall_at_5": "reattribute: share of claims whose gold passage is in the top 5 (Wilson)",
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        passages = _passages(item)
        prompt = REATTRIBUTE_PROMPT.render(claim=item["claim"], passages=_numbered(passages))
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

    def set_metrics(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
        ranks = _ranks(records)
        return {
            "recall_at_1": _stat(recall_at_k(ranks, 1), len(ranks)),
            "recall_at_5": _stat(recall_at_k(ranks, 5), len(ranks)),
        }

    def summary_lines(
        self, aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        return _reattribute_summary(aggregates, records)


def _ranks(records: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """1-based gold ranks; abstentions and omissions are ``None`` (a miss, never dropped)."""
    out: list[int | None] = []
    for r in records:
        rank = int((r.get("metrics") or {}).get("rank", 0))
        out.append(rank if rank >= 1 else None)
    return out


# --------------------------------------------------------------------------- guard


def guard_config(item: Sample) -> tuple[str, float, float | None]:
    """(verifier name, tau, alpha) for a guard item.

    From the item (``verifier``, default ``lexical``; ``tau``; optional ``alpha`` for the
    record), or from ``CITEBENCH_GUARD_VERIFIER`` + ``CITEBENCH_GUARD_TAU``, which must be set
    together: a tau is only meaningful on the scale of the verifier it was calibrated for.
    """
    env = _env_guard_config()
    if env is not None:
        return env
    tau = item.fields.get("tau")
    if isinstance(tau, bool) or not isinstance(tau, int | float):
        raise ResponseError(
            f"item {item.id!r}: a guard item needs 'tau' (the verifier's flag threshold)"
        )
    alpha = item.fields.get("alpha")
    return (
        str(item.fields.get("verifier", "lexical")),
        float(tau),
        float(alpha) if isinstance(alpha, int | float) else None,
    )


def _env_guard_config() -> tuple[str, float, None] | None:
    env_verifier = os.environ.get("CITEBENCH_GUARD_VERIFIER", "").strip()
    env_tau = os.environ.get("CITEBENCH_GUARD_TAU", "").strip()
    if bool(env_verifier) != bool(env_tau):
        raise ResponseError(
            "set CITEBENCH_GUARD_VERIFIER and CITEBENCH_GUARD_TAU together: tau is calibrated "
            "on one verifier's score scale"
        )
    if env_verifier:
        return env_verifier, _env_float("CITEBENCH_GUARD_TAU", math.nan), None
    return None


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
    metrics: Mapping[str, str] = {}
    set_metric_docs: Mapping[str, str] = {
        "unsupported_rate": "guard: flagged citations / all citations (answers with citations; "
        "item bootstrap 95% CI); relative to the named verifier and tau",
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        passages = _passages(item)
        guard_config(item)  # a bad configuration fails before the model is called
        prompt = GUARD_PROMPT.render(question=item["question"], passages=_numbered(passages))
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
        passages = _passages(item)
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
            result = guard_answer(own, passages, _verifier(verifier_name), tau)
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

    def set_metrics(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
        return {"unsupported_rate": unsupported_rate(records)}

    def summary_lines(
        self, aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        return _guard_summary(aggregates, records)


_CHAT_TOKENS = re.compile(r"\[/?INST\]|<start_of_turn>|<end_of_turn>|<s>|</s>")
_LEADING_LABELS = re.compile(r"^\s*(?:\[\s*\d+\s*\]\s*)+")


def _has_words(line: str) -> bool:
    return sum(ch.isalpha() for ch in line) >= 3


_PROMPT_HEAD = re.compile(r"^(?:answer\s+the\s+question|question\s*:|passages\s*:)", re.I)


def own_answer(raw: str, question: str, passages: Mapping[int, str]) -> str:
    """The model's answer without what it echoed from the prompt.

    Removed: everything up to the prompt's closing "Answer:" when the reply repeats the prompt;
    lines that restate the question or a "[n] <passage n>" entry; sentences that are a run of
    the instructions (which contain "for example [2]"). A sentence the model copied from a
    passage and cited *after* it ("X is Y [2].") is its own answer and stays.
    """
    from pytest_citebench.metrics.text import normalize

    text = _CHAT_TOKENS.sub(" ", raw).strip()
    if _PROMPT_HEAD.match(text) and re.search(r"(?im)^\s*answer\s*:", text):
        text = re.split(r"(?im)^\s*answer\s*:", text)[-1].strip()
    instructions = normalize(GUARD_PROMPT.render(question="", passages=""))
    norm_question = normalize(question)
    norm_passages = {n: normalize(p) for n, p in passages.items()}
    kept_lines = []
    for line in text.splitlines():
        stripped = line.strip()
        head = re.match(r"^\[\s*(\d+)\s*\]\s*(.*)$", stripped)
        if head:
            body = normalize(head.group(2))
            passage = norm_passages.get(int(head.group(1)), "")
            if body and len(body.split()) >= 3 and body in passage:
                continue
        body = normalize(re.sub(r"^(?:question|passages|answer)\s*:\s*", "", stripped, flags=re.I))
        if len(body.split()) >= 3 and norm_question and body in norm_question:
            continue
        # "[4] Some text" opening a line is a passage entry in the prompt's own format (a base
        # model writes a fourth passage, or copies one), not a sentence citing passage 4; a line
        # of bare markers ("[1] [2] ... [18]") cites nothing either.
        line = _LEADING_LABELS.sub("", line)
        if not _has_words(line):
            continue
        kept_lines.append(line)
    text = "\n".join(kept_lines)
    pieces = re.split(r"(?<=[.!?])\s+", text)
    kept = [
        p for p in pieces if not (len(normalize(p).split()) >= 4 and normalize(p) in instructions)
    ]
    return " ".join(kept).strip() if len(kept) != len(pieces) else text.strip()


def uncited_sentences(answer: str) -> int:
    """Sentences of the answer with words but no [n] marker (the prompt asks for one on each)."""
    from pytest_citebench.papers.guard.answers import _GROUP, _sentence_spans

    count = 0
    for start, end in _sentence_spans(answer):
        sentence = answer[start:end]
        if sum(ch.isalpha() for ch in sentence) >= 12 and not _GROUP.search(sentence):
            count += 1
    return count


def _jsonable(record: dict[str, Any]) -> dict[str, Any]:
    """NaN (a marker naming no passage) as null, so the audit trail is strict JSON."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in record.items()}


def unsupported_rate(records: Sequence[Mapping[str, Any]]) -> Stat:
    """Flagged / all citations over answers that cite, with an item (cluster) bootstrap CI:
    citations of one answer are not independent, so whole answers are resampled."""
    from pytest_citebench.api import Stat

    rows = sorted(
        (r for r in records if (r.get("metrics") or {}).get("citations", 0) > 0),
        key=lambda r: str(r["item_id"]),
    )
    if not rows:
        return Stat(math.nan, math.nan, math.nan, 0)
    flagged = [float(r["metrics"]["flagged"]) for r in rows]
    cited = [float(r["metrics"]["citations"]) for r in rows]

    def ratio(f: Any, c: Any) -> float:
        return float(f.sum() / c.sum())

    return _stat(bootstrap_ci(ratio, flagged, cited, B=B, seed=SEED), int(sum(cited)))


# --------------------------------------------------------------------------- offline models

_VERIFIERS: dict[str, Verifier] = {}
_VERIFIERS_LOCK = threading.Lock()


def _verifier(name: str) -> Verifier:
    """One instance per verifier name per process (the embedding model loads once)."""
    with _VERIFIERS_LOCK:
        if name not in _VERIFIERS:
            try:
                _VERIFIERS[name] = get_verifier(name)
            except KeyError as exc:
                raise ResponseError(str(exc.args[0])) from None
            except TypeError as exc:
                raise ResponseError(
                    f"verifier {name!r} needs options (e.g. a model path) and cannot be named "
                    f"alone in a guard item: {exc}"
                ) from None
        return _VERIFIERS[name]


_FAMILY = {"bm25": "lexical", "lexical": "lexical", "dense": "embedding", "embedding": "embedding"}
AnswerFn = Callable[[Hint, dict[str, Any]], str]


def _rank_passages(kind: str, query: str, passages: Mapping[int, str]) -> list[int]:
    """Passage numbers best first: BM25 for ``bm25``, else the family verifier's score."""
    if kind == "bm25":
        return [pid for pid, _ in bm25_rank(query, passages)]
    ids = list(passages)
    scores = _verifier(_FAMILY[kind]).score_many([(query, passages[i]) for i in ids])
    return [pid for _, pid in sorted(zip(scores, ids, strict=True), key=lambda x: (-x[0], x[1]))]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_BRACKET_NUMBERS = re.compile(r"\s*\[\s*\d+(?:\s*[-–,]\s*\d+)*\s*\]")


def passage_sentences(text: str) -> list[str]:
    """Rough sentences of a passage, stripped of bracketed numbers that would read as markers."""
    parts = (_BRACKET_NUMBERS.sub("", s).strip() for s in _SENTENCE_END.split(text))
    return [p for p in parts if len(p.split()) >= 4]


def extractive_answer(kind: str, question: str, passages: Mapping[int, str], n: int = 2) -> str:
    """The offline answerer: the ``n`` passage sentences that best match the question, each
    cited to the passage that best matches the *question* (BM25 or dense).

    A deliberately realistic failure: it cites the most relevant document for every sentence,
    so a sentence lifted from another passage carries a wrong citation, the mis-citation the
    guard exists to catch. Deterministic: ties go to the lower number.
    """
    sentences = [(pid, s) for pid, text in passages.items() for s in passage_sentences(text)]
    if not sentences:
        return "pass"
    texts = [s for _, s in sentences]
    if kind == "bm25":
        ranked = [i for i, score in bm25_rank(question, dict(enumerate(texts))) if score > 0]
    else:
        scores = _verifier(_FAMILY[kind]).score_many([(question, s) for s in texts])
        ranked = [
            i
            for _, i in sorted(
                zip(scores, range(len(texts)), strict=True), key=lambda x: (-x[0], x[1])
            )
        ]
    if not ranked:
        return "pass"
    cite = _rank_passages(kind, question, passages)[0]
    chosen = sorted(ranked[:n])
    return " ".join(f"{sentences[i][1].rstrip('.!?')} [{cite}]." for i in chosen)


def _hint_passages(hint: Hint) -> dict[int, str]:
    texts = json.loads(hint.extra["passages"])
    return {i: str(p) for i, p in enumerate(texts, start=1)}


def baseline_answer(kind: str, hint: Hint, options: Mapping[str, Any]) -> str:
    """What ``citebench/<kind>`` answers on a guard task (``kind``: bm25, dense, or a verifier
    family ``lexical`` / ``embedding`` for the ``verifier-*`` models).

    verify/calibrate: the family verifier's score of (claim, whole passage). reattribute: the
    ranking (BM25 for bm25, else the verifier score, the paper's "verifier as ranker"). guard:
    the extractive answerer for bm25/dense; the verifier models are not answerers and pass.
    """
    try:
        return _baseline_answer(kind, hint)
    except VerifierUnavailable as exc:
        raise ProviderError(f"citebench/{kind}: {exc}") from None


def _baseline_answer(kind: str, hint: Hint) -> str:
    family = _FAMILY[kind]
    if hint.task in ("verify", "calibrate"):
        return repr(_verifier(family).score(hint.query, hint.extra["passage"]))
    if hint.task == "reattribute":
        return ", ".join(map(str, _rank_passages(kind, hint.query, _hint_passages(hint))))
    if hint.task == "guard":
        if kind not in ("bm25", "dense"):
            return "pass"
        return extractive_answer(kind, hint.query, _hint_passages(hint))
    raise ProviderError(f"no citation-guard baseline for task {hint.task!r}")


def verifier_answer(family: str) -> AnswerFn:
    """The ``citebench/verifier-<family>`` model: answers only the guard tasks."""

    def answer(hint: Hint, options: dict[str, Any]) -> str:
        if hint.task not in TASK_NAMES:
            raise ProviderError(
                f"citebench/verifier-{family} is a verifier: it answers only the citation-guard "
                f"tasks ({', '.join(TASK_NAMES)}), not {hint.task!r}; run it on suites/guard"
            )
        return baseline_answer(family, hint, options)

    return answer


def route(kind: str, fallback: AnswerFn) -> AnswerFn:
    """Wrap a retrieval baseline so that guard tasks get the guard baseline of the same kind."""
    if getattr(fallback, "_guard_routed", False):
        return fallback

    def answer(hint: Hint, options: dict[str, Any]) -> str:
        if hint.task not in TASK_NAMES:
            return fallback(hint, options)
        if kind not in _FAMILY:
            raise ProviderError(
                f"citebench/{kind} has no citation-guard baseline; use citebench/bm25, "
                "citebench/dense or citebench/verifier-lexical|embedding"
            )
        return baseline_answer(kind, hint, options)

    answer._guard_routed = True  # type: ignore[attr-defined]
    return answer


def local_models(existing: Mapping[str, AnswerFn]) -> dict[str, AnswerFn]:
    """Entries for ``models.baselines.BASELINES``: the existing retrieval baselines routed for
    guard tasks, plus ``verifier-lexical`` and ``verifier-embedding``."""
    out = {name: route(name, fn) for name, fn in existing.items()}
    out["verifier-lexical"] = verifier_answer("lexical")
    out["verifier-embedding"] = verifier_answer("embedding")
    return out


# --------------------------------------------------------------------------- summaries


def _fmt_iv(value: float, low: float, high: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _fmt_stat(stat: Stat | None) -> str:
    return "-" if stat is None else _fmt_iv(stat.value, stat.lo, stat.hi)


def _group(
    records: Sequence[Mapping[str, Any]], task: str
) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("task") == task and r.get("outcome") != "error":
            groups[(str(r["suite"]), str(r["model"]))].append(r)
    return {k: sorted(v, key=lambda r: str(r["item_id"])) for k, v in sorted(groups.items())}


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _by_key(aggregates: Sequence[Aggregate]) -> dict[tuple[str, str], Aggregate]:
    return {(a.suite, a.model): a for a in aggregates if a.stage is None}


def _verify_summary(
    aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
) -> list[str]:
    groups = {k: _scored(v) for k, v in _group(records, "verify").items()}
    groups = {k: v for k, v in groups.items() if v}
    if not groups:
        return []
    aggs = _by_key(aggregates)
    lines = [
        "verifier validation on gold: predicted supported = score > threshold; "
        f"bootstrap 95% CIs (B={B}, seed {SEED})"
    ]
    rows = [["suite", "verifier (model)", "thr", "n sup/unsup", "recall (sup)", "specificity"]]
    rows[0] += ["Cohen's kappa", "ROC-AUC"]
    notes: list[str] = []
    for (suite, model), recs in groups.items():
        agg = aggs.get((suite, model))
        stats = dict(agg.metrics) if agg is not None else validation_stats(recs)
        thresholds = sorted({float(r["metrics"]["threshold"]) for r in recs})
        n_pos = sum(bool(r["metrics"]["label"]) for r in recs)
        rows.append(
            [
                suite,
                model,
                "/".join(f"{t:g}" for t in thresholds),
                f"{n_pos}/{len(recs) - n_pos}",
                _fmt_stat(stats.get("recall_supported")),
                _fmt_stat(stats.get("specificity")),
                _fmt_stat(stats.get("kappa")),
                _fmt_stat(stats.get("auc")),
            ]
        )
        notes += _one_class_note(model, recs)
    lines += _table(rows)
    lines += notes
    lines.append("")
    lines.append(
        "matched-catch frontier: flag rate on supported items needed to catch a share of the "
        "unsupported ones (compares separation independently of each verifier's threshold)"
    )
    rows = [
        ["suite", "verifier (model)", *(f"catch {c:.2f}: flag rate (tau)" for c in FRONTIER_CATCH)]
    ]
    for (suite, model), recs in groups.items():
        labels = [bool(r["metrics"]["label"]) for r in recs]
        scores = [float(r["metrics"]["score"]) for r in recs]
        if all(labels):
            rows.append([suite, model, *("-" for _ in FRONTIER_CATCH)])
            continue
        frontier = matched_catch_frontier(labels, scores, FRONTIER_CATCH)
        rows.append([suite, model, *(f"{fr:.3f} ({tau:.4g})" for _, tau, fr in frontier)])
    lines += _table(rows)
    lines += ["", *_agreement_lines(groups)]
    return lines


def _one_class_note(model: str, recs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Say so when a threshold sits outside a verifier's score range: recall 1 / specificity 0
    is then a statement about the threshold, not about the verifier's separation."""
    predicted = {float(r["metrics"]["score"]) > float(r["metrics"]["threshold"]) for r in recs}
    if len(predicted) != 1:
        return []
    scores = [float(r["metrics"]["score"]) for r in recs]
    verdict = "supported" if predicted.pop() else "unsupported"
    return [
        f"note: {model} calls every item {verdict} at this threshold (its scores span "
        f"{min(scores):.3f}-{max(scores):.3f}); compare by ROC-AUC and the frontier below, or set "
        "a per-item 'threshold' on its scale"
    ]


def _agreement_lines(groups: Mapping[tuple[str, str], list[Mapping[str, Any]]]) -> list[str]:
    """PSA/NSA, kappa and AC1 between every pair of verifiers that rated the same items."""
    by_suite: dict[str, dict[str, dict[str, bool]]] = defaultdict(dict)
    for (suite, model), recs in groups.items():
        by_suite[suite][model] = {
            str(r["item_id"]): float(r["metrics"]["score"]) > float(r["metrics"]["threshold"])
            for r in recs
        }
    rows = [["suite", "verifier A", "verifier B", "n", "PSA", "NSA", "Cohen's kappa", "Gwet AC1"]]
    for suite, models in sorted(by_suite.items()):
        for a, b in itertools.combinations(sorted(models), 2):
            shared = sorted(set(models[a]) & set(models[b]))
            if not shared:
                continue
            x = [models[a][i] for i in shared]
            y = [models[b][i] for i in shared]

            cells = [
                _fmt_iv(*bootstrap_ci(_agreement_stat(name), x, y, B=B, seed=SEED))
                for name in ("psa", "nsa", "kappa", "ac1")
            ]
            rows.append([suite, a, b, str(len(shared)), *cells])
    if len(rows) == 1:
        return [
            "agreement between verifiers (PSA/NSA, kappa, AC1): run two or more verifiers side "
            "by side, e.g. --citebench-model citebench/verifier-lexical --citebench-model "
            "citebench/verifier-embedding"
        ]
    head = (
        "agreement between verifiers on the same citations, each at its threshold "
        f"(bootstrap 95% CIs, B={B}, seed {SEED}); NSA is agreement on what to flag"
    )
    return [head, *_table(rows)]


def _agreement_stat(name: str) -> Callable[[Any, Any], float]:
    def stat(p: Any, q: Any) -> float:
        return _binary_agreement(p, q)[name]

    return stat


def _calibrate_summary(records: Sequence[Mapping[str, Any]]) -> list[str]:
    settings = calibration_settings()
    groups = {k: _scored(v) for k, v in _group(records, "calibrate").items()}
    seen: dict[tuple[str, tuple[float, ...], tuple[float, ...]], list[str]] = {}
    order: list[tuple[str, tuple[float, ...], tuple[float, ...]]] = []
    for (suite, model), recs in groups.items():
        if not recs:
            continue
        precomputed = all(r["metrics"].get("precomputed") for r in recs)
        unsupported, supported = _split_scores(recs)
        # Precomputed scores do not depend on the model: print their table once.
        key = (suite, tuple(unsupported), tuple(supported)) if precomputed else (suite, (), ())
        if precomputed and key in seen:
            seen[key].append(model)
            continue
        key = key if precomputed else (suite, (float(len(order)),), ())
        seen[key] = [model]
        order.append(key)
    lines: list[str] = []
    for key in order:
        suite = key[0]
        models = seen[key]
        recs = groups[(suite, models[0])]
        lines += _conformal_table(suite, models, recs, settings)
        lines.append("")
    if lines:
        lines.append(EXCHANGEABILITY_WARNING)
    return lines


def _scored_by(recs: Sequence[Mapping[str, Any]]) -> str:
    names = set()
    for r in recs:
        stages = r.get("stages") or []
        if stages and stages[0].get("name") == "precomputed":
            names.add(str(json.loads(stages[0]["raw"]).get("scored_by", "?")))
    return ", ".join(sorted(names))


def _conformal_table(
    suite: str, models: list[str], recs: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]
) -> list[str]:
    unsupported, supported = _split_scores(recs)
    precomputed = all(r["metrics"].get("precomputed") for r in recs)
    who = (
        f"scores precomputed by {_scored_by(recs)} (not by the model; rows for {', '.join(models)})"
        if precomputed
        else f"scored by {models[0]}"
    )
    lines = [
        f"{suite}: {len(unsupported)} unsupported / {len(supported)} supported calibration "
        f"points, {who}",
        "split-conformal flag rule: flag a citation when score <= tau; tau(alpha) = k-th "
        "smallest unsupported score, k = ceil((n + 1)(1 - alpha))",
    ]
    n_cal = _n_cal(len(unsupported), settings["n_cal"])
    if n_cal is None:
        return [*lines, "  too few unsupported points (need at least 2) for a conformal table"]
    trials = settings["trials"]
    small = SMALL_N_CAL if len(unsupported) > SMALL_N_CAL else None
    lines.append(
        f"tau and in-sample columns use all {len(unsupported)} unsupported points; held-out "
        f"columns: {trials} random splits (seed {SEED}), n_cal = {n_cal}, catch measured on the "
        f"other {len(unsupported) - n_cal} unsupported, flag rate on all {len(supported)} "
        "supported; [5th, 95th percentile] over splits"
    )
    header = ["alpha", "target", "k/n", "tau", "catch (all)", "flag rate (all)"]
    header += [f"held-out catch n_cal={n_cal}", "splits < target", "held-out flag rate"]
    if small:
        header += [f"catch n_cal={small}: conformal / naive"]
    rows = [header]
    for alpha in settings["alphas"]:
        tau = conformal_threshold(unsupported, alpha)
        k = conformal_k(len(unsupported), alpha)
        catch_all = sum(u <= tau for u in unsupported) / len(unsupported)
        flag_all = sum(s <= tau for s in supported) / len(supported) if supported else math.nan
        run = conformal_trials(unsupported, supported, alpha, n_cal=n_cal, trials=trials, seed=SEED)
        c = run["conformal"]
        fr = c["flag_rate"]
        row = [
            f"{alpha:g}",
            f"{run['target']:.2f}",
            f"{k}/{len(unsupported)}",
            f"{tau:.4f}" if math.isfinite(tau) else "inf",
            f"{catch_all:.3f}",
            f"{flag_all:.3f}",
            _fmt_iv(c["catch"]["mean"], c["catch"]["q05"], c["catch"]["q95"]),
            f"{c['share_below_target']:.2f}",
            _fmt_iv(fr["mean"], fr["q05"], fr["q95"]) if fr else "-",
        ]
        if small:
            tiny = conformal_trials(
                unsupported, supported, alpha, n_cal=small, trials=trials, seed=SEED
            )
            row.append(
                f"{tiny['conformal']['catch']['mean']:.3f} / {tiny['naive']['catch']['mean']:.3f}"
            )
        rows.append(row)
    return lines + _table(rows)


def _reattribute_summary(
    aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
) -> list[str]:
    groups = _group(records, "reattribute")
    if not groups:
        return []
    aggs = _by_key(aggregates)
    rows = [["suite", "ranker (model)", "n", "recall@1", "recall@5", "random @1 / @5"]]
    for (suite, model), recs in groups.items():
        agg = aggs.get((suite, model))
        stats = dict(agg.metrics) if agg is not None else Reattribute().set_metrics(recs)
        m = [float(r["metrics"].get("candidates", 0)) or math.nan for r in recs]
        rand1 = sum(1 / x for x in m) / len(m)
        rand5 = sum(min(5.0, x) / x for x in m) / len(m)
        rows.append(
            [
                suite,
                model,
                str(len(recs)),
                _fmt_stat(stats.get("recall_at_1")),
                _fmt_stat(stats.get("recall_at_5")),
                f"{rand1:.3f} / {rand5:.3f}",
            ]
        )
    return [
        "re-attribution: rank of the gold passage among the candidates (Wilson 95% CIs); a "
        "lexical ranker cannot tell support from contradiction",
        *_table(rows),
    ]


def _guard_summary(
    aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
) -> list[str]:
    groups = _group(records, "guard")
    if not groups:
        return []
    aggs = _by_key(aggregates)
    lines = [
        "unsupported-citation rate: meaningful only with the verifier and tau that produced it "
        "(the paper: 3% to 18% on the same answers, by verifier strictness alone)"
    ]
    for (suite, model), recs in groups.items():
        agg = aggs.get((suite, model))
        stat = agg.metrics.get("unsupported_rate") if agg is not None else None
        stat = stat or unsupported_rate(recs)
        configs = set()
        for r in recs:
            stages = r.get("stages") or []
            if stages:
                audit = json.loads(stages[0]["raw"])
                alpha = audit.get("alpha")
                configs.add(
                    f"verifier {audit['verifier']}, tau = {float(audit['tau']):.4g}"
                    + (f" (conformal, alpha = {alpha:g})" if alpha is not None else "")
                )
        metric = [r.get("metrics") or {} for r in recs]
        cited = int(sum(m.get("citations", 0) for m in metric))
        flagged = int(sum(m.get("flagged", 0) for m in metric))
        missing = int(sum(m.get("missing", 0) for m in metric))
        moved = int(sum(m.get("reattributable", 0) for m in metric))
        uncited = sum(1 for m in metric if not m.get("citations"))
        lines.append(
            f"{suite} on {model}: unsupported-citation rate {_fmt_stat(stat)} "
            f"({flagged} of {cited} citations flagged in {len(recs)} answers; {missing} name no "
            f"passage; {moved} have another passage that verifies; {uncited} answers cite "
            f"nothing) -- {'; '.join(sorted(configs)) or 'no verifier ran'}"
        )
    return lines


TASKS = (Verify(), Calibrate(), Reattribute(), Guard())

__all__ = [
    "EXCHANGEABILITY_WARNING",
    "PAPER",
    "SEED",
    "TASKS",
    "TASK_NAMES",
    "B",
    "Calibrate",
    "Guard",
    "Reattribute",
    "Verify",
    "baseline_answer",
    "calibration_settings",
    "calibration_stats",
    "extractive_answer",
    "guard_config",
    "local_models",
    "parse_label",
    "parse_ranking",
    "parse_score",
    "passage_sentences",
    "route",
    "unsupported_rate",
    "validation_stats",
    "verifier_answer",
]
