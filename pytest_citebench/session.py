"""The state of one ``pytest --citebench`` run, kept in ``config.stash`` (never module globals).

It resolves options (CLI over ``[tool.citebench]`` in pyproject.toml over defaults), builds jobs,
submits them ahead of the test that needs them, and on the controller collects item records,
aggregates them and checks gates.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import gc
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_citebench.models import Model, RetryPolicy, SamplingParams
from pytest_citebench.options import Options
from pytest_citebench.results.files import same_file
from pytest_citebench.results.gates import Gate, GateResult, parse_gate
from pytest_citebench.results.record import ItemResult
from pytest_citebench.runner import Engine, Job, run_item
from pytest_citebench.workers import share, worker_slot, xdist_queue, xdist_workers

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate, Derived, Sample, Task, Variant
    from pytest_citebench.recording import Recorder
    from pytest_citebench.results.compare import Comparison
    from pytest_citebench.results.files import ResultsWriter
    from pytest_citebench.suites import Manifest, Suite

SESSION_KEY = pytest.StashKey["CitebenchSession"]()

# The collector's thresholds while cases run. A replayed call allocates thousands of objects
# (litellm's request, logging and response models), so at CPython's default (700, 10, 10) the
# young generation is collected every few calls and the whole heap, which grows with every
# record, every few hundred cases: 1.8 s of a 4,000-case replay's ~24 s of CPU, against 1.0 s
# with these (measured with gc.callbacks; peak RSS 411 against 413 MB). Cycles are still
# collected, only in larger batches; the process's own thresholds come back when the run ends.
GC_THRESHOLDS = (50_000, 20, 10)


class CitebenchSession:
    """One per process (controller and each xdist worker); the usage checks run in ``__init__``,
    so a bad option or gate fails the run before any model call."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.options = Options.from_config(config)
        self.is_worker = hasattr(config, "workerinput")
        if not self.is_worker:
            self._check_workers()
        self.models = self._build_models()
        self.gates: list[Gate] = [
            parse_gate(g, source="--citebench-gate") for g in self.options.gates
        ] + [
            parse_gate(g, source="pyproject.toml [tool.citebench]")
            for g in self.options.pyproject_gates
        ]
        self.suites: dict[str, Suite] = {}
        if not self.is_worker:
            self._check_gates_at_start()
            self._check_environment()
        self.records: list[dict[str, Any]] = []
        self.aggregates: list[Aggregate] = []
        self.gate_results: list[GateResult] = []
        self.unmatched_gates: list[Gate] = []
        self._engine: Engine | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._prepared = False
        self._gc_thresholds: tuple[int, int, int] | None = None
        self._recorder: Recorder | None = None
        self._futures: dict[str, concurrent.futures.Future[ItemResult]] = {}
        self._writer: ResultsWriter | None = None
        self._queue_owner: Any = None
        self._queue_checked = False
        self._derived: dict[tuple[str, str], Sequence[Derived]] = {}
        self.session: pytest.Session | None = None
        # A signal held while the summary is written (plugin._hold_sigterm): the run exits 2.
        self.held_signal: int | None = None
        self.error_count = 0
        # Every item record of --citebench-resume, and nodeid -> finished record (errors are
        # not finished).
        self._resume_items: list[dict[str, Any]] = []
        self.resumed: dict[str, dict[str, Any]] = self._load_resume()
        self.resumed_replayed = False
        # --citebench-shard: item records this shard owes (its cases plus the resumed ones).
        self.shard_expected: int | None = None
        # --citebench-baseline: item records of the baseline (controller only) and the result.
        self.baseline_records: list[dict[str, Any]] = self._load_baseline()
        self.comparison: Comparison | None = None
        self.written_reports: list[tuple[str, Path]] = []
        # Resumed records this run did again: made under another suite or scorer version.
        self.stale_resumed: dict[str, str] = {}
        # Why the run must stop now (the results file cannot be written), and what could not be
        # written once it was over (the aggregates, a report): each is one error, exit non-zero.
        self.stop_reason: str | None = None
        self.output_errors: list[str] = []
        if not self.is_worker:
            self._check_output_paths()
            # Last: nothing after it may fail, or the file would stay locked for nothing.
            self._writer = self._open_results()

    def _check_output_paths(self) -> None:
        """Before any model call: no output overwrites an input (a baseline given as the results
        file lost its records), no two outputs share a file, and every output can be created."""
        opts = self.options
        inputs = [("--citebench-baseline", opts.baseline), ("--citebench-resume", opts.resume)]
        outputs = [
            ("--citebench-results", opts.results),
            ("--citebench-html", opts.html),
            ("--citebench-markdown", opts.markdown),
        ]
        from pytest_citebench.results.files import FileUsageError, check_files

        try:
            # Resuming into its own results file is allowed: it is kept whole (ResultsWriter keep).
            check_files(inputs, outputs, allow={("--citebench-results", "--citebench-resume")})
        except FileUsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        for flag, path in outputs:
            if path is None:
                continue
            if path.is_dir():
                raise pytest.UsageError(f"{flag} {path} is a folder; pass a file path")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise pytest.UsageError(
                    f"{flag} {path}: its folder cannot be created ({exc.strerror or exc}); "
                    "pass a writable path"
                ) from None
            target = path if path.exists() else path.parent
            if not os.access(target, os.W_OK):
                raise pytest.UsageError(f"{flag} {path}: not writable; pass a writable path")
        self._check_cassette_folder()

    def _check_cassette_folder(self) -> None:
        """Recording into a folder that cannot take a cassette would pay for every answer and
        keep none: a usage error before the first call. (A disk that fills up mid-run is
        caught when a cassette is saved: ``Recorder.use``.)"""
        if self.options.record == "none" or all(m.is_local for m in self.models):
            return
        root = self.options.cassettes
        if root.exists() and not root.is_dir():
            raise pytest.UsageError(f"--citebench-cassettes {root} is a file; pass a folder")
        existing = next((p for p in (root, *root.parents) if p.exists()), root)
        if not os.access(existing, os.W_OK):
            raise pytest.UsageError(
                f"cannot save cassettes in {root}: {existing} is not writable; make it writable "
                "or pass --citebench-cassettes DIR (recording would pay for answers it cannot "
                "keep)"
            )

    def _open_results(self) -> ResultsWriter | None:
        """The results file, opened and locked at start (see ``ResultsWriter``), and emptied
        only once the items run (``start_results``)."""
        path = self.options.results
        if path is None or self.config.option.collectonly:
            return None
        from pytest_citebench.jsonl import FileBusy
        from pytest_citebench.results.files import ResultsWriter

        resume = self.options.resume
        keep = resume is not None and same_file(path, resume)
        try:
            # Resuming into its own file: the records read by _load_resume, not read again.
            return ResultsWriter(path, keep=keep, kept=self._resume_items if keep else None)
        except FileBusy:
            raise pytest.UsageError(
                f"--citebench-results {path}: another pytest --citebench run is writing this "
                "file (their records would interleave); wait for it to end or pass another path"
            ) from None
        except OSError as exc:
            raise pytest.UsageError(
                f"--citebench-results {path}: cannot open it for writing "
                f"({exc.strerror or exc}); pass a writable path"
            ) from None

    def _check_workers(self) -> None:
        """Budgets are split between xdist workers (``share``): each needs a slot of the run's
        concurrency and of every model's own. A one-slot local server cannot be shared by two
        workers without two requests in flight, so that is a usage error, not a silent doubling."""
        workers = xdist_workers(self.config)
        if workers < 2 or self.options.record == "none":
            return  # a replay reaches no server: nothing to protect
        if self.options.concurrency < workers:
            raise pytest.UsageError(
                f"-n {workers} with --citebench-concurrency {self.options.concurrency}: the "
                "concurrency is split between the workers, so it must be at least the number of "
                f"workers; raise it or use -n {self.options.concurrency}"
            )
        for name in self.options.models:
            profile = self.options.profiles.get(name)
            limit = getattr(profile, "concurrency", None)
            if limit is not None and limit < workers:
                raise pytest.UsageError(
                    f"-n {workers} with --citebench-model {name}, whose profile serves "
                    f"{limit} request(s) at a time: its concurrency is split between the "
                    f"workers, so use -n {limit} or fewer (-n 0 runs it in one process)"
                )

    def _check_gates_at_start(self) -> None:
        """Controller, before any model call: every gate must name a suite and task that exist
        (``gates.check_known``), and the gates of the suites this run collects are added now.

        The manifests' gates are added here and not only as suites are collected because under
        xdist the controller collects nothing: its gates would silently be the CLI's alone.
        """
        from pytest_citebench.results.gates import GateError, check_known
        from pytest_citebench.suites import SuiteError, discover, load_manifest

        config = self.config
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            here = Path(config.invocation_params.dir)
            collected = [here / arg.split("::")[0] for arg in config.args]
        else:
            collected = list(self.options.suites)
        # A suite reached through a symlink is collected under the link's path: compare both
        # the paths as given and as resolved, and load the manifest by the path pytest uses,
        # so its gates match at -n 0, under xdist and in merge alike.
        collected = [p.absolute() for p in collected if p.exists()]
        inside = [*collected, *(p.resolve() for p in collected)]
        tasks_by_suite: dict[str, set[str]] = {}
        complete = True  # a manifest that cannot be read: its suite's name is unknown
        seen: set[Path] = set()
        for root in [*self.options.suites, *collected]:
            for path in discover(root) if root.exists() else []:
                path = path.absolute()
                if path.resolve() in seen:
                    continue
                seen.add(path.resolve())
                try:
                    manifest = load_manifest(path)
                except SuiteError:
                    complete = False  # collection reports it as an invalid suite
                    continue
                tasks_by_suite.setdefault(manifest.name, set()).update(manifest.tasks)
                if not any(p.is_relative_to(c) for p in (path, path.resolve()) for c in inside):
                    continue
                for spec in manifest.gates:
                    try:
                        gate = parse_gate(
                            spec, source=str(manifest.manifest_file), suite=manifest.name
                        )
                    except GateError:
                        continue  # collection reports it as an invalid suite
                    if gate not in self.gates:
                        self.gates.append(gate)
        if complete:
            check_known(self.gates, tasks_by_suite)

    def _check_environment(self) -> None:
        """Settings read from the environment fail the run once, here, not once per item."""
        from pytest_citebench import registry

        problems = [
            problem
            for paper in registry.papers()
            if paper.environment_problems is not None
            for problem in paper.environment_problems()
        ]
        if problems:
            raise pytest.UsageError(
                "citebench: bad environment settings:\n  " + "\n  ".join(problems)
            )

    def _model(self, name: str) -> Model:
        """The model a ``--citebench-model`` name stands for: its profile with the command line
        over it, or a plain litellm name with the run's settings."""
        opts = self.options
        replay_only = opts.record == "none"
        from pytest_citebench.models.answers import PREFIX

        if name.startswith(PREFIX):
            return self._answers_model(name)
        profile = opts.profiles.get(name)
        if profile is None:
            return Model(
                name,
                opts.params,
                opts.api_base,
                opts.retry,
                replay_only=replay_only,
                system_role=opts.system_role or "system",
                budget=self.budget,
            )
        cli, base = opts.cli, opts.base_params

        def pick(key: str, default: Any) -> Any:
            if key in cli:
                return cli[key]
            value = getattr(profile, key)
            return default if value is None else value

        extra = {**dict(base.extra), **profile.params, **cli.get("params", {})}
        params = SamplingParams(
            temperature=float(pick("temperature", base.temperature)),
            max_tokens=int(pick("max_tokens", base.max_tokens)),
            top_p=float(pick("top_p", base.top_p)),
            extra=tuple(extra.items()),
        )
        retry = RetryPolicy(
            retries=int(pick("retries", opts.base_retry.retries)),
            timeout=float(pick("timeout", opts.base_retry.timeout)),
        )
        return Model(
            name,
            params,
            cli.get("api_base", profile.api_base),
            retry,
            replay_only=replay_only,
            litellm_model=profile.model,
            system_role=opts.system_role or profile.system_role,
            concurrency=profile.concurrency,
            needs_key=profile.needs_key,
            budget=self.budget,
        )

    def _answers_model(self, name: str) -> Model:
        """``answers:FILE``: a bad file is one usage error naming ``file:line``, before any item."""
        from pytest_citebench.models.answers import (
            PREFIX,
            AnswersFileError,
            AnswersModel,
            load_answers,
        )

        given = name[len(PREFIX) :]
        try:
            book = load_answers(Path(self.config.invocation_params.dir) / given, shown=given)
        except AnswersFileError as exc:
            raise pytest.UsageError(f"--citebench-model {name}: {exc}") from None
        return AnswersModel(name, self.options.params, needs_key=False, book=book)

    def _check_keys(self, models: list[Model]) -> None:
        """Recording with a provider key missing is one usage error naming the variable, before
        any call (litellm would send the call and retry "missing credentials" as a 500)."""
        if self.options.record == "none":
            return
        from pytest_citebench.models.litellm_backend import missing_key

        for model in models:
            if model.is_local or not model.needs_key or "api_key" in dict(model.params.extra):
                continue
            missing = missing_key(model.litellm_model or model.name, model.api_base)
            if missing:
                raise pytest.UsageError(
                    f"--citebench-model {model.name}: recording needs the provider's key in "
                    f"${missing}, which is not set. Export it (it never reaches a cassette), or "
                    "replay the committed cassettes without --citebench-record."
                )

    def _check_prices(self, models: list[Model]) -> None:
        """A cost cap on a recording that litellm cannot price would cap nothing (it once let
        12M tokens through a 1e-6 cap): one usage error naming the model and the two ways out,
        before any call."""
        if self.options.max_cost is None or self.options.record == "none":
            return
        from pytest_citebench.models.litellm_backend import priced

        for model in models:
            if model.is_local or priced(
                model.litellm_model or model.name, dict(model.params.extra)
            ):
                continue
            raise pytest.UsageError(
                f"--citebench-max-cost {self.options.max_cost:g} with --citebench-model "
                f"{model.name}: litellm has no price for {model.litellm_model or model.name}, so "
                "the cap could not see what the run spends. Give its price per token "
                "(--citebench-param input_cost_per_token=USD --citebench-param "
                "output_cost_per_token=USD, or its profile's params), or drop the cap and bound "
                "the run with --citebench-max-tokens and -k/--citebench-task instead."
            )

    def _build_models(self) -> list[Model]:
        from pytest_citebench.models import Budget

        slot = worker_slot(self.config)
        max_cost = self.options.max_cost
        if slot is not None:
            # One run-wide budget, split between the workers like the concurrency.
            index, count = slot
            self.options = dataclasses.replace(
                self.options, concurrency=max(1, share(self.options.concurrency, index, count))
            )
            if max_cost is not None:
                max_cost = max_cost / count
        self.budget = Budget(max_cost)
        models: list[Model] = []
        plain = [self._model(name) for name in self.options.models]
        if slot is not None:
            plain = [
                dataclasses.replace(m, concurrency=max(1, share(m.concurrency, *slot)))
                if m.concurrency is not None
                else m
                for m in plain
            ]
        self._check_keys(plain)
        if not self.is_worker:
            self._check_prices(plain)
        for model in plain:
            for rag in self.options.rag or ["none"]:
                if rag == "none":
                    models.append(model)
                else:
                    from pytest_citebench.models.rag import RagModel

                    models.append(RagModel.wrap(model, rag, self.options.rag_k))
        return models

    def derive(self, suite: Suite, variant: Variant) -> Sequence[Derived]:
        """A derived suite, computed once per run (a paper may cache it on disk too)."""
        key = (suite.name, variant.name)
        if key not in self._derived:
            cache = Path(self.config.rootpath) / ".citebench" / "cache"
            self._derived[key] = variant.derive(suite.items, cache)
        return self._derived[key]

    # -- collection ---------------------------------------------------------------------------
    def add_suite(self, suite: Suite) -> None:
        """A duplicate name or a bad gate is a ``SuiteError``: it fails that suite, not the run."""
        if (
            suite.name in self.suites
            and self.suites[suite.name].manifest.directory != suite.manifest.directory
        ):
            from pytest_citebench.suites import SuiteError

            raise SuiteError(
                suite.manifest.manifest_file,
                f"suite name {suite.name!r} is already used by "
                f"{self.suites[suite.name].manifest.manifest_file}; rename one of them",
                field="name",
            )
        self.suites[suite.name] = suite
        from pytest_citebench.results.gates import GateError

        for spec in suite.manifest.gates:
            try:
                gate = parse_gate(spec, source=str(suite.manifest.manifest_file), suite=suite.name)
            except GateError as exc:
                from pytest_citebench.suites import SuiteError

                raise SuiteError(suite.manifest.manifest_file, str(exc), field="gates") from None
            if gate not in self.gates:
                self.gates.append(gate)

    def wants_task(self, task: str) -> bool:
        """``--citebench-task`` filters at collection, so unwanted tasks make no test at all."""
        return not self.options.tasks or task in self.options.tasks

    def make_job(
        self, nodeid: str, item: Sample, task: Task, model: Model, manifest: Manifest
    ) -> Job:
        """Built at collection so ``--collect-only --citebench-estimate`` can dry-run it."""
        corpus = str(manifest.corpus_file) if manifest.corpus_file else None
        return Job(nodeid, item, task, model, manifest.version, corpus, self.options.cassettes)

    # -- running ------------------------------------------------------------------------------
    @functools.cached_property
    def runs_inline(self) -> bool:
        """Replay of remote models only: each case runs on pytest's thread when its test runs.

        Why: nothing in a replay waits on the network (vcrpy refuses what it has not recorded),
        so running cases ahead on the engine thread overlaps nothing; it only made two threads
        take turns at the GIL and hand every result across. Local baselines keep the engine:
        their encoders release the GIL."""
        return self.options.record == "none" and all(not m.is_local for m in self.models)

    def _run_inline(self, job: Job) -> ItemResult:
        self._prepare()
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        task = self._loop.create_task(run_item(job, self._recorder))
        try:
            return self._loop.run_until_complete(task)
        except BaseException:  # Ctrl-C mid-case: leave no task pending on the loop
            task.cancel()
            with contextlib.suppress(BaseException):
                self._loop.run_until_complete(task)
            raise

    def _prepare(self) -> None:
        """Once, before the first case: litellm imported, vcrpy patched, nltk loaded."""
        if self._prepared:
            return
        self._prepared = True
        if any(not m.is_local for m in self.models):
            from pytest_citebench.models.litellm_backend import litellm
            from pytest_citebench.recording import Recorder

            litellm()  # import once, here, not inside the first timed call
            self._recorder = Recorder(self.options.cassettes, self.options.record)
            self._recorder.activate()
            from pytest_citebench.recording import add_secrets, secret_param_values

            # Keys passed as parameters (an api_key, a token in extra_headers) are scrubbed
            # from every printed text like keys in the environment.
            add_secrets([s for m in self.models for s in secret_param_values(dict(m.params.extra))])
        from pytest_citebench.metrics.text import tokenize

        tokenize("warm up")  # imports nltk here, not on the engine thread mid-run
        # Everything imported so far lives until exit: keep the collector from walking it
        # again and again (it cost ~2 s at shutdown of a 1,000-item live run).
        gc.collect()
        gc.freeze()

    def _start(self) -> Engine:
        if self._engine is None:
            self._prepare()
            self._engine = Engine(self.options.concurrency)
        return self._engine

    def submit(self, items: Sequence[pytest.Item]) -> None:
        """Start our cases not yet started (others are ignored); the engine starts on the first."""
        if self.runs_inline:
            return
        engine = None
        for item in items:
            # Our cases carry their job (items.CaseItem); other tests in the run do not.
            job = getattr(item, "job", None)
            if isinstance(job, Job) and item.nodeid not in self._futures:
                engine = engine or self._start()
                model = job.model
                self._futures[item.nodeid] = engine.submit(
                    functools.partial(run_item, job, self._recorder),
                    key=model.name,
                    limit=model.concurrency,
                )

    def prefetch(self, session: pytest.Session) -> None:
        """Submit every item this process will run: all of them, or on an xdist worker, the ones
        already queued for it (refreshed as each test starts)."""
        if not self.is_worker:
            self.submit(session.items)

    def _prefetch_worker_queue(self, session: pytest.Session) -> None:
        if not self._queue_checked:
            self._queue_checked = True
            self._queue_owner = xdist_queue(self.config)
        owner = self._queue_owner
        if owner is None:
            return
        window = max(64, 4 * self.options.concurrency)
        try:
            with owner.torun.lock() as queue:
                indices = [i for i in list(queue)[:window] if isinstance(i, int)]
        except Exception:  # xdist internals changed: fall back to one item at a time
            self._queue_owner = None
            return
        next_index = getattr(owner, "nextitem_index", None)
        if isinstance(next_index, int):
            indices.insert(0, next_index)
        self.submit([session.items[i] for i in indices if 0 <= i < len(session.items)])

    def result_for(self, item: pytest.Item) -> ItemResult:
        """Block on the case's result, submitting it (and a worker's queue) if not yet running."""
        job = getattr(item, "job", None)
        if self.runs_inline and isinstance(job, Job):
            return self._run_inline(job)
        if self.is_worker:
            self._prefetch_worker_queue(item.session)
        self.submit([item])
        return self._futures.pop(item.nodeid).result()

    def tune_gc(self) -> None:
        """``GC_THRESHOLDS`` from here until ``close``; on every process, the controller too (it
        keeps every record and parses every report)."""
        if self._gc_thresholds is None:
            self._gc_thresholds = gc.get_threshold()
            gc.set_threshold(*GC_THRESHOLDS)

    def close(self) -> None:
        """Stop the engine and vcrpy; the results writer stays open until ``finish``."""
        if self._gc_thresholds is not None:
            gc.set_threshold(*self._gc_thresholds)
            self._gc_thresholds = None
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        if self._recorder is not None:
            self._recorder.deactivate()
            self._recorder = None

    def start_results(self) -> None:
        """The items are about to run: the results file, locked since configure but left as it
        was (a run that failed before this point, a usage or collection error, must not empty
        it), is emptied now, unless the run resumes into it."""
        if self._writer is None:
            return
        from pytest_citebench.results.files import ResultsWriteError

        try:
            self._writer.start()
        except ResultsWriteError as exc:
            self._writer = None
            self.stop_reason = f"citebench: {exc}"

    def close_results(self) -> None:
        """For a run that never reached ``finish``: what was written stays, for resume."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # -- controller: records, aggregates, gates -----------------------------------------------
    def _load_resume(self) -> dict[str, dict[str, Any]]:
        path = self.options.resume
        if path is None:
            return {}
        if not path.is_file():
            raise pytest.UsageError(f"--citebench-resume {path}: no such results file")
        from pytest_citebench.results.files import read_results

        try:
            items, _ = read_results(path)
        except ValueError as exc:
            raise pytest.UsageError(f"--citebench-resume: {exc}") from None
        self._resume_items = items  # all of them, errors too: ResultsWriter keeps them
        return {r["nodeid"]: r for r in items if r.get("outcome") != "error" and r.get("nodeid")}

    def replay_resumed(self, nodeids: list[str]) -> None:
        """Finished items of the resumed file that this run selected count as if they had just
        run (controller only): same records, same aggregates, written to the new results file
        (unless that file is the resumed one, which holds them already)."""
        self.resumed_replayed = True
        write = not (self._writer is not None and self._writer.keep)
        for nodeid in nodeids:
            self.add_record(self.resumed[nodeid], write=write)

    def stale_reason(self, record: dict[str, Any], job: Job) -> str | None:
        """Why a resumed record cannot stand for this run's item: its answer was scored against
        another suite version (other golds) or under other scoring rules. Such items run again."""
        from pytest_citebench.api import LEGACY_SCORER_VERSION, SCORER_VERSION

        version = record.get("suite_version")
        if version != job.suite_version:
            return f"suite {job.item.suite} v{version} -> v{job.suite_version}"
        scorer = str(record.get("scorer_version") or LEGACY_SCORER_VERSION)
        if scorer != SCORER_VERSION:
            return f"scorer {scorer} -> {SCORER_VERSION}"
        return None

    def should_stop(self) -> str | None:
        """Why to stop the run: the results file cannot be written (more calls would be paid
        for and lost), a cassette cannot be saved, or errors passed ``--citebench-max-errors``
        (the provider is down, and more calls would only add errors)."""
        if self.stop_reason is not None:
            return self.stop_reason
        limit = self.options.max_errors
        if limit is not None and self.error_count > limit:
            return (
                f"citebench: {self.error_count} items ended in an error, more than "
                f"--citebench-max-errors {limit}; the provider looks down"
            )
        return None

    def add_record(
        self, record: dict[str, Any], line: str | None = None, *, write: bool = True
    ) -> None:
        """Written to the results file as it arrives, so an interrupted run can be resumed.
        ``line``: the record as ``jsonl.dumps`` wrote it (a case's report carries it), written
        as it is; ``write=False``: the file holds it already (a resumed record, same file)."""
        from pytest_citebench.errors import STOPPING_REASONS

        self.records.append(record)
        if record.get("outcome") == "error":
            self.error_count += 1
            if record.get("reason") in STOPPING_REASONS and self.stop_reason is None:
                self.stop_reason = f"citebench: {str(record.get('error')).splitlines()[0]}"
        if self._writer is None or not write:
            return
        from pytest_citebench.results.files import ResultsWriteError

        try:
            if line is None:
                self._writer.write(record)
            else:
                self._writer.write_line(line)
        except ResultsWriteError as exc:
            self._writer = None
            self.stop_reason = f"citebench: {exc}"

    def finish(self) -> int:
        """Aggregate, check gates, append aggregates to the results file; returns failed gates."""
        from pytest_citebench.results.aggregate import aggregate
        from pytest_citebench.results.gates import evaluate

        self.aggregates = aggregate(self.records)
        self.gate_results, self.unmatched_gates = evaluate(self.gates, self.aggregates)
        if self._writer is not None:
            from pytest_citebench.results.files import ResultsWriteError

            tail = [agg.to_record() for agg in self.aggregates]
            if self.options.shard is not None and self.shard_expected is not None:
                tail.append(self.shard_record())
            writer, self._writer = self._writer, None
            try:
                writer.finish(self.records, tail)
            except ResultsWriteError as exc:
                self.output_errors.append(str(exc))
        return sum(not r.passed for r in self.gate_results)

    def shard_record(self) -> dict[str, Any]:
        """What ``merge`` needs to tell a complete set of shards from a partial one: the spec and
        how many item records this shard owed. Written last, so a shard killed before the end
        has no such record and its file is flagged at merge."""
        assert self.options.shard is not None
        return {
            "type": "shard",
            "shard": self.options.shard.spec,
            "index": self.options.shard.index,
            "total": self.options.shard.total,
            "expected": self.shard_expected,
        }

    def error_counts(self) -> dict[str, int]:
        """Errored items per model: the summary's red ERROR lines and the verdict count them."""
        counts: dict[str, int] = {}
        for record in self.records:
            if record["outcome"] == "error":
                counts[record["model"]] = counts.get(record["model"], 0) + 1
        return counts

    # -- controller: baseline regression and reports (results/compare.py, reports/) -----------
    def _load_baseline(self) -> list[dict[str, Any]]:
        """Read the baseline at start-up, so a wrong path fails before any model is called."""
        path = self.options.baseline
        if self.options.tolerance < 0:
            raise pytest.UsageError("--citebench-tolerance must be >= 0")
        if path is None or self.is_worker:
            return []
        if not path.is_file():
            raise pytest.UsageError(
                f"--citebench-baseline {path}: no such results file "
                "(make one with: python -m pytest_citebench baseline promote RESULTS)"
            )
        from pytest_citebench.results.files import read_results

        try:
            items, _ = read_results(path)
        except ValueError as exc:
            raise pytest.UsageError(f"--citebench-baseline: {exc}") from None
        return items

    def sampling_line(self) -> str:
        """The sampling each model really used (a profile has its own), once when all agree."""
        from pytest_citebench.recording import redact_params

        def describe(p: SamplingParams) -> str:
            text = f"temperature {p.temperature:g}, top_p {p.top_p:g}, max_tokens {p.max_tokens}"
            # --citebench-param may carry headers with keys: never into a report or terminal.
            return text + (f", {redact_params(dict(p.extra))}" if p.extra else "")

        # A citebench/* baseline retrieves deterministically: it reads no sampling setting,
        # so printing "temperature 1" for it would claim a setting that does nothing.
        described = {
            m.name: "no sampling (deterministic offline baseline)"
            if m.is_local
            else describe(m.params)
            for m in self.models
        }
        if len(set(described.values())) <= 1:
            return next(iter(described.values()), describe(self.options.params))
        return "; ".join(f"{name}: {text}" for name, text in described.items())

    def command_settings(self) -> list[tuple[str, str]]:
        """The models and sampling of this run as flags, for a printed command that must ask
        for the same thing whatever pyproject.toml says by then. A profile's sampling is its
        own, so it is not written out (the profile name carries it)."""
        opts = self.options
        out = [("--citebench-model", name) for name in opts.models]
        if opts.api_base:
            out.append(("--citebench-api-base", opts.api_base))
        if not any(name in opts.profiles for name in opts.models):
            p = opts.params
            out += [
                ("--citebench-temperature", f"{p.temperature:g}"),
                ("--citebench-top-p", f"{p.top_p:g}"),
                ("--citebench-max-tokens", str(p.max_tokens)),
            ]
        return out

    def report_settings(self) -> list[tuple[str, str]]:
        """What the run was, for the reports' header (no clock: reports are reproducible)."""
        opts = self.options
        sampling = self.sampling_line()
        return [
            ("models", ", ".join(m.name for m in self.models)),
            ("record mode", opts.record),
            ("sampling", sampling),
            ("shard", opts.shard.spec if opts.shard is not None else ""),
            ("baseline", str(opts.baseline) if opts.baseline is not None else ""),
        ]

    def finish_reports(self) -> int:
        """After ``finish``: compare with the baseline, write the HTML / Markdown reports;
        returns the number of metrics that regressed (they fail the run like failed gates)."""
        if self.options.baseline is not None:
            from pytest_citebench.results.compare import compare

            self.comparison = compare(
                self.records,
                self.baseline_records,
                tolerance=self.options.tolerance,
                baseline=str(self.options.baseline),
                correction=self.options.correction,
            )
        if self.options.html is not None or self.options.markdown is not None:
            from pytest_citebench.reports.data import ReportData

            data = ReportData(
                records=self.records,
                aggregates=self.aggregates,
                gate_results=self.gate_results,
                unmatched_gates=self.unmatched_gates,
                comparison=self.comparison,
                settings=self.report_settings(),
                show=self.options.show,
            )
            self._write_reports(data)
        return len(self.comparison.failures) if self.comparison is not None else 0

    def _write_reports(self, data: Any) -> None:
        """Each report on its own: a full disk or a device that refuses writes is one error
        naming the file (the run then fails), not an INTERNALERROR, and the other still comes."""
        from pytest_citebench.reports.output import write_reports

        for flag, kwargs in (
            ("--citebench-html", {"html": self.options.html}),
            ("--citebench-markdown", {"markdown": self.options.markdown}),
        ):
            path = next(iter(kwargs.values()))
            if path is None:
                continue
            try:
                self.written_reports += write_reports(data, **kwargs)
            except OSError as exc:
                self.output_errors.append(
                    f"cannot write {flag} {path}: {exc.strerror or exc}; free space or pass "
                    "another path (the results file has every record)"
                )
