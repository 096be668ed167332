"""The honest headline: the verdict's three wordings, outcome shares per model x task (never
pooled across tasks), the 160-column terminal table, worst answers of every suite x task by
severity, the HTML heatmaps, usage and cost, and no local file path in any report."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_citebench.__main__ import main as cli
from pytest_citebench.reports.conclude import Conclusion, error_counts
from pytest_citebench.reports.data import ReportData
from pytest_citebench.reports.headline import headline_rows, verdict, worst_groups
from pytest_citebench.reports.html import render_html
from pytest_citebench.reports.markdown import render_markdown
from pytest_citebench.reports.output import strip_paths, write_reports
from pytest_citebench.reports.summary import RunFacts, write_summary
from pytest_citebench.reports.terminal import render_table
from pytest_citebench.reports.usage import HEADER, usage_lines, usage_rows
from pytest_citebench.results.aggregate import aggregate
from pytest_citebench.results.compare import compare
from pytest_citebench.results.gates import evaluate, parse_gate


def rec(item: str, outcome: str, suite: str = "dom/a", **kw: Any) -> dict[str, Any]:
    metrics = kw.pop("metrics", None)
    if metrics is None:
        bad = outcome != "correct"
        metrics = (
            {}
            if outcome in ("abstained", "error")
            else {
                "hr_paper": 0.9 if bad else 0.0,
                "hr_code": 0.8 if bad else 0.0,
                "f1": 0.1 if bad else 1.0,
                "bleu": 0.0 if bad else 1.0,
            }
        )
    return {
        "type": "item",
        "model": kw.pop("model", "m1"),
        "suite": suite,
        "suite_version": 1,
        "task": kw.pop("task", "indirect"),
        "item_id": item,
        "nodeid": f"suites/{suite}/suite.toml::{item}",
        "outcome": outcome,
        "answer": kw.pop("answer", f"answer {item}"),
        "expected": kw.pop("expected", "the gold"),
        "metrics": metrics,
        "error": kw.pop("error", None),
        **kw,
    }


def data_for(records: list[dict[str, Any]], *gates: str, **kw: Any) -> ReportData:
    aggs = aggregate(records)
    results, unmatched = evaluate([parse_gate(g, source="--citebench-gate") for g in gates], aggs)
    return ReportData(records, aggs, results, unmatched, **kw)


class Terminal:
    """Just enough of pytest's TerminalReporter to capture the citebench summary."""

    def __init__(self, verbose: int = 0) -> None:
        self.lines: list[str] = []
        self.config = SimpleNamespace(option=SimpleNamespace(verbose=verbose))

    def write_sep(self, sep: str, title: str = "", **_: Any) -> None:
        self.lines.append(f"{sep * 3} {title} {sep * 3}")

    def write_line(self, line: str, **_: Any) -> None:
        self.lines.append(line)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def terminal(
    data: ReportData, *, show: int = 3, verbose: int = 0, tables: str = "full"
) -> Terminal:
    """The terminal summary of a run with these records, gates and comparison."""
    facts = RunFacts(
        models=sorted({r["model"] for r in data.records}),
        record="none",
        sampling="temperature 0, top_p 1, max_tokens 64",
        show=show,
        tables=tables,
    )
    conclusion = Conclusion(
        records=list(data.records),
        aggregates=list(data.aggregates),
        gates=[r.gate for r in data.gate_results],
        gate_results=list(data.gate_results),
        unmatched_gates=list(data.unmatched_gates),
        comparison=data.comparison,
        error_counts=error_counts(data.records),
    )
    tr = Terminal(verbose)
    write_summary(tr, conclusion, facts)
    return tr


# -- the verdict -----------------------------------------------------------------------------------


def all_hallucinated() -> list[dict[str, Any]]:
    return [rec(f"h{i}", "hallucinated") for i in range(12)]


def test_no_gate_says_nothing_was_judged_and_nothing_is_green() -> None:
    data = data_for(all_hallucinated())
    md = render_markdown(data)
    page = render_html(data)
    term = terminal(data).text
    assert md.startswith("## citebench: ⚪ no gate set: nothing was judged\n")
    assert "✅" not in md and "passed" not in md.lower()
    assert "<div class='verdict neutral' id='verdict'>no gate set: nothing was judged</div>" in page
    assert "verdict ok" not in page and "PASSED" not in page
    assert term.count("citebench verdict: no gate set: nothing was judged") == 2
    assert "PASS" not in term


