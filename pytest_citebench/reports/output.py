"""Writing the reports to disk: scrubbed of keys and absolute paths, appended to a shared CI
step summary rather than clobbering it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pytest_citebench.reports.data import ReportData

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


__all__ = ["strip_paths", "write_reports"]
