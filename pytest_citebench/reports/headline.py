"""The headline every report opens with: per model and task, how often the model was right,
invented a citation, named none, was incomplete or passed, each with its Wilson 95% CI; and one
verdict line that says whether anything was judged at all.

Rates are never pooled across tasks: a share of "correct" over direct, indirect, an oracle
protocol and a calibration task together answers no question anyone asked. Suites of one task are
pooled (same question, more items); adversarial variants (``+swap-``) get rows of their own, since
they re-ask the same items. Tasks judged only by their set metrics (verify, calibrate,
reattribute) show those instead of outcome shares, which mean nothing there.

Pure functions of the records, the aggregates and the gate results: the terminal summary, the
Markdown and the HTML all call them, so the three can never disagree.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_citebench.results.aggregate import share
from pytest_citebench.results.gates import measured_text

if TYPE_CHECKING:
    from pytest_citebench.api import Aggregate, MetricSpec, Stat, Task
    from pytest_citebench.results.compare import Comparison, GroupComparison
    from pytest_citebench.results.gates import Gate, GateResult

# The outcome shares of the headline, in the order a reader wants them: good, worst, then the
# ways of saying nothing wrong without being right.
SHARES = ("correct", "hallucinated", "unanswered", "partial", "abstained")
SHARE_LABELS = {
    "correct": "correct %",
    "hallucinated": "hallucinated %",
    "unanswered": "unanswered %",
    "partial": "partial %",
    "abstained": "abstained %",
}
# Worst answers: the more a wrong answer misleads a reader, the earlier it is shown.
SEVERITY = {"hallucinated": 0, "unanswered": 1, "partial": 2}

NO_GATE = "no gate set: nothing was judged"
GATES_PASSED = "gates passed"
GATE_FAILED = "gate failed"
GATE_SKIPPED = "gate skipped"


def _task(name: str) -> Task:
    from pytest_citebench import registry

    return registry.find(name)


def has_outcome_shares(task: str) -> bool:
    """False for tasks judged only by their set metrics; unknown tasks get the shares."""
    return _task(task).outcome_shares


@dataclass(frozen=True)
class HeadlineRow:
    """One model x task (x variant) of the headline table, its suites' outcomes pooled."""

    model: str
    task: str
    variant: str  # a derived suite's variant (``swap-title``), reported apart; "" for originals
    suites: int
    n: int  # scored items (errors excluded)
    errors: int
    counts: Mapping[str, int]

    @property
    def task_label(self) -> str:
        """The task, with the variant in brackets so swapped rows never read as the original."""
        return f"{self.task} ({self.variant})" if self.variant else self.task

    def share(self, outcome: str) -> Stat:
        """Among scored items only: errors count in ``errors``, never against the model."""
        return share(self.counts, outcome)


def headline_rows(records: Sequence[Mapping[str, Any]]) -> list[HeadlineRow]:
    """One row per model x task (x original or variant), suites of the task pooled, never
    tasks."""
    from pytest_citebench import registry

    counts: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    suites: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for r in records:
        task = str(r.get("task", ""))
        if not has_outcome_shares(task):
            continue
        suite = str(r.get("suite", ""))
        key = (str(r.get("model", "")), task, registry.split_variant(suite)[1] or "")
        counts[key][str(r.get("outcome", ""))] += 1
        suites[key].add(suite)
    rows = []
    for key in sorted(counts):
        c = counts[key]
        errors = c.get("error", 0)
        rows.append(HeadlineRow(*key, len(suites[key]), sum(c.values()) - errors, errors, dict(c)))
    return rows


def own_metric_aggregates(aggregates: Sequence[Aggregate]) -> list[Aggregate]:
    """Whole-task aggregates of the tasks judged by their set metrics, for their headline."""
    return sorted(
        (a for a in aggregates if a.stage is None and not has_outcome_shares(a.task)),
        key=lambda a: (a.model, a.task, a.suite),
    )


