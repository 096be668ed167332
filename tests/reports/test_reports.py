"""Reports: the HTML page (rendered for real in headless Chromium, screenshot checked), the
Markdown summary for CI, and per-item metrics as JUnit XML properties."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import struct
import subprocess
import warnings
import zlib
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from pytest_citebench.__main__ import main as cli
from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.reports.data import ReportData
from pytest_citebench.reports.html import render_html
from pytest_citebench.reports.markdown import render_markdown
from pytest_citebench.reports.output import write_reports
from pytest_citebench.results.aggregate import aggregate
from pytest_citebench.results.compare import compare
from pytest_citebench.results.gates import evaluate, parse_gate
from tests.conftest import REPO

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--disable-dev-shm-usage",
)
WINDOW = (1400, 2000)


def chromium() -> str:
    """The Debian chromium package; .ci/run installs it. Never downloaded by a test.

    Without it the browser half of the test is skipped, with the reason in the warnings summary
    (a skip alone is one letter a newcomer never reads), except under CI=true, where a missing
    browser must fail: CI is where the rendering is checked."""
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    message = (
        "headless Chromium is required for the HTML report test: "
        "apt-get install -y chromium (Debian package; .ci/run does this)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    warnings.warn(f"{message}; skipped outside CI (CI=true makes it fail)", stacklevel=2)
    pytest.skip(f"{message}; skipped outside CI")


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB/RGBA PNG, with no imaging library:
    inflate the IDAT stream and undo the per-row filters (PNG spec, section 9)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = bpp = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def pixel_colors(rows: list[bytes], bpp: int) -> Counter[bytes]:
    colors: Counter[bytes] = Counter()
    for row in rows:
        colors.update(row[i : i + 3] for i in range(0, len(row), bpp))
    return colors


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def calibration_suite(root: Path) -> Path:
    """A guard calibration suite with precomputed scores (the model is never asked)."""
    folder = root / "suites" / "calib"
    folder.mkdir(parents=True)
    (folder / "suite.toml").write_text(
        'name = "calib"\nversion = 1\ndescription = "synthetic calibration scores"\n'
        'tasks = ["calibrate"]\ngates = []\n\n[source]\npaper = "test"\n'
        'url = "https://example.invalid"\nlicence = "CC0-1.0"\n'
    )
    lines = []
    for i in range(40):
        lines.append({"id": f"u{i:02d}", "label": "unsupported", "score": round(0.01 + i / 90, 4)})
        lines.append({"id": f"s{i:02d}", "label": "supported", "score": round(0.35 + i / 65, 4)})
    (folder / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


# -- rendering from data ----------------------------------------------------------------------------


def _record(item: str, outcome: str, suite: str = "dom/a", **kw: Any) -> dict[str, Any]:
    metrics = kw.pop("metrics", None)
    if metrics is None:
        metrics = (
            {}
            if outcome in ("abstained", "error")
            else {
                "hr_paper": 0.0 if outcome == "correct" else 0.9,
                "hr_code": 0.0 if outcome == "correct" else 0.8,
                "f1": 1.0 if outcome == "correct" else 0.1,
                "bleu": 1.0 if outcome == "correct" else 0.0,
            }
        )
    return {
        "type": "item",
        "model": kw.pop("model", "m1"),
        "suite": suite,
        "suite_version": 1,
        "task": kw.pop("task", "indirect"),
        "item_id": item,
        "nodeid": f"{suite}::{item}",
        "outcome": outcome,
        "answer": kw.pop("answer", "some answer"),
        "expected": kw.pop("expected", "the gold"),
        "metrics": metrics,
        "error": kw.pop("error", None),
        **kw,
    }


def _doi_aggregate() -> Aggregate:
    def share(v: float, n: int) -> Stat:
        return Stat(v, max(0.0, v - 0.1), min(1.0, v + 0.1), n)

    return Aggregate(
        "m1",
        "arxeval/mixed",
        "mixed",
        {"correct": 3, "abstained": 0, "hallucinated": 7, "error": 0},
        {
            "accuracy": share(0.3, 10),
            "dois_count": Stat(20.0, 20.0, 20.0, 10),
            "doi_found": share(0.6, 20),
            "doi_not_found": share(0.4, 20),
            "doi_title_match": share(0.75, 12),
            "adherence": share(0.9, 10),
            "n": Stat(10, 10, 10, 10),
        },
    )


def test_html_sections_appear_only_with_their_data_and_text_is_escaped() -> None:
    records = [_record(f"i{i}", "correct") for i in range(6)]
    records += [
        _record("bad", "hallucinated", answer="<script>alert(1)</script>", expected="A & B"),
        _record("oops", "error", error="ProviderError: boom <b>"),
    ]
    plain = render_html(ReportData(records, aggregate(records)))
    assert "<script" not in plain.replace("&lt;script", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in plain and "A &amp; B" in plain
    assert "ProviderError: boom &lt;b&gt;" in plain
    for section in (
        "id='headline'",
        "id='heatmap'",
        "id='charts'",
        "id='metrics'",
        "id='worst'",
        "id='errors'",
    ):
        assert section in plain
    absent_sections = ("adversarial", "dois", "guard", "baseline", "gates", "usage")
    for absent in (f"id='{a}'" for a in absent_sections):
        assert absent not in plain
    assert "no gate set: nothing was judged; 1 item(s) ended in an error" in plain
    assert "class='verdict bad'" in plain
    # Self-contained: no script, no stylesheet or image from anywhere, no link off the page.
    assert not re.search(r"<script|<link|<img|src=|@import|url\(", plain)
    assert not re.search(r"href=['\"](?!#)", plain)

    # Adversarial pairs, DOI table, guard curves, gates and a baseline, each when present.
    swapped = [dict(_record(f"i{i}", "hallucinated"), suite="dom/a+swap-title") for i in range(4)]
    calib = [
        _record(
            f"c{i}",
            "correct",
            suite="g/cal",
            task="calibrate",
            metrics={"score": i / 20, "label": float(i % 2), "precomputed": 1.0},
        )
        for i in range(20)
    ]
    everything = records + swapped + calib
    aggs = [*aggregate(everything), _doi_aggregate()]
    gates = [parse_gate("dom/a:indirect:accuracy>=0.99", source="--citebench-gate")]
    gate_results, unmatched = evaluate(gates, aggs)
    comparison = compare(everything, records, baseline="base.jsonl")
    page = render_html(
        ReportData(everything, aggs, gate_results, unmatched, comparison, [("models", "m1")])
    )
    for section in ("adversarial", "dois", "guard", "gates", "baseline"):
        assert f"id='{section}'" in page, section
    assert "dom/a+swap-title" in page and "original vs swapped" in page
    assert "Total DOIs" in page and "12 (60.0 [50.0, 70.0])" in page
    assert "τ(α)" in page and "catch (held-out)" in page and "target 1−α" in page
    assert "FAIL" in page and "dom/a:indirect:accuracy&gt;=0.99" in page
    assert page.count("<svg") >= 6


def test_an_empty_report_path_writes_nothing_and_says_so(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    """The README's CI line outside GitHub Actions: ``--citebench-markdown "$GITHUB_STEP_SUMMARY"``
    with the variable unset is an empty path. A fresh-clone walk saw no Markdown and no word."""
    result = pytester.runpytest("--citebench", "--citebench-markdown", "", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--citebench-markdown was given an empty path*"])
    assert not list(pytester.path.glob("*.md"))


def test_markdown_summary_and_step_summary_append(tmp_path: Path, monkeypatch: Any) -> None:
    records = [_record(f"i{i}", "correct") for i in range(5)] + [
        _record("bad", "hallucinated", answer="a | pipe", expected="gold\nline")
    ]
    aggs = aggregate(records)
    gates = [parse_gate("*:*:accuracy>=0.5", source="--citebench-gate")]
    results, unmatched = evaluate(gates, aggs)
    worse = [dict(r, outcome="hallucinated", metrics={"hr_paper": 1.0, "f1": 0.0}) for r in records]
    # Six items are thin evidence: only uncorrected does the HR drop (raw p 0.03) fail.
    comparison = compare(worse, records, baseline="b.jsonl", correction="none")
    text = render_markdown(ReportData(records, aggs, results, unmatched, comparison))
    assert text.startswith("## citebench: ❌ ")
    assert "| dom/a | indirect | m1 | 6 | 0 | 83.3 [" in text
    assert text.index("### Outcomes per model and task") < text.index("### Per suite")
    assert "a \\| pipe" in text and "gold line" in text  # table cells stay on one row
    assert "✅ `PASS gate *:*:accuracy>=0.5" in text
    assert "### Baseline `b.jsonl`" in text

    ok = render_markdown(ReportData(records, aggs, results, unmatched))
    assert ok.startswith("## citebench: ✅ gates passed (1)")

    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step output\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    write_reports(ReportData(records, aggs), markdown=summary)
    content = summary.read_text()
    assert content.startswith("earlier step output\n## citebench")  # appended, not clobbered
    # Key-shaped strings (a model echoing a header) never reach a report artifact.
    leaky = [dict(records[0], outcome="hallucinated", answer="sk-proj-" + "A1b2C3d4" * 4)]
    html_file = tmp_path / "leak.html"
    write_reports(ReportData(leaky, aggregate(leaky)), html=html_file, markdown=tmp_path / "l.md")
    assert "A1b2C3d4" not in html_file.read_text() + (tmp_path / "l.md").read_text()
    assert "&lt;REDACTED&gt;" in html_file.read_text()
    other = tmp_path / "other.md"
    other.write_text("old")
    write_reports(ReportData(records, aggs), markdown=other)
    assert other.read_text().startswith("## citebench")  # any other file is replaced


# -- a real run: HTML in Chromium, Markdown, JUnit ---------------------------------------------------


def test_html_report_renders_in_headless_chromium(
    pytester: pytest.Pytester, tiny: Path, tmp_path: Path
) -> None:
    base = pytester.runpytest("--citebench", "--citebench-results", "base.jsonl")
    assert base.ret == 0
    result = pytester.runpytest(
        "--citebench",
        "--citebench-adversarial",
        "title",
        "--citebench-adversarial-threshold",
        "0",
        "--citebench-baseline",
        "base.jsonl",
        "--citebench-gate",
        "tiny:indirect:accuracy>=0.25",
        "--citebench-results",
        "run.jsonl",
        "--citebench-html",
        "report/citebench.html",
        "--citebench-markdown",
        "report/summary.md",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(["html report: report/citebench.html"])
    html = (pytester.path / "report" / "citebench.html").read_text()
    for section in ("headline", "heatmap", "gates", "baseline", "charts", "metrics", "adversarial"):
        assert f"id='{section}'" in html, section
    assert "tiny+swap-title" in html

    # A guard calibration run beside it, merged into one report: every kind of chart at once.
    calibration_suite(pytester.path)
    calib = pytester.runpytest("--citebench", "suites/calib", "--citebench-results", "cal.jsonl")
    assert calib.ret == 0
    page = pytester.path / "report" / "merged.html"
    # A baseline with every group of the merged run, so the comparison judges them all and the
    # banner can be green (a group missing from the baseline keeps it neutral).
    full_base = pytester.path / "full-base.jsonl"
    assert (
        cli(
            [
                "merge",
                str(pytester.path / "run.jsonl"),
                str(pytester.path / "cal.jsonl"),
                "-o",
                str(full_base),
            ]
        )
        == 0
    )
    status = cli(
        [
            "merge",
            str(pytester.path / "run.jsonl"),
            str(pytester.path / "cal.jsonl"),
            "--baseline",
            str(full_base),
            "--gate",
            "tiny:indirect:accuracy>=0.25",
            "--html",
            str(page),
        ]
    )
    assert status == 0
    merged = page.read_text()
    for section in ("gates", "baseline", "charts", "adversarial", "guard", "worst"):
        assert f"id='{section}'" in merged, section

    browser = chromium()
    profile = tmp_path / "profile"
    shot = tmp_path / "report.png"
    common = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
    env = {**os.environ, "HOME": str(tmp_path)}
    subprocess.run(
        [*common, f"--screenshot={shot}", f"--window-size={WINDOW[0]},{WINDOW[1]}", page.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
        env=env,
    )
    dom = subprocess.run(
        [*common, "--dump-dom", page.as_uri()],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    ).stdout
    # What the browser built: every section and chart, and the numbers in them.
    for text in (
        "pytest-citebench report",
        "gates passed (1); no regression against the baseline in 5 group(s) compared",
        "Per domain and model",
        "HR paper % — indirect",
        "Adversarial swaps (REASONS Table 3)",
        "Guard calibration",
        "Regression against the baseline",
        "Worst answers",
        "Efficient Estimation of Word Representations in Vector Space",
    ):
        assert text in dom, text
    assert dom.count("<svg") >= 8
    assert len(re.findall(r"<rect class=\"bar\"", dom)) >= 10
    assert len(re.findall(r"<polyline class=\"line\"", dom)) >= 3

    # The screenshot: the window's size, far from blank, with the charts' colours drawn.
    assert shot.stat().st_size > 20_000
    width, height, rows = read_png(shot)
    assert (width, height) == WINDOW
    bpp = len(rows[0]) // width
    colors = pixel_colors(rows, bpp)
    total = width * height
    white = colors.get(b"\xff\xff\xff", 0)
    assert 0.03 < 1 - white / total < 0.9, "page is blank or a solid block"
    assert len(colors) > 50, "too few colours for text, tables and charts"
    bars = colors.get(bytes.fromhex("4e79a7"), 0)  # the first model's bar colour
    assert bars > 2_000, f"chart bars not visible: {bars} pixels"
    fail_red = colors.get(bytes.fromhex("ffebee"), 0)  # the verdict banner of a failed run
    assert fail_red == 0
    ok_green = colors.get(bytes.fromhex("e8f5e9"), 0)
    assert ok_green > 10_000, "the green gates-passed banner is not visible"

    summary = (pytester.path / "report" / "summary.md").read_text()
    # That run's baseline has no swap-title group: the passed gate is not shown green past it.
    assert summary.startswith(
        "## citebench: ⚪ gates passed (1); no regression against the baseline in 2 group(s) "
        "compared; 2 group(s) not compared: 2 not in the baseline (another model, suite or task)"
    )
    assert "| tiny | indirect | citebench/bm25 | 4 | 0 | 50.0 [" in summary


LONG_MODELS = ("local/smollm2-135m-instruct+rag-naive", "openrouter/meta-llama/llama-3.1-70b")


def _big_run() -> list[dict[str, Any]]:
    """A run the size of the main job's shape: 12 suites with long names, two long model
    names, both REASONS tasks, every outcome."""
    outcomes = ("correct", "hallucinated", "unanswered", "partial", "abstained")
    return [
        _record(f"{task}-{s}-{i}", outcomes[(i + s) % 5], suite=f"reasons/neurons_and_cognition{s}",
                model=model, task=task)
        for task in ("direct", "indirect")
        for s in range(12)
        for model in LONG_MODELS
        for i in range(5)
    ]  # fmt: skip


def test_a_large_report_folds_each_task_and_a_small_one_does_not() -> None:
    """Issue 36: the full bm25 report was 47,467 px tall at 1,400 px, 88 charts and every
    table open. Past a size each task's charts, tables and worst answers fold under its name."""
    big = _big_run()
    page = render_html(ReportData(big, aggregate(big)))
    folds = {}
    for section in ("charts", "metrics", "worst"):
        body = page[page.index(f"<section id='{section}'>") :]
        body = body[: body.index("</section>")]
        folds[section] = (body.count("<details open>"), body.count("<details>"))
    # The first task's 8 charts stay open (the budget is 12); its tables and answers fold.
    assert folds == {"charts": (1, 1), "metrics": (0, 2), "worst": (0, 2)}
    small = [_record(f"i{i}", "correct") for i in range(3)]
    page = render_html(ReportData(small, aggregate(small)))
    assert "<details open>" in page and "<details>" not in page


