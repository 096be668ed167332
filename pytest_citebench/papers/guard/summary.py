"""The guard tasks' terminal summaries: the verifier table with CIs, the agreement between
verifiers, the split-conformal table, re-attribution recall and the unsupported-citation rate.

Why the tables print more than the set metrics: a verifier's numbers mean little without their
context (the threshold, the class balance, the frontier at matched catch; for the guard, the
verifier and tau that produced the rate), so each table carries it.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.papers.guard.setstats import (
    agreement_intervals,
    conformal_row,
    n_cal_for,
    reattribution_stats,
    scored_records,
    split_scores,
    task_groups,
    unsupported_rate,
    validation_stats,
)
from pytest_citebench.papers.guard.settings import (
    FRONTIER_CATCH,
    SEED,
    SMALL_N_CAL,
    B,
    calibration_settings,
)
from pytest_citebench.papers.guard.stats import conformal_trials, matched_catch_frontier, too_few
from pytest_citebench.reports.table import text_table

EXCHANGEABILITY_WARNING = (
    "WARNING: the conformal guarantee (mean catch >= 1 - alpha) holds only if the calibration "
    "negatives are exchangeable with deployment negatives. Easy distractors make tau optimistic: "
    "in the paper a tau calibrated on easy QASA distractors caught 37% (not 90%) of harder SciFact "
    "negatives. Recalibrate on negatives from your own deployment (python -m pytest_citebench "
    "build-calibration, docs/guard.md)."
)


def fmt_iv(value: float, low: float, high: float) -> str:
    """``value [low, high]`` to three decimals, ``-`` when there is no value."""
    if math.isnan(value):
        return "-"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _fmt_stat(stat: Stat | None) -> str:
    return "-" if stat is None else fmt_iv(stat.value, stat.lo, stat.hi)


def _table(rows: list[list[str]]) -> list[str]:
    """Header (``rows[0]``), a dashed rule, then the rows, every column left-aligned."""
    return text_table(rows[0], rows[1:], rule=True)


def _by_key(aggregates: Sequence[Aggregate]) -> dict[tuple[str, str], Aggregate]:
    return {(a.suite, a.model): a for a in aggregates if a.stage is None}


def verify_summary(
    aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The verifier table on gold (recall, specificity, kappa, AUC with CIs), the matched-catch
    frontier and the agreement between verifiers: ``verify``'s summary lines."""
    groups = {k: scored_records(v) for k, v in task_groups(records, "verify").items()}
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
            cells = [fmt_iv(*iv) for iv in agreement_intervals(x, y).values()]
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


def calibrate_summary(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """One split-conformal table per calibration set (precomputed scores once, not per model),
    then the exchangeability warning: ``calibrate``'s summary lines."""
    settings = calibration_settings()
    groups = {k: scored_records(v) for k, v in task_groups(records, "calibrate").items()}
    seen: dict[tuple[str, tuple[float, ...], tuple[float, ...]], list[str]] = {}
    order: list[tuple[str, tuple[float, ...], tuple[float, ...]]] = []
    for (suite, model), recs in groups.items():
        if not recs:
            continue
        precomputed = all(r["metrics"].get("precomputed") for r in recs)
        unsupported, supported = split_scores(recs)
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
    unsupported, supported = split_scores(recs)
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
    n_cal = n_cal_for(len(unsupported), settings["n_cal"])
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
    notes: list[str] = []
    for alpha in settings["alphas"]:
        one = conformal_row(unsupported, supported, alpha, n_cal=n_cal, trials=trials)
        tau = one["tau"]
        run = one["run"]
        c = run["conformal"]
        fr = c["flag_rate"]
        # tau = +inf ("flag everything") is no rule, and its catch of 1.0 says nothing: say why.
        few, held_few = too_few(len(unsupported), alpha), too_few(n_cal, alpha)
        if few:
            notes.append(f"  alpha {alpha:g}: {few} unsupported points, so no threshold")
        if held_few:
            notes.append(f"  alpha {alpha:g}, held-out (n_cal = {n_cal}): {held_few}")
        row = [
            f"{alpha:g}",
            f"{run['target']:.2f}",
            f"{one['k']}/{len(unsupported)}",
            "too few" if few else f"{tau:.4f}",
            "-" if few else f"{one['catch']:.3f}",
            "-" if few else f"{one['flag_rate']:.3f}",
            "-" if held_few else fmt_iv(c["catch"]["mean"], c["catch"]["q05"], c["catch"]["q95"]),
            "-" if held_few else f"{c['share_below_target']:.2f}",
            fmt_iv(fr["mean"], fr["q05"], fr["q95"]) if fr and not held_few else "-",
        ]
        if small:
            tiny = conformal_trials(
                unsupported, supported, alpha, n_cal=small, trials=trials, seed=SEED
            )
            tiny_few = too_few(small, alpha)
            if tiny_few:
                notes.append(f"  alpha {alpha:g}, n_cal = {small} column: {tiny_few}")
            conformal = "-" if tiny_few else f"{tiny['conformal']['catch']['mean']:.3f}"
            row.append(f"{conformal} / {tiny['naive']['catch']['mean']:.3f}")
        rows.append(row)
    return lines + _table(rows) + notes


def reattribute_summary(
    aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
) -> list[str]:
    """recall@1/@5 per ranker beside what a random ranking would get: ``reattribute``'s lines."""
    groups = task_groups(records, "reattribute")
    if not groups:
        return []
    aggs = _by_key(aggregates)
    rows = [["suite", "ranker (model)", "n", "recall@1", "recall@5", "random @1 / @5"]]
    for (suite, model), recs in groups.items():
        agg = aggs.get((suite, model))
        stats = dict(agg.metrics) if agg is not None else reattribution_stats(recs)
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


def guard_summary(
    aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The unsupported-citation rate per model, always with the verifier and tau behind it."""
    groups = task_groups(records, "guard")
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
