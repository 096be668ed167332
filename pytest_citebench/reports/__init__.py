"""Reports people read: one self-contained HTML file and a Markdown summary for CI.

Both are rendered from a ``ReportData`` built from the item records, the aggregates, the gate
results and (optionally) a baseline comparison, and from nothing else: no clock, no host name.
So a merged sharded run and a single-machine run of the same items produce the same report, and
a report can be re-rendered later from a results file (``python -m pytest_citebench merge``).

Importing this package is cheap (no numpy, no task modules); the renderers import what they need.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate
    from pytest_citebench.compare import Comparison
    from pytest_citebench.gates import Gate, GateResult
    from pytest_citebench.reports.headline import Verdict

# An absolute path (POSIX, home-relative or a Windows drive) of at least two parts, not inside a
# URL ("https://host/a/b") or a word ("and/or", "n/a", "1/2").
_ABSOLUTE_PATH = re.compile(
    r"(?<![\w.:/~\\-])(?:~|[A-Za-z]:)?[/\\](?:[\w.+@~-]+[/\\])+([\w.+@~-]+)"
)


def strip_paths(text: str) -> str:
    """Absolute paths become "…/<file name>": reports travel as CI artifacts, and the runner's
    directories (results files, cassettes, suites, a temporary checkout) are nobody's business
    there and change from run to run."""
    return _ABSOLUTE_PATH.sub(lambda m: "…/" + m.group(1), text)


@dataclass
class ReportData:
    records: Sequence[Mapping[str, Any]]
    aggregates: Sequence[Aggregate]
    gate_results: Sequence[GateResult] = ()
    unmatched_gates: Sequence[Gate] = ()
    comparison: Comparison | None = None
    # (label, value) lines shown under the title: models, sampling settings, shard, sources.
    settings: Sequence[tuple[str, str]] = field(default_factory=list)
    title: str = "pytest-citebench report"
    # Worst answers shown per suite x task (--citebench-show).
    show: int = 2

    @property
    def errors(self) -> list[Mapping[str, Any]]:
        return [r for r in self.records if r.get("outcome") == "error"]

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gate_results if not g.passed]

    def verdict(self) -> Verdict:
        """The one line every report opens with (reports.headline.verdict)."""
        from pytest_citebench.reports.headline import verdict

        return verdict(
            self.gate_results,
            self.unmatched_gates,
            errors=len(self.errors),
            comparison=self.comparison,
        )

    def problems(self) -> list[str]:
        """Why this run should not ship, in words; empty when nothing failed."""
        out = []
        if self.errors:
            out.append(f"{len(self.errors)} item(s) ended in an error")
        if self.failed_gates:
            out.append(f"{len(self.failed_gates)} gate(s) failed")
        if self.comparison is not None and self.comparison.failures:
            out.append(f"{len(self.comparison.failures)} regression(s) against the baseline")
        return out


def write_reports(
    data: ReportData, *, html: Path | None = None, markdown: Path | None = None
) -> list[tuple[str, Path]]:
    """Write the requested reports; returns (kind, path) for each file written."""
    from html import escape

    from pytest_citebench.recording import REDACTED, scrub_text

    written: list[tuple[str, Path]] = []
    if html is not None:
        from pytest_citebench.reports.html import render_html

        html.parent.mkdir(parents=True, exist_ok=True)
        # Reports are CI artifacts people pass around: scrub key values and key-shaped strings
        # (a model echoing its prompt, an error quoting a header) as the results file does.
        page = strip_paths(scrub_text(render_html(data))).replace(REDACTED, escape(REDACTED))
        html.write_text(page, encoding="utf-8")
        written.append(("html report", html))
    if markdown is not None:
        from pytest_citebench.reports.markdown import render_markdown

        text = strip_paths(scrub_text(render_markdown(data)))
        markdown.parent.mkdir(parents=True, exist_ok=True)
        # $GITHUB_STEP_SUMMARY is shared by every tool of a step: append, never clobber it.
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        appending = bool(summary) and Path(summary or "").resolve() == markdown.resolve()
        with markdown.open("a" if appending else "w", encoding="utf-8") as handle:
            handle.write(text)
        written.append(("markdown summary", markdown))
    return written


__all__ = ["ReportData", "strip_paths", "write_reports"]
