"""Validate the offline verifiers on SciFact gold and tabulate the QASA conformal dial.

Not a test: a measurement script (the embedding pass takes about a minute on two CPU cores).

    HF_HUB_OFFLINE=1 python benchmarks/guard_scifact.py [--verifiers lexical embedding]
        [--out results.json]

Part 1, verifier validation (citation-guard protocol, stage 2), on all 208 SciFact claims
(137 supported, 71 contradicted), each scored against its one gold abstract (text only, full
length, sliding windows):

* ROC-AUC: threshold-free separation.
* Recall on supported, specificity, Cohen's kappa (gold vs ``score > tau``) at two documented
  operating points, chosen without looking at the SciFact labels being evaluated:
  (A) fixed ``tau = 0.5`` on the verifier's own ``[0, 1]`` scale;
  (B) split-conformal ``tau`` at alpha = 0.1 calibrated on a seed-0 random half of the SciFact
      negatives (35 of 71) -- the paper's "recalibrate on target-domain negatives" recipe --
      and evaluated on the other 173 items (137 supported + 36 held-out negatives).
  The QASA tau is *not* used here: it lives on AttrScore's scale, not these verifiers'.
* Every number gets a paired item-bootstrap 95% CI (B = 2000, seed 0, 2.5/97.5 percentiles).

Part 2, the conformal dial on the QASA AttrScore calibration scores (500 unsupported, 500
supported): tau(alpha) from all 500 unsupported scores, in-sample catch and the flag rate on
supported; then held-out catch over 1000 random splits (n_cal = 250), and conformal vs naive at
n_cal = 25 (the paper's Table S4).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_citebench.papers.guard.stats import (  # noqa: E402
    Interval,
    bootstrap_ci,
    cohen_kappa,
    conformal_k,
    conformal_threshold,
    conformal_trials,
    flag,
    matched_catch_frontier,
    recall_specificity,
    roc_auc,
)
from pytest_citebench.papers.guard.verifiers import get_verifier  # noqa: E402

SCIFACT = REPO / "fixtures" / "scifact" / "scifact_test.jsonl"
QASA = REPO / "fixtures" / "guard" / "qasa_calibration_scores.json"
B, SEED, FIXED_TAU, ALPHA_B = 2000, 0, 0.5, 0.1


def fmt(iv: Interval) -> str:
    return f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def at_threshold(labels: Any, scores: Any, tau: float) -> dict[str, Interval]:
    """Recall / specificity / kappa of ``predicted supported = score > tau``, with CIs."""

    def recall(y: Any, s: Any) -> float:
        return recall_specificity(y, s > tau)[0]

    def spec(y: Any, s: Any) -> float:
        return recall_specificity(y, s > tau)[1]

    def kappa(y: Any, s: Any) -> float:
        return cohen_kappa(list(y.astype(bool)), list(s > tau))

    return {
        name: bootstrap_ci(fn, labels, scores, B=B, seed=SEED)
        for name, fn in (("recall", recall), ("specificity", spec), ("kappa", kappa))
    }


def validate(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    import numpy as np

    verifier = get_verifier(name)
    pairs = [(r["input"], r["gold_ctx"][0]["text"]) for r in rows]
    t0 = time.perf_counter()
    scores = np.asarray(verifier.score_many(pairs))
    seconds = time.perf_counter() - t0
    labels = np.asarray([r["answer"] == "true" for r in rows])

    out: dict[str, Any] = {
        "verifier": name,
        "n": len(rows),
        "seconds": round(seconds, 1),
        "mean_score_supported": float(scores[labels].mean()),
        "mean_score_unsupported": float(scores[~labels].mean()),
        "auc": bootstrap_ci(roc_auc, labels, scores, B=B, seed=SEED),
        "fixed": {"tau": FIXED_TAU, **at_threshold(labels, scores, FIXED_TAU)},
    }

    # (B) conformal tau on a seed-0 half of the negatives, evaluated on everything else.
    rng = np.random.default_rng(SEED)
    neg_idx = np.flatnonzero(~labels)
    cal = rng.permutation(neg_idx)[: len(neg_idx) // 2]
    held = np.setdiff1d(np.arange(len(rows)), cal)
    tau_b = conformal_threshold(scores[cal].tolist(), ALPHA_B)
    out["conformal"] = {
        "tau": tau_b,
        "alpha": ALPHA_B,
        "n_cal": len(cal),
        "k": conformal_k(len(cal), ALPHA_B),
        "n_eval": len(held),
        **at_threshold(labels[held], scores[held], tau_b),
    }
    # review budget at matched catch (0.9 of all 71 negatives), the paper's frontier view
    (_, tau90, fr90) = matched_catch_frontier(labels.tolist(), scores.tolist(), [0.9])[0]
    out["matched_catch_0.9"] = {"tau": tau90, "flag_rate_supported": fr90}
    return out


def qasa_dial() -> dict[str, Any]:
    data = json.loads(QASA.read_text())
    u, s = data["unsupported_p_attr_scores"], data["supported_p_attr_scores"]
    rows = []
    for alpha in (0.02, 0.10, 0.20, 0.30):
        tau = conformal_threshold(u, alpha)
        held = conformal_trials(u, s, alpha, n_cal=250, trials=1000, seed=SEED)
        small = conformal_trials(u, s, alpha, n_cal=25, trials=1000, seed=SEED)
        rows.append(
            {
                "alpha": alpha,
                "k": conformal_k(len(u), alpha),
                "tau": tau,
                "catch_in_sample": sum(flag(u, tau)) / len(u),
                "flag_rate_supported": sum(flag(s, tau)) / len(s),
                "n250_conformal_catch": held["conformal"]["catch"]["mean"],
                "n250_conformal_flag_rate": held["conformal"]["flag_rate"]["mean"],
                "n250_share_below_target": held["conformal"]["share_below_target"],
                "n25_conformal_catch": small["conformal"]["catch"]["mean"],
                "n25_naive_catch": small["naive"]["catch"]["mean"],
                "n25_conformal_flag_rate": small["conformal"]["flag_rate"]["mean"],
                "n25_naive_flag_rate": small["naive"]["flag_rate"]["mean"],
            }
        )
    return {"n_unsupported": len(u), "n_supported": len(s), "rows": rows}


def print_tables(results: list[dict[str, Any]], dial: dict[str, Any]) -> None:
    print("\n## SciFact verifier validation (n = 208: 137 supported / 71 contradicted)")
    print("bootstrap 95% CIs, B = 2000, seed 0\n")
    print("| verifier | ROC-AUC | mean s (sup / unsup) | seconds |")
    print("|---|---|---|---|")
    for r in results:
        print(
            f"| {r['verifier']} | {fmt(r['auc'])} | {r['mean_score_supported']:.3f} / "
            f"{r['mean_score_unsupported']:.3f} | {r['seconds']} |"
        )
    for key, title in (
        ("fixed", f"(A) fixed tau = {FIXED_TAU}, all 208 items"),
        (
            "conformal",
            f"(B) conformal tau (alpha = {ALPHA_B}) from 35 SciFact negatives, "
            "evaluated on the other 173",
        ),
    ):
        print(f"\n{title}\n")
        print("| verifier | tau | recall (supported) | specificity | Cohen's kappa |")
        print("|---|---|---|---|---|")
        for r in results:
            op = r[key]
            print(
                f"| {r['verifier']} | {op['tau']:.3f} | {fmt(op['recall'])} | "
                f"{fmt(op['specificity'])} | {fmt(op['kappa'])} |"
            )
    print("\nmatched catch 0.9 (all 71 negatives): flag rate on supported")
    for r in results:
        m = r["matched_catch_0.9"]
        print(f"- {r['verifier']}: tau {m['tau']:.3f}, flag rate {m['flag_rate_supported']:.3f}")

    print("\n## QASA conformal dial (AttrScore scores; 500 unsupported / 500 supported)\n")
    print(
        "| alpha | k | tau | catch (in-sample) | flag rate (sup) | held-out catch n=250 "
        "| flag rate n=250 | catch n=25 conformal / naive |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for d in dial["rows"]:
        print(
            f"| {d['alpha']:.2f} | {d['k']} | {d['tau']:.4f} | {d['catch_in_sample']:.3f} | "
            f"{d['flag_rate_supported']:.3f} | {d['n250_conformal_catch']:.3f} | "
            f"{d['n250_conformal_flag_rate']:.3f} | {d['n25_conformal_catch']:.3f} / "
            f"{d['n25_naive_catch']:.3f} |"
        )


def jsonable(obj: Any) -> Any:
    if isinstance(obj, Interval):
        return {"estimate": obj.estimate, "low": obj.low, "high": obj.high, "level": obj.level}
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [jsonable(v) for v in obj]
    return obj


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--verifiers", nargs="+", default=["lexical", "embedding"])
    ap.add_argument("--out", type=Path, help="also write the numbers as JSON")
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in SCIFACT.read_text().splitlines() if line.strip()]
    results = [validate(name, rows) for name in args.verifiers]
    dial = qasa_dial()
    print_tables(results, dial)
    if args.out:
        args.out.write_text(json.dumps(jsonable({"scifact": results, "qasa": dial}), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
