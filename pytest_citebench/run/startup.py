"""Start-up checks: every bad option, gate, key, price, path or environment setting is one usage
error here, on the controller, before any model call (never one error per item, never found
after paying for the run)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_citebench.models import Model
from pytest_citebench.reports.formats import FORMATS
from pytest_citebench.results.gates import Gate, add_manifest_gates
from pytest_citebench.run.workers import xdist_workers
from pytest_citebench.settings import Options


def check_workers(config: pytest.Config, options: Options) -> None:
    """Budgets are split between xdist workers (``share``): each needs a slot of the run's
    concurrency and of every model's own. A one-slot local server cannot be shared by two
    workers without two requests in flight, so that is a usage error, not a silent doubling."""
    workers = xdist_workers(config)
    if workers < 2 or options.record == "none":
        return  # a replay reaches no server: nothing to protect
    if options.concurrency < workers:
        raise pytest.UsageError(
            f"-n {workers} with --citebench-concurrency {options.concurrency}: the "
            "concurrency is split between the workers, so it must be at least the number of "
            f"workers; raise it or use -n {options.concurrency}"
        )
    for name in options.models:
        profile = options.profiles.get(name)
        limit = getattr(profile, "concurrency", None)
        if limit is not None and limit < workers:
            raise pytest.UsageError(
                f"-n {workers} with --citebench-model {name}, whose profile serves "
                f"{limit} request(s) at a time: its concurrency is split between the "
                f"workers, so use -n {limit} or fewer (-n 0 runs it in one process)"
            )


# Providers whose key litellm looks for in one environment variable, and only there
# (tests/run/test_startup_keys.py asks litellm about each): with that variable set, the key is known
# to be there without importing litellm. Why: the import is ~3.5 s of CPU, and under xdist the
# controller makes no call, so it was paying that while both workers started on two cores.
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "cohere": "COHERE_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "xai": "XAI_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY",
}


def key_known_present(model: str) -> bool:
    """True when ``model`` names its provider (``openai/...``) and that provider's one key
    variable is set; False means "ask litellm", never "missing"."""
    provider, slash, _ = model.partition("/")
    variable = KEY_VARIABLES.get(provider) if slash else None
    return bool(variable and (os.environ.get(variable) or "").strip())


def _empty_key(model: str) -> str | None:
    """The provider's key variable when it is set to nothing but blanks (``OPENAI_API_KEY=""``,
    what a fork's pull request gets for a secret): litellm counts such a variable as present."""
    provider, slash, _ = model.partition("/")
    variable = KEY_VARIABLES.get(provider) if slash else None
    if variable and variable in os.environ and not os.environ[variable].strip():
        return variable
    return None


def check_keys(options: Options, models: Sequence[Model]) -> None:
    """Recording with a provider key missing is one usage error naming the variable, before
    any call (litellm would send the call and retry "missing credentials" as a 500)."""
    if options.record == "none":
        return
    for model in models:
        if not model.traits.needs_key or "api_key" in dict(model.params.extra):
            continue
        if key_known_present(model.litellm_model or model.name):
            continue
        empty = _empty_key(model.litellm_model or model.name)
        if empty:
            raise pytest.UsageError(
                f"--citebench-model {model.name}: recording needs the provider's key in "
                f"${empty}, which is set but empty (a fork's pull request gets an empty secret): "
                'every call would fail "missing credentials". Set the key, or replay the '
                "committed cassettes without --citebench-record."
            )
        from pytest_citebench.models.litellm_backend import missing_key

        missing = missing_key(model.litellm_model or model.name, model.api_base)
        if missing:
            raise pytest.UsageError(
                f"--citebench-model {model.name}: recording needs the provider's key in "
                f"${missing}, which is not set. Export it (it never reaches a cassette), or "
                "replay the committed cassettes without --citebench-record."
            )


def check_prices(options: Options, models: Sequence[Model]) -> None:
    """A cost cap on a recording that litellm cannot price would cap nothing (it once let
    12M tokens through a 1e-6 cap): one usage error naming the model and the two ways out,
    before any call."""
    if options.max_cost is None or options.record == "none":
        return
    from pytest_citebench.models.litellm_backend import priced

    for model in models:
        if not model.traits.priced or priced(
            model.litellm_model or model.name, dict(model.params.extra)
        ):
            continue
        raise pytest.UsageError(
            f"--citebench-max-cost {options.max_cost:g} with --citebench-model "
            f"{model.name}: litellm has no price for {model.litellm_model or model.name}, so "
            "the cap could not see what the run spends. Give its price per token "
            "(--citebench-param input_cost_per_token=USD --citebench-param "
            "output_cost_per_token=USD, or its profile's params), or drop the cap and bound "
            "the run with --citebench-max-tokens and -k/--citebench-task instead."
        )


