"""``--citebench-html FILE``: one self-contained HTML page (inline CSS and SVG, no script, no
network) that a release meeting can open from a CI artifact.

Order follows the questions people ask: what was judged (the verdict: gates passed, gate failed,
or no gate set), how often each model was right or invented a citation per task (never pooled
across tasks), where (a suite x model heatmap per task), the per-domain figures, gates, baseline
and usage, the full numbers with CIs, the task-specific views when their data exists (adversarial
Table 3, ArxEval Table 5, guard curves), and finally the worst answers of every suite x task next
to the gold, because one bad example convinces more than a mean. No local file path is shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from pytest_citebench.api import Chart, Section
from pytest_citebench.reports import data as d
from pytest_citebench.reports import svg
from pytest_citebench.reports.data import ReportData
from pytest_citebench.reports.format import fmt, label
from pytest_citebench.reports.formats import ReportFormat

FORMAT = ReportFormat(
    name="html",
    label="html report",
    help="write a self-contained HTML report here",
    merge_help="write the HTML report here",
    render="render_html",
    escape_redacted=True,
)

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d1d1f;
background:#fff;max-width:1360px}
h1{font-size:24px;margin:0 0 8px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;
padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;margin:10px 0}
.ok{background:#e8f5e9;color:#1b5e20;border:1px solid #a5d6a7}
.neutral{background:#f5f5f7;color:#333;border:1px solid #ccc}
.heat{display:flex;flex-wrap:wrap;gap:24px}.heat table{font-size:12px}
.heat td.cell{text-align:center;min-width:64px;font-variant-numeric:tabular-nums}
.heat td.none{color:#999;background:#fafafa}
.bad{background:#ffebee;color:#b71c1c;border:1px solid #ef9a9a}
table{border-collapse:collapse;margin:6px 0 12px;font-size:12.5px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f5f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.fail td{background:#fff1f1}.tag-fail{color:#c62828;font-weight:700}
.tag-pass{color:#2e7d32;font-weight:700}.tag-skip{color:#8d6e00;font-weight:700}
.charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.chart{background:#fff;border:1px solid #eee}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px;margin:6px 0}
dt{color:#666}dd{margin:0}nav a{margin-right:12px;font-size:13px}
.muted{color:#666;font-size:12.5px}td{white-space:nowrap}
td.text{max-width:min(420px,26vw);overflow-wrap:anywhere;white-space:normal}
td.list{white-space:normal;min-width:240px;max-width:560px}.nw{white-space:nowrap}
.ci{display:block;color:#777;font-size:10.5px}th{white-space:normal;min-width:3em}
.wide{max-width:100%;overflow-x:auto}.chart{max-width:100%;height:auto}
details{margin:4px 0 8px}summary{cursor:pointer;font-weight:600;font-size:15px;margin:10px 0 6px}
summary .muted{font-weight:400}
"""