def test_wide_metric_tables_are_split_outcomes_first() -> None:
    from pytest_citebench.reports.html import _column_parts

    cols = ["accuracy", "hallucinated", "unanswered", "partial", "pp"]
    own = [f"m{i}" for i in range(10)]
    assert _column_parts(cols) == [cols]
    assert _column_parts(cols + own) == [cols, own[:8], own[8:]]


def test_a_large_report_fits_1400_and_1000_px_in_chromium(tmp_path: Path) -> None:
    """Measured in the browser with every fold opened (benchmarks/html_layout.py): at 1,400
    px nothing overflows its box; at 1,000 px only a table may scroll inside its own box, and
    never the page; no chart's text is cut at its edge."""
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    from html_layout import measure

    big = _big_run()
    report = tmp_path / "big.html"
    report.write_text(render_html(ReportData(big, aggregate(big))), encoding="utf-8")
    wide = measure(report, 1400, tmp_path)
    narrow = measure(report, 1000, tmp_path)
    assert wide["overflowing"] == [] and wide["cut_text"] == [], wide
    assert wide["page_width"] == 1400 and narrow["page_width"] == 1000, (wide, narrow)
    assert {o["tag"] for o in narrow["overflowing"]} <= {"DIV"}  # a table's own scroll box
    assert narrow["cut_text"] == []
    assert wide["height"] < wide["opened_height"] / 2  # folded, the page is far shorter