def test_passing_gates_say_gates_passed_and_only_then_green() -> None:
    data = data_for(all_hallucinated(), "dom/a:indirect:hallucinated<=1.0")
    assert render_markdown(data).startswith("## citebench: ✅ gates passed (1)\n")
    assert "<div class='verdict ok' id='verdict'>gates passed (1)</div>" in render_html(data)
    assert "citebench verdict: gates passed (1)" in terminal(data).text


def test_a_failed_gate_is_named_and_errors_and_regressions_still_shown() -> None:
    records = [*all_hallucinated(), rec("e1", "error", error="ProviderError: boom")]
    data = data_for(records, "dom/a:indirect:hallucinated<=0.5", "dom/a:*:n>=1")
    line = (
        "gate failed: dom/a:indirect:hallucinated<=0.5 on m1 dom/a:indirect (measured 1); "
        "1 item(s) ended in an error"
    )
    # Markdown escapes "<" (raw HTML is never passed through); it renders as "<=".
    assert render_markdown(data).startswith(f"## citebench: ❌ {line.replace('<', '&lt;')}\n")
    assert f"<div class='verdict bad' id='verdict'>{escape(line)}</div>" in render_html(data)
    assert f"citebench verdict: {line}" in terminal(data).text

    # Gates that pass do not hide an error or a regression: the line is red, both are named.
    base = [rec(f"h{i}", "correct") for i in range(12)]
    comparison = compare(all_hallucinated(), base, baseline="base.jsonl")
    v = verdict([], [], errors=2, comparison=comparison)
    assert v.state == "bad" and v.gates == "none"
    assert v.line() == (
        "no gate set: nothing was judged; 2 item(s) ended in an error; "
        f"{len(comparison.failures)} regression(s) against the baseline"
    )
    ok = data_for(base, "dom/a:indirect:accuracy>=0.9")
    ok.comparison = compare(base, base, baseline="base.jsonl")
    assert ok.verdict().line() == (
        "gates passed (1); no regression against the baseline in 1 group(s) compared"
    )
    assert ok.verdict().state == "ok"


@pytest.mark.parametrize(
    ("gate", "expected"),
    [
        (None, "citebench verdict: no gate set: nothing was judged"),
        ("tiny:indirect:accuracy>=0.25", "citebench verdict: gates passed (1)"),
        (
            "tiny:indirect:accuracy>=0.99",
            "citebench verdict: gate failed: tiny:indirect:accuracy>=0.99 on citebench/bm25 "
            "tiny:indirect (measured 0.5)",
        ),
    ],
)
def test_plugin_terminal_verdict(
    pytester: pytest.Pytester, tiny: Path, gate: str | None, expected: str
) -> None:
    args = ["--citebench", "-p", "no:cacheprovider"] + (["--citebench-gate", gate] if gate else [])
    result = pytester.runpytest(*args)
    lines = result.outlines
    start = lines.index(next(x for x in lines if "= citebench =" in x))
    # The verdict comes first in the section, before the headline, and again as its last line.
    assert lines[start + 2] == expected
    assert lines.count(expected) == 2
    section = lines[start:]
    assert all(len(x) <= 160 for x in section), max(section, key=len)


# -- the headline: per model x task, never pooled across tasks --------------------------------------


def test_headline_never_pools_tasks_and_pools_suites_of_one_task() -> None:
    records = [rec(f"d{i}", "correct", task="direct") for i in range(10)]
    records += [rec(f"i{i}", "hallucinated") for i in range(7)]
    records += [rec(f"i{i}", "correct", suite="dom/b") for i in range(3)]
    records += [rec(f"s{i}", "unanswered", suite="dom/a+swap-title") for i in range(4)]
    rows = {(r.model, r.task_label): r for r in headline_rows(records)}
    assert set(rows) == {("m1", "direct"), ("m1", "indirect"), ("m1", "indirect (swap-title)")}
    indirect = rows[("m1", "indirect")]
    assert (indirect.suites, indirect.n) == (2, 10)
    assert indirect.share("hallucinated").value == pytest.approx(0.7)
    assert rows[("m1", "direct")].share("correct").value == 1.0
    assert rows[("m1", "indirect (swap-title)")].share("unanswered").value == 1.0

    data = data_for(records)
    md = render_markdown(data)
    headline = md.split("### Outcomes per model and task")[1].split("###")[0]
    # Wilson 95% CIs, hand-checked: 3/10 -> [10.8, 60.3], 7/10 -> [39.7, 89.2].
    assert "| m1 | indirect | 2 | 10 | 0 | 30.0 [10.8, 60.3] | 70.0 [39.7, 89.2] |" in headline
    assert "| m1 | direct | 1 | 10 | 0 | 100.0 [72.2, 100.0] | 0.0 [0.0, 27.8] |" in headline
    # 13 of 20 correct over both tasks is the pooled number nobody should see.
    for text in (headline, render_html(data), terminal(data).text):
        assert "65.0" not in text
    page = render_html(data)
    assert page.index("id='headline'") < page.index("id='heatmap'") < page.index("id='charts'")
    assert "<td>indirect (swap-title)</td>" in page