def _table(
    header: Sequence[str], rows: Iterable[Sequence[Any]], *, numeric_from: int = 99, cls: str = ""
) -> str:
    """Rows of cells; a cell may be (text, css class) or ("<raw>", ...) when pre-escaped via
    ``_Raw``. Columns from ``numeric_from`` on are right-aligned."""
    # Wrapped so a table wider than the page scrolls inside it instead of widening the page.
    out = [f"<div class='wide'><table{f' class={cls!r}' if cls else ''}><thead><tr>"]
    out += [f"<th>{escape(h)}</th>" for h in header]
    out.append("</tr></thead><tbody>")
    for row in rows:
        row_class = ""
        cells = list(row)
        if cells and isinstance(cells[0], _RowClass):
            row_class = f" class='{cells.pop(0).name}'"
        out.append(f"<tr{row_class}>")
        for i, cell in enumerate(cells):
            classes = []
            if i >= numeric_from:
                classes.append("num")
            if isinstance(cell, _Raw):
                body = cell.html
                if cell.cls:
                    classes.append(cell.cls)
            else:
                body = escape(str(cell))
            attr = f" class='{' '.join(classes)}'" if classes else ""
            out.append(f"<td{attr}>{body}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


class _Raw:
    def __init__(self, html: str, cls: str = "") -> None:
        self.html = html
        self.cls = cls


class _RowClass:
    def __init__(self, name: str) -> None:
        self.name = name


def _text(value: Any, limit: int = 600) -> _Raw:
    text = str(value or "")
    if len(text) > limit:
        text = text[:limit] + "…"
    return _Raw(escape(text), "text")


def _stat(stat: Any, metric: str) -> Any:
    """A metric's value with its CI on a line of its own below it: a column as wide as the
    value, not as "24.0 [23.0, 25.0]" (the all-metrics tables overflowed 1,400 px so)."""
    text = fmt(stat, metric)
    value, bracket, ci = text.partition(" [")
    if not bracket:
        return text
    return _Raw(f"{escape(value)}<span class='ci'>[{escape(ci)}</span>")


def _listing(parts: Iterable[str]) -> _Raw:
    """Items that wrap between one another, never inside one ("recall_at_1 98.5 [...]")."""
    return _Raw(", ".join(f"<span class='nw'>{escape(p)}</span>" for p in parts), "list")


#: Past this many charts (or worst-answer groups), each task's are folded under its name, so
#: the page opens on its tables: the full bm25 run drew 88 charts, 24,600 px of them.
FOLD_AFTER = 12


def _fold(summary: str, body: str, *, unfolded: bool) -> str:
    """A task's block under its name, open when the page is short enough to show it all."""
    state = " open" if unfolded else ""
    return f"<details{state}><summary>{summary}</summary>{body}</details>"


def render_html(data: ReportData, *, worst: int | None = None) -> str:
    """The page, unscrubbed (``write_reports`` scrubs keys and paths); ``worst`` overrides
    ``data.show``. A section appears only when the run has data for it."""
    from pytest_citebench.reports import headline as h
    from pytest_citebench.reports import usage as u

    sections: list[tuple[str, str, str]] = []  # (id, heading, body)
    aggregates = list(data.aggregates)
    records = list(data.records)

    sections.append(("headline", "Outcomes per model and task", _headline(data)))
    maps = d.heatmaps(aggregates)
    if maps:
        sections.append(("heatmap", "Hallucinated and correct, per suite and model", _heat(maps)))
    charts = d.chart_specs(aggregates)
    if charts:
        sections.append(("charts", "Per domain and model", _charts(charts)))
    if data.gate_results or data.unmatched_gates:
        sections.append(("gates", "Gates", _gates(data)))
    if data.comparison is not None:
        sections.append(("baseline", "Regression against the baseline", _baseline(data)))
    suspect = data.suspect
    if suspect is not None and (suspect.total or suspect.included):
        title = "set apart" if suspect.total else "counted"
        sections.append(("suspect", f"Gold suspect, {title}", _suspect(suspect)))
    usage = u.usage_rows(data.usage_records)
    if usage:
        sections.append(("usage", "Usage per model", _usage(usage)))
    if aggregates:
        sections.append(("metrics", "All metrics with 95% CIs", _metrics(aggregates)))
    for section in data.sections:  # each paper's own tables and charts
        sections.append((section.key, section.title, _section(section)))
    per_group = data.show if worst is None else worst
    groups = h.worst_groups(records, per_group)
    if groups and per_group > 0:
        sections.append(("worst", "Worst answers", _worst(groups, per_group)))
    errors = data.errors
    if errors:
        sections.append(("errors", f"Errors ({len(errors)})", _errors(errors)))

    v = data.verdict()
    verdict = f"<div class='verdict {v.state}' id='verdict'>{escape(v.line())}</div>"
    settings = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in data.settings if v)
    nav = "".join(f"<a href='#{sid}'>{escape(title)}</a>" for sid, title, _ in sections)
    body = "".join(
        f"<section id='{sid}'><h2>{escape(title)}</h2>{html}</section>"
        for sid, title, html in sections
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(data.title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape(data.title)}</h1>{verdict}"
        + (f"<dl>{settings}</dl>" if settings else "")
        + f"<nav>{nav}</nav></header>{body}"
        "<footer><p class='muted'>95% CIs: Wilson for shares (correct, hallucinated, "
        "unanswered, partial, abstained), bootstrap (B=2000, seed 0) for per-item means; task set "
        "metrics as their tasks define. Generated by pytest-citebench.</p></footer></body></html>\n"
    )


