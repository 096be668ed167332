"""Writing the reports to disk: scrubbed of keys and absolute paths, appended to a shared CI
step summary rather than clobbering it."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_citebench.reports.data import ReportData
from pytest_citebench.reports.formats import FORMATS, ReportFormat

if TYPE_CHECKING:
    from pytest_citebench.reports.conclude import Conclusion

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


def write_reports(data: ReportData, **paths: Path | None) -> list[tuple[str, Path]]:
    """Write the requested reports (``html=PATH``, ``markdown=PATH``: a format's name, see
    ``reports.formats``), in the table's order; returns (label, path) for each file written."""
    unknown = set(paths) - {fmt.name for fmt in FORMATS}
    if unknown:
        raise TypeError(f"no report format {', '.join(sorted(unknown))}")
    written: list[tuple[str, Path]] = []
    for fmt in FORMATS:
        path = paths.get(fmt.name)
        if path is not None:
            write_report(fmt, data, path)
            written.append((fmt.label, path))
    return written


def write_report(fmt: ReportFormat, data: ReportData, path: Path) -> None:
    """One report. Reports are CI artifacts people pass around: key values and key-shaped
    strings (a model echoing its prompt, an error quoting a header) are scrubbed as the results
    file does, and absolute paths stripped."""
    from html import escape

    from pytest_citebench.recording import REDACTED, scrub_text

    text = strip_paths(scrub_text(fmt.renderer()(data)))
    if fmt.escape_redacted:
        text = text.replace(REDACTED, escape(REDACTED))
    path.parent.mkdir(parents=True, exist_ok=True)
    # $GITHUB_STEP_SUMMARY is shared by every tool of a step: append, never clobber it.
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    appending = (
        fmt.step_summary and bool(summary) and Path(summary or "").resolve() == path.resolve()
    )
    with path.open("a" if appending else "w", encoding="utf-8") as handle:
        handle.write(text)


def write_requested(
    conclusion: Conclusion,
    paths: Mapping[str, Path],
    *,
    settings: Callable[[], Sequence[tuple[str, str]]],
    show: int,
) -> tuple[list[tuple[str, Path]], list[str]]:
    """A pytest run's reports, each on its own: a full disk or a device that refuses writes is
    one error naming the file (the run then fails), not an INTERNALERROR, and the others still
    come. Returns (label, path) written and the errors."""
    written: list[tuple[str, Path]] = []
    errors: list[str] = []
    if not paths:
        return written, errors
    data = ReportData.of(conclusion, settings=settings(), show=show)
    for fmt in FORMATS:
        path = paths.get(fmt.name)
        if path is None:
            continue
        try:
            write_report(fmt, data, path)
            written.append((fmt.label, path))
        except OSError as exc:
            errors.append(
                f"cannot write {fmt.option} {path}: {exc.strerror or exc}; free space or pass "
                "another path (the results file has every record)"
            )
    return written, errors


__all__ = ["strip_paths", "write_reports", "write_requested"]
