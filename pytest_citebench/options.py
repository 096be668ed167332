"""The run's settings, resolved once: the command line first, then ``[tool.citebench]`` in
pyproject.toml, then defaults; a model profile may override some of them per model.

One lookup for the core and for every paper's own options, so a paper's setting can be put in
pyproject.toml exactly like a core one, and a malformed file is the same clear usage error.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_citebench.models import DEFAULT_MODEL, RetryPolicy, SamplingParams
from pytest_citebench.settings import SETTINGS, SettingError, check

if TYPE_CHECKING:
    from pytest_citebench.models.profiles import Profile
    from pytest_citebench.sharding import Shard


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


def setting(config: pytest.Config, name: str, key: str | None = None, default: Any = None) -> Any:
    """The option ``name`` (its dest) if given, else ``[tool.citebench] key``, else ``default``;
    a key with a ``settings`` spec is checked like a core setting (one usage error)."""
    value = config.getoption(name)
    source = "--" + name.replace("_", "-")
    if value is None and key is not None:
        value = tool_table(Path(config.rootpath)).get(key)
        source = f"{Path(config.rootpath) / 'pyproject.toml'} [tool.citebench] {key}"
    if value is not None and key is not None and key in SETTINGS:
        try:
            value = check(key, value, source=source)
        except SettingError as exc:
            raise pytest.UsageError(str(exc)) from None
    return default if value is None else value


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


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
    # Reports, baseline regression and sharding (reports/, results/compare.py, sharding.py).
    html: Path | None = None
    markdown: Path | None = None
    baseline: Path | None = None
    tolerance: float = 0.0
    correction: str = "holm"
    shard: Shard | None = None
    # Model profiles (models/profiles.py) and the settings a profile may override: the values
    # given on the command line (they win over a profile) and the rest (a profile wins over them).
    profiles: dict[str, Profile] = field(default_factory=dict)
    cli: dict[str, Any] = field(default_factory=dict)
    base_params: SamplingParams = field(default_factory=SamplingParams)
    base_retry: RetryPolicy = field(default_factory=RetryPolicy)
    system_role: str | None = None
    max_cost: float | None = None
    # The terminal's tables: "compact" (no per-stage rows, worst answers per task) or "full".
    tables: str = "compact"

    @classmethod
    def from_config(cls, config: pytest.Config) -> Options:
        """Bad params, gates, profiles, correction or shard: a usage error here, before any item.

        Every value, whatever its source, goes through ``settings.check``: one usage error naming
        the setting and where it came from, never a conversion that crashes or a string iterated
        as a list."""
        root = Path(config.rootpath)
        table = tool_table(root)
        where = f"{root / 'pyproject.toml'} [tool.citebench]"

        def checked(key: str, value: Any, source: str) -> Any:
            try:
                return check(key, value, source=source)
            except SettingError as exc:
                raise pytest.UsageError(str(exc)) from None

        def from_table(key: str, default: Any = None) -> Any:
            value = table.get(key)
            return default if value is None else checked(key, value, f"{where} {key}")

        def from_cli(key: str) -> Any:
            value = config.getoption(f"citebench_{key}")
            return None if value is None else checked(key, value, SETTINGS[key].flag)

        def opt(key: str, default: Any = None, *, in_table: bool = True) -> Any:
            value = from_cli(key)
            if value is None and in_table:
                value = from_table(key)
            return default if value is None else value

        extra = []
        # The command line's KEY=VALUE pairs; [tool.citebench] params is a table, added below
        # (iterating it as pairs read its keys as malformed options).
        for pair in config.getoption("citebench_param") or []:
            if "=" not in pair:
                raise pytest.UsageError(f"--citebench-param {pair!r}: expected KEY=VALUE")
            key, value = pair.split("=", 1)
            extra.append((key.strip(), _parse_value(value.strip())))
        table_params = from_table("params", {})
        extra = list(table_params.items()) + extra
        for key, value in extra:
            # A sampling setting passed as a parameter overrides the checked one: check it too
            # (JSON reads NaN and Infinity), and no parameter may be a non-finite number.
            source = f"--citebench-param {key} (or [tool.citebench] params)"
            if key in ("temperature", "top_p", "max_tokens"):
                checked(key, value, source)
            elif isinstance(value, float) and not math.isfinite(value):
                raise pytest.UsageError(f"{source} = {value!r}: must be a finite number")
        params = SamplingParams(
            temperature=opt("temperature", 1.0),
            max_tokens=opt("max_tokens", 256),
            top_p=opt("top_p", 0.95),
            extra=tuple(extra),
        )
        retry = RetryPolicy(retries=opt("retries", 2), timeout=opt("timeout", 120.0))
        cli = {
            key: from_cli(key)
            for key in ("temperature", "top_p", "max_tokens", "api_base", "retries", "timeout")
            if config.getoption(f"citebench_{key}") is not None
        }
        cli["params"] = {}
        for pair in config.getoption("citebench_param") or []:
            key, _, value = pair.partition("=")
            cli["params"][key.strip()] = _parse_value(value.strip())
        base_params = SamplingParams(
            temperature=from_table("temperature", 1.0),
            max_tokens=from_table("max_tokens", 256),
            top_p=from_table("top_p", 0.95),
            extra=tuple(table_params.items()),
        )
        base_retry = RetryPolicy(
            retries=from_table("retries", 2), timeout=from_table("timeout", 120.0)
        )
        from pytest_citebench.models.profiles import ProfileError, load_profiles

        models_table = table.get("models")
        try:
            profiles = load_profiles(
                models_table if isinstance(models_table, dict) else None,
                source=str(root / "pyproject.toml"),
            )
        except ProfileError as exc:
            raise pytest.UsageError(str(exc)) from None
        if models_table is not None and not isinstance(models_table, dict):
            models_table = from_table("models")  # a list of names (a table holds profiles)
        run_models = (
            checked("models", config.getoption("citebench_model"), "--citebench-model")
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
            params=params,
            retry=retry,
            tasks=list(config.getoption("citebench_task") or []),
            show=opt("show", 2, in_table=False),
            max_errors=opt("max_errors"),
            resume=Path(config.getoption("citebench_resume"))
            if config.getoption("citebench_resume")
            else None,
            rag=list(dict.fromkeys(opt("rag") or [])),
            rag_k=opt("rag_k"),
            html=_path_option(config, "citebench_html"),
            markdown=_path_option(config, "citebench_markdown"),
            baseline=_path_option(config, "citebench_baseline")
            or (root / baseline if baseline is not None else None),
            tolerance=opt("tolerance", 0.0),
            correction=opt("correction", "holm"),
            shard=_shard_option(config),
            profiles=profiles,
            cli=cli,
            base_params=base_params,
            base_retry=base_retry,
            system_role=config.getoption("citebench_system_role"),
            max_cost=opt("max_cost"),
            tables=opt("tables", "compact"),
        )


def _path_option(config: pytest.Config, name: str) -> Path | None:
    value = config.getoption(name)
    return Path(value) if value else None


def _shard_option(config: pytest.Config) -> Shard | None:
    spec = config.getoption("citebench_shard")
    if not spec:
        return None
    from pytest_citebench.sharding import ShardError, parse_shard

    try:
        return parse_shard(spec)
    except ShardError as exc:
        raise pytest.UsageError(str(exc)) from None
