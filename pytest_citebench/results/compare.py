"""Regression against a baseline run: paired statistics on the items both runs share.

Why paired: two runs of one suite answer the *same* items, so the per-item difference removes the
item-to-item difficulty that dominates the variance of either run's mean. Comparing two
independent confidence intervals instead would call a real three-point drop "noise" on most
suites. Concretely, per model x suite x task:

* ``accuracy`` and ``hallucinated``, and a task's kinds of it (``misattributed``,
  ``fabricated``, ``unverified``) (a yes/no per item): the exact McNemar test, a two-sided
  binomial test on the discordant pairs (items that flipped one way against the other way). Exact
  because on a small suite a handful of flips is all there is, where the chi-square version is
  wrong.
* ``hr_paper`` and ``f1`` (a number per answered item): a paired bootstrap CI of the mean
  difference (B=2000, seed 0) over items answered in both runs, and a paired sign-flip
  (randomization) p-value, which on yes/no outcomes is McNemar's test itself.

Every model x suite x task x metric is one test, so a run of many suites would flag some metric
by chance alone at 0.05 each. The p-values are therefore adjusted over all tests of one
comparison: Holm by default (no false alarm anywhere, at 0.05), Benjamini-Hochberg (``bh``,
false discovery rate) or ``none``; raw and adjusted p are reported side by side.

A metric *fails* when it is worse by more than the tolerance **and** the evidence says so: an
adjusted p < 0.05, and for the means also the whole bootstrap CI beyond the tolerance band.
An equal run therefore always passes, and a tolerance lets a release accept a known small cost.
Items that ended in an error in either run are not paired: errors fail the run on their own.
Groups whose suite version or scorer version differ between the runs are not paired either: the
same answer may have another outcome under another scorer, so a delta would measure the rules,
not the model. The note says to rescore the older file (``python -m pytest_citebench rescore``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_citebench.api import MetricSpec
from pytest_citebench.metrics.stats import mcnemar_exact

ALPHA = 0.05
BOOTSTRAP_B = 2000
BOOTSTRAP_SEED = 0

# Which metrics are compared, which way is better and by which paired test is each task's own
# declaration (``MetricSpec.paired_test``): the core's outcome shares by McNemar, a paper's
# per-item means by the paired bootstrap. Only metrics both records carry are compared.
Key = tuple[str, str, str]  # model, suite, task
DEFAULT_CORRECTION = "holm"
# Why a group was not compared: the start of its note, which the verdict counts by.
NO_BASELINE = "no baseline for this group"
SUITE_CHANGED = "suite version changed"
SCORER_CHANGED = "scorer version changed"
_CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


@dataclass(frozen=True)
class MetricDelta:
    """One metric of one group: baseline and new value on the shared items, and the verdict."""

    model: str
    suite: str
    task: str
    metric: str
    higher_is_better: bool
    test: str  # "mcnemar" or "bootstrap"
    n: int  # paired items the numbers are computed on
    base: float
    new: float
    lo: float  # 95% CI of new - base
    hi: float
    tolerance: float
    p_value: float | None = None  # McNemar (shares) or paired sign-flip (means), raw
    discordant: tuple[int, int] | None = None  # McNemar only: (got worse, got better) items
    p_adjusted: float | None = None  # p_value adjusted over the comparison's tests
    correction: str = "none"

    @property
    def delta(self) -> float:
        """new minus base, raw (``worse_by`` orients it: HR up is worse, accuracy up better)."""
        return self.new - self.base

    @property
    def worse_by(self) -> float:
        """How much worse the new run is (negative: better), in the metric's own units."""
        return -self.delta if self.higher_is_better else self.delta

    @property
    def significant(self) -> bool:
        """The evidence that it is worse by more than the tolerance."""
        if self.n == 0:
            return False
        p = self.p_adjusted if self.p_adjusted is not None else self.p_value
        if p is not None and p >= ALPHA:
            return False
        if self.test == "mcnemar":
            return p is not None
        # Bootstrap: the whole CI lies beyond the tolerance band on the bad side.
        if math.isnan(self.lo) or math.isnan(self.hi):
            return False
        return self.hi < -self.tolerance if self.higher_is_better else self.lo > self.tolerance

    def p_text(self) -> str:
        """``p=0.012`` or, corrected, ``p=0.012 holm=0.036``: raw next to adjusted."""
        if self.p_value is None:
            return "bootstrap"
        text = f"p={self.p_value:.3g}"
        if self.p_adjusted is not None and self.correction != "none":
            text += f" {self.correction}={self.p_adjusted:.3g}"
        return text

    @property
    def failed(self) -> bool:
        """Worse by more than the tolerance, and the paired test says it is not chance."""
        return self.worse_by > self.tolerance and self.significant

    @property
    def verdict(self) -> str:
        """One word for the table: FAIL, worse, same or better."""
        if self.failed:
            return "FAIL"
        if self.n == 0 or self.delta == 0:
            return "same"
        return "worse" if self.worse_by > 0 else "better"

    def evidence(self) -> str:
        """Which test backs the verdict (McNemar for shares, sign-flip for means), with its p."""
        adjusted = ""
        if self.p_adjusted is not None and self.correction != "none":
            adjusted = f", {_CORRECTION_NAMES[self.correction]} p={self.p_adjusted:.3g}"
        if self.test == "mcnemar" and self.p_value is not None:
            flips = ""
            if self.discordant is not None:
                flips = f", {self.discordant[0]} items worse / {self.discordant[1]} better"
            return f"McNemar p={self.p_value:.3g}{flips}{adjusted}"
        if self.p_value is not None:
            return f"paired bootstrap B={BOOTSTRAP_B}, sign-flip p={self.p_value:.3g}{adjusted}"
        return f"paired bootstrap B={BOOTSTRAP_B}"

    def describe(self) -> str:
        """The line printed for a failing metric: what got worse, by how much, and the evidence."""
        ci = "" if math.isnan(self.lo) else f", 95% CI [{points(self.lo)}, {points(self.hi)}]"
        return (
            f"{self.verdict} baseline "
            f"{self.suite}:{self.task}:{self.metric} on {self.model}: "
            f"{self.base:.4g} -> {self.new:.4g} (delta {points(self.delta)} points{ci}, "
            f"{self.evidence()}, n={self.n}, tolerance {100 * self.tolerance:.1f} points)"
        )


