"""The one column-aligned table writer, for the terminal and for Markdown.

Every text table of the package goes through here (the results table, the headline, usage,
compare, the estimate, each paper's own tables), so alignment and escaping are decided once.
Cells are strings already formatted by the caller; a row shorter than the header is padded.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_citebench.reports.escape import markdown_cell


def _cells(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[list[str]]:
    width = max([len(headers), *(len(r) for r in rows)]) if headers or rows else 0
    table = ([list(headers)] if headers else []) + [list(r) for r in rows]
    return [[*map(str, r), *([""] * (width - len(r)))] for r in table]


def text_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    right_from: int | None = None,
    right: Sequence[int] = (),
    rule: bool = False,
) -> list[str]:
    """Aligned lines, two spaces between columns, trailing blanks stripped.

    Columns from ``right_from`` on (and any listed in ``right``) are right-aligned: numbers.
    ``rule`` puts a dashed line under the header. With no ``headers`` only the rows are written.
    """
    table = _cells(headers, rows)
    if not table:
        return []
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    right_cols = set(right)
    if right_from is not None:
        right_cols.update(range(right_from, len(widths)))

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right_cols else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    out = [line(r) for r in table]
    if rule and headers:
        out.insert(1, "  ".join("-" * w for w in widths))
    return out


def markdown_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, right_from: int | None = None
) -> list[str]:
    """A GitHub-flavoured Markdown table; columns from ``right_from`` on are right-aligned."""
    table = _cells(headers, rows)
    if not table:
        return []
    n = len(table[0])
    align = ["---:" if right_from is not None and i >= right_from else ":---" for i in range(n)]
    out = ["| " + " | ".join(markdown_cell(c) for c in table[0]) + " |"]
    out.append("|" + "|".join(align) + "|")
    out += ["| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in table[1:]]
    return out
