"""Gates: ``SUITE_GLOB:TASK_GLOB:METRIC<=VALUE`` (or ``>=``), checked once after aggregation.

A gate that fails names itself, the model, the measured value and its CI. A gate is checked for
every model of the run, against every (suite, task) its globs match.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_citebench import registry
from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.results.aggregate import known_metrics

_GATE = re.compile(
    r"^\s*(?P<suite>[^:\s]+):(?P<task>[^:\s]+):(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*"
    r"(?P<op><=|>=)\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)


class GateError(ValueError):
    """A gate that is malformed or can never match: raised before any model call, not after."""


@dataclass(frozen=True)
class Gate:
    """One parsed gate; ``source`` (option, manifest or pyproject) is named when it fails."""

    suite: str
    task: str
    metric: str
    op: str
    value: float
    source: str

    @property
    def spec(self) -> str:
        """The gate written back in its own syntax, for messages a user can paste."""
        return f"{self.suite}:{self.task}:{self.metric}{self.op}{self.value:g}"

    def holds(self, measured: float) -> bool:
        """A NaN (an undefined metric) fails the gate rather than passing it by default."""
        if math.isnan(measured):
            return False
        return measured <= self.value if self.op == "<=" else measured >= self.value


def parse_gate(spec: str, *, source: str, suite: str | None = None) -> Gate:
    """Parse a gate; ``suite`` given means the spec comes from that suite's manifest (no glob)."""
    text = f"{suite}:{spec}" if suite is not None else spec
    match = _GATE.match(text) if isinstance(spec, str) else None
    if not match:
        form = "TASK:METRIC<=VALUE" if suite is not None else "SUITE_GLOB:TASK:METRIC<=VALUE"
        raise GateError(f"{source}: gate {spec!r} is not of the form {form} (or >=)")
    metric = match["metric"]
    known = known_metrics()
    if metric not in known:
        raise GateError(
            f"{source}: gate {spec!r}: unknown metric {metric!r}; known: {', '.join(sorted(known))}"
        )
    return Gate(match["suite"], match["task"], metric, match["op"], float(match["value"]), source)


def measured_text(m: Stat) -> str:
    """The measured value of a gate, or why there is none: "no items scored" when every item
    of the group ended in an error (a NaN printed as a number read like a measurement)."""
    if m.n == 0:
        return "no items scored: every item ended in an error or none ran"
    if math.isnan(m.value):
        return "undefined on these items"
    return f"measured {m.value:.4g}"


@dataclass(frozen=True)
class GateResult:
    """A gate checked against one (model, suite, task) aggregate."""

    gate: Gate
    model: str
    suite: str
    task: str
    measured: Stat

    @property
    def passed(self) -> bool:
        """Judged on the point value; the CI is shown, not used."""
        return self.gate.holds(self.measured.value)

    def describe(self) -> str:
        """PASS/FAIL line with the gate, its source, the model and the value with its CI."""
        m = self.measured
        ci = "" if math.isnan(m.lo) or m.lo == m.hi else f" (95% CI {m.lo:.4g}-{m.hi:.4g}, n={m.n})"
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"{verdict} gate {self.gate.spec} [{self.gate.source}] on {self.model} "
            f"{self.suite}:{self.task}: {measured_text(m)}{ci}"
        )


def evaluate(
    gates: Iterable[Gate], aggregates: list[Aggregate]
) -> tuple[list[GateResult], list[Gate]]:
    """(results, gates that matched nothing) — the latter are reported, never silently dropped."""
    results: list[GateResult] = []
    unmatched: list[Gate] = []
    for gate in gates:
        matched = False
        for agg in aggregates:
            if agg.stage is not None or gate.metric not in agg.metrics:
                continue
            if "+" not in gate.suite and registry.split_variant(agg.suite)[1] is not None:
                continue  # derived suites (adversarial swaps) are gated only by globs naming them
            if fnmatch.fnmatchcase(agg.suite, gate.suite) and fnmatch.fnmatchcase(
                agg.task, gate.task
            ):
                matched = True
                results.append(
                    GateResult(gate, agg.model, agg.suite, agg.task, agg.metrics[gate.metric])
                )
        if not matched:
            unmatched.append(gate)
    return results, unmatched


def check_known(gates: Iterable[Gate], tasks_by_suite: Mapping[str, Iterable[str]]) -> None:
    """Raise GateError for the first gate whose suite glob names no suite that exists, or whose
    task glob names no task of those suites.

    Why at start: such a gate matches nothing after the run and is printed as SKIP, so a typo
    (``reasons/*:indirct:accuracy>=0.2``) gives a CI gate that can never fire. A gate that
    matches a real suite and task whose items were deselected (``-k``, ``--citebench-task``,
    a shard) is fine: it prints SKIP after the run, as before.
    """
    names: dict[str, set[str]] = {}
    for suite, tasks in tasks_by_suite.items():
        names.setdefault(suite, set()).update(tasks)
        for variant in registry.variant_names():  # derived suites report as '<suite>+<variant>'
            names.setdefault(f"{suite}+{variant}", set()).update(tasks)
    for gate in gates:
        suites = [s for s in names if fnmatch.fnmatchcase(s, gate.suite)]
        if not suites:
            known = ", ".join(sorted(tasks_by_suite)) or "none found"
            raise GateError(
                f"{gate.source}: gate {gate.spec!r}: suite {gate.suite!r} matches no suite; "
                f"known suites: {known}"
            )
        tasks = sorted(set().union(*(names[s] for s in suites)))
        if not any(fnmatch.fnmatchcase(t, gate.task) for t in tasks):
            raise GateError(
                f"{gate.source}: gate {gate.spec!r}: task {gate.task!r} matches no task of "
                f"suite {gate.suite!r}; its tasks: {', '.join(tasks)}"
            )


# -- where gates come from: the one place a spec becomes a Gate ----------------------------------
# A pytest run and ``merge`` read the same three sources (the command line, the suites'
# manifests, pyproject's ``[tool.citebench] gates``) through these, so the two cannot parse a
# gate differently.


def gates_from(specs: Iterable[str], source: str) -> list[Gate]:
    """The command line's or pyproject's gates, each naming where it came from."""
    return [parse_gate(spec, source=source) for spec in specs]


def add_manifest_gates(gates: list[Gate], manifest: Any, *, skip_bad: bool = False) -> None:
    """A suite manifest's gates, scoped to its suite, appended to ``gates`` as they parse (the
    new ones only). A bad one raises ``GateError``, or with ``skip_bad`` is left out (the
    start-up check: collection then reports that suite invalid)."""
    for spec in manifest.gates:
        try:
            gate = parse_gate(spec, source=str(manifest.manifest_file), suite=manifest.name)
        except GateError:
            if not skip_bad:
                raise
            continue
        add_new(gates, [gate])


def add_new(gates: list[Gate], more: Iterable[Gate]) -> None:
    """Append the gates not already there, keeping the order they were given in."""
    for gate in more:
        if gate not in gates:
            gates.append(gate)
