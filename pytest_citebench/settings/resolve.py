"""The run's settings, resolved once: the command line first, then ``[tool.citebench]`` in
pyproject.toml, then defaults; a model profile may override some of them per model.

One lookup for the core and for every paper's own options, so a paper's setting can be put in
pyproject.toml exactly like a core one, and a malformed file is the same clear usage error.
"""

from __future__ import annotations

import itertools
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_citebench.models import DEFAULT_MODEL, RetryPolicy, SamplingParams
from pytest_citebench.reports.formats import FORMATS
from pytest_citebench.settings.checks import SETTINGS, SettingError, check

if TYPE_CHECKING:
    from pytest_citebench.settings.profiles import Profile
    from pytest_citebench.settings.scope import Selection, Shard


def tool_table(root: Path) -> dict[str, Any]:
    """``[tool.citebench]`` of ``root/pyproject.toml`` (empty when there is none)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise pytest.UsageError(f"{path}: cannot read [tool.citebench]: {exc}") from None
    table = data.get("tool", {}).get("citebench", {})
    return table if isinstance(table, dict) else {}


def _checked(key: str | None, value: Any, source: str) -> Any:
    """``value`` through ``settings.check`` (None and settings without a spec pass as they are),
    a bad one as the usage error pytest prints: the one path for every source."""
    if value is None or key is None or key not in SETTINGS:
        return value
    try:
        return check(key, value, source=source)
    except SettingError as exc:
        raise pytest.UsageError(str(exc)) from None


def _table_source(root: Path, key: str) -> str:
    return f"{root / 'pyproject.toml'} [tool.citebench] {key}"


def setting(config: pytest.Config, name: str, key: str | None = None, default: Any = None) -> Any:
    """The option ``name`` (its dest) if given, else ``[tool.citebench] key``, else ``default``;
    a key with a ``settings`` spec is checked like a core setting (one usage error)."""
    value = _checked(key, config.getoption(name), "--" + name.replace("_", "-"))
    if value is None and key is not None:
        root = project_root(config)
        value = _checked(key, tool_table(root).get(key), _table_source(root, key))
    return default if value is None else value


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


# The core settings read from the command line (``--citebench-KEY``) and from the table; ``show``
# is a flag only; a profile may override the command line's sampling and retry settings.
_PROFILE_KEYS = ("temperature", "top_p", "max_tokens", "api_base", "retries", "timeout")
_FLAGS = (
    *_PROFILE_KEYS,
    *("concurrency", "processes", "max_errors", "max_cost", "show", "rag", "rag_k", "tolerance"),
    *("correction", "tables", "cassettes", "include_suspect"),
)
_TABLE = (
    *(key for key in _FLAGS if key != "show"),
    *("params", "default_models", "suites", "gates", "baseline"),
)


@dataclass
class Options:
    """Every core setting of a run, resolved once, so later code never re-reads pyproject.toml."""

    models: list[str]
    api_base: str | None
    record: str
    cassettes: Path
    suites: list[Path]
    gates: list[str]
    strict: bool
    results: Path | None
    concurrency: int
    params: SamplingParams
    retry: RetryPolicy
    tasks: list[str]
    show: int
    max_errors: int | None = None
    resume: Path | None = None
    rag: list[str] = field(default_factory=list)
    rag_k: int | None = None
    pyproject_gates: list[str] = field(default_factory=list)
    # Reports, baseline regression and sharding (reports/, results/compare.py, run/sharding.py).
    # Report format name -> the file it goes to, for the formats asked for (reports.formats).
    reports: dict[str, Path] = field(default_factory=dict)
    baseline: Path | None = None
    tolerance: float = 0.0
    correction: str = "holm"
    shard: Shard | None = None
    # --citebench-id/--citebench-ids/--citebench-sample (scope.py; run/selection.py applies it).
    selection: Selection = field(default_factory=lambda: _default_selection())
    # Model profiles (profiles.py) and the settings a profile may override: the values
    # given on the command line (they win over a profile) and the rest (a profile wins over them).
    profiles: dict[str, Profile] = field(default_factory=dict)
    cli: dict[str, Any] = field(default_factory=dict)
    base_params: SamplingParams = field(default_factory=SamplingParams)
    base_retry: RetryPolicy = field(default_factory=RetryPolicy)
    system_role: str | None = None
    max_cost: float | None = None
    # The terminal's tables: "compact" (no per-stage rows, worst answers per task) or "full".
    tables: str = "compact"
    # Items with a suspect gold (suites' ``gold_flags``) in the headline numbers too.
    include_suspect: bool = False
    # Processes solving the built-in models' cases beside pytest's (run/offload.py); None: auto.
    processes: int | None = None
    # --citebench-suite: suite name globs (run/sources.py picks the folders they name).
    suite_names: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, config: pytest.Config) -> Options:
        """Bad params, gates, profiles, correction or shard: a usage error here, before any item.

        Every value, whatever its source, goes through ``settings.check``: one usage error naming
        the setting and where it came from, never a conversion that crashes or a string iterated
        as a list."""
        problem = misplaced_root(config)
        if problem is not None:
            raise pytest.UsageError(problem)
        root = project_root(config)
        table = tool_table(root)
        where = f"{root / 'pyproject.toml'} [tool.citebench]"
        # Each source read and checked once: the command line, then the table.
        cli_params: dict[str, Any] = {}
        for pair in config.getoption("citebench_param") or []:
            if "=" not in pair:
                raise pytest.UsageError(f"--citebench-param {pair!r}: expected KEY=VALUE")
            key, value = pair.split("=", 1)
            cli_params[key.strip()] = _parse_value(value.strip())
        given = {
            key: _checked(key, config.getoption(f"citebench_{key}"), SETTINGS[key].flag)
            for key in _FLAGS
        }
        _checked("params", cli_params, "--citebench-param")
        tabled = {key: _checked(key, table.get(key), _table_source(root, key)) for key in _TABLE}

        def from_table(key: str, default: Any = None) -> Any:
            value = tabled[key]
            return default if value is None else value

        def opt(key: str, default: Any = None) -> Any:
            value = given.get(key)
            if value is None:
                value = tabled.get(key)
            return default if value is None else value

        table_params = from_table("params", {})
        params = SamplingParams(
            temperature=opt("temperature", 1.0),
            max_tokens=opt("max_tokens", 256),
            top_p=opt("top_p", 0.95),
            extra=tuple({**table_params, **cli_params}.items()),
        )
        retry = RetryPolicy(retries=opt("retries", 2), timeout=opt("timeout", 120.0))
        # What a profile may not override: the values given on the command line.
        cli = {key: given[key] for key in _PROFILE_KEYS if given[key] is not None}
        cli["params"] = cli_params
        base_params = SamplingParams(
            temperature=from_table("temperature", 1.0),
            max_tokens=from_table("max_tokens", 256),
            top_p=from_table("top_p", 0.95),
            extra=tuple(table_params.items()),
        )
        base_retry = RetryPolicy(
            retries=from_table("retries", 2), timeout=from_table("timeout", 120.0)
        )
        from pytest_citebench.settings.profiles import ProfileError, load_profiles

        models_table = table.get("models")
        try:
            profiles = load_profiles(
                models_table if isinstance(models_table, dict) else None,
                source=str(root / "pyproject.toml"),
            )
        except ProfileError as exc:
            raise pytest.UsageError(str(exc)) from None
        if models_table is not None and not isinstance(models_table, dict):
            # a list of names (a table holds profiles)
            models_table = _checked("models", models_table, _table_source(root, "models"))
        run_models = (
            _checked("models", config.getoption("citebench_model"), "--citebench-model")
            if config.getoption("citebench_model")
            else None
        ) or (models_table if isinstance(models_table, list) else from_table("default_models"))
        suites = [root / p for p in from_table("suites", ["suites"])]
        missing = [str(p) for p in suites if "suites" in table and not p.exists()]
        if missing:
            raise pytest.UsageError(
                f"{where} suites: {', '.join(missing)} does not exist; name suite folders "
                "relative to the project root"
            )
        gates = from_table("gates", [])
        baseline = from_table("baseline")
        return cls(
            models=list(dict.fromkeys(run_models or [DEFAULT_MODEL])),
            api_base=opt("api_base"),
            record=config.getoption("citebench_record") or "none",
            cassettes=Path(opt("cassettes", str(root / "cassettes"))),
            suites=suites,
            gates=list(config.getoption("citebench_gate") or []),
            pyproject_gates=list(gates),
            strict=bool(config.getoption("citebench_strict")),
            results=Path(config.getoption("citebench_results"))
            if config.getoption("citebench_results")
            else None,
            concurrency=opt("concurrency", 16),
            processes=opt("processes"),
            params=params,
            retry=retry,
            tasks=list(config.getoption("citebench_task") or []),
            suite_names=list(config.getoption("citebench_suite") or []),
            show=opt("show", 2),
            max_errors=opt("max_errors"),
            resume=Path(config.getoption("citebench_resume"))
            if config.getoption("citebench_resume")
            else None,
            rag=list(dict.fromkeys(opt("rag") or [])),
            rag_k=opt("rag_k"),
            reports={
                fmt.name: path
                for fmt in FORMATS
                if (path := _path_option(config, fmt.dest)) is not None
            },
            baseline=_path_option(config, "citebench_baseline")
            or (root / baseline if baseline is not None else None),
            tolerance=opt("tolerance", 0.0),
            correction=opt("correction", "holm"),
            shard=_shard_option(config),
            selection=_selection_option(config),
            profiles=profiles,
            cli=cli,
            base_params=base_params,
            base_retry=base_retry,
            system_role=config.getoption("citebench_system_role"),
            max_cost=opt("max_cost"),
            tables=opt("tables", "compact"),
            include_suspect=bool(opt("include_suspect", False)),
        )


def _path_option(config: pytest.Config, name: str) -> Path | None:
    """The path an option names; an empty one (``--citebench-markdown "$GITHUB_STEP_SUMMARY"``
    outside GitHub Actions, where the variable is unset) writes nothing, and says so."""
    value = config.getoption(name)
    if value == "":
        flag = "--" + name.replace("_", "-")
        config.issue_config_time_warning(
            pytest.PytestConfigWarning(
                f"{flag} was given an empty path (an unset variable, such as "
                "$GITHUB_STEP_SUMMARY outside GitHub Actions?): nothing is written for it"
            ),
            stacklevel=2,
        )
    return Path(value) if value else None


def _shard_option(config: pytest.Config) -> Shard | None:
    spec = config.getoption("citebench_shard")
    if not spec:
        return None
    from pytest_citebench.settings.scope import ShardError, parse_shard

    try:
        return parse_shard(spec)
    except ShardError as exc:
        raise pytest.UsageError(str(exc)) from None


def _default_selection() -> Selection:
    from pytest_citebench.settings.scope import Selection

    return Selection()


def _selection_option(config: pytest.Config) -> Selection:
    from pytest_citebench.settings.scope import SelectionError, make_selection

    try:
        return make_selection(
            config.getoption("citebench_id") or [],
            _path_option(config, "citebench_ids"),
            config.getoption("citebench_sample"),
            config.getoption("citebench_seed"),
        )
    except SelectionError as exc:
        raise pytest.UsageError(str(exc)) from None


_CONFIG_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def _configures_pytest(path: Path) -> bool:
    """Whether ``path`` holds pytest configuration, as pytest reads each kind of file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if path.name in ("pytest.ini", ".pytest.ini"):
        return True
    if path.name == "tox.ini":
        return "[pytest]" in text
    if path.name == "setup.cfg":
        return "[tool:pytest]" in text
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return False
    return isinstance(tool, dict) and "pytest" in tool


