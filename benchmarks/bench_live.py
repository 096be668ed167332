"""Live-run benchmark: ``pytest --citebench`` against the floor our own stack allows.

Not a test: a measurement script. It builds a 1,000-item suite (the first items of
``suites/reasons/ir``, task ``indirect`` only) under ``/tmp/bench/live``, starts the loopback stub
(latency 0.2 s, HTTP/1.1 keep-alive) in its own process, and times side by side:

* **bare**: a plain asyncio loop, ``Semaphore(C)`` over ``litellm.acompletion`` with exactly the
  messages and parameters the plugin sends (built by ``pytest_citebench.papers.reasons.tasks``), in a
  fresh process; nothing else (no pytest, no vcrpy, no scoring).
* **plugin**: ``python -m pytest --citebench ... --citebench-record all`` in a subprocess (a live
  run: every item's cassette is recorded into a fresh folder).
* **plugin -n 2**: the same with pytest-xdist and the same ``--citebench-concurrency C``: the
  plugin splits it between the workers, so ``C`` calls are in flight in all.
* with ``--ladder``, the plugin's pieces without pytest (see ``_ladder_main``): ``+record``,
  ``+run_item``, ``+engine``, which split the gap between bare and plugin.

For every run it reports the wall time of the whole process, its CPU and each of its processes'
(an xdist controller and its workers apart), the *call window* from the first request reaching
the stub to the last answer leaving it (stamped inside the stub process, so both sides are
measured the same way), and the mean number of calls the stub was answering in that window.
Startup is reported separately: ``pytest --citebench --collect-only`` on the same suite (pytest +
plugin + collection, no litellm) and litellm's import.

    python benchmarks/bench_live.py [--items 1000] [--latency 0.2] [--concurrency 16 ...]
        [--repeat 2] [--ladder] [--no-xdist] [--xdist-at C ...] [--out FILE]
    python benchmarks/bench_live.py --full suites/reasons/nlp --repeat 1
    # high concurrency (issue 27): C=64 at -n 0 and -n 2, C=16 at -n 0, three rounds
    python benchmarks/bench_live.py --full suites/reasons/nlp --concurrency 64 16 \
        --xdist-at 64 --repeat 3

``--full SUITE`` is the full-suite mode: every item and task of a real suite, escalations
included (the bare loop makes exactly the plugin's calls: they are collected by running each
task's own ``solve`` against a model that always gives the stub's answer).

Each concurrency runs ``--repeat`` rounds; within a round the configurations run one after
another (interleaved), and every ratio is to the same round's bare loop. The table shows each
round and the medians, with two floors beside them: latency ``N * L / C`` (every call's latency,
C at a time, zero CPU) and CPU ``bare CPU / cores`` (the bare loop's CPU spread over every core).
All plugin runs must give the same item records (timings aside); the script says whether they did.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
MODEL = "openai/stub"
API_KEY = "sk-bench-0123456789abcdefghij"
# A title-like answer so every item is parsed and scored (an abstention would skip the metrics).
ANSWER = "Network Embedding as Matrix Factorization: Unifying DeepWalk, LINE, PTE, and node2vec"
PARAMS = {"temperature": 1.0, "max_tokens": 256, "top_p": 0.95}
TIMEOUT = 120.0  # the plugin's default --citebench-timeout


def bench_env(**extra: str) -> dict[str, str]:
    env = os.environ.copy()
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_OFFLINE_MODE="true",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    env.pop("PYTEST_ADDOPTS", None)
    # As on a developer's machine: bytecode is cached. Without it, pytest's assertion rewriting of
    # every pytest11 plugin's package (hypothesis's alone: ~1.5 s) reran in each timed run.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


# On this VM a folder of the ext4 file system took 0.5-0.9 ms of kernel CPU to create a file
# where others took 17-60 us, and /tmp/bench/live went from 46 to 526 us within one benchmark
# (a few runs' cassettes written and deleted there). Every cassette of a live run is one new
# file: such a folder adds that to each case of the plugin's runs and nothing to the bare loop's.
SLOW_CREATE_US = 200


def file_creation_cost(folder: Path, files: int = 200) -> float:
    """Kernel CPU (us) to create one empty file in a new folder under ``folder``, best of 3."""
    probe = folder / ".create-probe"
    best = float("inf")
    try:
        for attempt in range(3):
            shutil.rmtree(probe, ignore_errors=True)
            probe.mkdir()
            start = time.process_time()
            for i in range(files):
                os.close(os.open(probe / f"{attempt}-{i}", os.O_CREAT | os.O_WRONLY, 0o644))
            best = min(best, (time.process_time() - start) / files * 1e6)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return best


# ---------------------------------------------------------------------------------------- stub


class Stub:
    """The stub in its own process (its own GIL); ``window()`` asks it when calls came and went."""

    def __init__(self, latency: float, answer: str = ANSWER) -> None:
        self.latency = latency
        self.proc = subprocess.Popen(
            [PY, __file__, "_stub", "--latency", str(latency), "--answer", answer],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=bench_env(),
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"stub did not start: {self.url!r}")

    def window(self) -> dict[str, Any]:
        """Calls since the last ask, first arrival and last answer (epoch seconds); resets."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> Stub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stub_main(latency: float, answer: str) -> int:
    from pytest_citebench.testing.stubserver import StubServer

    stamps: list[float] = []

    def answer_fn(_payload: dict[str, Any]) -> str:  # runs after the latency sleep
        stamps.append(time.time())
        return answer

    server = StubServer(answer_fn, latency=latency).start()
    # Requests in flight, sampled every 10 ms: their mean over the call window says how much of
    # the concurrency a run kept busy (C when it is fed, less when it waits on something else).
    samples: list[tuple[float, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.01):
            samples.append((time.time(), server.in_flight))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    print(server.url, flush=True)
    try:
        for line in sys.stdin:
            if line.strip() == "stats":
                done = list(stamps)
                stamps.clear()
                seen, samples[:] = list(samples), []
                first = (min(done) - latency) if done else None
                last = max(done) if done else None
                inside = [n for t, n in seen if first is not None and first <= t <= last]
                out = {
                    "calls": len(done),
                    "first": first,
                    "last": last,
                    "in_flight": (sum(inside) / len(inside)) if inside else None,
                }
                print(json.dumps(out), flush=True)
    finally:
        stop.set()
        server.stop()
    return 0


def call_window(stats: dict[str, Any]) -> float | None:
    if not stats.get("calls"):
        return None
    return float(stats["last"] - stats["first"])


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def busy_cpu() -> float:
    """CPU seconds all CPUs of this machine spent busy since boot (Linux; 0 elsewhere)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / _TICK


def proc_cpu(pid: int | None) -> float:
    """CPU seconds of a live process (user+sys), 0 when unknown."""
    if pid is None:
        return 0.0
    try:
        parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / _TICK
    except (OSError, ValueError, IndexError):
        return 0.0


def wait_quiet(max_wait: float | None = None, threshold: float = 0.25) -> float:
    """Wait (up to ``max_wait`` s) until the machine is mostly idle: other people's test runs on a
    2-core box would otherwise be measured as ours. Returns the seconds waited.
    ``BENCH_QUIET_WAIT`` (default 30) caps the wait; 0 turns it off."""
    if max_wait is None:
        max_wait = float(os.environ.get("BENCH_QUIET_WAIT", "30"))
    waited = 0.0
    while waited < max_wait:
        b0 = busy_cpu()
        time.sleep(1.0)
        waited += 1.0
        if busy_cpu() - b0 < threshold * (os.cpu_count() or 1):
            return waited
    return waited


def apply_nice() -> None:
    """``BENCH_NICE=-10`` (root only for negative values) raises the priority of this script and
    everything it starts, for a fairer measurement on a machine others are using. With Linux's
    autogroup scheduling a nice value only ranks processes within one session, so the session's
    autogroup gets the same value (``/proc/self/autogroup``); other sessions are left alone."""
    value = os.environ.get("BENCH_NICE")
    if not value:
        return
    try:
        os.setpriority(os.PRIO_PROCESS, 0, int(value))
        autogroup = Path("/proc/self/autogroup")
        if autogroup.exists():
            autogroup.write_text(f"{int(value)}\n")
    except (OSError, ValueError) as exc:
        print(f"BENCH_NICE={value}: {exc}", file=sys.stderr)


def _process_tree_cpu(root: int, seen: dict[int, tuple[str, float]]) -> None:
    """CPU seconds so far of ``root`` and every process under it, by pid, with a role: the
    command itself, or an xdist worker (execnet starts each as ``python -c ...``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(
                    Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]
                )
            except (OSError, ValueError, IndexError):
                continue
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    for pid in tree:
        cpu = proc_cpu(pid)
        if cpu or pid in seen:
            role = seen[pid][0] if pid in seen else ("main" if pid == root else "child")
            seen[pid] = (role, max(cpu, seen.get(pid, ("", 0.0))[1]))


def timed(cmd: list[str], stub: Stub | None = None, **kw: Any) -> tuple[Any, dict[str, Any]]:
    """Run ``cmd``; wall time, CPU seconds of it and its children, and (with a stub) the phases:
    ``pre`` launch -> first call, ``window`` first call -> last answer, ``post`` -> exit.
    ``foreign`` is CPU seconds the machine spent on anything else (neither this command nor the
    stub) while it ran: a run with a large one shared the machine and is suspect. ``procs`` is
    the CPU of each process (the command, then its children: xdist's workers), polled every
    0.2 s, so a controller and its workers are told apart."""
    wait_quiet()
    if stub is not None:
        stub.window()  # reset
    stub_pid = stub.proc.pid if stub is not None else None
    stub0, busy0 = proc_cpu(stub_pid), busy_cpu()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    launched = time.time()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    streams: dict[str, str] = {}
    reader = threading.Thread(
        target=lambda: streams.update(zip(("stdout", "stderr"), proc.communicate(), strict=True))
    )
    reader.start()
    procs: dict[int, tuple[str, float]] = {}
    while proc.poll() is None:
        _process_tree_cpu(proc.pid, procs)
        time.sleep(0.2)
    reader.join()
    wall = time.perf_counter() - t0
    ended = launched + wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stub_cpu = proc_cpu(stub_pid) - stub0
    foreign = max(0.0, busy_cpu() - busy0 - cpu - stub_cpu)
    out: dict[str, Any] = {"wall": wall, "cpu": cpu, "stub_cpu": stub_cpu, "foreign": foreign}
    main_cpu = [c for role, c in procs.values() if role == "main"]
    children = sorted((c for role, c in procs.values() if role != "main"), reverse=True)
    out["procs"] = [round(c, 2) for c in main_cpu + children]  # the command first
    if stub is not None:
        stats = stub.window()
        out["calls"] = stats["calls"]
        out["window"] = call_window(stats)
        out["in_flight"] = stats.get("in_flight")
        if stats["calls"]:
            out["pre"] = stats["first"] - launched
            out["post"] = ended - stats["last"]
    done = subprocess.CompletedProcess(
        cmd, proc.returncode, streams.get("stdout", ""), streams.get("stderr", "")
    )
    return done, out


# ---------------------------------------------------------------------------------------- prompts


def case_messages(
    suite_dir: Path, tasks: list[str] | None = None, answer: str = ANSWER
) -> list[list[dict[str, str]]]:
    """Every request the plugin sends for the suite's (item, task) cases when the model always
    replies ``answer``, escalations included: each task's own ``solve`` is run against a
    generate that records the messages and returns ``answer``, so the bare loop makes exactly
    the plugin's calls without re-implementing any task."""
    import asyncio

    from pytest_citebench import registry
    from pytest_citebench.suites import load_suite

    suite = load_suite(suite_dir)
    corpus = str(suite.manifest.corpus_file) if suite.manifest.corpus_file else None
    out: list[list[dict[str, str]]] = []

    async def generate(messages: Any, *, hint: Any) -> str:
        out.append([{"role": m.role, "content": m.content} for m in messages])
        return answer

    async def collect() -> None:
        for task_name in suite.manifest.tasks:
            if tasks and task_name not in tasks:
                continue
            task: Any = registry.get(task_name)
            for item in suite.items:
                await task.solve(item, generate, suite_corpus=corpus)

    asyncio.run(collect())
    return out


# ---------------------------------------------------------------------------------------- bare loop


def _bare_main(suite_dir: Path, url: str, concurrency: int) -> int:
    """Runs in a fresh process; prints one JSON line of timings."""
    t0 = time.perf_counter()
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    t_import = time.perf_counter() - t0
    prompts = case_messages(suite_dir)

    async def run() -> list[str]:
        import asyncio

        sem = asyncio.Semaphore(concurrency)

        async def one(messages: list[dict[str, str]]) -> str:
            async with sem:
                response = await litellm.acompletion(
                    model=MODEL,
                    messages=messages,
                    api_base=url,
                    api_key=API_KEY,
                    timeout=TIMEOUT,
                    max_retries=0,
                    num_retries=0,
                    **PARAMS,
                )
                return str(response.choices[0].message.content)

        return await asyncio.gather(*(one(m) for m in prompts))

    import asyncio

    t1 = time.perf_counter()
    answers = asyncio.run(run())
    t_loop = time.perf_counter() - t1
    ok = sum(a == ANSWER for a in answers)
    print(json.dumps({"import": t_import, "loop": t_loop, "calls": len(answers), "ok": ok}))
    return 0


def run_bare(stub: Stub, suite_dir: Path, concurrency: int) -> dict[str, Any]:
    cmd = [PY, __file__, "_bare", "--suite", str(suite_dir), "--url", stub.url,
           "--concurrency", str(concurrency)]  # fmt: skip
    proc, out = timed(cmd, stub, env=bench_env())
    if proc.returncode != 0:
        raise RuntimeError(f"bare loop failed:\n{proc.stderr[-3000:]}")
    inner = json.loads(proc.stdout.strip().splitlines()[-1])
    if inner["ok"] != inner["calls"] or out["calls"] != inner["calls"]:
        raise RuntimeError(f"bare loop: {inner['calls'] - inner['ok']} bad answers")
    return {**out, "import": inner["import"], "loop": inner["loop"]}


# ---------------------------------------------------------------------------------------- ladder

LADDER = ("record", "run_item", "engine")


def _ladder_main(step: str, suite_dir: Path, url: str, concurrency: int, cassettes: Path) -> int:
    """The plugin's own pieces without pytest, to split the gap between bare and plugin:

    * ``record``: the bare loop, each call inside ``Recorder.use(cassette)`` (vcrpy patched once,
      the router sending each asyncio task's request to its own item's cassette, saved after).
    * ``run_item``: one asyncio loop, ``Semaphore(C)`` over ``runner.run_item(job, recorder)``,
      the plugin's per-item coroutine (Model wrapper, per-item cassette recorded through the
      Recorder's router, parsing and scoring), in the main thread.
    * ``engine``: the same jobs through ``runner.Engine`` (the loop in a daemon thread) while the
      main thread waits for each future in order, as pytest's runtest does.
    """
    import asyncio
    import functools

    from pytest_citebench import registry
    from pytest_citebench.models import Model, RetryPolicy, SamplingParams
    from pytest_citebench.models.litellm_backend import litellm
    from pytest_citebench.recording import Recorder
    from pytest_citebench.run.runner import Engine, Job, run_item
    from pytest_citebench.suites import load_suite

    t0 = time.perf_counter()
    litellm()
    t_import = time.perf_counter() - t0
    suite = load_suite(suite_dir)
    model = Model(MODEL, SamplingParams(**PARAMS), url, RetryPolicy(timeout=TIMEOUT))
    corpus = str(suite.manifest.corpus_file) if suite.manifest.corpus_file else None
    jobs = [
        Job(f"{suite.name}::{t}::{it.id}", it, registry.get(t), model, suite.manifest.version,
            corpus, cassettes)
        for t in suite.manifest.tasks
        for it in suite.items
    ]  # fmt: skip
    recorder = Recorder(cassettes, "all")
    recorder.activate()
    t1 = time.perf_counter()
    if step == "record":
        payloads = [
            (j, [{"role": m.role, "content": m.content} for m in j.task.messages(j.item)])
            for j in jobs
        ]

        async def run_record() -> list[str]:
            sem = asyncio.Semaphore(concurrency)
            lib = litellm()

            async def one(job: Job, messages: list[dict[str, str]]) -> str:
                async with sem:
                    with recorder.use(job.cassette, "bench"):
                        response = await lib.acompletion(
                            model=MODEL, messages=messages, api_base=url, timeout=TIMEOUT,
                            max_retries=0, num_retries=0, **PARAMS,
                        )  # fmt: skip
                    return str(response.choices[0].message.content)

            return await asyncio.gather(*(one(j, m) for j, m in payloads))

        answers = asyncio.run(run_record())
        t_loop = time.perf_counter() - t1
        recorder.deactivate()
        ok = sum(a == ANSWER for a in answers)
        print(json.dumps({"import": t_import, "loop": t_loop, "calls": len(answers), "ok": ok}))
        return 0
    if step == "run_item":

        async def run() -> list[Any]:
            sem = asyncio.Semaphore(concurrency)

            async def one(job: Job) -> Any:
                async with sem:
                    return await run_item(job, recorder)

            return await asyncio.gather(*(one(j) for j in jobs))

        results = asyncio.run(run())
    else:
        engine = Engine(concurrency)
        futures = [engine.submit(functools.partial(run_item, j, recorder)) for j in jobs]
        results = [f.result() for f in futures]
        engine.close()
    t_loop = time.perf_counter() - t1
    recorder.deactivate()
    ok = sum(r.outcome != "error" for r in results)
    print(json.dumps({"import": t_import, "loop": t_loop, "calls": len(results), "ok": ok}))
    return 0


def run_ladder(stub: Stub, step: str, suite_dir: Path, work: Path, concurrency: int) -> dict:
    cassettes = work / f"cassettes-{step}"
    shutil.rmtree(cassettes, ignore_errors=True)
    cmd = [PY, __file__, "_ladder", "--step", step, "--suite", str(suite_dir), "--url", stub.url,
           "--concurrency", str(concurrency), "--cassettes", str(cassettes)]  # fmt: skip
    proc, out = timed(cmd, stub, env=bench_env(OPENAI_API_KEY=API_KEY))
    shutil.rmtree(cassettes, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ladder {step} failed:\n{proc.stderr[-3000:]}")
    inner = json.loads(proc.stdout.strip().splitlines()[-1])
    if inner["ok"] != inner["calls"]:
        raise RuntimeError(f"ladder {step}: {inner['calls'] - inner['ok']} errors")
    return {**out, "import": inner["import"], "loop": inner["loop"]}


# ---------------------------------------------------------------------------------------- plugin


def pytest_cmd(suite_dir: Path, *extra: str) -> list[str]:
    return [PY, "-m", "pytest", "--citebench", str(suite_dir), "-q", "-p", "no:cacheprovider",
            "--citebench-model", MODEL, *extra]  # fmt: skip


def run_plugin(
    stub: Stub, suite_dir: Path, work: Path, concurrency: int, workers: int = 0, tag: str = ""
) -> dict[str, Any]:
    cassettes = work / f"cassettes{tag}"
    results = work / f"results{tag}.jsonl"
    shutil.rmtree(cassettes, ignore_errors=True)
    results.unlink(missing_ok=True)
    extra = ["--citebench-api-base", stub.url, "--citebench-record", "all",
             "--citebench-cassettes", str(cassettes), "--citebench-concurrency", str(concurrency),
             "--citebench-results", str(results)]  # fmt: skip
    if workers:
        extra += ["-n", str(workers)]
    proc, out = timed(
        pytest_cmd(suite_dir, *extra), stub, env=bench_env(OPENAI_API_KEY=API_KEY), cwd=work
    )
    records = (
        [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    )
    items = [r for r in records if r.get("type") == "item"]
    errors = [r for r in items if r["outcome"] == "error"]
    if not items or (proc.returncode != 0 and not errors):
        raise RuntimeError(
            f"plugin run failed (rc={proc.returncode}, items={len(items)}):\n"
            + proc.stdout[-3000:]
            + proc.stderr[-3000:]
        )
    for r in errors[:3]:  # timed all the same, but say so: an error is a bug, not noise
        print(f"  ERROR in plugin{tag}: {r['nodeid']}: {r['error'].splitlines()[0]}", flush=True)
    shutil.rmtree(cassettes, ignore_errors=True)
    return {**out, "items": len(items), "errors": len(errors), "records": _comparable(items)}


# What differs between two runs of the same answers and is not the verdict: timings.
_VOLATILE = frozenset({"duration", "latency", "latencies"})


def _comparable(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Item records by node id, without their timings: two runs that got the same answers must
    give the same records (and so the same verdict), whatever the process layout."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return {r["nodeid"]: strip(r) for r in records}


def run_collect(suite_dir: Path, work: Path) -> float:
    proc, out = timed(pytest_cmd(suite_dir, "--collect-only"), env=bench_env(), cwd=work)
    if proc.returncode != 0:
        raise RuntimeError(f"collect-only failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return float(out["wall"])


# ---------------------------------------------------------------------------------------- suite


def build_suite(work: Path, items: int, source: Path, task: str = "indirect") -> Path:
    """``work/suite``: the first ``items`` lines of ``source`` as suite ``bench/live``."""
    suite = work / "suite"
    shutil.rmtree(suite, ignore_errors=True)
    suite.mkdir(parents=True)
    lines = [ln for ln in (source / "items.jsonl").read_text(encoding="utf-8").splitlines() if ln]
    if len(lines) < items:
        raise SystemExit(f"{source} has only {len(lines)} items")
    (suite / "items.jsonl").write_text("\n".join(lines[:items]) + "\n", encoding="utf-8")
    shutil.copy(source / "corpus.jsonl", suite / "corpus.jsonl")
    (suite / "suite.toml").write_text(
        'name = "bench/live"\nversion = 1\n'
        f'description = "first {items} items of {source.name}, for bench_live.py"\n'
        f'tasks = ["{task}"]\ncorpus = "corpus.jsonl"\n\n[source]\n'
        'paper = "REASONS"\nurl = "suites/reasons"\nlicence = "see suites/reasons"\n',
        encoding="utf-8",
    )
    return suite


# ---------------------------------------------------------------------------------------- main


def fmt(value: float | None, unit: str = "s") -> str:
    return f"{'-':>10}" if value is None else f"{value:9.2f}{unit}"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def compare_records(runs: dict[str, list[dict[str, Any]]]) -> str:
    """Whether every plugin run of every round gave the same item records (timings aside)."""
    seen = [(name, i, r.pop("records")) for name, rs in runs.items() for i, r in enumerate(rs)
            if "records" in r]  # fmt: skip
    if len(seen) < 2:
        return "records: one plugin run, nothing to compare"
    first_name, first_round, reference = seen[0]
    for name, i, records in seen[1:]:
        differ = [
            k for k in reference.keys() | records.keys() if reference.get(k) != records.get(k)
        ]
        if differ:
            return (f"records: {len(differ)} of {len(reference)} items DIFFER between "
                    f"{first_name} [{first_round + 1}] and {name} [{i + 1}], e.g. {min(differ)}")  # fmt: skip
    return (
        f"records: identical item for item in all {len(seen)} plugin runs ({len(reference)} items)"
    )


def report(c: int, n: int, lat: float, runs: dict[str, list[dict[str, Any]]]) -> None:
    """One concurrency: every round's walls and ratios to that round's bare loop, then the
    medians, with the latency floor and the CPU floor beside them."""
    cores = os.cpu_count() or 1
    names = [k for k, v in runs.items() if v]
    bare = runs["bare"]
    print(f"\nC = {c}: {n} calls, latency {lat}s")
    head = (
        "round "
        + "".join(f"{k:>14}" for k in names)
        + "".join(f"{k + ' / bare':>21}" for k in names if k != "bare")
    )
    print(head)
    ratios: dict[str, list[float]] = {k: [] for k in names if k != "bare"}
    for i, b in enumerate(bare):
        row = f"{i + 1:<6}" + "".join(fmt(runs[k][i]["wall"]).rjust(14) for k in names)
        for k, values in ratios.items():
            values.append(runs[k][i]["wall"] / b["wall"])
            row += fmt(values[-1], "x").rjust(21)
        print(row)
    med = {k: median([r["wall"] for r in runs[k]]) for k in names}
    print("median" + "".join(fmt(med[k]).rjust(14) for k in names)
          + "".join(fmt(median(v), "x").rjust(21) for v in ratios.values()))  # fmt: skip
    bare_cpu = median([r["cpu"] for r in bare])
    latency_floor = n * lat / c
    cpu_floor = bare_cpu / cores
    print(f"floors: latency N*L/C = {latency_floor:.1f}s ({latency_floor / med['bare']:.2f}x bare); "
          f"CPU = bare CPU x N / {cores} cores = {cpu_floor:.1f}s ({cpu_floor / med['bare']:.2f}x bare; "
          f"bare CPU {1000 * bare_cpu / n:.2f} ms a call)")  # fmt: skip
    print(f"{'run':<13}{'cpu':>10}{'ms/call':>10}{'in flight':>11}{'pre':>10}{'window':>10}"
          f"{'post':>10}{'foreign':>10}  per process (command first)")  # fmt: skip
    for k in names:
        rs = runs[k]
        cpu = median([r["cpu"] for r in rs])
        flight = median([r["in_flight"] for r in rs if r.get("in_flight") is not None] or [0.0])
        print(f"{k:<13}{fmt(cpu)}{1000 * cpu / n:10.2f}{flight:11.1f}"
              + "".join(fmt(median([r[f] for r in rs if r.get(f) is not None] or [0.0]))
                        for f in ("pre", "window", "post", "foreign"))
              + f"  {min(rs, key=lambda r: abs(r['wall'] - med[k])).get('procs')}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[16],
        help="calls in flight in all (split between xdist workers); several run one after another",
    )  # fmt: skip
    parser.add_argument("--repeat", type=int, default=2, help="rounds, interleaved")
    parser.add_argument("--no-xdist", action="store_true", help="skip the -n 2 runs")
    parser.add_argument(
        "--xdist-at", type=int, nargs="+", metavar="C",
        help="run -n 2 only at these concurrencies (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--ladder",
        action="store_true",
        help="also run the plugin's pieces without pytest (record; run_item; engine thread) to split "
        "the gap between bare and plugin",
    )
    parser.add_argument("--source", type=Path, default=REPO / "suites" / "reasons" / "ir")
    parser.add_argument(
        "--full",
        type=Path,
        metavar="SUITE",
        help="full-suite mode: every item and every task of SUITE (e.g. suites/reasons/nlp), "
        "escalations included; --items, --source and --ladder are ignored",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench/live"))
    parser.add_argument("--out", type=Path, help="write all runs as JSON here")
    args = parser.parse_args(argv)
    apply_nice()

    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    create_us = file_creation_cost(work)
    print(f"file creation in {work}: {create_us:.0f} us of CPU a file (a cassette is one new file)")
    if create_us > SLOW_CREATE_US:
        print(f"  WARNING: more than {SLOW_CREATE_US} us: this folder's file system is slow to "
              "create files, which the bare loop never does; pass --work elsewhere")  # fmt: skip
    lat = args.latency
    if args.full:
        suite = args.full.resolve()
        args.ladder = False
        n = len(case_messages(suite))  # calls, escalations included, for a model saying ANSWER
        print(f"live, full suite {suite.name}: {n} calls (all tasks, escalations included), "
              f"stub latency {lat}s, concurrency {args.concurrency} in all, "
              f"{os.cpu_count()} CPUs, keep-alive connections")  # fmt: skip
    else:
        suite = build_suite(work, args.items, args.source)
        n = args.items
        print(f"live: {n} items, stub latency {lat}s, concurrency {args.concurrency}, "
              f"{os.cpu_count()} CPUs")  # fmt: skip

    collect = min(run_collect(suite, work) for _ in range(2))
    results: dict[int, dict[str, list[dict[str, Any]]]] = {}
    with Stub(lat) as stub:
        for c in args.concurrency:
            runs: dict[str, list[dict[str, Any]]] = {"bare": []}
            if args.ladder:
                runs.update({f"+{step}": [] for step in LADDER})
            runs.update({"plugin": [], "plugin -n 2": []})
            xdist = not args.no_xdist and (args.xdist_at is None or c in args.xdist_at)
            results[c] = runs
            for i in range(args.repeat):
                runs["bare"].append(run_bare(stub, suite, c))
                print(f"  C={c} [{i + 1}] bare        {json.dumps(runs['bare'][-1])}", flush=True)
                for step in LADDER if args.ladder else ():
                    runs[f"+{step}"].append(run_ladder(stub, step, suite, work, c))
                    print(f"  C={c} [{i + 1}] +{step:<10} {json.dumps(runs[f'+{step}'][-1])}",
                          flush=True)  # fmt: skip
                runs["plugin"].append(run_plugin(stub, suite, work, c))
                shown = {k: v for k, v in runs["plugin"][-1].items() if k != "records"}
                print(f"  C={c} [{i + 1}] plugin      {json.dumps(shown)}", flush=True)
                if xdist:
                    # The plugin splits --citebench-concurrency between the workers: C in all.
                    runs["plugin -n 2"].append(run_plugin(stub, suite, work, c, 2, "-n2"))
                    shown = {k: v for k, v in runs["plugin -n 2"][-1].items() if k != "records"}
                    print(f"  C={c} [{i + 1}] plugin -n 2 {json.dumps(shown)}", flush=True)
            for name, r in ((k, r) for k, rs in runs.items() for r in rs):
                if r.get("calls") != n:
                    print(f"  WARNING {name}: {r.get('calls')} calls at the stub, expected {n}")
            print("  " + compare_records(runs))
    import_s = min(r["import"] for runs in results.values() for r in runs["bare"])
    print(f"\nstartup: pytest --citebench --collect-only {collect:.2f}s; "
          f"import litellm {import_s:.2f}s")  # fmt: skip
    for c, runs in results.items():
        report(c, n, lat, runs)
    print(
        "\nwall = the whole process (bare: a fresh process, litellm import included); ratios are "
        "each round's own (plugin wall / that round's bare wall), medians over the rounds; "
        "cpu = user+sys of the process and its children (not the stub); in flight = the mean "
        "number of requests the stub was answering during the call window; pre = launch to "
        "first request; window = first request to last answer; post = last answer to exit; "
        "foreign = CPU the machine spent on anything else meanwhile."
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"collect": collect, "runs": results}, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("_stub", "_bare", "_ladder"):
        sub = argparse.ArgumentParser()
        sub.add_argument("mode")
        sub.add_argument("--latency", type=float, default=0.0)
        sub.add_argument("--answer", default=ANSWER)
        sub.add_argument("--suite", type=Path)
        sub.add_argument("--url")
        sub.add_argument("--concurrency", type=int, default=16)
        sub.add_argument("--step", choices=LADDER)
        sub.add_argument("--cassettes", type=Path)
        a = sub.parse_args()
        if a.mode == "_stub":
            raise SystemExit(_stub_main(a.latency, a.answer))
        if a.mode == "_ladder":
            raise SystemExit(_ladder_main(a.step, a.suite, a.url, a.concurrency, a.cassettes))
        raise SystemExit(_bare_main(a.suite, a.url, a.concurrency))
    raise SystemExit(main())
