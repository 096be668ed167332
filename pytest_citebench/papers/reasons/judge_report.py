"""The judge model in the reports: how many items it judged, how many it found no verdict in,
and every item where its outcome differs from the rules' (the terminal summary's lines, and a
section that the terminal, Markdown and HTML reports all draw).

A judged record says both outcomes in its reason (``judge_model``): it starts ``judged by MODEL
(prompt NAME): OUTCOME: why`` and carries ``| rules: OUTCOME (their reason)``; a judge reply that
was no verdict starts ``not read: the judge MODEL (prompt NAME) gave no verdict``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_citebench.api import Records, Section
from pytest_citebench.papers.reasons.judge_model import RULES_MARK

_JUDGED = re.compile(r"^judged by (?P<judge>.+?) \(prompt (?P<prompt>[^)]+)\): (?P<outcome>\w+): ")
_NO_VERDICT = re.compile(r"^not read: the judge (?P<judge>.+?) \(prompt [^)]+\) gave no verdict")
_RULES = re.compile(re.escape(RULES_MARK) + r"(?P<rules>\w+) \((?P<reason>.*)\)")
_WHY = re.compile(r"^judged by .+? \(prompt [^)]+\): \w+: (?P<why>.*?)" + re.escape(RULES_MARK))


def judge_of(record: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(judge, judge's outcome, rules' outcome) of a record the judge decided; the judge's
    outcome is "no verdict" for a reply that was none; None for a record the rules decided."""
    reason = str(record.get("reason", ""))
    rules = _RULES.search(reason)
    if rules is None:
        return None
    judged = _JUDGED.match(reason)
    if judged is not None:
        return judged["judge"], judged["outcome"], rules["rules"]
    failed = _NO_VERDICT.match(reason)
    if failed is not None:
        return failed["judge"], "no verdict", rules["rules"]
    return None


def _scored(records: Records, task: str | None = None) -> list[Mapping[str, Any]]:
    return [
        r
        for r in records
        if r.get("outcome") != "error" and (task is None or r.get("task") == task)
    ]


def judge_lines(task: str, records: Records) -> list[str]:
    """One terminal line per (model, judge) of this task: items judged, disagreements with the
    rules, and replies that were no verdict."""
    tally: dict[tuple[str, str], list[int]] = {}
    for r in _scored(records, task):
        found = judge_of(r)
        if found is None:
            continue
        judge, outcome, rules = found
        counts = tally.setdefault((str(r.get("model")), judge), [0, 0, 0])
        counts[0] += 1
        counts[1] += outcome != rules and outcome != "no verdict"
        counts[2] += outcome == "no verdict"
    lines = []
    for (model, judge), (n, differ, failed) in sorted(tally.items()):
        line = (
            f"{model}: {n} replies judged by {judge}; {differ} disagree with the rules "
            "(listed under 'Judge model vs rules'; docs/judge.md)"
        )
        if failed:
            line += f"; {failed} judge replies were no verdict (scored unanswered, not read)"
        lines.append(line)
    return lines


def judge_sections(records: Records) -> list[Section]:
    """Every item whose judge outcome differs from the rules' (a judge reply that was no verdict
    included), in a table; nothing when the run had no judge or no disagreement."""
    rows = []
    for r in _scored(records):
        found = judge_of(r)
        if found is None or found[1] == found[2]:
            continue
        judge, outcome, rules = found
        why = _WHY.match(str(r.get("reason", "")))
        rows.append(
            (
                str(r.get("suite")),
                str(r.get("task")),
                str(r.get("model")),
                str(r.get("item_id")),
                judge,
                rules,
                outcome,
                _short(why["why"] if why else str(r.get("reason", ""))),
            )
        )
    if not rows:
        return []
    return [
        Section(
            key="judge-disagreements",
            title="Judge model vs rules",
            note=f"{len(rows)} item(s) where the judge model's outcome (the item's) differs "
            "from the rules'; the judge's reason, cut to one line.",
            headers=("suite", "task", "model", "item", "judge", "rules", "judge says", "why"),
            rows=tuple(sorted(rows)),
            terminal=True,
        )
    ]


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