def points(x: float) -> str:
    """A share's change in percentage points, signed: ``+3.0``."""
    return f"{100 * x:+.1f}"


@dataclass(frozen=True)
class GroupComparison:
    """One model x suite x task: how many items pair up, and the metric deltas on them."""

    model: str
    suite: str
    task: str
    shared: int
    new_only: int
    base_only: int
    errors: int  # shared items not compared because either run ended in an error
    deltas: tuple[MetricDelta, ...] = ()
    note: str = ""


@dataclass
class Comparison:
    """A run against a baseline, per (model, suite, task): what the report and the exit status
    need, including the groups the baseline had and this run did not."""

    baseline: str
    tolerance: float
    correction: str = DEFAULT_CORRECTION
    groups: list[GroupComparison] = field(default_factory=list)
    # (model, suite, task) of the baseline that this run did not run at all.
    missing: list[Key] = field(default_factory=list)

    @property
    def deltas(self) -> list[MetricDelta]:
        """Every compared metric of every group, in table order."""
        return [d for g in self.groups for d in g.deltas]

    @property
    def failures(self) -> list[MetricDelta]:
        """The deltas that fail the run (the regression gate)."""
        return [d for d in self.deltas if d.failed]

    def notes(self) -> list[str]:
        """Why some results were not compared; printed so nothing is dropped silently."""
        lines = []
        for g in self.groups:
            if g.note:
                lines.append(f"{g.model} {g.suite}:{g.task}: {g.note}")
            elif g.new_only or g.base_only or g.errors:
                parts = [f"{g.shared} items paired"]
                if g.new_only:
                    parts.append(f"{g.new_only} not in the baseline")
                if g.base_only:
                    parts.append(f"{g.base_only} of the baseline not run")
                if g.errors:
                    parts.append(f"{g.errors} with an error in either run")
                lines.append(f"{g.model} {g.suite}:{g.task}: " + ", ".join(parts))
        if self.missing:
            lines.append(
                f"{len(self.missing)} model x suite x task group(s) of the baseline not run"
            )
        return lines

    def nothing_compared(self, results: str) -> str | None:
        """Why no metric was tested, naming what each file holds; None when one was.

        Why: against another model's baseline nothing pairs, no delta can fail, and the command
        used to say nothing and exit 0, which a CI job reads as "no regression"."""
        if self.deltas:
            return None
        ran = [(g.model, g.suite, g.task) for g in self.groups]
        based = [
            *self.missing,
            *(
                (g.model, g.suite, g.task)
                for g in self.groups
                if not g.note.startswith(NO_BASELINE)
            ),
        ]
        if not set(ran) & set(based):
            return (
                f"{results} and {self.baseline} have no model x suite x task in common, so "
                f"nothing was compared: {results} holds {_holding(ran)}; {self.baseline} holds "
                f"{_holding(based)}. Compare runs of the same model on the same suites and tasks"
            )
        why = "; ".join(self.notes()[:4]) or "no item paired without an error"
        return (
            f"none of the {len(ran)} model x suite x task group(s) of {results} could be compared "
            f"with {self.baseline}: {why}"
        )


