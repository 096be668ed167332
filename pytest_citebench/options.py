"""The run's settings, resolved once: the command line first, then ``[tool.citebench]`` in
pyproject.toml, then defaults; a model profile may override some of them per model.

One lookup for the core and for every paper's own options, so a paper's setting can be put in
pyproject.toml exactly like a core one, and a malformed file is the same clear usage error.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_citebench.models import DEFAULT_MODEL, RetryPolicy, SamplingParams

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
    """The option ``name`` (its dest) if given, else ``[tool.citebench] key``, else ``default``."""
    value = config.getoption(name)
    if value is None and key is not None:
        value = tool_table(Path(config.rootpath)).get(key)
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

    @classmethod
    def from_config(cls, config: pytest.Config) -> Options:
        """Bad params, gates, profiles, correction or shard: a usage error here, before any item."""
        root = Path(config.rootpath)
        table = tool_table(root)

        def opt(name: str, key: str | None = None, default: Any = None) -> Any:
            value = config.getoption(name)
            if value is None and key is not None:
                value = table.get(key)
            return default if value is None else value

        extra = []
        # The command line's KEY=VALUE pairs; [tool.citebench] params is a table, added below
        # (iterating it as pairs read its keys as malformed options).
        for pair in config.getoption("citebench_param") or []:
            if "=" not in pair:
                raise pytest.UsageError(f"--citebench-param {pair!r}: expected KEY=VALUE")
            key, value = pair.split("=", 1)
            extra.append((key.strip(), _parse_value(value.strip())))
        if table.get("params") is not None and not isinstance(table.get("params"), dict):
            raise pytest.UsageError("[tool.citebench] params must be a table of litellm arguments")
        if isinstance(table.get("params"), dict):
            extra = list(table["params"].items()) + extra
        params = SamplingParams(
            temperature=float(opt("citebench_temperature", "temperature", 1.0)),
            max_tokens=int(opt("citebench_max_tokens", "max_tokens", 256)),
            top_p=float(opt("citebench_top_p", "top_p", 0.95)),
            extra=tuple(extra),
        )
        retry = RetryPolicy(
            retries=int(opt("citebench_retries", "retries", 2)),
            timeout=float(opt("citebench_timeout", "timeout", 120.0)),
        )
        cli = {
            key: config.getoption(f"citebench_{key}")
            for key in ("temperature", "top_p", "max_tokens", "api_base", "retries", "timeout")
            if config.getoption(f"citebench_{key}") is not None
        }
        cli["params"] = {}
        for pair in config.getoption("citebench_param") or []:
            key, _, value = pair.partition("=")
            cli["params"][key.strip()] = _parse_value(value.strip())
        base_params = SamplingParams(
            temperature=float(table.get("temperature", 1.0)),
            max_tokens=int(table.get("max_tokens", 256)),
            top_p=float(table.get("top_p", 0.95)),
            extra=tuple((table.get("params") or {}).items())
            if isinstance(table.get("params"), dict)
            else (),
        )
        base_retry = RetryPolicy(
            retries=int(table.get("retries", 2)), timeout=float(table.get("timeout", 120.0))
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
        run_models = config.getoption("citebench_model") or (
            models_table if isinstance(models_table, list) else table.get("default_models")
        )
        max_cost = opt("citebench_max_cost", "max_cost")
        suites = [root / p for p in table.get("suites", ["suites"])]
        gates = table.get("gates", [])
        if not isinstance(gates, list) or not all(isinstance(g, str) for g in gates):
            raise pytest.UsageError("[tool.citebench] gates must be a list of strings")
        return cls(
            models=list(dict.fromkeys(run_models or [DEFAULT_MODEL])),
            api_base=opt("citebench_api_base", "api_base"),
            record=opt("citebench_record", None, "none"),
            cassettes=Path(opt("citebench_cassettes", "cassettes", str(root / "cassettes"))),
            suites=suites,
            gates=list(config.getoption("citebench_gate") or []),
            pyproject_gates=list(gates),
            strict=bool(config.getoption("citebench_strict")),
            results=Path(config.getoption("citebench_results"))
            if config.getoption("citebench_results")
            else None,
            concurrency=int(opt("citebench_concurrency", "concurrency", 16)),
            params=params,
            retry=retry,
            tasks=list(config.getoption("citebench_task") or []),
            show=int(opt("citebench_show", None, 2)),
            max_errors=opt("citebench_max_errors", "max_errors"),
            resume=Path(config.getoption("citebench_resume"))
            if config.getoption("citebench_resume")
            else None,
            rag=list(dict.fromkeys(opt("citebench_rag", "rag", None) or [])),
            rag_k=opt("citebench_rag_k", "rag_k"),
            html=_path_option(config, "citebench_html"),
            markdown=_path_option(config, "citebench_markdown"),
            baseline=_path_option(config, "citebench_baseline")
            or (root / table["baseline"] if isinstance(table.get("baseline"), str) else None),
            tolerance=float(opt("citebench_tolerance", "tolerance", 0.0)),
            correction=_correction(opt("citebench_correction", "correction", "holm")),
            shard=_shard_option(config),
            profiles=profiles,
            cli=cli,
            base_params=base_params,
            base_retry=base_retry,
            system_role=config.getoption("citebench_system_role"),
            max_cost=float(max_cost) if max_cost is not None else None,
        )


def _correction(value: Any) -> str:
    if value not in ("none", "holm", "bh"):
        raise pytest.UsageError(
            f"[tool.citebench] correction = {value!r}: expected 'none', 'holm' or 'bh'"
        )
    return str(value)


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