def test_set_metric_tasks_show_their_metrics_not_outcome_shares() -> None:
    calib = [
        rec(
            f"c{i}",
            "correct",
            suite="g/cal",
            task="calibrate",
            metrics={"score": i / 40, "label": float(i % 2), "precomputed": 1.0},
        )
        for i in range(40)
    ]
    records = [*calib, rec("x", "hallucinated")]
    data = data_for(records)
    assert {r.task for r in headline_rows(records)} == {"indirect"}
    page = render_html(data)
    assert "Tasks judged by their own metrics" in page and "catch_rate" in page
    # No "acc" (or any outcome share) chart, heatmap or per-suite column for calibrate.
    assert "acc % — calibrate" not in page and "PP % — calibrate" not in page
    assert "catch_rate — calibrate" in page  # its own metrics are still charted
    assert "acc % — indirect" in page and "halluc % — indirect" in page
    heat = page.split("id='heatmap'")[1].split("</section>")[0]
    assert "<h3>indirect</h3>" in heat and "calibrate" not in heat
    table = "\n".join(render_table(data.aggregates))
    calib_header = next(x for x in table.splitlines() if x.startswith("suite") and "catch" in x)
    assert "acc %" not in calib_header and "halluc %" not in calib_header
    md = render_markdown(data)
    assert "| m1 | calibrate | g/cal | 40 | 0 | catch_rate " in md


# -- the terminal table: hallucinated column, 160 columns unless -v ---------------------------------


def test_terminal_table_has_hallucinated_and_fits_160_columns_unless_verbose() -> None:
    records = []
    for suite in ("reasons/neurons_and_cognition+swap-title", "reasons/hci"):
        for model in ("openai/gpt-4o-mini-2024-07-18", "citebench/bm25"):
            for task in ("indirect", "sid_oracle_with_authors"):
                records += [
                    rec(f"{task}{i}", o, suite=suite, model=model, task=task)
                    for i, o in enumerate(["correct", "hallucinated", "unanswered", "abstained"])
                ]
    aggs = aggregate(records)
    lines = render_table(aggs)
    assert max(len(x) for x in lines) <= 160, max(lines, key=len)
    header = next(x for x in lines if x.startswith("suite"))
    assert "halluc %" in header and "acc %" in header and "unans %" in header
    assert any(x.startswith("not shown, to fit 160 columns (-v shows them):") for x in lines)
    verbose = render_table(aggs, verbose=True)
    assert max(len(x) for x in verbose) > 160  # everything: wider than the default
    assert all(m in "\n".join(verbose) for m in ("HR code %", "BLEU %", "F1 %", "partial %"))
    assert not any("not shown" in x for x in verbose)
    # The whole summary fits too: the headline (long model and task names: one line per model),
    # the worst answers with long answers, the set-metric tasks.
    long_names = [
        dict(r, model="anthropic/claude-3-5-sonnet-20241022-with-a-long-suffix")
        for r in records[:8]
    ]
    from pytest_citebench.reports.headline import headline_lines

    headline = headline_lines(long_names, aggregate(long_names))
    assert max(len(x) for x in headline) <= 160, max(headline, key=len)
    assert "anthropic/claude-3-5-sonnet-20241022-with-a-long-suffix" in headline
    assert any(x.startswith("  sid_oracle_with_authors (swap-title)") for x in headline)
    # The whole summary fits too, worst answers with long answers included.
    long = [dict(r, answer="x" * 500, expected="y" * 500) for r in records]
    data = data_for(long)
    assert max(len(x) for x in terminal(data).lines) <= 160
    assert any("BLEU %" in x for x in terminal(data, verbose=1).lines)


# -- worst answers ---------------------------------------------------------------------------------


