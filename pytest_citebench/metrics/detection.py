"""Metrics of a detector of invented references (HALLMARK's), as pure functions of predictions.

Why its own module: a detector is judged on a set (a confusion matrix, a ranking, a calibration
curve), never per item, and these numbers must be the same whether the plugin computes them from
a run, a test computes them by hand, or an import reproduces a published leaderboard row.

The definitions follow HALLMARK (Reizinger and Brendel; github.com/rpatrik96/hallmark,
``hallmark/evaluation/metrics.py``), with the protocol of its published results:

* the positive class is HALLUCINATED;
* a ``None`` label (no usable answer) and ``UNCERTAIN`` are left out of every classification
  metric (detection rate, FPR, F1, tier-weighted F1, MCC), of ECE and of AUROC/AUPRC; both count
  against ``coverage`` only where the label is ``None`` (UNCERTAIN is an answer). The published
  cascade row on test_public (119 UNCERTAIN, FPR 33/295 = 0.111864) is this rule: 295 = 312 VALID
  entries less the 17 answered UNCERTAIN. (An older upstream version counted UNCERTAIN as VALID.)
* the detector's score for ranking is its confidence when it says HALLUCINATED and one minus it
  when it says VALID; ECE uses the confidence in the label it gave, 10 equal-width bins;
* tier-weighted F1 weighs a hallucinated entry of tier t by t (1, 2, 3; no tier counts as 1)
  and a false alarm by 1.

A ratio whose denominator is empty is NaN (F1 is 0 once any positive or alarm exists; MCC is 0
when a margin is empty, as upstream). Imports nothing heavy: numpy only inside AUROC (the
plugin's one ROC-AUC, :func:`pytest_citebench.metrics.stats.roc_auc`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Label = Literal["VALID", "HALLUCINATED", "UNCERTAIN"]
LABELS: tuple[Label, ...] = ("VALID", "HALLUCINATED", "UNCERTAIN")
#: HALLMARK's tier weights for tier-weighted F1 (a missing tier counts as tier 1).
TIER_WEIGHTS: Mapping[int, float] = {1: 1.0, 2: 2.0, 3: 3.0}
ECE_BINS = 10

#: The metric names, in report order; each is a key of :func:`detection_metrics`.
METRICS = (
    "detection_rate",
    "false_positive_rate",
    "f1_hallucination",
    "tier_weighted_f1",
    "mcc",
    "ece",
    "auroc",
    "auprc",
    "uncertain",
    "coverage",
)


@dataclass(frozen=True)
class Prediction:
    """One entry as a detector saw it: the gold, the tier, and what the detector said.

    ``label`` None means no usable answer (unparseable or empty); ``confidence`` None means the
    answer gave none, which leaves the entry out of ECE, AUROC and AUPRC only.
    """

    hallucinated: bool
    label: Label | None
    confidence: float | None = None
    tier: int | None = None


@dataclass(frozen=True)
class Confusion:
    """Counts over the entries that got VALID or HALLUCINATED."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def confusion(preds: Iterable[Prediction]) -> Confusion:
    """The confusion matrix of the classified entries (UNCERTAIN and no answer left out)."""
    tp = fp = tn = fn = 0
    for p in preds:
        if p.label not in ("VALID", "HALLUCINATED"):
            continue
        flagged = p.label == "HALLUCINATED"
        if p.hallucinated:
            tp, fn = tp + flagged, fn + (not flagged)
        else:
            fp, tn = fp + flagged, tn + (not flagged)
    return Confusion(tp, fp, tn, fn)


def detection_rate(cm: Confusion) -> float:
    """Recall on HALLUCINATED: tp / (tp + fn)."""
    return _ratio(cm.tp, cm.tp + cm.fn)


def false_positive_rate(cm: Confusion) -> float:
    """Share of VALID entries flagged: fp / (fp + tn)."""
    return _ratio(cm.fp, cm.fp + cm.tn)


def precision(cm: Confusion) -> float:
    """tp / (tp + fp)."""
    return _ratio(cm.tp, cm.tp + cm.fp)


def f1(cm: Confusion) -> float:
    """F1 on HALLUCINATED, 2tp / (2tp + fp + fn): the harmonic mean of precision and detection
    rate, 0 when nothing is caught, NaN when there is neither a positive nor an alarm."""
    return _ratio(2 * cm.tp, 2 * cm.tp + cm.fp + cm.fn)


def mcc(cm: Confusion) -> float:
    """Matthews correlation; 0 when a margin of the matrix is empty (upstream's convention)."""
    den = (cm.tp + cm.fp) * (cm.tp + cm.fn) * (cm.tn + cm.fp) * (cm.tn + cm.fn)
    if den == 0:
        return 0.0
    return (cm.tp * cm.tn - cm.fp * cm.fn) / math.sqrt(den)