def check_model_options(options: Options, models: Sequence[Model]) -> None:
    """A built-in model's parameter it cannot use (``registry=regg``, ``now_year=abc``), or a
    name none of the run's built-in models reads, is one usage error listing them all, before
    any item (``models/options.py``), never a check silently off or an error per item."""
    from pytest_citebench.models.options import option_problems

    problems = option_problems(models, options)
    if problems:
        raise pytest.UsageError("\n".join(problems))


#: The tasks that call tools, and the fallback that describes the same tools in text.
TOOL_TASKS = {"agentic": "agentic_text"}


def check_tool_use(options: Options, models: Sequence[Model], markexpr: str = "") -> None:
    """A tool-using task asked of a model litellm knows cannot call tools: one usage error
    naming the fallback, never a run of errors or zeros. Asked: by --citebench-task, or by a
    ``-m`` expression that selects the task's marker (``-m agentic``; a run of every task is not
    stopped for one of them). Models litellm does not know (a server of your own, the relay)
    are asked, and a refusal says the same at the item."""
    asked = [t for t in options.tasks if t in TOOL_TASKS] + [
        t for t in TOOL_TASKS if t not in options.tasks and _selects(markexpr, t)
    ]
    remote = [m for m in models if m.traits.records_cassettes]
    if not asked or not remote:
        return
    from pytest_citebench.models.litellm_backend import calls_tools

    for model in remote:
        if calls_tools(model.litellm_model or model.name) is False:
            fallback = TOOL_TASKS[asked[0]]
            raise pytest.UsageError(
                f"--citebench-task {asked[0]}: {model.name} cannot call tools (litellm's model "
                f"map says it has no function calling); run --citebench-task {fallback} "
                "instead: the same tools described in text, one JSON action a reply, parsed"
            )


def _selects(markexpr: str, task: str) -> bool:
    """The ``-m`` expression selects an item marked only with ``task``; a malformed expression
    selects nothing here (pytest reports it)."""
    if not markexpr:
        return False
    from _pytest.mark.expression import Expression

    def marked(name: str, /, **_: str | int | bool | None) -> bool:
        return name == task

    try:
        return bool(Expression.compile(markexpr).evaluate(marked))
    except Exception:  # ParseError in pytest 8, SyntaxError in 9: pytest reports it itself
        return False


def check_gates(paths: Sequence[Path], options: Options, gates: list[Gate]) -> None:
    """Every gate must name a suite and task that exist (``gates.check_known``), and the gates
    of the suites this run collects (``paths``: ``run/sources.py``) are added now.

    The manifests' gates are added here and not only as suites are collected because under
    xdist the controller collects nothing: its gates would silently be the CLI's alone.
    """
    from pytest_citebench.results.gates import check_known
    from pytest_citebench.suites import SuiteError, discover, load_manifest

    collected = list(paths)
    # A suite reached through a symlink is collected under the link's path: compare both
    # the paths as given and as resolved, and load the manifest by the path pytest uses,
    # so its gates match at -n 0, under xdist and in merge alike.
    collected = [p.absolute() for p in collected if p.exists()]
    inside = [*collected, *(p.resolve() for p in collected)]
    tasks_by_suite: dict[str, set[str]] = {}
    complete = True  # a manifest that cannot be read: its suite's name is unknown
    seen: set[Path] = set()
    for root in [*options.suites, *collected]:
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
            if any(p.is_relative_to(c) for p in (path, path.resolve()) for c in inside):
                # A bad gate: collection reports it as an invalid suite.
                add_manifest_gates(gates, manifest, skip_bad=True)
    if complete:
        check_known(gates, tasks_by_suite)