def _config_above(start: Path) -> Path | None:
    """The configuration file pytest takes for a run rooted at ``start``: the nearest file that
    configures pytest, else the nearest pyproject.toml (pytest's own fallback; a project set up
    with ``[tool.citebench]`` alone is found so)."""
    first_pyproject: Path | None = None
    for folder in (start, *start.parents):
        for name in _CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file():
                if _configures_pytest(candidate):
                    return candidate
                if name == "pyproject.toml" and first_pyproject is None:
                    first_pyproject = candidate
    return first_pyproject


def _positional_paths(config: pytest.Config) -> list[Path]:
    """The existing paths given as arguments (suites, test files), not as options' values."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return []
    here = Path(config.invocation_params.dir)
    paths = [(here / arg.split("::")[0]).absolute() for arg in config.args]
    return [p for p in paths if p.exists()]


def project_root(config: pytest.Config) -> Path:
    """The folder whose ``pyproject.toml [tool.citebench]``, ``suites/`` and ``cassettes/`` the
    run uses.

    pytest's root when it found a configuration file (or was given ``--rootdir``). When it found
    none, its root is a common ancestor of the arguments and the folder the run started in: for
    a suite kept outside the project (``pytest --citebench /shared/suite`` from inside the
    project) that is a folder above both, whose cassettes/ and settings nobody meant. The
    project the run was started in is then the one whose settings apply."""
    root = Path(config.rootpath)
    # A stand-in for pytest's Config that knows only its root (a paper's own tests): that root.
    if getattr(config, "inipath", root) is not None or config.getoption("rootdir", None):
        return root
    found = _config_above(Path(config.invocation_params.dir))
    return found.parent if found is not None else root


def _moving_values(config: pytest.Config) -> list[str]:
    """The options given as ``--flag VALUE`` whose value names an existing path: pytest reads
    such a value as an argument when it decides the root (it does so before any plugin's
    options are known)."""
    args = [str(a) for a in config.invocation_params.args]
    here = Path(config.invocation_params.dir)
    positional = {str(a) for a in config.args} if _positional_paths(config) else set()
    moved = []
    for before, value in itertools.pairwise(args):
        if (
            before.startswith("--")
            and "=" not in before
            and not value.startswith("-")
            and value not in positional
            and (here / value).exists()
        ):
            moved.append(f"{before}={value}")
    return moved


def misplaced_root(config: pytest.Config) -> str | None:
    """Why the run would read the wrong project: pytest found no configuration file, though the
    arguments themselves lead to one, because an option's value that names an existing path
    outside the project ("--citebench-results /tmp/r.jsonl", the last run's file there) moved
    the root; the project's settings (pytest's own and [tool.citebench]), suites and cassettes
    would not be read (the run collected nothing and said only "no tests ran", exit 5).

    None when pytest found its configuration, when no option's value moved the root, and for a
    suite given as an argument outside the project: that is a root pytest chose from the
    arguments, as for any test path, and :func:`project_root` keeps the project's settings."""
    if config.inipath is not None or config.getoption("rootdir", None):
        return None
    positional = _positional_paths(config)
    if positional:
        ancestor = Path(os.path.commonpath([str(p) for p in positional]))
        start = ancestor.parent if ancestor.is_file() else ancestor
    else:
        start = Path(config.invocation_params.dir)
    meant = _config_above(start)
    if meant is None:
        return None
    values = _moving_values(config)
    written = " ".join(values) if values else "--citebench-results=/tmp/r.jsonl"
    return (
        f"pytest took {config.rootpath} as the root directory, not {meant.parent}: an option's "
        "value that names an existing path outside the project moved the root, and the "
        f"project's settings in {meant} would not be read. Write such values with '=' "
        f"({written}), or pass -c {meant}"
    )