def _headline(data: ReportData) -> str:
    from pytest_citebench.reports import headline as h

    records = list(data.records)
    if not records:
        return "<p>No citebench items ran.</p>"
    suites = sorted({str(r["suite"]) for r in records})
    out = [
        f"<p>{len(records)} item results, {len(suites)} suite(s). Shares of the scored items "
        "(errors excluded) with Wilson 95% CIs; the suites of a task are pooled, tasks never "
        "are.</p>"
    ]
    rows = h.headline_rows(records)
    if rows:
        table_rows = [
            [r.model, r.task_label, r.suites, r.n, r.errors]
            + [_stat(r.share(s), s) for s in h.SHARES]
            for r in rows
        ]
        header = ["model", "task", "suites", "n", "errors", *(h.SHARE_LABELS[s] for s in h.SHARES)]
        out.append(_table(header, table_rows, numeric_from=2))
    own = h.own_metric_aggregates(data.aggregates)
    if own:
        out.append("<h3>Tasks judged by their own metrics</h3>")
        own_rows = [
            [
                a.model,
                a.task,
                a.suite,
                a.metrics["n"].n if "n" in a.metrics else "",
                a.counts.get("error", 0),
                _listing(f"{label(m)} {fmt(a.metrics.get(m), m)}" for m in h.own_metrics(a)),
            ]
            for a in own
        ]
        out.append(_table(["model", "task", "suite", "n", "errors", "metrics"], own_rows))
    return "".join(out)


def _shade(value: float, rgb: tuple[int, int, int]) -> str:
    """White at 0, ``rgb`` at 1: the cell's colour says the share before the number does."""
    r, g, b = (round(255 + (c - 255) * value) for c in rgb)
    ink = "#fff" if value > 0.6 else "#1d1d1f"
    return f"background:#{r:02x}{g:02x}{b:02x};color:{ink}"


_HEAT = (("hallucinated", (198, 40, 40)), ("correct", (46, 125, 50)))


def _heat(maps: Sequence[d.Heatmap]) -> str:
    out = [
        "<p class='muted'>Per task, one cell per suite and model: the share of scored items "
        "hallucinated (red) and correct (green), in %. Hover a cell for its 95% CI and n.</p>"
    ]
    for m in maps:
        out.append(f"<h3>{escape(m.task)}</h3><div class='heat'>")
        for outcome, rgb in _HEAT:
            head = "".join(f"<th>{escape(model)}</th>" for model in m.models)
            rows = []
            for suite in m.suites:
                cells = []
                for model in m.models:
                    cell = m.cells.get((suite, model))
                    stat = getattr(cell, outcome) if cell is not None else None
                    if stat is None or math.isnan(stat.value):
                        cells.append("<td class='cell none'>–</td>")
                        continue
                    tip = (
                        f"{outcome} {100 * stat.value:.1f}% "
                        f"[{100 * stat.lo:.1f}, {100 * stat.hi:.1f}], n={stat.n}"
                    )
                    cells.append(
                        f"<td class='cell' style='{_shade(stat.value, rgb)}' "
                        f"title='{escape(tip)}'>{100 * stat.value:.1f}</td>"
                    )
                rows.append(f"<tr><th>{escape(suite)}</th>{''.join(cells)}</tr>")
            out.append(
                f"<table class='heatmap' data-outcome='{outcome}'><caption>{outcome} %</caption>"
                f"<thead><tr><th>suite</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
                "</table>"
            )
        out.append("</div>")
    return "".join(out)


