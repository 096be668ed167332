"""Report formats, each declared once: its command-line options (``--citebench-NAME`` for a
pytest run, ``--NAME`` for ``merge``), its label and its renderer. The plugin, the options, the
start-up checks, the session, ``merge`` and ``write_reports`` all read this table, so a new
format is its renderer plus one entry here.

Standard library only: the plugin reads it to declare options before ``--citebench`` is known,
and the renderer is named, not imported, until a report is written.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReportFormat:
    """One report format; ``render`` is ``"module:function"`` taking ``ReportData`` to text."""

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


FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat(
        name="html",
        label="html report",
        help="write a self-contained HTML report here",
        merge_help="write the HTML report here",
        render="pytest_citebench.reports.html:render_html",
        escape_redacted=True,
    ),
    ReportFormat(
        name="markdown",
        label="markdown summary",
        help="write a Markdown summary here (appends when FILE is $GITHUB_STEP_SUMMARY)",
        merge_help="write the Markdown summary here",
        render="pytest_citebench.reports.markdown:render_markdown",
        step_summary=True,
    ),
)
