"""What a newcomer reads in the terminal and reports must be true and consistent: a baseline
that does not sample is not given sampling settings, a raw number (τ, κ) has the same three
decimals in every table, and a replayed call's latency is labelled as the replay's."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_citebench.api import Aggregate, Stat
from pytest_citebench.reports.terminal import render_table
from pytest_citebench.reports.usage import cells, usage_rows


def test_bm25_is_said_not_to_sample(pytester: pytest.Pytester, tiny: Path) -> None:
    result = pytester.runpytest("--citebench", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        ["models: citebench/bm25 | record: none | no sampling (deterministic offline baseline)"]
    )
    assert "temperature" not in result.stdout.str()


def test_raw_numbers_keep_three_decimals_in_the_per_suite_table() -> None:
    agg = Aggregate(
        "citebench/bm25",
        "guard/scifact-verify",
        "verify",
        {"correct": 208},
        {
            "n": Stat(208, 208, 208, 208),
            "kappa": Stat(0.2714, 0.1352, 0.4141, 208),
            "recall_supported": Stat(0.832, 0.770, 0.895, 137),
        },
    )
    text = "\n".join(render_table([agg]))
    assert "0.271 [0.135, 0.414]" in text  # as the verifier detail table prints it
    assert "0.3 [" not in text
    tau = Aggregate(
        "m",
        "guard/qasa",
        "calibrate",
        {},
        {"n": Stat(1, 1, 1, 1), "tau": Stat(0.4318, 0.4318, 0.4318, 500)},
    )
    assert "0.432" in "\n".join(render_table([tau]))


def test_replayed_latency_is_labelled_as_the_replays() -> None:
    usage = {"calls": 2, "prompt_tokens": 10, "completion_tokens": 4, "cost": None}
    replayed = [{"model": "m", "usage": {**usage, "latencies": [0.01, 0.02], "replayed": 2}}]
    live = [{"model": "m", "usage": {**usage, "latencies": [1.5, 2.5]}}]
    row = cells(usage_rows(replayed)[0])
    assert row[-2].endswith(" (replay)") and row[-1].endswith(" (replay)")
    assert "replay" not in " ".join(cells(usage_rows(live)[0]))
    mixed = cells(usage_rows(replayed + live)[0])
    assert mixed[-2].endswith("(2 of 4 replayed)")


_MEASURE = """
<script>
window.addEventListener('load', () => {
  const problems = [];
  for (const chart of document.querySelectorAll('svg')) {
    const box = chart.getBoundingClientRect();
    for (const text of chart.querySelectorAll('text')) {
      const r = text.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 ||
          r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
        problems.push(chart.getAttribute('aria-label') + ': ' + text.textContent);
      }
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth) {
    problems.push('page wider than the window: ' + document.documentElement.scrollWidth);
  }
  const out = document.createElement('pre');
  out.id = 'clipped';
  out.textContent = JSON.stringify(problems);
  document.body.appendChild(out);
});
</script>
"""


def test_charts_and_tables_fit_at_1400_px_in_chromium(tmp_path: Path) -> None:
    """Measured by the browser: no chart text outside its chart (rotated axis labels, titles,
    forest labels), no table widening the page, and a missing value drawn as "no data"."""
    import json
    import math
    import os
    import re
    import subprocess

    from pytest_citebench.reports import svg
    from pytest_citebench.reports.html import _CSS, _table
    from tests.reports.test_reports import CHROMIUM_FLAGS, chromium

    suites = [
        "reasons/adversarial",
        "reasons/biomolecules",
        "reasons/neurons_and_cognition+swap-title",
        "reasons/quantum_computing",
    ]
    models = ["local/gemma-3-270m", "openai/gpt-4o-mini-2024-07-18"]
    values = {
        (suites[0], models[0]): (0.97, 0.9, 1.0),
        (suites[1], models[0]): (math.nan, math.nan, math.nan),
        (suites[2], models[1]): (0.5, 0.4, 0.6),
        (suites[3], models[1]): (0.3, 0.2, 0.4),
    }
    bars = svg.grouped_bars(
        "HR paper % — direct_metadata_oracle (final stage: abstract), every suite",
        suites,
        models,
        values,
    )
    assert bars.count(">no data<") == 5  # one NaN, four pairs not run: none drawn like a zero
    forest = svg.forest(
        "Deltas against the baseline",
        [
            (
                f"{models[1]} reasons/neurons_and_cognition:direct_metadata_oracle hr_paper",
                0.02,
                -0.01,
                0.05,
                False,
            ),
            ("m reasons/hci:indirect accuracy", -0.1, -0.2, 0.0, True),
        ],
        tolerance=0.02,
    )
    stacked = svg.stacked_bars(
        "Outcomes per suite and model (every suite, every model)",
        [(f"{models[1]} {suites[2]}", [3, 4])],
        [("correct", "#4caf50"), ("hallucinated", "#e53935")],
    )
    line = svg.line_chart(
        "Guard calibration: catch and flag rate against alpha, every verifier",
        "alpha",
        [0.01, 0.1, 0.2],
        [("a long verifier name for the legend", [0.9, 0.8, 0.7], "")],
    )
    wide = _table(
        ["suite", "task", "model"] + [f"metric {i} %" for i in range(16)],
        [[suites[2], "direct_metadata_oracle", models[1]] + ["100.0 [97.6, 100.0]"] * 16],
        numeric_from=3,
    )
    page = tmp_path / "page.html"
    page.write_text(
        f"<html><head><style>{_CSS}</style></head><body><div class='charts'>"
        f"{bars}{forest}{stacked}{line}</div>{wide}{_MEASURE}</body></html>",
        encoding="utf-8",
    )
    browser = chromium()
    dom = subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,1200",
            "--dump-dom",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
    ).stdout
    found = re.search(r"<pre id=\"clipped\">(.*?)</pre>", dom, re.S)
    assert found is not None, dom[-500:]
    assert json.loads(found.group(1).replace("&amp;", "&")) == []


def test_default_terminal_tables_are_compact_and_full_ones_are_one_option_away(
    pytester: pytest.Pytester, tiny: Path
) -> None:
    """Compact by default: no per-final-stage rows and worst answers per task (suites pooled);
    ``--citebench-tables full`` brings both back. A second suite shows the pooling."""
    import shutil

    for name in ("tiny", "tiny2"):
        if name != "tiny":
            shutil.copytree(tiny, pytester.path / "suites" / name)
        manifest = pytester.path / "suites" / name / "suite.toml"
        text = manifest.read_text().replace('["direct", "indirect"]', '["sid"]')
        manifest.write_text(text.replace('name = "tiny"', f'name = "{name}"'))
    args = ["--citebench", "-p", "no:cacheprovider", "--citebench-task", "sid"]
    compact = pytester.runpytest(*args).stdout.str()
    full = pytester.runpytest(*args, "--citebench-tables", "full").stdout.str()
    assert "sid >" not in compact and "sid >indirect" in full
    assert "per-final-stage row(s) not shown (--citebench-tables full shows them)" in compact
    assert "worst answers, up to 2 per task, suites pooled" in compact
    assert "sid over 2 suites  (" in compact and "tiny2:sid  (" not in compact
    assert "tiny:sid  (" in full and "tiny2:sid  (" in full
    assert len(compact.splitlines()) < len(full.splitlines())