def _holding(keys: Sequence[Key]) -> str:
    """What a results file holds, for a person to see why two files do not pair."""
    if not keys:
        return "no item records"

    def named(values: Iterable[str], noun: str) -> str:
        distinct = sorted(set(values))
        more = f" and {len(distinct) - 4} more" if len(distinct) > 4 else ""
        return f"{noun} {', '.join(distinct[:4])}{more}"

    return ", ".join(
        (
            named((k[0] for k in keys), "model(s)"),
            named((k[1] for k in keys), "suite(s)"),
            named((k[2] for k in keys), "task(s)"),
        )
    )


def _group(records: Iterable[Mapping[str, Any]]) -> dict[Key, dict[str, Mapping[str, Any]]]:
    groups: dict[Key, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for r in records:
        if r.get("type", "item") != "item":
            continue
        groups[(str(r["model"]), str(r["suite"]), str(r["task"]))][str(r["item_id"])] = r
    return groups


def compared_metrics(task: str) -> dict[str, MetricSpec]:
    """The metrics of ``task`` that a comparison tests, in report order, from its declaration
    (a task no installed paper provides: the core's outcome shares)."""
    from pytest_citebench import registry

    declared = registry.find(task).declared_metrics()
    return {name: spec for name, spec in declared.items() if spec.paired_test != "none"}


def _share_delta(
    key: Key,
    metric: str,
    spec: MetricSpec,
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    tol: float,
) -> MetricDelta:
    from pytest_citebench.metrics.stats import bootstrap_mean_ci

    higher, test = bool(spec.higher_is_better), spec.paired_test
    # An outcome, or one kind of it (``misattributed`` among the hallucinated): ``spec.counts``.
    base = [float(spec.counts(b)) for b, _ in pairs]
    new = [float(spec.counts(n)) for _, n in pairs]
    # Discordant pairs counted as "got worse" / "got better" in the metric's own direction.
    up = sum(1 for x, y in zip(base, new, strict=True) if y > x)
    down = sum(1 for x, y in zip(base, new, strict=True) if y < x)
    worse, better = (down, up) if higher else (up, down)
    n = len(pairs)
    lo, hi = bootstrap_mean_ci(
        [y - x for x, y in zip(base, new, strict=True)], B=BOOTSTRAP_B, seed=BOOTSTRAP_SEED
    )
    return MetricDelta(
        *key,
        metric=metric,
        higher_is_better=higher,
        test=test,
        n=n,
        base=sum(base) / n if n else math.nan,
        new=sum(new) / n if n else math.nan,
        lo=lo,
        hi=hi,
        tolerance=tol,
        p_value=mcnemar_exact(worse, better),
        discordant=(worse, better),
    )


def _mean_delta(
    key: Key,
    metric: str,
    spec: MetricSpec,
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    tol: float,
) -> MetricDelta | None:
    from pytest_citebench.metrics.stats import bootstrap_mean_ci, sign_flip_p

    higher, test = bool(spec.higher_is_better), spec.paired_test
    values = [
        (float(b["metrics"][metric]), float(n["metrics"][metric]))
        for b, n in pairs
        if metric in (b.get("metrics") or {}) and metric in (n.get("metrics") or {})
    ]
    if not values:
        return None
    diffs = [y - x for x, y in values]
    lo, hi = bootstrap_mean_ci(diffs, B=BOOTSTRAP_B, seed=BOOTSTRAP_SEED)
    return MetricDelta(
        *key,
        metric=metric,
        higher_is_better=higher,
        test=test,
        n=len(values),
        base=sum(x for x, _ in values) / len(values),
        new=sum(y for _, y in values) / len(values),
        lo=lo,
        hi=hi,
        tolerance=tol,
        p_value=sign_flip_p(diffs),
    )


def compare(
    new_records: Iterable[Mapping[str, Any]],
    base_records: Iterable[Mapping[str, Any]],
    *,
    tolerance: float = 0.0,
    baseline: str = "",
    correction: str = DEFAULT_CORRECTION,
) -> Comparison:
    """Compare every model x suite x task of the new run with the same group of the baseline;
    p-values are adjusted over all the tests with ``correction`` (none, holm, bh)."""
    from pytest_citebench.metrics.stats import CORRECTIONS

    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    new_groups = _group(new_records)
    base_groups = _group(base_records)
    result = Comparison(baseline, tolerance, correction)
    result.missing = sorted(set(base_groups) - set(new_groups))
    for key in sorted(new_groups):
        new = new_groups[key]
        base = base_groups.get(key, {})
        shared_ids = sorted(set(new) & set(base))
        shared, new_only, base_only = (
            len(shared_ids),
            len(set(new) - set(base)),
            len(set(base) - set(new)),
        )
        model, suite, task = key
        note = NO_BASELINE if not base else None
        if base:
            versions = {
                (base[i].get("suite_version"), new[i].get("suite_version")) for i in shared_ids
            }
            changed = sorted({f"v{b} -> v{n}" for b, n in versions if b != n})
            # An error record was never scored, so its scorer version says nothing about the
            # rules (and its pair is not compared below): only scored pairs can have changed.
            scorers = {
                (_scorer(base[i]), _scorer(new[i]))
                for i in shared_ids
                if base[i]["outcome"] != "error" and new[i]["outcome"] != "error"
            }
            rescored = sorted({f"{b} -> {n}" for b, n in scorers if b != n})
            if changed:
                note = f"{SUITE_CHANGED} ({', '.join(changed)}): not compared"
            elif rescored:
                note = (
                    f"{SCORER_CHANGED} ({', '.join(rescored)}): not compared; rescore the "
                    "older file with 'python -m pytest_citebench rescore FILE -o FILE' "
                    "(no model call) and compare again"
                )
        if note is not None:
            result.groups.append(
                GroupComparison(model, suite, task, shared, new_only, base_only, 0, note=note)
            )
            continue
        pairs = [
            (base[i], new[i])
            for i in shared_ids
            if base[i]["outcome"] != "error" and new[i]["outcome"] != "error"
        ]
        deltas: list[MetricDelta] = []
        # Kinds are compared only where the records tell them: records from before kinds (or of
        # a task without them) would add tests that can show nothing, and dilute the others'
        # p-value correction.
        # A kind is decided on evidence a task keeps beside the final stage (a live title
        # lookup): a pair whose two records saw different evidence measured two different
        # things, and byte-identical answers read "fabricated" in one run and "unverified" in
        # the other. Such pairs are not compared on kinds.
        like = [(b, n) for b, n in pairs if _evidence(b) == _evidence(n)]
        kinded = any(r.get("kind") for pair in like for r in pair)
        for metric, spec in compared_metrics(task).items():
            if spec.kind is not None and not kinded:
                continue
            if spec.paired_test == "mcnemar":
                chosen = like if spec.kind is not None else pairs
                if chosen:
                    deltas.append(_share_delta(key, metric, spec, chosen, tolerance))
            else:
                delta = _mean_delta(key, metric, spec, pairs, tolerance)
                if delta is not None:
                    deltas.append(delta)
        result.groups.append(
            GroupComparison(
                model, suite, task, shared, new_only, base_only, shared - len(pairs), tuple(deltas)
            )
        )
    _adjust(result)
    return result


def _evidence(record: Mapping[str, Any]) -> frozenset[str]:
    """What a record's task kept beside its final stage (``ScoredStage.details``'s keys): the
    evidence its kind was decided on."""
    stages = record.get("stages")
    if not isinstance(stages, list) or not stages or not isinstance(stages[-1], Mapping):
        return frozenset()
    details = stages[-1].get("details")
    return frozenset(details) if isinstance(details, Mapping) else frozenset()


def _scorer(record: Mapping[str, Any]) -> str:
    """The scorer version a record was scored under; records from before versions: "1"."""
    from pytest_citebench.api import LEGACY_SCORER_VERSION

    return str(record.get("scorer_version") or LEGACY_SCORER_VERSION)


def _adjust(result: Comparison) -> None:
    """Set every tested delta's ``p_adjusted``: its p adjusted over the whole comparison."""
    from dataclasses import replace

    from pytest_citebench.metrics.stats import adjust_p_values

    raw = [d.p_value for d in result.deltas if d.p_value is not None]
    adjusted = iter(adjust_p_values(raw, result.correction))
    for index, group in enumerate(result.groups):
        deltas = tuple(
            d
            if d.p_value is None
            else replace(d, p_adjusted=next(adjusted), correction=result.correction)
            for d in group.deltas
        )
        result.groups[index] = replace(group, deltas=deltas)


def compare_files(
    new: Path,
    base: Path,
    *,
    tolerance: float = 0.0,
    correction: str = DEFAULT_CORRECTION,
    include_suspect: bool = False,
) -> Comparison:
    """``compare`` on two results files, their aggregates ignored (recomputed from the items);
    items with a suspect gold in either file are left out of both, as in a run."""
    from pytest_citebench.results.files import read_results
    from pytest_citebench.results.record import is_suspect

    new_items, _ = read_results(new)
    base_items, _ = read_results(base)
    if not include_suspect:
        apart = {(r["suite"], r["item_id"]) for r in (*new_items, *base_items) if is_suspect(r)}
        new_items = [r for r in new_items if (r["suite"], r["item_id"]) not in apart]
        base_items = [r for r in base_items if (r["suite"], r["item_id"]) not in apart]
    return compare(
        new_items, base_items, tolerance=tolerance, baseline=str(base), correction=correction
    )