def test_worst_answers_cover_every_suite_and_task_by_severity() -> None:
    records = [rec(f"a{i}", "hallucinated", suite="aaa") for i in range(20)]
    # In "zzz": an unanswered item far from the gold, a hallucinated one close to it: the
    # hallucinated one still comes first, then unanswered, then partial.
    records += [
        rec("u1", "unanswered", suite="zzz", metrics={"hr_paper": 1.0}),
        rec("p1", "partial", suite="zzz", metrics={"hr_paper": 1.0}),
        rec("h1", "hallucinated", suite="zzz", metrics={"hr_paper": 0.2}),
        rec("h2", "hallucinated", suite="zzz", metrics={"hr_paper": 0.6}),
        rec("c1", "correct", suite="zzz"),
    ]
    records += [rec("d1", "hallucinated", suite="zzz", task="direct")]
    groups = worst_groups(records, 4)
    assert [(g.suite, g.task) for g in groups] == [
        ("aaa", "indirect"),
        ("zzz", "direct"),
        ("zzz", "indirect"),
    ]
    assert [r["item_id"] for r in groups[2].shown] == ["h2", "h1", "u1", "p1"]
    assert len(groups[0].shown) == 4  # bounded per suite x task

    data = data_for(records, show=2)
    term = terminal(data, show=2).text
    md = render_markdown(data)
    page = render_html(data)
    for text in (term, md, page):
        for group in ("aaa:indirect", "zzz:direct", "zzz:indirect"):
            assert group in text, group
    worst_term = term.split("worst answers")[1]
    # --citebench-show 2 per suite x task; node ids, so an item can be re-run from the terminal.
    assert worst_term.count("  hallucinated: suites/aaa/suite.toml::a") == 2
    assert worst_term.index("suite.toml::h2") < worst_term.index("suite.toml::h1")
    assert "(2 hallucinated, 1 unanswered, 1 partial of 5)" in term
    worst_page = page.split("id='worst'")[1]
    assert worst_page.index("h2") < worst_page.index("h1")
    assert worst_page.count("<td>aaa") == 0 and worst_page.count("<h3>aaa:indirect") == 1
    assert "unanswered" in md.split("Worst answers")[1] and "partial" in md.split("Worst")[1]


# -- HTML heatmap ----------------------------------------------------------------------------------


def test_html_opens_with_a_suite_by_model_heatmap_per_task() -> None:
    records = []
    for suite, model, k in (("s/a", "m1", 1), ("s/a", "m2", 3), ("s/b", "m1", 4)):
        records += [rec(f"{suite}{model}{i}", "hallucinated", suite, model=model) for i in range(k)]
        records += [rec(f"{suite}{model}c{i}", "correct", suite, model=model) for i in range(4 - k)]
    records += [rec("d", "correct", "s/a", task="direct")]
    page = render_html(data_for(records))
    nav = re.findall(r"<a href='#(\w+)'>", page)
    assert nav[:3] == ["headline", "heatmap", "charts"]
    heat = page.split("id='heatmap'")[1].split("</section>")[0]
    assert heat.count("<table class='heatmap' data-outcome='hallucinated'>") == 2  # per task
    assert heat.count("<table class='heatmap' data-outcome='correct'>") == 2
    indirect = heat.split("<h3>indirect</h3>")[1]
    hall = indirect.split("data-outcome='hallucinated'")[1].split("</table>")[0]
    assert "<th>suite</th><th>m1</th><th>m2</th>" in hall
    # s/a: m1 1 of 4, m2 3 of 4; s/b: m1 4 of 4, m2 did not run it (a gap, not a zero).
    row_a = hall.split("<th>s/a</th>")[1].split("</tr>")[0]
    row_b = hall.split("<th>s/b</th>")[1].split("</tr>")[0]
    assert re.findall(r">([\d.–]+)</td>", row_a) == ["25.0", "75.0"]
    assert re.findall(r">([\d.–]+)</td>", row_b) == ["100.0", "–"]
    assert "background:#c62828" in row_b  # 100% hallucinated: the full red
    assert "title='hallucinated 25.0% [4.6, 69.9], n=4'" in row_a
    assert not re.search(r"<script|<link|<img|src=|@import|url\(", page)


# -- usage and cost --------------------------------------------------------------------------------


def usage(calls: int, cost: float | None, latencies: list[float]) -> dict[str, Any]:
    return {
        "calls": calls,
        "prompt_tokens": 100 * calls,
        "completion_tokens": 10 * calls,
        "cost": cost,
        "latencies": latencies,
    }


