"""The agentic tasks' report section: where agents fail, as a funnel (gold shown by a search ->
gold read -> gold cited) per model x task, suites pooled, beside the items that found the gold
and cited another, the citations of papers never shown, bad calls and the steps histogram."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_citebench.api import Aggregate, Chart, Records, Section
from pytest_citebench.papers.reasons.agent_metrics import steps_histogram

_TASKS = ("agentic", "agentic_text")


def _pct(k: float, n: int) -> str:
    return f"{100 * k / n:.1f}" if n else "n/a"


def agent_sections(aggregates: Sequence[Aggregate], records: Records) -> list[Section]:
    """One section when the run has agentic records (scored, gold not set apart)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("task") in _TASKS and r.get("outcome") != "error" and not r.get("gold_suspect"):
            groups[(str(r["model"]), str(r["task"]))].append(r)
    if not groups:
        return []
    rows = []
    values: dict[tuple[str, str], tuple[float, float, float]] = {}
    for (model, task), group in sorted(groups.items()):
        n = len(group)

        def total(name: str, group: list[Mapping[str, Any]] = group) -> float:
            return sum(float((r.get("metrics") or {}).get(name, 0.0)) for r in group)

        cited = sum(1 for r in group if r.get("outcome") == "correct")
        histogram = steps_histogram(group)
        rows.append(
            (
                model,
                task,
                str(n),
                _pct(total("gold_shown"), n),
                _pct(total("gold_read"), n),
                _pct(cited, n),
                _pct(total("found_not_chosen"), n),
                _pct(total("cited_unseen"), n),
                _pct(total("unfinished"), n),
                f"{total('steps') / n:.2f}",
                f"{total('searches') / n:.2f}",
                f"{total('bad_calls') / n:.2f}",
                " ".join(f"{s}:{c}" for s, c in histogram.items()),
            )
        )
        label = f"{model} {task}"
        values[("shown", label)] = (total("gold_shown") / n, float("nan"), float("nan"))
        values[("read", label)] = (total("gold_read") / n, float("nan"), float("nan"))
        values[("cited", label)] = (cited / n, float("nan"), float("nan"))
    chart = Chart(
        "grouped_bars",
        {
            "title": "agent funnel: gold shown -> read -> cited",
            "categories": ("shown", "read", "cited"),
            "series": tuple(f"{m} {t}" for m, t in sorted(groups)),
            "values": values,
        },
    )
    return [
        Section(
            key="reasons-agent",
            title="agent funnel (agentic tasks, suites pooled)",
            headers=(
                "model",
                "task",
                "n",
                "shown %",
                "read %",
                "cited %",
                "found-not-chosen %",
                "cited unseen %",
                "unfinished %",
                "steps",
                "searches",
                "bad calls",
                "steps histogram (turns:items)",
            ),
            rows=tuple(rows),
            note="shown: a search showed the gold; read: it was read; cited: the answer is "
            "correct. found-not-chosen: shown, then another cited; cited unseen: a paper no "
            "tool showed (invented or from memory). CIs per suite: the gold_shown, gold_read, "
            "found_not_chosen, cited_unseen, steps and bad_calls metrics.",
            charts=(chart,),
            numeric_from=2,
        )
    ]
