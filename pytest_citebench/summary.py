"""The ``citebench`` section of pytest's terminal summary: one table, then a line per gate."""

from __future__ import annotations

from typing import Any

from pytest_citebench.recording import redact_params
from pytest_citebench.report import render_table
from pytest_citebench.reports.escape import terminal


def _task(name: str) -> Any:
    from pytest_citebench.tasks import registry

    try:
        return registry.get(name)
    except KeyError:
        return None


def write_summary(tr: Any, cb: Any) -> None:
    tr.write_sep("=", "citebench")
    opts = cb.options
    p = opts.params
    tr.write_line(
        f"models: {', '.join(opts.models)} | record: {opts.record} | "
        f"temperature {p.temperature:g}, "
        f"top_p {p.top_p:g}, max_tokens {p.max_tokens}"
        + (f", {redact_params(dict(p.extra))}" if p.extra else "")
    )
    if not cb.aggregates and cb.records:
        # An interrupted run (Ctrl-C, --citebench-max-errors) never reached finish(): show what
        # finished, without writing partial aggregates to the results file.
        from pytest_citebench.report import aggregate

        cb.aggregates = aggregate(cb.records)
        tr.write_line("(interrupted: aggregates of the items that finished)")
    if not cb.aggregates:
        tr.write_line("no citebench items ran")
    else:
        tr.write_line("95% CIs in brackets: Wilson for acc/PP, bootstrap (B=2000) for HR/F1/BLEU")
        for line in render_table(cb.aggregates):
            tr.write_line(line)
    adversarial = adversarial_lines(cb.records)
    if adversarial:
        tr.write_sep("-", "citebench: adversarial swaps, original -> swapped (REASONS Table 3)")
        for line in adversarial:
            tr.write_line(line)
    # Tasks may add lines of their own (a calibration table, a DOI breakdown), once per task.
    tasks = sorted({agg.task for agg in cb.aggregates})
    for name in tasks:
        extra = getattr(_task(name), "summary_lines", None)
        if extra is not None:
            lines = extra([a for a in cb.aggregates if a.task == name], cb.records)
            if lines:
                tr.write_sep("-", f"citebench: {name}")
                for line in lines:
                    tr.write_line(line)
    errors = cb.error_counts()
    for model, count in sorted(errors.items()):
        tr.write_line(
            f"ERROR {model}: {count} item(s) ended in an error (provider, cassette or parse)",
            red=True,
        )
    shown = 0
    for record in cb.records:
        if record["outcome"] == "hallucinated" and shown < opts.show:
            if shown == 0:
                tr.write_sep(
                    "-", f"first {opts.show} hallucinated items (all in --citebench-results)"
                )
            shown += 1
            tr.write_line(terminal(record["nodeid"]))
            tr.write_line(f"    expected: {terminal(record['expected'][:200])}")
            tr.write_line(f"    given:    {terminal(record['answer'][:200])}")
            metrics = ", ".join(f"{k}={v:.3f}" for k, v in sorted(record["metrics"].items()))
            tr.write_line(f"    metrics:  {metrics}")
    if cb.gates:
        tr.write_sep("-", "citebench gates")
    for result in cb.gate_results:
        tr.write_line(result.describe(), green=result.passed, red=not result.passed)
    for gate in cb.unmatched_gates:
        tr.write_line(f"SKIP gate {gate.spec} [{gate.source}]: no results matched it", yellow=True)
    write_baseline_section(tr, cb)
    shard = getattr(opts, "shard", None)
    if shard is not None and (cb.gate_results or getattr(cb, "comparison", None) is not None):
        tr.write_line(
            f"shard {shard.spec}: gates and baseline deltas cover this shard's items only and do "
            "not fail it; merge the shards to decide (python -m pytest_citebench merge)",
            yellow=True,
        )
    if opts.results:
        tr.write_line(f"results: {opts.results}")
    for label, path in getattr(cb, "written_reports", []):
        tr.write_line(f"{label}: {path}")


def write_baseline_section(tr: Any, cb: Any) -> None:
    """Deltas against ``--citebench-baseline`` with CIs, then one FAIL line per regression."""
    comparison = getattr(cb, "comparison", None)
    if comparison is None:
        return
    from pytest_citebench.compare import comparison_lines

    tr.write_sep(
        "-",
        f"citebench baseline {comparison.baseline} "
        f"(tolerance {100 * comparison.tolerance:g} points; deltas in points, 95% CI; "
        f"p adjusted: {getattr(comparison, 'correction', 'none')})",
    )
    lines = comparison_lines(comparison)
    if not lines:
        tr.write_line("nothing to compare: no model x suite x task of this run is in the baseline")
    for line in lines:
        tr.write_line(line)
    for note in comparison.notes():
        tr.write_line(f"note: {note}", yellow=True)
    for delta in comparison.failures:
        tr.write_line(delta.describe(), red=True)


def adversarial_lines(records: list[dict[str, Any]]) -> list[str]:
    """Each swapped suite beside its original *on the same items*, per model and task: PP,
    BLEU, F1, HR (the paper's Table 3)."""
    from pytest_citebench.report import _aggregate_group

    groups: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
    for record in records:
        key = (record["model"], record["suite"], record["task"])
        groups.setdefault(key, {})[record["item_id"]] = record
    rows = [["suite", "task", "model", "n", "PP %", "BLEU %", "F1 %", "HR code %", "HR paper %"]]
    for (model, suite, task), swapped in sorted(groups.items(), key=lambda kv: kv[0][1:]):
        if "+swap-" not in suite:
            continue
        original = groups.get((model, suite.split("+swap-")[0], task), {})
        shared = sorted(set(swapped) & set(original))
        if not shared:
            continue
        a = _aggregate_group(model, suite, task, [original[i] for i in shared])
        b = _aggregate_group(model, suite, task, [swapped[i] for i in shared])
        row = [suite, task, model, str(len(shared))]
        for metric in ("pp", "bleu", "f1", "hr_code", "hr_paper"):
            row.append(f"{_pct(a.metrics.get(metric))} -> {_pct(b.metrics.get(metric))}")
        rows.append(row)
    if len(rows) == 1:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _pct(stat: Any) -> str:
    if stat is None or stat.value != stat.value:  # NaN: nothing answered
        return "-"
    return f"{stat.value * 100:.1f}"
