"""Report formats, each declared once, in its renderer's module: a module of this package with a
top-level ``FORMAT = ReportFormat(...)`` is a format. The declaration gives its command-line
options (``--citebench-NAME`` for a pytest run, ``--NAME`` for ``merge``), its label and its
renderer. The plugin, the options, the start-up checks, the session, ``merge`` and
``write_reports`` all read ``FORMATS``, so a new format is its renderer's module alone.

Standard library only, and no renderer is imported to find it: the plugin declares options
before ``--citebench`` is known, so the declarations are read from the modules' source (literal
keyword arguments only) and a renderer is imported when a report is written.
"""

from __future__ import annotations

import ast
import importlib
import io
import sys
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

# What marks a renderer's module; read as text first so only those modules are parsed.
MARKER = "\nFORMAT = ReportFormat("


@dataclass(frozen=True)
class ReportFormat:
    """One report format; ``render`` names the function taking ``ReportData`` to text, in the
    declaring module (discovery makes it ``"module:function"``)."""

    name: str
    label: str  # printed with the path once written: "html report: r.html"
    help: str  # the pytest option's help
    merge_help: str  # merge's option's help
    render: str
    # HTML: the redaction marker is escaped like any other text of the page.
    escape_redacted: bool = False
    # Appended to, never clobbered, when it is $GITHUB_STEP_SUMMARY (shared by a CI step's tools).
    step_summary: bool = False

    @property
    def option(self) -> str:
        return f"--citebench-{self.name}"

    @property
    def dest(self) -> str:
        return f"citebench_{self.name}"

    @property
    def merge_option(self) -> str:
        return f"--{self.name}"

    def renderer(self) -> Callable[[Any], str]:
        module, _, function = self.render.partition(":")
        found: Callable[[Any], str] = getattr(importlib.import_module(module), function)
        return found


class FormatError(Exception):
    """A renderer module whose ``FORMAT`` cannot be read without importing it."""


def declared(path: Path, module: str) -> ReportFormat | None:
    """The format ``path`` declares, or None; ``module`` is its import name."""
    text = "\n" + path.read_text(encoding="utf-8")
    start = text.find(MARKER)
    if start < 0:
        return None
    # Parse the declaration alone (a renderer's whole module costs ~10 ms at every start).
    statement = _statement(text[start + 1 :])
    padding = "\n" * text.count("\n", 0, start)  # so ast's line numbers are the file's
    for node in ast.parse(padding + statement, str(path)).body:
        if not (
            isinstance(node, ast.Assign)
            and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["FORMAT"]
        ):
            continue
        where = f"{path}:{node.lineno}"
        call = node.value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "ReportFormat"
            and not call.args
        ):
            raise FormatError(f"{where}: write FORMAT = ReportFormat(name=..., ...) with keywords")
        known = {f.name for f in fields(ReportFormat)}
        values: dict[str, Any] = {}
        for keyword in call.keywords:
            if keyword.arg not in known:
                raise FormatError(f"{where}: ReportFormat has no field {keyword.arg!r}")
            try:
                values[keyword.arg] = ast.literal_eval(keyword.value)
            except ValueError:
                raise FormatError(
                    f"{where}: {keyword.arg}= must be a literal (FORMAT is read without "
                    "importing the module)"
                ) from None
        try:
            fmt = ReportFormat(**values)
        except TypeError as exc:
            raise FormatError(f"{where}: {exc}") from None
        if ":" not in fmt.render:
            fmt = replace(fmt, render=f"{module}:{fmt.render}")
        return fmt
    raise FormatError(f"{path}: FORMAT = ReportFormat(...) must be a top-level statement")


def _statement(source: str) -> str:
    """The first (logical) line of ``source``: the declaration, however many lines it spans."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NEWLINE:
            return "\n".join(source.splitlines()[: token.start[0]])
    return source


def discover(package: str = __package__ or "pytest_citebench.reports") -> tuple[ReportFormat, ...]:
    """The formats declared in ``package``'s modules (every folder of its ``__path__``), by
    module name: a stable order for ``--help`` and for the files written."""
    paths: Iterable[str] = getattr(sys.modules[package], "__path__", ())
    modules: dict[str, Path] = {}
    for folder in paths:  # the first folder's module is the one an import finds
        for path in Path(folder).glob("*.py"):
            modules.setdefault(path.stem, path)
    found: dict[str, ReportFormat] = {}
    for stem in sorted(modules):
        fmt = declared(modules[stem], f"{package}.{stem}")
        if fmt is None:
            continue
        if fmt.name in found:
            raise FormatError(f"{modules[stem]}: report format {fmt.name!r} is declared twice")
        found[fmt.name] = fmt
    return tuple(found.values())


FORMATS: tuple[ReportFormat, ...] = discover()
