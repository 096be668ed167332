"""Replay benchmark: ``pytest --citebench --citebench-record none`` against a bare vcrpy loop.

Not a test: a measurement script.

1. Records one cassette per case for every REASONS suite (both tasks: 7,424 items, 14,848 cases)
   with the plugin (``--citebench-record all``, ``-n 2``) against the loopback stub (latency 0),
   into ``/tmp/bench/cassettes``. Cached: a rerun skips it while ``.meta.json`` says it finished.
2. Times, each in a fresh process, replaying exactly those cassettes with ``OPENAI_API_KEY``
   unset and no server running:

   * **bare**: one call after another, each inside ``vcr.use_cassette(path, record_mode="none",
     match_on=["method", "uri", "body"])``, with the messages and parameters the plugin sends, at
     the cassette path the plugin uses (``recording.cassette_path``). Two flavours are measured
     on a sample first -- ``sync`` (``litellm.completion``) and ``async`` (one event loop,
     ``await litellm.acompletion`` per case) -- and the faster is the floor for the full run.
     vcrpy cannot serve concurrent calls from different cassettes (its patch is global), so a
     bare loop is sequential; the plugin routes per asyncio task and is not.
   * **plugin -n 0** and **plugin -n 2** (``--citebench-concurrency 16``).

    python benchmarks/bench_replay.py [--limit N] [--sample 500] [--rerecord] [--repeat N]
        [--out /tmp/bench/replay/results.json]

``--repeat N`` runs N interleaved rounds (bare, then each plugin run) and reports each run's best
and the median of the rounds' ratios: on a machine whose speed drifts, one round is not enough.

``--limit N`` keeps the first N items of each suite (a quick run; cassettes are still recorded
for everything). Wall times include process start and imports; ``pytest --collect-only`` on the
same suites is reported as the plugin's startup.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_live import (
    ANSWER,
    API_KEY,
    MODEL,
    PARAMS,
    PY,
    REPO,
    TIMEOUT,
    Stub,
    apply_nice,
    bench_env,
    fmt,
    pytest_cmd,
    timed,
)

BENCH = Path("/tmp/bench")
MATCH_ON = ["method", "uri", "body"]


def replay_env() -> dict[str, str]:
    env = bench_env()
    env.pop("OPENAI_API_KEY", None)
    return env


# ---------------------------------------------------------------------------------------- suites


def build_suites(root: Path, source: Path, limit: int | None) -> Path:
    """``source`` as is, or a copy under ``root`` keeping the first ``limit`` items of each suite
    (same names and versions, so the same cassette paths)."""
    if not limit:
        return source
    shutil.rmtree(root, ignore_errors=True)
    for manifest in sorted(source.rglob("suite.toml")):
        dest = root / manifest.parent.relative_to(source)
        dest.mkdir(parents=True)
        shutil.copy(manifest, dest / "suite.toml")
        for name in ("corpus.jsonl",):
            if (manifest.parent / name).exists():
                shutil.copy(manifest.parent / name, dest / name)
        lines = (manifest.parent / "items.jsonl").read_text(encoding="utf-8").splitlines()
        lines = [ln for ln in lines if ln.strip()][:limit]
        (dest / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def cases(
    suites_root: Path, cassettes: Path, tasks: list[str]
) -> list[tuple[str, list[list[dict[str, str]]]]]:
    """(cassette path, the messages of each call) for every case the plugin runs, suite by
    suite. The calls are collected by running each task's own ``solve`` against a model that
    always gives the stub's answer, so escalations (a second call in the same cassette) are
    included exactly as the plugin makes them. ``tasks == ["all"]``: every task of each suite."""
    import asyncio

    from pytest_citebench import registry
    from pytest_citebench.recording import cassette_path
    from pytest_citebench.suites import discover, load_suite

    out: list[tuple[str, list[list[dict[str, str]]]]] = []
    calls: list[list[dict[str, str]]] = []

    async def generate(messages: Any, *, hint: Any) -> str:
        calls.append([{"role": m.role, "content": m.content} for m in messages])
        return ANSWER

    async def collect() -> None:
        for manifest in discover(suites_root):
            suite = load_suite(manifest)
            corpus = str(suite.manifest.corpus_file) if suite.manifest.corpus_file else None
            for task_name in suite.manifest.tasks:
                if tasks != ["all"] and task_name not in tasks:
                    continue
                task: Any = registry.get(task_name)
                for item in suite.items:
                    path = cassette_path(
                        cassettes, MODEL, suite.name, suite.manifest.version, task_name, item.id
                    )
                    calls.clear()
                    await task.solve(item, generate, suite_corpus=corpus)
                    out.append((str(path), list(calls)))

    asyncio.run(collect())
    return out


# ---------------------------------------------------------------------------------------- record


def task_args(tasks: list[str]) -> list[str]:
    if tasks == ["all"]:
        return []
    return [arg for t in tasks for arg in ("--citebench-task", t)]


def record(cassettes: Path, suites_root: Path, tasks: list[str], force: bool) -> dict[str, Any]:
    meta_file = cassettes / ".meta.json"
    if meta_file.exists() and not force:
        meta = json.loads(meta_file.read_text())
        if meta.get("suites") == str(suites_root) and meta.get("tasks") == tasks:
            print(f"cassettes: cached in {cassettes} ({meta['cases']} cases, {meta['url']})")
            return meta
    shutil.rmtree(cassettes, ignore_errors=True)
    cassettes.mkdir(parents=True)
    work = BENCH / "replay"
    work.mkdir(parents=True, exist_ok=True)
    results = work / "record.jsonl"
    results.unlink(missing_ok=True)
    print(
        f"cassettes: recording every case into {cassettes} (stub latency 0, -n 2) ...", flush=True
    )
    with Stub(0.0) as stub:
        extra = ["--citebench-api-base", stub.url, "--citebench-record", "all",
                 "--citebench-cassettes", str(cassettes), "--citebench-concurrency", "16",
                 "--citebench-results", str(results), "-n", "2", *task_args(tasks)]  # fmt: skip
        proc, out = timed(
            pytest_cmd(suites_root, *extra), stub, env=bench_env(OPENAI_API_KEY=API_KEY), cwd=work
        )
        url = stub.url
    items = [json.loads(ln) for ln in results.read_text().splitlines()] if results.exists() else []
    items = [r for r in items if r.get("type") == "item"]
    errors = sum(r["outcome"] == "error" for r in items)
    if proc.returncode != 0 or errors or not items:
        raise SystemExit(
            f"recording failed (rc={proc.returncode}, cases={len(items)}, errors={errors}):\n"
            + proc.stdout[-3000:]
            + proc.stderr[-3000:]
        )
    meta = {"url": url, "cases": len(items), "suites": str(suites_root), "tasks": tasks,
            "record_s": out["wall"]}  # fmt: skip
    meta_file.write_text(json.dumps(meta))
    print(f"cassettes: {len(items)} cases recorded in {out['wall']:.1f}s", flush=True)
    return meta


# ---------------------------------------------------------------------------------------- bare


def _bare_main(
    mode: str, suites_root: Path, cassettes: Path, url: str, tasks: list[str], limit: int
) -> int:
    """Fresh process; prints one JSON line of timings."""
    t0 = time.perf_counter()
    import litellm
    import vcr

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    t_import = time.perf_counter() - t0
    todo = cases(suites_root, cassettes, tasks)
    if limit:
        todo = todo[:limit]
    kwargs = dict(
        api_base=url, api_key="x", timeout=TIMEOUT, max_retries=0, num_retries=0, **PARAMS
    )
    answers: list[str] = []
    t1 = time.perf_counter()
    if mode == "sync":
        for path, conversation in todo:
            with vcr.use_cassette(path, record_mode="none", match_on=MATCH_ON):
                for messages in conversation:
                    response = litellm.completion(model=MODEL, messages=messages, **kwargs)
                    answers.append(str(response.choices[0].message.content))
    else:
        import asyncio

        async def run() -> None:
            for path, conversation in todo:
                with vcr.use_cassette(path, record_mode="none", match_on=MATCH_ON):
                    for messages in conversation:
                        response = await litellm.acompletion(
                            model=MODEL, messages=messages, **kwargs
                        )
                        answers.append(str(response.choices[0].message.content))

        asyncio.run(run())
    t_loop = time.perf_counter() - t1
    ok = sum(bool(a.strip()) for a in answers)
    print(
        json.dumps(
            {
                "import": t_import,
                "loop": t_loop,
                "cases": len(todo),
                "calls": len(answers),
                "ok": ok,
            }
        )
    )
    return 0


def run_bare(
    mode: str, suites_root: Path, cassettes: Path, url: str, tasks: list[str], limit: int = 0
) -> dict[str, Any]:
    cmd = [PY, __file__, "_bare", mode, "--suites", str(suites_root), "--cassettes",
           str(cassettes), "--url", url, "--tasks", ",".join(tasks), "--limit", str(limit)]  # fmt: skip
    proc, out = timed(cmd, env=replay_env())
    if proc.returncode != 0:
        raise SystemExit(f"bare {mode} failed:\n{proc.stderr[-3000:]}")
    inner = json.loads(proc.stdout.strip().splitlines()[-1])
    if inner["ok"] != inner["calls"]:
        raise SystemExit(f"bare {mode}: {inner['calls'] - inner['ok']} empty answers")
    return {**out, **inner}


# ---------------------------------------------------------------------------------------- plugin


def run_plugin(
    suites_root: Path, cassettes: Path, url: str, tasks: list[str], workers: int
) -> dict[str, Any]:
    work = BENCH / "replay"
    results = work / f"replay-n{workers}.jsonl"
    results.unlink(missing_ok=True)
    extra = ["--citebench-api-base", url, "--citebench-record", "none",
             "--citebench-cassettes", str(cassettes), "--citebench-concurrency", "16",
             "--citebench-results", str(results), "-n", str(workers), *task_args(tasks)]  # fmt: skip
    proc, out = timed(pytest_cmd(suites_root, *extra), env=replay_env(), cwd=work)
    items = [json.loads(ln) for ln in results.read_text().splitlines()] if results.exists() else []
    items = [r for r in items if r.get("type") == "item"]
    errors = [r for r in items if r["outcome"] == "error"]
    if not items or (proc.returncode != 0 and not errors):
        raise SystemExit(
            f"plugin replay -n {workers} failed (rc={proc.returncode}, cases={len(items)}):\n"
            + proc.stdout[-3000:]
            + proc.stderr[-3000:]
        )
    for r in errors[:3]:  # timed all the same, but say so: an error is a bug, not noise
        print(f"  ERROR in plugin -n {workers}: {r['nodeid']}: {r['error'].splitlines()[0]}")
    return {**out, "cases": len(items), "errors": len(errors)}


def run_collect(suites_root: Path, tasks: list[str]) -> float:
    work = BENCH / "replay"
    cmd = pytest_cmd(suites_root, "--collect-only", *task_args(tasks))
    proc, out = timed(cmd, env=replay_env(), cwd=work)
    if proc.returncode != 0:
        raise SystemExit(f"collect-only failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return float(out["wall"])


# ---------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=REPO / "suites" / "reasons")
    parser.add_argument("--cassettes", type=Path, default=BENCH / "cassettes")
    parser.add_argument("--limit", type=int, default=0, help="first N items of each suite")
    parser.add_argument("--sample", type=int, default=500, help="cases to pick the bare flavour")
    parser.add_argument("--bare", choices=("auto", "sync", "async"), default="auto")
    parser.add_argument(
        "--tasks",
        default="direct,indirect",
        help="comma-separated tasks, or 'all' (full-suite mode: every task of each suite, "
        "escalations included; pair with --source suites/reasons/nlp and its own --cassettes)",
    )
    parser.add_argument("--rerecord", action="store_true")
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of (bare, plugin runs), interleaved"
    )
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[0, 2], help="plugin runs, as -n values"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    apply_nice()

    (BENCH / "replay").mkdir(parents=True, exist_ok=True)
    tasks = [t for t in args.tasks.split(",") if t]
    meta = record(args.cassettes, args.source, tasks, args.rerecord)
    suites_root = build_suites(BENCH / "replay" / "suites", args.source, args.limit)
    url = meta["url"]
    print(f"replay: {suites_root}, {os.cpu_count()} CPUs", flush=True)

    # First: it warms the bytecode caches (every timed run then starts alike) and is reported as
    # the plugin's startup.
    collect = run_collect(suites_root, tasks)
    report: dict[str, Any] = {"record": meta}
    flavour = args.bare
    if flavour == "auto":
        sample = {
            m: run_bare(m, suites_root, args.cassettes, url, tasks, args.sample)
            for m in ("sync", "async")
        }
        for m, r in sample.items():
            print(
                f"  bare {m:<5} sample: {r['calls']} calls, {r['loop'] / r['calls'] * 1e3:.2f} ms/call"
            )
        flavour = min(sample, key=lambda m: sample[m]["loop"])
        report["sample"] = sample
    # Rounds interleave the runs: this machine's speed drifts by a tenth or more over minutes,
    # and a ratio of two runs minutes apart would measure the drift. Each round's ratios are
    # printed; the table keeps each run's best (least wall) and the rounds' median ratios.
    runs: dict[str, dict[str, Any]] = {}
    rounds: list[dict[str, dict[str, Any]]] = []
    for number in range(1, args.repeat + 1):
        this: dict[str, dict[str, Any]] = {}
        this[f"bare ({flavour})"] = run_bare(flavour, suites_root, args.cassettes, url, tasks)
        for workers in args.workers:
            this[f"plugin -n {workers}"] = run_plugin(
                suites_root, args.cassettes, url, tasks, workers
            )
        bare_wall = this[f"bare ({flavour})"]["wall"]
        for name, r in this.items():
            r["wall/bare"] = r["wall"] / bare_wall
            print(f"  [{number}] {name:<14} {json.dumps(r)}", flush=True)
            if name not in runs or r["wall"] < runs[name]["wall"]:
                runs[name] = r
        rounds.append(this)

    bare = runs[f"bare ({flavour})"]
    n = bare["cases"]
    for name, r in runs.items():
        if r.get("cases", n) != n:
            print(f"  WARNING {name}: {r.get('cases')} cases, the bare loop replayed {n}")
    print()
    print(f"{n} cases ({bare['calls']} calls); startup: pytest --citebench --collect-only "
          f"{collect:.2f}s, import litellm+vcr {bare['import']:.2f}s")  # fmt: skip
    head = ("wall", "cpu", "foreign", "ms/case", "wall/bare", "cpu/bare")
    if len(rounds) > 1:  # the bests may come from different rounds: read the medians below
        print("each run's best round (ratios between rounds; the medians below are per round)")
    print(f"{'run':<15}" + "".join(f"{h:>10}" for h in head) + "  errors")
    for name, r in runs.items():
        print(
            f"{name:<15}{fmt(r['wall'])}{fmt(r['cpu'])}{fmt(r['foreign'])}"
            f"{fmt(r['wall'] / n * 1e3, '')} {fmt(r['wall'] / bare['wall'], 'x')}"
            f"{fmt(r['cpu'] / bare['cpu'], 'x')}  {r.get('errors', 0)}"
        )
    if len(rounds) > 1:
        print("median over rounds of each round's wall/bare: " + ", ".join(
            f"{name} {statistics.median(r[name]['wall/bare'] for r in rounds):.2f}x"
            for name in runs
        ))  # fmt: skip
    print(f"bare loop alone (no import/load): {bare['loop']:.2f}s = "
          f"{bare['loop'] / n * 1e3:.2f} ms/case")  # fmt: skip
    # Replay waits on no network: its floor is CPU. One process can do no better than the bare
    # loop alone; two cores at best halve it (startup not included in either).
    print(f"floor: -n 0 {bare['loop']:.2f}s (the bare loop alone), -n 2 {bare['loop'] / 2:.2f}s "
          f"(= {bare['loop'] / 2 / bare['wall']:.2f}x the bare wall)")  # fmt: skip
    report.update(runs=runs, rounds=rounds, collect=collect, flavour=flavour)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_bare":
        sub = argparse.ArgumentParser()
        sub.add_argument("cmd")
        sub.add_argument("mode", choices=("sync", "async"))
        sub.add_argument("--suites", type=Path, required=True)
        sub.add_argument("--cassettes", type=Path, required=True)
        sub.add_argument("--url", required=True)
        sub.add_argument("--tasks", default="direct,indirect")
        sub.add_argument("--limit", type=int, default=0)
        a = sub.parse_args()
        tasks = [t for t in a.tasks.split(",") if t]
        raise SystemExit(_bare_main(a.mode, a.suites, a.cassettes, a.url, tasks, a.limit))
    raise SystemExit(main())
