"""The citation-guard tables as ``pytest --citebench`` prints them, on the committed suites.

Not a test: a measurement script. It scores the SciFact verify suite (208 claims) with each
offline verifier in one batch (the plugin scores item by item, which is slower for the embedding
model but gives the same numbers), builds the item records the plugin would build, and prints
the guard tasks' own summary tables from them:

* verifier validation: recall on supported, specificity, Cohen's kappa, ROC-AUC with bootstrap
  95% CIs (B = 2000, seed 0), the matched-catch frontier, agreement between the verifiers;
* the split-conformal table on the QASA calibration scores: tau(alpha) for
  alpha = 0.02 / 0.10 / 0.20 / 0.30, held-out catch and flag rate over 1000 seeded splits, and
  conformal vs naive catch at n_cal = 25.

With ``--pytest`` it also times the real plugin run of every guard suite on citebench/bm25
(what the main job adds).

    HF_HUB_OFFLINE=1 python benchmarks/bench_guard.py [--verifiers lexical embedding] [--pytest]
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

from pytest_citebench.papers.guard import offline, verdicts  # noqa: E402
from pytest_citebench.papers.guard import tasks as guard_tasks  # noqa: E402
from pytest_citebench.papers.guard.verifiers import get_verifier  # noqa: E402

SUITES = REPO / "suites" / "guard"


def read_items(name: str) -> list[dict[str, Any]]:
    path = SUITES / name / "items.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def verify_records(verifier: str, items: list[dict[str, Any]]) -> tuple[list[dict], float]:
    """The plugin's verify records for ``citebench/verifier-<verifier>``, scored in one batch."""
    started = time.perf_counter()
    scores = get_verifier(verifier).score_many([(i["claim"], i["passage"]) for i in items])
    seconds = time.perf_counter() - started
    model = f"citebench/verifier-{verifier}"
    records = []
    for item, score in zip(items, scores, strict=True):
        gold = verdicts.parse_label(item["label"])
        records.append(
            {
                "task": "verify",
                "suite": "guard/scifact-verify",
                "model": model,
                "item_id": item["id"],
                "outcome": "correct" if (score > 0.5) == gold else "hallucinated",
                "metrics": {"score": score, "label": float(gold), "threshold": 0.5},
            }
        )
    return records, seconds


def calibration_records() -> list[dict[str, Any]]:
    return [
        {
            "task": "calibrate",
            "suite": "guard/qasa-calibration",
            "model": "citebench/bm25",
            "item_id": item["id"],
            "outcome": "correct",
            "metrics": {
                "score": float(item["score"]),
                "label": float(item["label"] == "supported"),
                "precomputed": 1.0,
            },
            "stages": [
                {
                    "name": "precomputed",
                    "raw": json.dumps({"score": item["score"], "scored_by": item["scored_by"]}),
                }
            ],
        }
        for item in read_items("qasa-calibration")
    ]


def run_pytest() -> None:
    """Every guard suite through the real plugin on the default model, timed (in-process, so the
    guard's local models can be registered here until models/baselines.py registers them)."""
    import pytest

    from pytest_citebench.models import baselines

    if "verifier-lexical" not in baselines.BASELINES:
        baselines.BASELINES.update(offline.local_models(baselines.BASELINES))
        print("\n(guard models registered by this script: models/baselines.py does not yet)")
    started = time.perf_counter()
    code = pytest.main(["--citebench", "-q", "-p", "no:cacheprovider", str(SUITES)])
    seconds = time.perf_counter() - started
    print(f"\npytest --citebench suites/guard (citebench/bm25): exit {int(code)}, {seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--verifiers", nargs="+", default=["lexical", "embedding"])
    parser.add_argument("--pytest", action="store_true", help="also time the plugin run")
    args = parser.parse_args(argv)

    items = read_items("scifact-verify")
    records: list[dict[str, Any]] = []
    timings = []
    for name in args.verifiers:
        recs, seconds = verify_records(name, items)
        records += recs
        timings.append(f"{name} {seconds:.1f} s")
    print(f"## SciFact verifier validation (n = {len(items)}); scoring: {', '.join(timings)}\n")
    for line in guard_tasks.Verify().summary_lines([], records):
        print(line)

    print("\n## Split-conformal table, QASA calibration scores\n")
    started = time.perf_counter()
    for line in guard_tasks.Calibrate().summary_lines([], calibration_records()):
        print(line)
    print(f"\n(conformal table: {time.perf_counter() - started:.1f} s)")
    if args.pytest:
        run_pytest()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