def _suspect(summary: Any) -> str:
    from pytest_citebench.reports import suspect as sus

    html = f"<p>{escape(sus.intro(summary))}</p>"
    if summary.rows:
        rows = sus.table(summary)
        body = [[*r[:3], *(_listing(c.split(", ")) for c in r[3:])] for r in rows[1:]]
        table = _table(rows[0], body)
        if len(body) > FOLD_AFTER:
            table = _fold(f"per suite and task <span class='muted'>({len(body)} rows)</span>",
                          table, unfolded=False)  # fmt: skip
        html += table
        items = (
            f"<li><code>{escape(flag)}</code>: <code>{escape(where)}</code>: {escape(why)}</li>"
            for flag, (where, why) in summary.examples.items()
        )
        html += "<ul>" + "".join(items) + "</ul>"
    return html


def _usage(rows: Sequence[Any]) -> str:
    from pytest_citebench.reports import usage as u

    return (
        "<p class='muted'>Calls and tokens as the provider reported them; cost from "
        "litellm's local price map, n/a where it has no price for the model. Latency marked "
        "(replay) times reading the cassette, not the provider.</p>"
        + _table(list(u.HEADER), [u.cells(r) for r in rows], numeric_from=1)
    )


def _gates(data: ReportData) -> str:
    rows: list[list[Any]] = []
    for g in data.gate_results:
        m = g.measured
        ci = "" if math.isnan(m.lo) or m.lo == m.hi else f"{m.lo:.4g}–{m.hi:.4g}"
        tag = _Raw("PASS", "tag-pass") if g.passed else _Raw("FAIL", "tag-fail")
        row: list[Any] = [tag, g.gate.spec, g.gate.source, g.model, f"{g.suite}:{g.task}"]
        row += [f"{m.value:.4g}", ci, m.n]
        rows.append(row if g.passed else [_RowClass("fail"), *row])
    for gate in data.unmatched_gates:
        skip = _Raw("SKIP", "tag-skip")
        rows.append([skip, gate.spec, gate.source, "", "no results", "", "", ""])
    return _table(
        ["", "gate", "from", "model", "suite:task", "measured", "95% CI", "n"],
        rows,
        numeric_from=5,
    )


def _baseline(data: ReportData) -> str:
    comparison = data.comparison
    assert comparison is not None
    intro = (
        f"<p>Baseline <code>{escape(comparison.baseline)}</code>, tolerance "
        f"{100 * comparison.tolerance:.1f} points. Paired on the items both runs share: exact "
        "McNemar for accuracy and hallucinated, paired bootstrap (B=2000) for HR and F1. A metric "
        "fails when it is worse by more than the tolerance and significantly so (p &lt; 0.05, or "
        "the whole CI beyond the tolerance).</p>"
    )
    deltas = comparison.deltas
    if not deltas:
        body = "<p>Nothing to compare: no group of this run has a baseline.</p>"
    else:
        rows: list[list[Any]] = []
        for x in deltas:
            ci = "" if math.isnan(x.lo) else f"[{100 * x.lo:+.1f}, {100 * x.hi:+.1f}]"
            p = x.p_text().removeprefix("p=")
            cls = {"FAIL": "tag-fail", "better": "tag-pass"}.get(x.verdict, "")
            row: list[Any] = [_Raw(escape(x.verdict), cls), x.suite, x.task, x.model, x.metric]
            row += [x.n, f"{100 * x.base:.1f}", f"{100 * x.new:.1f}", f"{100 * x.delta:+.1f}", ci]
            row.append(p)
            rows.append([_RowClass("fail"), *row] if x.failed else row)
        body = _table(
            [*_DELTA_HEADER, "Δ points", "95% CI", "McNemar p"],
            rows,
            numeric_from=5,
        )
        forest_rows = []
        for x in deltas:
            # Oriented so that right is better: HR's CI flips sign, accuracy's does not.
            lo, hi = (x.lo, x.hi) if x.higher_is_better else (-x.hi, -x.lo)
            row_label = f"{x.suite}:{x.task} {x.metric} [{x.model}]"
            forest_rows.append((row_label, -x.worse_by, lo, hi, x.failed))
        body += svg.forest(
            "Change, oriented so that right is better (points, 95% CI)",
            forest_rows,
            tolerance=comparison.tolerance,
        )
    notes = comparison.notes()
    if notes:
        body += "<ul class='muted'>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"
    return intro + body