def tier_weighted_f1(
    preds: Iterable[Prediction], weights: Mapping[int, float] = TIER_WEIGHTS
) -> float:
    """F1 where a hallucinated entry counts its tier's weight (tier 3 = 3x tier 1) in tp and fn,
    and a false alarm counts 1: only recall is tier-weighted, as upstream."""
    wtp = wfn = wfp = 0.0
    for p in preds:
        if p.label not in ("VALID", "HALLUCINATED"):
            continue
        flagged = p.label == "HALLUCINATED"
        if p.hallucinated:
            w = weights.get(p.tier or 1, 1.0)
            if flagged:
                wtp += w
            else:
                wfn += w
        elif flagged:
            wfp += 1.0
    return _ratio(2 * wtp, 2 * wtp + wfp + wfn)


def _ranked(preds: Iterable[Prediction]) -> list[tuple[float, bool]]:
    """(score for HALLUCINATED, gold) of classified entries with a confidence."""
    out = []
    for p in preds:
        if p.label not in ("VALID", "HALLUCINATED") or p.confidence is None:
            continue
        score = p.confidence if p.label == "HALLUCINATED" else 1.0 - p.confidence
        out.append((score, p.hallucinated))
    return out


def ece(preds: Iterable[Prediction], bins: int = ECE_BINS) -> float:
    """Expected calibration error: per equal-width confidence bin, |accuracy - mean confidence|,
    weighted by the bin's share of entries; confidence 1.0 falls in the top bin."""
    groups: dict[int, list[tuple[float, bool]]] = {}
    for p in preds:
        if p.label not in ("VALID", "HALLUCINATED") or p.confidence is None:
            continue
        right = (p.label == "HALLUCINATED") == p.hallucinated
        groups.setdefault(min(int(p.confidence * bins), bins - 1), []).append((p.confidence, right))
    total = sum(len(g) for g in groups.values())
    if not total:
        return math.nan
    err = 0.0
    for group in groups.values():
        conf = sum(c for c, _ in group) / len(group)
        acc = sum(r for _, r in group) / len(group)
        err += len(group) / total * abs(acc - conf)
    return err


def _thresholds(pairs: list[tuple[float, bool]]) -> list[tuple[int, int]]:
    """Cumulative (tp, fp) at each distinct score, highest score first."""
    pairs = sorted(pairs, key=lambda x: -x[0])
    points: list[tuple[int, int]] = []
    tp = fp = 0
    for i, (score, pos) in enumerate(pairs):
        tp, fp = tp + pos, fp + (not pos)
        if i == len(pairs) - 1 or pairs[i + 1][0] != score:
            points.append((tp, fp))
    return points


def auroc(preds: Iterable[Prediction]) -> float:
    """Area under the ROC curve (the Mann-Whitney probability, so a tie counts one half); NaN
    unless both classes are present."""
    from pytest_citebench.metrics.stats import roc_auc

    pairs = _ranked(preds)
    return roc_auc([gold for _, gold in pairs], [score for score, _ in pairs])


def auprc(preds: Iterable[Prediction]) -> float:
    """Area under the precision-recall curve, interpolated as upstream: at each distinct score,
    the best precision at that recall or beyond, times the recall gained. NaN without a
    positive."""
    pairs = _ranked(preds)
    pos = sum(1 for _, y in pairs if y)
    if not pos:
        return math.nan
    points = [(tp / pos, tp / (tp + fp)) for tp, fp in _thresholds(pairs)]
    best = [p for _, p in points]
    for i in range(len(best) - 2, -1, -1):
        best[i] = max(best[i], best[i + 1])
    area, prev = 0.0, 0.0
    for (recall, _), p in zip(points, best, strict=True):
        area += p * (recall - prev)
        prev = recall
    return area


def coverage(preds: Sequence[Prediction]) -> float:
    """Share of entries with an answer (VALID, HALLUCINATED or UNCERTAIN)."""
    return _ratio(sum(1 for p in preds if p.label is not None), len(preds))


def detection_metrics(preds: Sequence[Prediction]) -> dict[str, float]:
    """Every metric of :data:`METRICS` for one set of predictions."""
    cm = confusion(preds)
    return {
        "detection_rate": detection_rate(cm),
        "false_positive_rate": false_positive_rate(cm),
        "f1_hallucination": f1(cm),
        "tier_weighted_f1": tier_weighted_f1(preds),
        "mcc": mcc(cm),
        "ece": ece(preds),
        "auroc": auroc(preds),
        "auprc": auprc(preds),
        "uncertain": float(sum(1 for p in preds if p.label == "UNCERTAIN")),
        "coverage": coverage(preds),
    }


def breakdown(preds: Sequence[Prediction]) -> dict[str, float]:
    """The per-tier / per-type row: detection rate, FPR, precision, F1 and the counts."""
    cm = confusion(preds)
    return {
        "detection_rate": detection_rate(cm),
        "false_positive_rate": false_positive_rate(cm),
        "precision": precision(cm),
        "f1": f1(cm),
        "hallucinated": float(sum(p.hallucinated for p in preds)),
        "valid": float(sum(not p.hallucinated for p in preds)),
    }
