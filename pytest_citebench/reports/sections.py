"""The papers' own report sections (REASONS Table 3, ArxEval Table 5, guard curves), collected
from every registered paper and written for the terminal and Markdown here, for HTML in html.py.

The core knows nothing of what a section holds: a paper returns ``api.Section`` data (a table,
a note, chart specs) and every report draws it with the same table helper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import Aggregate, Section
from pytest_citebench.reports.escape import markdown_cell, terminal
from pytest_citebench.reports.table import markdown_table, text_table


def paper_sections(
    aggregates: Sequence[Aggregate], records: Sequence[Mapping[str, Any]]
) -> list[Section]:
    """Every paper's sections for this run, in paper-name order (each paper decides when it has
    something to show: no swapped suites, no Table 3)."""
    from pytest_citebench import registry

    out: list[Section] = []
    for paper in registry.papers():
        if paper.sections is not None:
            out.extend(paper.sections(aggregates, records))
    return out


def terminal_lines(section: Section) -> list[str]:
    """The section under the terminal summary: its note, then the aligned table."""
    rows = [[terminal(c) for c in row] for row in section.rows]
    lines = [terminal(section.note)] if section.note else []
    return lines + text_table(section.headers, rows, right_from=section.numeric_from or None)


def markdown_lines(section: Section) -> list[str]:
    """The section as a Markdown heading, note and table (charts are HTML-only)."""
    lines = [f"### {markdown_cell(section.title)}", ""]
    if section.note:
        lines += [markdown_cell(section.note), ""]
    if section.rows:
        lines += markdown_table(
            section.headers, section.rows, right_from=section.numeric_from or None
        )
        lines.append("")
    return lines
