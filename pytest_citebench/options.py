"""Where a setting comes from: the command line first, then ``[tool.citebench]`` in pyproject.toml.

One lookup for the core and for every paper's own options, so a paper's setting can be put in
pyproject.toml exactly like a core one, and a malformed file is the same clear usage error.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest


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
