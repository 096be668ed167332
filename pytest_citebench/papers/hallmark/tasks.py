"""HALLMARK (paper 003) as a pytest task: ``detect``, is this BibTeX entry real or invented?

The model under test is a *detector*: it is shown one entry and answers
``{"label": "VALID" | "HALLUCINATED" | "UNCERTAIN", "confidence": 0-1, "reason": ...}``.
An item's outcome maps onto the plugin's six as the guard's ``verify`` does (a verdict against
gold, not a citation the model wrote):

=====================  =============  =================================================
detector said          outcome        reason names
=====================  =============  =================================================
the gold label         correct        "right: ..."
HALLUCINATED on VALID  hallucinated   "wrong (false alarm): ..."
VALID on HALLUCINATED  hallucinated   "wrong (miss): ..."
UNCERTAIN              abstained      "uncertain"
no single label        unanswered     "no label in the answer"
(provider failure)     error          the failure
=====================  =============  =================================================

``hallucinated`` here means the *verdict* is wrong, so reports leave the outcome shares out
(``outcome_shares = False``) and judge the task by its set metrics, HALLMARK's (see
:mod:`pytest_citebench.metrics.detection`). Per item the record keeps ``flagged`` (1 when the
detector said HALLUCINATED), ``gold`` (1 when the entry is HALLUCINATED), ``confidence`` (when
given) and ``tier`` (0 for VALID entries), which is all the set metrics need.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_citebench.api import (
    Attempt,
    Generate,
    Hint,
    ItemScore,
    Message,
    MetricSpec,
    NamedTemplate,
    Outcome,
    Records,
    Sample,
    Search,
    Stage,
    Stat,
    Task,
)
from pytest_citebench.errors import CitebenchError
from pytest_citebench.papers.hallmark.verdict import parse_verdict

#: The version of the HALLMARK scoring rules (see ``Task.scorer_version``).
SCORER_VERSION = "4"

PAPER = (
    "HALLMARK: Reizinger and Brendel, Diagnosing Three Failure Modes in LLM Citation "
    "Verifiers (arXiv 2607.18360; github.com/rpatrik96/hallmark, data v1.0, MIT)"
)

DETECT_PROMPT = NamedTemplate(
    "hallmark.detect",
    "You are checking a bibliography. Decide whether this BibTeX entry describes a real, "
    "correctly cited publication (VALID) or contains invented or wrong metadata "
    "(HALLUCINATED): a title, author list, venue, year, DOI or arXiv id that does not match "
    "the real work. If you cannot tell, answer UNCERTAIN.\n\n"
    "$bibtex\n\n"
    'Answer with JSON only: {"label": "VALID" | "HALLUCINATED" | "UNCERTAIN", '
    '"confidence": <0 to 1, how sure you are of your label>, "reason": "<one sentence>"}',
)

# BibTeX field order: what a reader scans first; the rest follow in the entry's own order.
_FIRST = ("title", "author", "year", "booktitle", "journal", "doi", "eprint", "url")


def _braced(value: Any) -> str:
    return "{" + str(value).replace("\n", " ") + "}"


def to_bibtex(key: str, entry_type: str, fields: Mapping[str, Any]) -> str:
    """The entry as BibTeX, one ``name = {value}`` per line, values exactly as the data has them
    (braces and LaTeX included: they are part of what a detector must read)."""
    names = [n for n in _FIRST if n in fields] + [n for n in fields if n not in _FIRST]
    lines = [f"  {name} = {_braced(fields[name])}," for name in names if fields[name] is not None]
    return "\n".join([f"@{entry_type or 'misc'}{{{key},", *lines, "}"])


def _key(item: Sample) -> str:
    return str(item.fields.get("bibtex_key") or item.id)


def detect_hint(item: Sample, task: str) -> Hint:
    """The structured query offline detectors read (the entry's fields, as JSON)."""
    fields = json.dumps(item["fields"], ensure_ascii=False, sort_keys=True)
    title = str(item["fields"].get("title") or "")
    return Hint(task, title, item.suite, None, {"fields": fields, "key": _key(item)})


def gold_hallucinated(item: Sample) -> bool:
    """The item's gold label (``solve`` refuses anything but VALID / HALLUCINATED)."""
    return str(item["label"]) == "HALLUCINATED"


class Detect(Task):
    """Is this BibTeX entry VALID or HALLUCINATED? (HALLMARK's task.)"""

    name = "detect"
    paper = PAPER
    outcome_shares = False
    fields: Mapping[str, type | tuple[type, ...]] = {
        "bibtex_type": str,
        "fields": dict,
        "label": str,
    }
    scorer_version = SCORER_VERSION
    set_metric_specs: Mapping[str, MetricSpec] = {
        "detection_rate": MetricSpec(
            "detect: share of HALLUCINATED entries flagged (UNCERTAIN and "
            "unanswered left out), bootstrap 95% CI",
            higher_is_better=True,
        ),
        "false_positive_rate": MetricSpec(
            "detect: share of VALID entries flagged, bootstrap 95% CI", higher_is_better=False
        ),
        "f1_hallucination": MetricSpec(
            "detect: F1 on HALLUCINATED, bootstrap 95% CI", higher_is_better=True
        ),
        "tier_weighted_f1": MetricSpec(
            "detect: F1 with hallucinated entries weighted by tier (1/2/3)", higher_is_better=True
        ),
        "mcc": MetricSpec("detect: Matthews correlation of flagged vs gold", higher_is_better=True),
        "ece": MetricSpec(
            "detect: expected calibration error of the confidence, 10 equal-width bins",
            higher_is_better=False,
        ),
        "auroc": MetricSpec(
            "detect: ROC-AUC of the score (confidence, or 1 - confidence for VALID)",
            higher_is_better=True,
        ),
        "auprc": MetricSpec(
            "detect: area under the precision-recall curve (interpolated, as upstream)",
            higher_is_better=True,
        ),
        # A count, printed like a share as it always was (scale "count" would change reports).
        # A count, not a share: every report prints it as one and no chart draws it as a bar
        # (it once read "uncertain 4000.0" and "4000.0%" for 40 UNCERTAIN answers).
        "uncertain": MetricSpec(
            "detect: number of UNCERTAIN answers (a count, no CI)", scale="count", charted=False
        ),
        "coverage": MetricSpec(
            "detect: share of entries with an answer (UNCERTAIN counts as one)",
            higher_is_better=True,
        ),
    }
    example: Mapping[str, Any] = {
        "bibtex_key": "vaswani2017attention",
        "bibtex_type": "inproceedings",
        "fields": {
            "title": "Attention Is All You Need",
            "author": "Ashish Vaswani and Noam Shazeer and Niki Parmar and Jakob Uszkoreit "
            "and Llion Jones and Aidan N. Gomez and Lukasz Kaiser and Illia Polosukhin",
            "year": "2017",
            "booktitle": "NeurIPS",
        },
        "label": "VALID",
        "hallucination_type": None,
        "difficulty_tier": None,
    }

    async def solve(self, item: Sample, generate: Generate, *, suite_corpus: str | None) -> Attempt:
        if str(item["label"]) not in ("VALID", "HALLUCINATED"):
            # Checked before the call: an item with no gold must not cost a model call.
            raise CitebenchError(
                f"suite {item.suite}, items.jsonl line {item.line}: label {item['label']!r} "
                "must be VALID or HALLUCINATED"
            )
        bibtex = to_bibtex(_key(item), str(item["bibtex_type"]), item["fields"])
        prompt = DETECT_PROMPT.render(bibtex=bibtex)
        raw = await generate([Message("user", prompt)], hint=detect_hint(item, self.name))
        return Attempt((self._stage(raw),))

    @staticmethod
    def _stage(raw: str) -> Stage:
        verdict = parse_verdict(raw)
        if verdict is None:
            return Stage("detect", raw, "", False)
        return Stage("detect", raw, verdict.to_json(), verdict.label == "UNCERTAIN")

    def restage(self, item: Sample, attempt: Attempt, corpus: str | None) -> Attempt:
        return Attempt((self._stage(attempt.final.raw),))

    def score(self, item: Sample, attempt: Attempt) -> ItemScore:
        gold = gold_hallucinated(item)
        kind = str(item.fields.get("hallucination_type") or "")
        # The type rides in ``expected`` so per-type tables need only the records.
        expected = ("HALLUCINATED/" + kind if kind else "HALLUCINATED") if gold else "VALID"
        tier = item.fields.get("difficulty_tier")
        metrics: dict[str, float] = {"gold": float(gold), "tier": float(tier or 0)}
        verdict = parse_verdict(attempt.final.raw)
        if verdict is None:
            return ItemScore("unanswered", expected, metrics, "no label in the answer")
        if verdict.confidence is not None:
            metrics["confidence"] = verdict.confidence
        if verdict.label == "UNCERTAIN":
            return ItemScore("abstained", expected, metrics, "uncertain")
        flagged = verdict.label == "HALLUCINATED"
        metrics["flagged"] = float(flagged)
        said = f"said {verdict.label} on a {'HALLUCINATED' if gold else 'VALID'} entry" + (
            f" ({kind})" if kind else ""
        )
        outcome: Outcome
        if flagged == gold:
            outcome, reason = "correct", f"right: {said}"
        elif flagged:
            outcome, reason = "hallucinated", f"wrong (false alarm): {said}"
        else:
            outcome, reason = "hallucinated", f"wrong (miss): {said}"
        return ItemScore(outcome, expected, metrics, reason)

    def set_metrics(self, records: Records) -> dict[str, Stat]:
        from pytest_citebench.papers.hallmark.setstats import detection_stats

        return detection_stats(records)

    def offline_answer(
        self, kind: str, hint: Hint, options: Mapping[str, Any], search: Search
    ) -> str | None:
        """The retrieval baselines have nothing to search here: they answer as the rules
        detector ``citebench/hallmark-rules`` does, so the default offline run covers HALLMARK."""
        from pytest_citebench.papers.hallmark.rules import rules_answer

        return rules_answer(hint, dict(options))


TASKS: tuple[Task, ...] = (Detect(),)
