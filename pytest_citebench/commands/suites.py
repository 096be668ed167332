"""``python -m pytest_citebench suites``: the suites a ``pytest --citebench`` with no path would
find here: the installed suite packages (entry-point group ``pytest_citebench.suites``) and the
project's own suite folders, each with its version, items, tasks, package, licence and source.

Why: after ``pip install pytest-citebench`` the suites live in site-packages, where nobody looks;
this says what is there, where each comes from, and which installed suite a project's suite of
the same name replaces (the project's wins a run with no path, ``run/sources.py``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from pytest_citebench.commands import USAGE_ERROR


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--project",
        default=".",
        metavar="DIR",
        help="the project whose suite folders are listed too (default: the current folder; its "
        "[tool.citebench] suites, or its suites/ folder)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per suite, one a line")


def _items(path: Path) -> int:
    """Non-blank lines: a count, not a validation (``validate`` checks every line)."""
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())


def _project_folders(project: Path) -> list[Path]:
    from pytest_citebench.settings import tool_table

    table = tool_table(project)
    names = table.get("suites", ["suites"])
    if not isinstance(names, list):
        names = ["suites"]
    return [project / str(n) for n in names if (project / str(n)).exists()]


@dataclass
class Row:
    """One suite as listed (``--json`` writes these fields)."""

    name: str
    version: int | None
    items: int
    tasks: list[str]
    package: str  # "project", or the distribution and its version
    licence: str
    source: str  # the paper, or why the manifest cannot be read
    where: str
    replaced: bool = False  # an installed suite whose name the project's own suite uses


def _row(manifest: Path, package: str, where: str) -> Row:
    from pytest_citebench.suites import SuiteError, load_manifest

    try:
        m = load_manifest(manifest)
    except SuiteError as exc:
        return Row("?", None, 0, [], package, "", f"invalid: {exc}", where)
    items = _items(m.items_file) if m.items_file.is_file() else 0
    source = m.source
    return Row(
        m.name,
        m.version,
        items,
        list(m.tasks),
        package,
        source.get("licence", ""),
        source.get("paper", ""),
        where,
    )


def _cut(text: str, width: int = 40) -> str:
    """A long licence or paper line, cut for the table (``--json`` has it whole)."""
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def execute(args: argparse.Namespace) -> int:
    from pytest_citebench import registry
    from pytest_citebench.errors import CitebenchError
    from pytest_citebench.reports.table import text_table
    from pytest_citebench.suites import discover

    project = Path(args.project)
    folders = [p.resolve() for p in _project_folders(project)]
    rows = [_row(m, "project", str(m.parent)) for f in folders for m in discover(f)]
    project_names = {r.name for r in rows}
    try:
        installed = registry.installed_suites()
    except CitebenchError as exc:
        print(f"error: {exc}")
        return USAGE_ERROR
    for root in installed:
        package = f"{root.distribution} {root.version}"
        for manifest in discover(root.path):
            if any(manifest.resolve().is_relative_to(f) for f in folders):
                continue  # the project's own folder, installed editable: listed once
            where = "/".join((root.name, *manifest.relative_to(root.path).parts[:-1]))
            row = _row(manifest, package, where)
            row.replaced = row.name in project_names
            rows.append(row)
    if args.json:
        for row in rows:
            print(json.dumps(asdict(row), ensure_ascii=False))
        return 0
    if not rows:
        from pytest_citebench.run.sources import NO_SUITES

        print(NO_SUITES)
        return 1
    table = [
        [
            r.name + (" (replaced by the project's)" if r.replaced else ""),
            "" if r.version is None else str(r.version),
            str(r.items),
            ",".join(r.tasks),
            r.package,
            _cut(r.licence),
            _cut(r.source),
        ]
        for r in rows
    ]
    headers = ["suite", "version", "items", "tasks", "package", "licence", "source"]
    for line in text_table(headers, table, right=(1, 2), rule=True):
        print(line)
    total = sum(r.items for r in rows if not r.replaced)
    print("licence and source are cut; --json gives them whole")
    print(
        f"{len(rows)} suite(s); `pytest --citebench` with no path runs {total} items of them "
        "(each on every task it lists); pick with --citebench-suite NAME (a glob) or -m TASK"
    )
    return 0