def _charts(specs: Sequence[d.ChartSpec]) -> str:
    all_open = len(specs) <= FOLD_AFTER
    out = [
        "<p class='muted'>One chart per task and metric, bars per model, whiskers the 95% CI: the "
        "layout of the REASONS paper's per-domain figures (HR, PP, F1, BLEU)."
        + ("" if all_open else " Past the first, each task's charts open under its name.")
        + "</p>"
    ]
    by_task: dict[str, list[d.ChartSpec]] = {}
    for spec in specs:
        by_task.setdefault(spec.task, []).append(spec)
    shown = 0
    for task, group in by_task.items():
        # The first tasks' charts open, as many as FOLD_AFTER allows (the first always).
        shown += len(group)
        unfolded = all_open or shown == len(group) or shown <= FOLD_AFTER
        drawn = "".join(
            svg.grouped_bars(
                f"{label(spec.metric)} — {task}",
                spec.suites,
                spec.models,
                {k: (s.value, s.lo, s.hi) for k, s in spec.values.items()},
            )
            for spec in group
        )
        names = ", ".join(label(spec.metric) for spec in group)
        summary = f"{escape(task)} <span class='muted'>({escape(names)})</span>"
        out.append(_fold(summary, f"<div class='charts'>{drawn}</div>", unfolded=unfolded))
    return "".join(out)


def _metrics(aggregates: Sequence[Any]) -> str:
    tasks = d.by_task(aggregates)
    unfolded = sum(len(group) for group in tasks.values()) <= _ROWS_UNFOLDED
    out = [] if unfolded else ["<p class='muted'>Each task's table opens under its name.</p>"]
    for task, group in tasks.items():
        block = _task_metrics(group)
        n = f"{len(group)} row(s)"
        out.append(
            _fold(f"{escape(task)} <span class='muted'>({n})</span>", block, unfolded=unfolded)
        )
    return "".join(out)


#: The all-metrics tables of a run with more rows than this (the full bm25 run has 115) are
#: folded per task: unfolded they were 12,000 px of a 22,000 px page.
_ROWS_UNFOLDED = 40


def _task_metrics(group: Sequence[Any]) -> str:
    """One task's aggregates: its outcome shares, then its own metrics, in tables that fit."""
    out = []
    cols = d.columns(group)
    labels = {a.label for a in group if a.label}
    # A task that never escalates has no final stage: no empty column for it (issue 36).
    staged = any(agg.stage for agg in group)
    rows = []
    for agg in group:
        row: list[Any] = [agg.suite, agg.model, *([agg.stage or ""] if staged else [])]
        row.append(agg.metrics["n"].n if "n" in agg.metrics else "")
        row.append(agg.counts.get("error", 0))
        row += [_stat(agg.metrics.get(m), m) for m in cols]
        rows.append(row)
    for text in sorted(labels):
        out.append(f"<p class='muted'>* {escape(text)}</p>")
    keys = 5 if staged else 4
    parts = _column_parts(cols)
    for number, part in enumerate(parts, start=1):
        if len(parts) > 1:
            what = "outcome shares" if number == 1 and _is_share(part[0]) else "metrics"
            out.append(f"<p class='muted'>{number} of {len(parts)}: {what}</p>")
        picked = [cols.index(m) + keys for m in part]
        out.append(
            _table(
                ["suite", "model", *(["final stage"] if staged else []), "n", "err"]
                + [label(m) for m in part],
                [row[:keys] + [row[i] for i in picked] for row in rows],
                numeric_from=3 if staged else 2,
            )
        )
    return "".join(out)