def check_ids(paths: Sequence[Path], options: Options) -> None:
    """Every ``--citebench-id`` (or ``--citebench-ids`` line) must name an item of a suite this
    run collects (``paths``, as ``run/sources.py`` planned them): a usage error here, on the
    controller.

    Why at start: collection checks them too, but under xdist collection runs on the workers,
    where a usage error is an INTERNALERROR on the controller (a typo at ``-n 0`` was a usage
    error, at ``-n 2`` a crash). Suites that cannot be loaded are reported by collection: the
    check is then left to it."""
    from pytest_citebench import registry
    from pytest_citebench.suites import SuiteError, discover, load_suite

    if not options.selection.ids:
        return
    roots = list(paths)  # what this run collects (run/sources.py): installed suites too
    known: set[str] = set()
    for root in roots:
        for path in discover(root) if root.exists() else []:
            try:
                suite = load_suite(path)
            except SuiteError:
                return
            known |= {i.id for i in suite.items}
            known |= {f"{suite.manifest.name}::{i.id}" for i in suite.items}
    # SUITE::ID of a derived suite (reasons/nlp+swap-title::ID) names its base suite's item.
    unknown = [
        i
        for i in options.selection.ids
        if i not in known
        and not (
            "::" in i
            and f"{registry.split_variant(i.split('::', 1)[0])[0]}::{i.split('::', 1)[1]}" in known
        )
    ]
    if unknown:
        from pytest_citebench.run.selection import unknown_ids

        raise pytest.UsageError(unknown_ids(unknown))


def check_environment() -> None:
    """Settings read from the environment fail the run once, here, not once per item."""
    from pytest_citebench import registry

    problems = [
        problem
        for paper in registry.papers()
        if paper.environment_problems is not None
        for problem in paper.environment_problems()
    ]
    if problems:
        raise pytest.UsageError("citebench: bad environment settings:\n  " + "\n  ".join(problems))


def load_baseline(options: Options, *, is_worker: bool) -> list[dict[str, Any]]:
    """Read the baseline at start-up, so a wrong path fails before any model is called."""
    path = options.baseline
    if options.tolerance < 0:
        raise pytest.UsageError("--citebench-tolerance must be >= 0")
    if path is None or is_worker:
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


def check_output_paths(
    options: Options, models: Sequence[Model], *, pyproject: Path | None = None
) -> None:
    """No output overwrites an input (a baseline given as the results file lost its records; an
    answers file, a suite's items or corpus, pyproject.toml or a cassette given as a report was
    replaced without a word), no two outputs share a file, and every output can be created."""
    inputs = [("--citebench-baseline", options.baseline), ("--citebench-resume", options.resume)]
    outputs = [
        ("--citebench-results", options.results),
        *((fmt.option, options.reports.get(fmt.name)) for fmt in FORMATS),
    ]
    from pytest_citebench.results.files import FileUsageError, check_files
    from pytest_citebench.suites import suite_files_around

    reads: list[tuple[str, Path | None]] = [
        *(read for model in models for read in model.input_files()),
        ("the project's pyproject.toml", pyproject),
        *(read for _, path in outputs if path is not None for read in suite_files_around(path)),
    ]
    try:
        # Resuming into its own results file is allowed: it is kept whole (ResultsWriter keep).
        check_files(
            inputs, outputs, allow={("--citebench-results", "--citebench-resume")}, reads=reads
        )
    except FileUsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    cassettes = options.cassettes.resolve()
    for flag, path in outputs:
        if path is not None and path.exists() and path.resolve().is_relative_to(cassettes):
            raise pytest.UsageError(
                f"{flag} {path} is a file in --citebench-cassettes {options.cassettes}: it would "
                f"overwrite a recording; pass a path outside the cassette folder for {flag}"
            )
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
    check_cassette_folder(options, models)


def check_cassette_folder(options: Options, models: Sequence[Model]) -> None:
    """Recording into a folder that cannot take a cassette would pay for every answer and
    keep none: a usage error before the first call. (A disk that fills up mid-run is
    caught when a cassette is saved: ``Recorder.use``.)"""
    if options.record == "none" or not any(m.traits.records_cassettes for m in models):
        return
    root = options.cassettes
    if root.exists() and not root.is_dir():
        raise pytest.UsageError(f"--citebench-cassettes {root} is a file; pass a folder")
    existing = next((p for p in (root, *root.parents) if p.exists()), root)
    if not os.access(existing, os.W_OK):
        raise pytest.UsageError(
            f"cannot save cassettes in {root}: {existing} is not writable; make it writable "
            "or pass --citebench-cassettes DIR (recording would pay for answers it cannot "
            "keep)"
        )
