"""The items set apart because their gold is suspect: one table, the same in every report.

Why a section of its own: a number that silently leaves items out is as misleading as one that
silently counts bad golds. Every report says how many records were set apart, per suite x task,
under which flags, what their outcomes would have been, and one reason per flag, so a reader can
check the audit's call (docs/audit.md) without opening the suite.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_citebench.api import OUTCOMES
from pytest_citebench.reports.escape import terminal


@dataclass(frozen=True)
class SuspectRow:
    """Set-apart records of one suite x task: their count, flags and outcomes."""

    suite: str
    task: str
    n: int
    flags: Mapping[str, int]
    outcomes: Mapping[str, int]


@dataclass(frozen=True)
class SuspectSummary:
    """What a run set apart (or counted, when it included suspect golds)."""

    rows: tuple[SuspectRow, ...]
    # flag -> (node id or suite::item, reason): the first record of each flag, as an example.
    examples: Mapping[str, tuple[str, str]]
    included: int = 0

    @property
    def total(self) -> int:
        return sum(r.n for r in self.rows)


def summarize(set_apart: Sequence[Mapping[str, Any]], included: int = 0) -> SuspectSummary:
    """Group the set-apart records per suite x task (sorted), flags and outcomes counted."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    examples: dict[str, tuple[str, str]] = {}
    for record in set_apart:
        groups[(str(record["suite"]), str(record["task"]))].append(record)
        suspect = record.get("gold_suspect") or {}
        for flag in suspect.get("flags", ()):
            where = str(record.get("nodeid") or f"{record['suite']}::{record['item_id']}")
            examples.setdefault(str(flag), (where, str(suspect.get("reason", ""))))
    rows = []
    for (suite, task), records in sorted(groups.items()):
        flags: Counter[str] = Counter(
            str(f) for r in records for f in (r.get("gold_suspect") or {}).get("flags", ())
        )
        outcomes = Counter(str(r["outcome"]) for r in records)
        rows.append(SuspectRow(suite, task, len(records), dict(flags), dict(outcomes)))
    return SuspectSummary(tuple(rows), dict(sorted(examples.items())), included)


def intro(summary: SuspectSummary) -> str:
    """The one sentence every report starts the section with."""
    if summary.included:
        return (
            f"{summary.included} item record(s) whose gold the suite flags as suspect are "
            "counted in every number (--citebench-include-suspect), as the source paper counted "
            "them; see docs/audit.md"
        )
    return (
        f"{summary.total} item record(s) set apart: the suite flags their gold as suspect "
        "(docs/audit.md). They ran and are in the results file, but not in the shares, metrics, "
        "gates or baseline comparison; --citebench-include-suspect counts them"
    )


def table(summary: SuspectSummary) -> list[list[str]]:
    """Header and one row per suite x task: n, flags, and the outcomes they would have had."""
    rows = [["suite", "task", "set apart", "flags", "their outcomes"]]
    for r in summary.rows:
        rows.append(
            [
                r.suite,
                r.task,
                str(r.n),
                ", ".join(f"{f} {n}" for f, n in sorted(r.flags.items())),
                ", ".join(f"{o} {r.outcomes[o]}" for o in OUTCOMES if r.outcomes.get(o)),
            ]
        )
    return rows


def text_lines(summary: SuspectSummary) -> list[str]:
    """The terminal's lines: the intro, the table aligned, one example reason per flag."""
    lines = [intro(summary)]
    if not summary.rows:
        return lines
    rows = table(summary)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    for flag, (where, reason) in summary.examples.items():
        lines.append(f"  e.g. {flag}: {where}: {reason}")
    # Suites and reasons come from data (a merged shard's records too): escaped for a terminal.
    return [terminal(line) for line in lines]