#: Metric columns in one table at most: more did not fit 1,400 px beside long model names.
_COLUMNS_PER_TABLE = 8


def _is_share(metric: str) -> bool:
    from pytest_citebench import registry

    return registry.metric_spec(metric).outcome is not None


def _column_parts(cols: Sequence[str]) -> list[list[str]]:
    """A task's metric columns in tables that fit the page: the outcome shares first, then the
    task's other metrics, eight at most to a table; one table when they all fit."""
    if len(cols) <= _COLUMNS_PER_TABLE:
        return [list(cols)]
    shares = [m for m in cols if _is_share(m)]
    rest = [m for m in cols if not _is_share(m)]
    parts = [shares] if shares else []
    parts += [rest[i : i + _COLUMNS_PER_TABLE] for i in range(0, len(rest), _COLUMNS_PER_TABLE)]
    return parts


_DELTA_HEADER = ("", "suite", "task", "model", "metric", "n", "base %", "new %")


def _chart(chart: Chart) -> str:
    """Draw a paper's chart spec with the core's SVG functions (see ``api.Chart``)."""
    d = chart.data
    if chart.kind == "line_chart":
        return svg.line_chart(d["title"], d["x_label"], d["xs"], d["lines"])
    if chart.kind == "stacked_bars":
        return svg.stacked_bars(d["title"], d["bars"], d["parts"])
    return svg.grouped_bars(d["title"], d["categories"], d["series"], d["values"])


def _section(section: Section) -> str:
    """A paper's section: its note, its table, its charts."""
    out = [f"<p class='muted'>{escape(section.note)}</p>"] if section.note else []
    if section.rows:
        out.append(_table(section.headers, section.rows, numeric_from=section.numeric_from or 99))
    if section.charts:
        out += ["<div class='charts'>", *(_chart(c) for c in section.charts), "</div>"]
    return "".join(out)


def _worst(groups: Sequence[Any], limit: int) -> str:
    from pytest_citebench.reports import headline as h

    out = [
        f"<p class='muted'>Up to {limit} per suite × task: hallucinated before unanswered before "
        "partial, then furthest from the gold (highest HR, lowest F1). All items are in the "
        "results file.</p>"
    ]
    unfolded = len(groups) <= FOLD_AFTER
    if not unfolded:
        out[0] = out[0].replace("</p>", " Each task's open under its name.</p>")
    by_task: dict[str, list[str]] = {}
    for g in groups:
        rows = [
            [
                r.get("outcome", ""),
                r.get("model", ""),
                r.get("item_id", ""),
                _text(r.get("expected")),
                _text(r.get("answer")),
                _text(r.get("reason"), 300),
                _listing(d.item_metrics_text(r).split(", ")),
            ]
            for r in g.shown
        ]
        by_task.setdefault(g.task, []).append(
            f"<h3>{escape(g.suite)}:{escape(g.task)} ({escape(h.wrong_counts_text(g))})</h3>"
            + _table(["outcome", "model", "item", "expected", "given", "reason", "metrics"], rows)
        )
    for task, blocks in by_task.items():
        summary = f"{escape(task)} <span class='muted'>({len(blocks)} suite(s))</span>"
        out.append(_fold(summary, "".join(blocks), unfolded=unfolded))
    return "".join(out)


def _errors(records: Sequence[Mapping[str, Any]], limit: int = 50) -> str:
    from pytest_citebench.reports import headline as h

    rows = [
        [
            h.where(r),
            _text((r.get("error") or "").strip(), 400),
        ]
        for r in records[:limit]
    ]
    more = f"<p class='muted'>…and {len(records) - limit} more.</p>" if len(records) > limit else ""
    return _table(["item", "error"], rows) + more
