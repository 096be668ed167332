"""``detect``'s set metrics from item records: HALLMARK's numbers with bootstrap CIs, and the
per-tier and per-type breakdowns the report sections show.

Why a weighted bootstrap: a replicate of n items drawn with replacement is the same items with
multinomial counts, so each of B = 2000 replicates is a matrix product over the counts instead
of a Python pass over n entries per metric. The point estimates come from the plain functions of
:mod:`pytest_citebench.metrics.detection` (golden-tested by hand); a test checks that the
weighted form gives the same numbers at weight one. Seed 0, percentile intervals, as the guard.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import Stat
from pytest_citebench.metrics.detection import (
    ECE_BINS,
    METRICS,
    TIER_WEIGHTS,
    Label,
    Prediction,
    breakdown,
    detection_metrics,
)
from pytest_citebench.metrics.stats import percentile_interval
from pytest_citebench.papers.guard.settings import SEED, B

#: Metrics reported without an interval (a count).
NO_CI = ("uncertain",)


def prediction(record: Mapping[str, Any]) -> Prediction:
    """What the detector said about one item, read back from its record."""
    metrics = record.get("metrics") or {}
    outcome = record["outcome"]
    label: Label | None
    if outcome == "abstained":
        label = "UNCERTAIN"
    elif outcome in ("correct", "hallucinated"):
        label = "HALLUCINATED" if metrics.get("flagged") else "VALID"
    else:
        label = None
    confidence = metrics.get("confidence")
    tier = int(metrics.get("tier") or 0) or None
    return Prediction(
        bool(metrics.get("gold")),
        label,
        None if confidence is None else float(confidence),
        tier,
    )


def predictions(records: Sequence[Mapping[str, Any]]) -> list[Prediction]:
    """Scored records (errors have no verdict and are counted by the core) as predictions, in
    item order so the bootstrap is reproducible."""
    from pytest_citebench.papers.guard.setstats import in_item_order

    return [prediction(r) for r in in_item_order(records, "gold")]


def weighted_metrics(preds: Sequence[Prediction], weights: Any) -> dict[str, Any]:
    """Every metric for each row of ``weights`` (B x n item counts), as arrays of length B.

    The same definitions as :func:`detection_metrics` with each entry counted ``w`` times.
    """
    import numpy as np

    w = np.asarray(weights, dtype=float)
    gold = np.array([p.hallucinated for p in preds], dtype=bool)
    classified = np.array([p.label in ("VALID", "HALLUCINATED") for p in preds])
    flagged = np.array([p.label == "HALLUCINATED" for p in preds])
    answered = np.array([p.label is not None for p in preds])
    uncertain = np.array([p.label == "UNCERTAIN" for p in preds])
    tier_w = np.array([TIER_WEIGHTS.get(p.tier or 1, 1.0) for p in preds])

    def total(mask: Any) -> Any:
        return w @ mask.astype(float)

    def ratio(num: Any, den: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)

    tp = total(classified & gold & flagged)
    fn = total(classified & gold & ~flagged)
    fp = total(classified & ~gold & flagged)
    tn = total(classified & ~gold & ~flagged)
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    mcc = np.where(den > 0, (tp * tn - fp * fn) / np.sqrt(np.where(den > 0, den, 1)), 0.0)
    wtp = w @ ((classified & gold & flagged) * tier_w)
    wfn = w @ ((classified & gold & ~flagged) * tier_w)
    out: dict[str, Any] = {
        "detection_rate": ratio(tp, tp + fn),
        "false_positive_rate": ratio(fp, fp + tn),
        "f1_hallucination": ratio(2 * tp, 2 * tp + fp + fn),
        "tier_weighted_f1": ratio(2 * wtp, 2 * wtp + fp + wfn),
        "mcc": mcc,
        "uncertain": total(uncertain),
        "coverage": ratio(total(answered), w.sum(axis=1)),
    }
    conf = np.array([p.confidence if p.confidence is not None else np.nan for p in preds])
    scored = classified & ~np.isnan(conf)
    out.update(_ranking(w[:, scored], gold[scored], flagged[scored], conf[scored]))
    return out


def _ranking(w: Any, gold: Any, flagged: Any, conf: Any) -> dict[str, Any]:
    """ECE, AUROC and AUPRC for weighted entries that have a confidence."""
    import numpy as np

    b = w.shape[0]
    if not len(conf):
        nan = np.full(b, np.nan)
        return {"ece": nan, "auroc": nan, "auprc": nan}
    right = flagged == gold
    bins = np.minimum((conf * ECE_BINS).astype(int), ECE_BINS - 1)
    n = w.sum(axis=1)
    ece = np.zeros(b)
    for k in np.unique(bins):
        m = bins == k
        nk = w[:, m].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = (w[:, m] @ right[m].astype(float)) / nk
            mean_conf = (w[:, m] @ conf[m]) / nk
        ece += np.where(nk > 0, nk * np.abs(np.nan_to_num(acc - mean_conf)), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ece = np.where(n > 0, ece / np.where(n > 0, n, 1), np.nan)
    score = np.where(flagged, conf, 1.0 - conf)
    levels = np.unique(score)[::-1]  # distinct scores, highest first
    group = np.searchsorted(-levels, -score)
    # Per replicate, the weight of positives and negatives at each distinct score: the entries
    # sorted by score level and summed level by level (B x n, where a one-hot matrix is n^2).
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(len(levels)))
    sorted_w = w[:, order]
    pos = np.cumsum(np.add.reduceat(sorted_w * gold[order], starts, axis=1), axis=1)
    neg = np.cumsum(np.add.reduceat(sorted_w * ~gold[order], starts, axis=1), axis=1)
    p_total, n_total = pos[:, -1:], neg[:, -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = pos / p_total
        fpr = neg / n_total
        prev_tpr = np.hstack([np.zeros((b, 1)), tpr[:, :-1]])
        prev_fpr = np.hstack([np.zeros((b, 1)), fpr[:, :-1]])
        auroc = ((fpr - prev_fpr) * (tpr + prev_tpr) / 2).sum(axis=1)
        auroc = np.where((p_total[:, 0] > 0) & (n_total[:, 0] > 0), auroc, np.nan)
        # A threshold no replicate entry reaches adds no point: its precision is the next one's.
        prec = np.where(pos + neg > 0, pos / np.where(pos + neg > 0, pos + neg, 1), 0.0)
        best = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
        recall = pos / p_total
        prev_recall = np.hstack([np.zeros((b, 1)), recall[:, :-1]])
        auprc = (best * (recall - prev_recall)).sum(axis=1)
        auprc = np.where(p_total[:, 0] > 0, auprc, np.nan)
    return {"ece": ece, "auroc": auroc, "auprc": auprc}


def detection_stats(records: Sequence[Mapping[str, Any]]) -> dict[str, Stat]:
    """HALLMARK's metrics of one (model, suite) group, each with a percentile bootstrap CI."""
    import numpy as np

    preds = predictions(records)
    n = len(preds)
    if not n:
        return {name: Stat(math.nan, math.nan, math.nan, 0) for name in METRICS}
    point = detection_metrics(preds)
    rng = np.random.default_rng(SEED)
    reps = weighted_metrics(preds, rng.multinomial(n, np.full(n, 1.0 / n), size=B))
    out: dict[str, Stat] = {}
    for name in METRICS:
        value = point[name]
        if name in NO_CI:
            out[name] = Stat(value, value, value, n)
        elif math.isnan(value):
            out[name] = Stat(value, math.nan, math.nan, n)
        else:
            low, high, _ = percentile_interval(reps[name])
            out[name] = Stat(value, low, high, n)
    return out


def tier_rows(preds: Sequence[Prediction]) -> dict[str, dict[str, float]]:
    """HALLMARK's per-tier rows: tier t's hallucinated entries against *all* VALID entries
    (so FPR is the same in every tier, as in the published tables)."""
    valid = [p for p in preds if not p.hallucinated]
    tiers = sorted({p.tier or 1 for p in preds if p.hallucinated})
    return {
        str(t): breakdown([p for p in preds if p.hallucinated and (p.tier or 1) == t] + valid)
        for t in tiers
    }


def type_rows(preds: Sequence[Prediction], types: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per hallucination type (``valid`` for the VALID entries): each type's entries alone."""
    groups: dict[str, list[Prediction]] = {}
    for p, kind in zip(preds, types, strict=True):
        groups.setdefault(kind or "valid", []).append(p)
    return {kind: breakdown(groups[kind]) for kind in sorted(groups)}


def record_type(record: Mapping[str, Any]) -> str:
    """The hallucination type a record's ``expected`` carries (``HALLUCINATED/<type>``)."""
    expected = str(record.get("expected") or "")
    head, _, kind = expected.partition("/")
    return kind if head == "HALLUCINATED" and kind else ("valid" if head == "VALID" else "unknown")