def test_usage_table_per_model_in_terminal_markdown_and_html() -> None:
    records = [
        rec("a", "correct", model="openai/x", usage=usage(1, 0.001, [1.0])),
        rec("b", "hallucinated", model="openai/x", usage=usage(2, 0.002, [2.0, 3.0])),
        rec("c", "correct", model="openai/x", usage=usage(1, 0.0005, [4.0])),
        rec("d", "correct", model="local/y", usage=usage(1, None, [0.5])),
        rec("e", "correct", model="mixed/z", usage=usage(1, 0.01, [])),
        rec("f", "correct", model="mixed/z", usage=usage(1, None, [])),
        rec("g", "correct", model="citebench/bm25"),  # built-in: no usage at all
    ]
    rows = {r.model: r for r in usage_rows(records)}
    assert set(rows) == {"openai/x", "local/y", "mixed/z"}
    x = rows["openai/x"]
    assert (x.items, x.calls, x.prompt_tokens, x.completion_tokens) == (3, 4, 400, 40)
    assert x.cost == pytest.approx(0.0035) and x.unpriced == 0
    # Linear interpolation over [1, 2, 3, 4]: p50 2.5, p95 3.85.
    assert (x.p50, x.p95) == (pytest.approx(2.5), pytest.approx(3.85))
    lines = usage_lines(records)
    assert re.split(r"\s{2,}", lines[0]) == list(HEADER)
    text = "\n".join(lines)
    assert re.search(r"openai/x\s+3\s+4\s+400\s+40\s+\$0\.0035\s+2\.50 s\s+3\.85 s", text)
    assert re.search(r"local/y\s+1\s+1\s+100\s+10\s+n/a\s+0\.50 s\s+0\.50 s", text)
    assert "≥ $0.0100 (1 item(s) unpriced)" in text and "citebench/bm25" not in text

    data = data_for(records)
    term = terminal(data).text
    assert "usage per model" in term and "$0.0035" in term and "n/a" in term
    md = render_markdown(data)
    assert "### Usage per model" in md and "| openai/x | 3 | 4 | 400 | 40 | $0.0035 |" in md
    page = render_html(data)
    assert "id='usage'" in page and "<td class='num'>n/a</td>" in page
    # A run without any usage (built-in models only) shows no usage table anywhere.
    plain = data_for([rec("g", "correct")])
    assert "usage" not in terminal(plain).text.lower()
    assert "Usage" not in render_markdown(plain) and "id='usage'" not in render_html(plain)


# -- no local paths --------------------------------------------------------------------------------


def test_strip_paths_keeps_urls_and_words() -> None:
    assert strip_paths("cassette miss: /tmp/x/cassettes/a/b-s1.yaml has") == (
        "cassette miss: …/b-s1.yaml has"
    )
    assert strip_paths("C:\\Users\\me\\run.jsonl and ~/w/r.jsonl") == "…/run.jsonl and …/r.jsonl"
    kept = "https://doi.org/10.1/abc and/or n/a 1/2 http://127.0.0.1:8011/v1 </td></tr>"
    assert strip_paths(kept) == kept


def test_reports_show_no_local_paths(tmp_path: Path) -> None:
    where = tmp_path / "secret-checkout"
    cassette = where / "cassettes" / "m1" / "indirect" / "x.yaml"
    records = [rec("ok", "correct"), rec("h", "hallucinated")]
    records.append(
        rec("e", "error", error=f"CassetteMiss: cassette miss: {cassette} does not exist.")
    )
    aggs = aggregate(records)
    gate = parse_gate("dom/a:*:accuracy>=0.1", source=str(where / "suites" / "a" / "suite.toml"))
    results, unmatched = evaluate([gate], aggs)
    comparison = compare(records, records, baseline=str(where / "baseline.jsonl"))
    settings = [("merged from", str(where / "results.jsonl")), ("baseline", str(where / "b.jsonl"))]
    data = ReportData(records, aggs, results, unmatched, comparison, settings)
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    write_reports(data, html=html, markdown=md)
    for text in (html.read_text(), md.read_text()):
        assert str(tmp_path) not in text and "secret-checkout" not in text
        assert "suites/dom/a/suite.toml" not in text  # node ids name the suite's file
        assert "…/x.yaml" in text


def test_merged_report_from_a_real_run_shows_no_local_paths(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    manifest = tiny / "suite.toml"
    manifest.write_text(
        manifest.read_text().replace("gates = []", 'gates = ["indirect:accuracy>=0.1"]')
    )
    results = pytester.path / "out" / "run.jsonl"
    run = pytester.runpytest("--citebench", "--citebench-results", str(results))
    assert run.ret == 0
    page, md = pytester.path / "r.html", pytester.path / "r.md"
    status = cli(
        [
            "merge",
            str(results),
            "--suites",
            str(tiny),
            "--baseline",
            str(results),
            "--html",
            str(page),
            "--markdown",
            str(md),
        ]
    )
    assert status == 0
    for text in (page.read_text(), md.read_text()):
        assert str(pytester.path) not in text and "/out/" not in text
        assert "run.jsonl" in text and "accuracy&gt;=0.1" in text.replace(">=", "&gt;=")
        assert "…/suite.toml" in text  # the gate's source, without the checkout's directories
