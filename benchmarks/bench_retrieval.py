"""Retrieval baselines on the REASONS indirect task, on the re-ranker's held-out split.

    python benchmarks/bench_retrieval.py [--suites suites/reasons] [--reranker DIR]
                                         [--per-domain 50] [--candidates 40] [--json out.json]

For each domain: the held-out items (citing papers in ``split.json`` of the trained re-ranker, so
none of them was seen in training). bm25 and dense run on all of them; the cross-encoder scores
about a hundred pairs a second on a CPU, so rerank runs on a seeded sample of at most
``--per-domain`` items (0: all of them; ~10 minutes for the 1,391 held-out items on 2 cores), and
bm25 and dense are reported on that same sample too, for a like-for-like comparison. rerank is
what ``citebench/rerank`` answers with: the cross-encoder fused with the bi-encoder by the
weight in the model's ``fusion.json``.

Columns: accuracy = the baseline's answer (after its abstention floor) equals the cited title
(``normalize``d exact match, as the indirect task scores it); R@1 = the top-ranked paper is the
cited one, with no floor; pass = share of "pass" answers. It mirrors ``answer_with`` for the
indirect task (no escalation extras), batching the queries per domain.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from pytest_citebench.metrics.text import normalize
from pytest_citebench.models.baselines import FLOORS, confidence
from pytest_citebench.papers.reasons.pairs import citing_key
from pytest_citebench.retrieval import DEFAULT_CANDIDATES, KINDS, get_retriever
from pytest_citebench.suites import discover, load_items, load_manifest


def score(kind: str, corpus: str, items: list[Any], options: dict[str, Any]) -> dict[str, float]:
    retriever = get_retriever(kind, corpus, **options)  # type: ignore[arg-type]
    hits = retriever.search_many([item["sentence"] for item in items], k=1)
    floor = FLOORS[kind]["title"]  # type: ignore[index]
    correct = top1 = passes = 0
    for item, found in zip(items, hits, strict=True):
        best = found[0] if found else None
        if best is not None and best.paper.id == item["cited_arxiv_id"]:
            top1 += 1
        if best is None or confidence(retriever, best, k=1) < floor:
            passes += 1
        elif normalize(best.paper.title) == normalize(item["cited_title"]):
            correct += 1
    n = max(len(items), 1)
    return {"n": len(items), "accuracy": correct / n, "recall@1": top1 / n, "pass": passes / n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default="suites/reasons")
    parser.add_argument("--reranker", default=".citebench/models/reranker")
    parser.add_argument(
        "--per-domain", type=int, default=50, help="rerank sample per domain (0: all)"
    )
    parser.add_argument("--candidates", type=int, default=DEFAULT_CANDIDATES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the numbers here")
    args = parser.parse_args(argv)

    reranker = Path(args.reranker)
    split = json.loads((reranker / "split.json").read_text())
    training = json.loads((reranker / "training.json").read_text())
    held_out = set(split["test_citing"])
    rerank_options = {"reranker": str(reranker.resolve()), "candidates": args.candidates}
    rows: dict[str, Any] = {}
    started = time.perf_counter()
    for manifest_path in discover(args.suites):
        manifest = load_manifest(manifest_path)
        if manifest.corpus_file is None or "indirect" not in manifest.tasks:
            continue
        corpus = str(manifest.corpus_file.resolve())
        items = [
            item for item in load_items(manifest) if citing_key(item["citing_arxiv_id"]) in held_out
        ]
        if not items:
            continue
        sample = sorted(
            random.Random(f"{args.seed}:{manifest.name}").sample(
                items, min(args.per_domain or len(items), len(items))
            ),
            key=lambda item: item.line,
        )
        t = time.perf_counter()
        row: dict[str, Any] = {
            "all": {kind: score(kind, corpus, items, {}) for kind in ("bm25", "dense")},
            "sample": {
                kind: score(kind, corpus, sample, rerank_options if kind == "rerank" else {})
                for kind in KINDS
            },
        }
        row["seconds"] = round(time.perf_counter() - t, 1)
        rows[manifest.name] = row
        print(f"{manifest.name}: {len(items)} held-out, {row['seconds']} s", file=sys.stderr)

    def pct(x: float) -> str:
        return f"{100 * x:.1f}"

    print(
        "| domain | held-out n | bm25 acc | dense acc | sample n | bm25 acc | dense acc | "
        "rerank acc | R@1 bm25 / dense / rerank | pass bm25 / dense / rerank |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    totals: dict[str, dict[str, float]] = {}
    for name, row in rows.items():
        a, s = row["all"], row["sample"]
        print(
            f"| {name.split('/')[-1]} | {a['bm25']['n']} | {pct(a['bm25']['accuracy'])} | "
            f"{pct(a['dense']['accuracy'])} | {s['bm25']['n']} | {pct(s['bm25']['accuracy'])} | "
            f"{pct(s['dense']['accuracy'])} | {pct(s['rerank']['accuracy'])} | "
            + " / ".join(pct(s[k]["recall@1"]) for k in KINDS)
            + " | "
            + " / ".join(pct(s[k]["pass"]) for k in KINDS)
            + " |"
        )
        for part in ("all", "sample"):
            for kind, numbers in row[part].items():
                total = totals.setdefault(f"{part}:{kind}", {"n": 0, "accuracy": 0.0})
                total["n"] += numbers["n"]
                total["accuracy"] += numbers["accuracy"] * numbers["n"]
    pooled = {k: v["accuracy"] / max(v["n"], 1) for k, v in totals.items()}
    print(
        f"| **pooled** | {int(totals['all:bm25']['n'])} | {pct(pooled['all:bm25'])} | "
        f"{pct(pooled['all:dense'])} | {int(totals['sample:bm25']['n'])} | "
        f"{pct(pooled['sample:bm25'])} | {pct(pooled['sample:dense'])} | "
        f"{pct(pooled['sample:rerank'])} | | |"
    )
    held = training["held_out"]
    print(
        f"\nReranker: trained {training['steps']} steps on {training['train_queries']} queries "
        f"({training['arguments']['negatives']} negatives, max_length "
        f"{training['arguments']['max_length']}) in {training['seconds']['train']:.0f} s "
        f"(whole command {training['seconds']['total']:.0f} s, "
        f"{training['torch_threads']} threads). Held-out recall@1 on {held['queries']} queries: "
        f"bi-encoder {held['bi_encoder_recall@1']:.3f}, cross-encoder alone "
        f"{held['cross_encoder_recall@1']:.3f}, fused (weight {held['fusion']:g}) "
        f"{held['reranker_recall@1']:.3f} "
        f"(candidates contain the cited paper: {held['candidate_recall']:.3f}). "
        f"Benchmark took {time.perf_counter() - started:.0f} s."
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"domains": rows, "pooled": pooled, "training": training}, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