def own_metrics(agg: Aggregate) -> list[str]:
    """The set metrics a task declares, in its order (never the outcome shares)."""
    docs = _task(agg.task).set_metric_specs
    return [m for m in docs if m in agg.metrics]


# -- the verdict -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """``gates`` is "passed", "failed", "skipped" or "none"; ``text`` the words for it;
    ``problems`` what else should stop a release (errors, regressions); ``warnings`` what was
    asked for and could not be judged (a skipped gate, a baseline that compared nothing): they
    stop nothing, but nothing may look green past them; ``notes`` facts that stop nothing."""

    gates: str
    text: str
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        """ "bad" (red), "ok" (green: gates were set and passed, everything asked for was
        judged, nothing else wrong) or "neutral": something was not judged."""
        if self.gates == "failed" or self.problems:
            return "bad"
        return "ok" if self.gates == "passed" and not self.warnings else "neutral"

    def line(self) -> str:
        """Gates, then problems, then what was not judged, then notes, on one line that every
        report and log shares."""
        return "; ".join((self.text, *self.problems, *self.warnings, *self.notes))


def _failed_text(result: GateResult) -> str:
    where = f"{result.model} {result.suite}:{result.task}"
    return f"{result.gate.spec} on {where} ({measured_text(result.measured)})"


def _named(items: Sequence[str], max_named: int) -> str:
    more = f" and {len(items) - max_named} more" if len(items) > max_named else ""
    return ", ".join(items[:max_named]) + more


def _not_compared_reason(group: GroupComparison) -> str:
    """Why a group without deltas was not compared, by the note ``compare`` gave it."""
    from pytest_citebench.results.compare import NO_BASELINE, SCORER_CHANGED, SUITE_CHANGED

    if group.note.startswith(NO_BASELINE):
        return "not in the baseline (another model, suite or task)"
    for reason in (SUITE_CHANGED, SCORER_CHANGED):
        if group.note.startswith(reason):
            return reason
    return group.note or "no item paired without an error"


def baseline_text(comparison: Comparison) -> tuple[str, int, int]:
    """What the baseline comparison judged, exactly: (text, groups compared, groups not
    compared). "no regression" is said only of the groups that were compared, with their
    number; groups that could not be compared are counted with the reason (another model or
    suite, a changed suite or scorer version, no item paired)."""
    compared = [g for g in comparison.groups if g.deltas]
    reasons = Counter(_not_compared_reason(g) for g in comparison.groups if not g.deltas)
    skipped = sum(reasons.values())
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    if not compared:
        total = len(comparison.groups)
        return (
            f"baseline compared nothing: none of {total} group(s) comparable because {why}"
            if total
            else "baseline compared nothing: this run has no results",
            0,
            skipped,
        )
    text = f"no regression against the baseline in {len(compared)} group(s) compared"
    if comparison.failures:
        text = f"{len(comparison.failures)} regression(s) against the baseline"
    if reasons:
        text += f"; {skipped} group(s) not compared: {why}"
    return text, len(compared), skipped


def verdict(
    gate_results: Sequence[GateResult],
    unmatched_gates: Sequence[Gate] = (),
    *,
    errors: int = 0,
    comparison: Comparison | None = None,
    max_named: int = 3,
) -> Verdict:
    """Exactly one of "gates passed", "gate failed: <which>", "gate skipped because ..." or
    "no gate set: nothing was judged"; errors, regressions and what could not be judged are
    added whatever the gates said."""
    failed = [g for g in gate_results if not g.passed]
    skipped = [g.spec for g in unmatched_gates]
    if failed:
        gates, text = (
            "failed",
            f"{GATE_FAILED}: {_named([_failed_text(g) for g in failed], max_named)}",
        )
    elif gate_results:
        gates, text = "passed", f"{GATES_PASSED} ({len(gate_results)})"
    elif skipped:
        gates = "skipped"
        text = f"{GATE_SKIPPED} because no results matched: {_named(skipped, max_named)}"
    else:
        gates, text = "none", NO_GATE
    problems: list[str] = []
    warnings: list[str] = []
    if errors:
        problems.append(f"{errors} item(s) ended in an error")
    if gates in ("passed", "failed") and skipped:
        warnings.append(
            f"{len(skipped)} gate(s) skipped, no results matched: {_named(skipped, max_named)}"
        )
    notes: list[str] = []
    if comparison is not None:
        said, compared, not_compared = baseline_text(comparison)
        if comparison.failures:
            problems.append(said)
        elif compared and not not_compared:
            notes.append(said)
        else:
            warnings.append(said)
    return Verdict(gates, text, tuple(problems), tuple(notes), tuple(warnings))


# -- worst answers ---------------------------------------------------------------------------------


def distance_metrics(task: str) -> dict[str, MetricSpec]:
    """The metrics ``task`` declares as saying how far an answer is from the gold
    (``MetricSpec.ranks_worst``), most telling first."""
    return {n: s for n, s in _task(task).declared_metrics().items() if s.ranks_worst}


def badness(record: Mapping[str, Any]) -> float:
    """How far from the gold, by the first distance metric of its task the record has; 1
    (worst) if none."""
    metrics = record.get("metrics") or {}
    for name, spec in distance_metrics(str(record.get("task", ""))).items():
        if name in metrics:
            value = float(metrics[name])
            return 1.0 - value if spec.higher_is_better else value
    return 1.0


@dataclass(frozen=True)
class WorstGroup:
    """One suite x task's wrong answers: counts over all models, and the few worst to show."""

    suite: str
    task: str
    wrong: Mapping[str, int]  # outcome -> count, over every model of the group
    n: int  # items of the group, all outcomes
    shown: Sequence[Mapping[str, Any]]
    pooled: bool = False  # several suites of the task as one (``suite`` then says how many)