def test_junit_xml_has_per_item_metric_properties(pytester: pytest.Pytester, tiny: Path) -> None:
    result = pytester.runpytest(
        "--citebench",
        "--junitxml",
        "junit.xml",
        "--citebench-results",
        "r.jsonl",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == 0
    tree = ElementTree.parse(pytester.path / "junit.xml")
    props_by_case = {
        (case.get("classname"), case.get("name")): {
            p.get("name"): p.get("value") for p in case.iter("property")
        }
        for case in tree.iter("testcase")
    }
    assert len(props_by_case) == 8
    indirect = next(
        props
        for (classname, name), props in props_by_case.items()
        if name == "2001.00001-s2[citebench/bm25]" and str(classname).endswith("indirect")
    )
    assert indirect["citebench.outcome"] == "hallucinated"
    assert math.isclose(float(indirect["citebench.hr_paper"]), 0.969, abs_tol=0.001)
    assert {"citebench.f1", "citebench.bleu", "citebench.hr_code"} <= set(indirect)
    abstained = [p for p in props_by_case.values() if p.get("citebench.outcome") == "abstained"]
    assert len(abstained) == 1 and "citebench.hr_paper" not in abstained[0]
    # The full record too, as the JSON line the results file holds, byte for byte.
    lines = (pytester.path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    items = {json.loads(line)["nodeid"]: line for line in lines if '"type": "item"' in line}
    assert sorted(json.loads(p["citebench"])["nodeid"] for p in props_by_case.values()) == sorted(
        items
    )
    for props in props_by_case.values():
        record = json.loads(props["citebench"])
        assert props["citebench"] == items[record["nodeid"]]
        assert props["citebench.outcome"] == record["outcome"]


def test_without_junit_xml_a_case_ships_only_its_record(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    """The flat per-metric pairs exist for JUnit XML; without it they would only be shipped
    from every xdist worker to the controller for nothing."""
    pytester.makeconftest(
        """
        def pytest_runtest_logreport(report):
            if report.when == "call":
                names = sorted({name for name, _ in report.user_properties})
                print(f"\\nPROPS {report.nodeid} {names}")
        """
    )
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider", "-s")
    assert result.ret == 0
    props = [line for line in result.stdout.lines if line.startswith("PROPS ")]
    assert len(props) == 8 and all(line.endswith("['citebench']") for line in props)


def test_a_case_keeps_no_record_line_once_its_report_is_logged(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    """pytest keeps every item and report to the end of the run; the record line was the
    largest thing a case kept there (issue 46). Every plugin still sees it while the call report
    is logged, the results file has every record, and by the end no item or report holds one."""
    pytester.makeconftest(
        """
        def pytest_runtest_logreport(report):
            if report.when == "call":
                assert [n for n, _ in report.user_properties] == ["citebench"]

        def pytest_terminal_summary(terminalreporter):
            reports = [r for rs in terminalreporter.stats.values() for r in rs
                       if hasattr(r, "user_properties")]
            items = terminalreporter._session.items
            held = [p for x in [*reports, *items] for p in x.user_properties]
            print(f"\\nHELD {len(reports)} {len(items)} {held}")
        """
    )
    result = pytester.runpytest(
        "--citebench", "-p", "no:cacheprovider", "-s", "--citebench-results=r.jsonl"
    )
    assert result.ret == 0
    assert "HELD 24 8 []" in result.stdout.lines
    lines = (pytester.path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"type": "item"' in line for line in lines) == 8
