"""ArxEval on the committed suites: jumbled-title similarity and mixed-title DOI figures.

Not a test: a measurement script. It runs ``pytest --citebench suites/arxeval`` in a subprocess on
a built-in baseline (default ``citebench/bm25``), offline (DOIs checked against each suite's
closed-world registry), reads the results file and prints:

* jumbled: mean ``cosine_minilm``, ``bertscore_minilm``, ``sts_minilm`` with 95% bootstrap CIs,
  plus accuracy (cosine >= threshold) and the pass rate;
* mixed: the paper's Table 5 columns (Total DOIs, DOIs Found, DOIs Not Found, Matching Titles)
  with item-bootstrap CIs, prompt adherence and source recall;
* wall time of the pytest run (model load and imports included).

    python benchmarks/bench_arxeval.py [--model citebench/bm25] [--suites suites/arxeval]
        [--workers N] [--out /tmp/bench/arxeval.json]

This module is also a pytest plugin (``-p bench_arxeval``): until ``models/baselines.py`` routes
ArxEval hints to ``tasks.arxeval.arxeval_answer``, it installs that route for the run, exactly as
the one-line change in baselines.py will.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable


def pytest_configure(config: Any) -> None:
    """Install the ArxEval route into the baselines when baselines.py lacks it."""
    from functools import partial

    from pytest_citebench.api import Hint
    from pytest_citebench.models import baselines
    from pytest_citebench.papers.arxeval.offline import arxeval_answer
    from pytest_citebench.papers.arxeval.prompts import ARXEVAL_TASKS

    corpus = REPO / "suites" / "arxeval" / "jumbled-arxiv-sample" / "corpus.jsonl"
    first = json.loads(corpus.read_text(encoding="utf-8").splitlines()[0])
    probe = Hint("jumbled", " ".join(reversed(first["title"].split())), "probe", str(corpus))
    if baselines.BASELINES["bm25"](probe, {}).startswith('"'):
        return  # baselines.py routes ArxEval already

    def routed(kind: str, original: Any, hint: Hint, options: dict[str, Any]) -> str:
        if hint.task in ARXEVAL_TASKS:
            from pytest_citebench.retrieval import get_retriever

            retriever = get_retriever(kind, Path(hint.corpus or ""))  # type: ignore[arg-type]
            return arxeval_answer(
                hint, options, lambda q, k: retriever.search(q, k=k, field="title")
            )
        return str(original(hint, options))

    for kind in list(baselines.BASELINES):
        baselines.BASELINES[kind] = partial(routed, kind, baselines.BASELINES[kind])


def _stat(metric: dict[str, Any] | None, percent: bool = False) -> str:
    if not metric or metric.get("value") is None:
        return "-"
    scale = 100.0 if percent else 1.0
    value, (lo, hi) = metric["value"] * scale, metric["ci"]
    unit = "%" if percent else ""
    if lo is None:
        return f"{value:.3f}{unit}"
    return f"{value:.3f}{unit} [{lo * scale:.3f}, {hi * scale:.3f}]"


def run(model: str, suites: Path, workers: int, results: Path) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(REPO / "benchmarks"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "CITEBENCH_DOI": "offline",
    }
    cmd = [PY, "-m", "pytest", "--citebench", str(suites), "-p", "bench_arxeval", "-q"]
    cmd += ["-p", "no:cacheprovider", "--citebench-model", model]
    cmd += ["--citebench-results", str(results), "--citebench-show", "0"]
    if workers:
        cmd += ["-n", str(workers)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"pytest failed with exit code {proc.returncode}")
    return wall


def report(results: Path, wall: float) -> dict[str, Any]:
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    aggregates = [r for r in records if r["type"] == "aggregate" and "stage" not in r]
    summary: dict[str, Any] = {"wall_s": round(wall, 1), "items": 0, "suites": {}}
    print(f"pytest --citebench on {len(aggregates)} suite x task groups, wall {wall:.1f} s")
    for agg in sorted(aggregates, key=lambda a: (a["task"], a["suite"])):
        m, counts = agg["metrics"], agg["counts"]
        summary["items"] += sum(counts.values())
        summary["suites"][f"{agg['suite']}:{agg['task']}"] = {"counts": counts, "metrics": m}
        head = f"{agg['suite']} [{agg['model']}] n={m['n']['value']:.0f} errors={counts['error']}"
        if agg["task"] == "jumbled":
            print(f"\njumbled  {head}")
            for name in ("cosine_minilm", "bertscore_minilm", "sts_minilm"):
                print(f"  {name:17s} {_stat(m.get(name))}")
            print(f"  accuracy          {_stat(m.get('accuracy'), True)}")
            print(f"  pass rate         {_stat(m.get('pp'), True)}")
        elif agg["task"] == "mixed":
            total = int(m["dois_count"]["value"])
            found = round((m["doi_found"]["value"] or 0) * total)
            print(f"\nmixed    {head}")
            print(f"  Total DOIs        {total}")
            print(f"  DOIs Found        {found}  {_stat(m['doi_found'], True)}")
            print(f"  DOIs Not Found    {total - found}  {_stat(m['doi_not_found'], True)}")
            print(f"  Matching Titles   {_stat(m['doi_title_match'], True)}")
            print(f"  adherence (2 DOI) {_stat(m['adherence'], True)}")
            print(f"  source recall     {_stat(m.get('source_recall'), True)}")
            print(f"  accuracy          {_stat(m['accuracy'], True)}")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="citebench/bm25")
    parser.add_argument("--suites", type=Path, default=REPO / "suites" / "arxeval")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (-n)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench/arxeval.json"))
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results = args.out.with_suffix(".results.jsonl")
    wall = run(args.model, args.suites, args.workers, results)
    summary = report(results, wall)
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out} and {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