def _worst_first(record: Mapping[str, Any]) -> tuple[int, float, str, str, str]:
    """The order of wrong answers, within a group or pooled over suites: the most severe
    outcome first, then furthest from the gold, then by suite, model and item (stable)."""
    return (
        SEVERITY[str(record["outcome"])],
        -badness(record),
        str(record.get("suite", "")),
        str(record.get("model", "")),
        str(record.get("item_id", "")),
    )


def worst_groups(records: Sequence[Mapping[str, Any]], per_group: int) -> list[WorstGroup]:
    """Every suite x task with a wrong answer, each with up to ``per_group`` of its worst:
    hallucinated before unanswered before partial, then furthest from the gold (HR, F1)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        task = str(r.get("task", ""))
        if has_outcome_shares(task):
            groups[(str(r.get("suite", "")), task)].append(r)
    out = []
    for (suite, task), rows in sorted(groups.items()):
        wrong = [r for r in rows if r.get("outcome") in SEVERITY]
        if not wrong:
            continue
        wrong.sort(key=_worst_first)
        counts = Counter(str(r["outcome"]) for r in wrong)
        out.append(WorstGroup(suite, task, dict(counts), len(rows), wrong[: max(0, per_group)]))
    return out


def pooled_by_task(groups: Sequence[WorstGroup], per_group: int) -> list[WorstGroup]:
    """The suite x task groups of one task as one group (``pooled``, suite "N suites"; a task
    of one suite stays that suite's group): counts added, the worst ``per_group`` of all their
    shown answers, in the same order as within a group."""
    by_task: dict[str, list[WorstGroup]] = defaultdict(list)
    for group in groups:
        by_task[group.task].append(group)
    out = []
    for task, parts in sorted(by_task.items()):
        counts: Counter[str] = Counter()
        for part in parts:
            counts.update(part.wrong)
        shown = sorted((r for part in parts for r in part.shown), key=_worst_first)
        n = sum(part.n for part in parts)
        pooled = len(parts) > 1
        suite = f"{len(parts)} suites" if pooled else parts[0].suite
        out.append(WorstGroup(suite, task, dict(counts), n, shown[: max(0, per_group)], pooled))
    return out


def item_metrics_text(record: Mapping[str, Any], limit: int = 4) -> str:
    """The most telling few metrics of an item (its task's distance metrics, in order), so a
    row stays one line."""
    metrics = record.get("metrics") or {}
    distances = distance_metrics(str(record.get("task", "")))
    shown = [k for k in distances if k in metrics] or sorted(metrics)
    return ", ".join(f"{k}={float(metrics[k]):.3f}" for k in shown[:limit])


def where(record: Mapping[str, Any]) -> str:
    """An item as "suite:task item [model]": its node id would carry the suite's file path."""
    return (
        f"{record.get('suite', '')}:{record.get('task', '')} {record.get('item_id', '')} "
        f"[{record.get('model', '')}]"
    )


def wrong_counts_text(group: WorstGroup) -> str:
    """Like "3 hallucinated, 1 partial of 20": worst first, out of every item of the group."""
    parts = [f"{group.wrong[o]} {o}" for o in SEVERITY if group.wrong.get(o)]
    return f"{', '.join(parts)} of {group.n}"


# -- plain text (terminal and merge) ---------------------------------------------------------------


def fmt_share(stat: Stat) -> str:
    """A percentage with its CI; "-" when no item was scored, never "nan"."""
    if math.isnan(stat.value):
        return "-"
    return f"{100 * stat.value:.1f} [{100 * stat.lo:.1f}-{100 * stat.hi:.1f}]"


def columns_text(rows: Sequence[Sequence[str]], left: int) -> list[str]:
    """Rows of cells as aligned text under a rule; the first ``left`` columns left-aligned."""
    from pytest_citebench.reports.table import text_table

    return text_table(rows[0], rows[1:], right_from=left, rule=True)


def headline_lines(
    records: Sequence[Mapping[str, Any]], aggregates: Sequence[Aggregate], width: int = 160
) -> list[str]:
    """The headline tables as text: outcome shares per model x task, then the set-metric tasks."""
    from pytest_citebench.reports.format import fmt, label

    lines: list[str] = []
    rows = headline_rows(records)
    if rows:
        shares = [[fmt_share(row.share(s)) for s in SHARES] for row in rows]
        table = [["model", "task", "n", "err", *(SHARE_LABELS[s] for s in SHARES)]]
        for row, cells in zip(rows, shares, strict=True):
            table.append([row.model, row.task_label, str(row.n), str(row.errors), *cells])
        flat = columns_text(table, 2)
        if max(len(x) for x in flat) <= width:
            lines += flat
        else:
            # Long model and task names: each model on a line of its own, its tasks below.
            table = [["  task", "n", "err", *(SHARE_LABELS[s] for s in SHARES)]]
            for row, cells in zip(rows, shares, strict=True):
                table.append([f"  {row.task_label}", str(row.n), str(row.errors), *cells])
            grouped = columns_text(table, 1)
            lines += grouped[:2]
            model = None
            for row, line in zip(rows, grouped[2:], strict=True):
                if row.model != model:
                    lines.append(row.model)
                    model = row.model
                lines.append(line)
    own = own_metric_aggregates(aggregates)
    if own:
        if lines:
            lines.append("")
        lines.append("tasks judged by their own metrics (no outcome shares):")
        for agg in own:
            metrics = ", ".join(
                f"{label(m)} {fmt(agg.metrics.get(m), m)}" for m in own_metrics(agg)
            )
            n = agg.metrics["n"].n if "n" in agg.metrics else "-"
            text = (
                f"{agg.model}  {agg.task}  {agg.suite}  n={n}  err={agg.counts.get('error', 0)}: "
                f"{metrics or 'no set metrics'}"
            )
            lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="      ")
    return lines


__all__ = [
    "GATES_PASSED",
    "GATE_FAILED",
    "NO_GATE",
    "SHARES",
    "HeadlineRow",
    "Verdict",
    "WorstGroup",
    "headline_lines",
    "headline_rows",
    "verdict",
    "worst_groups",
]
