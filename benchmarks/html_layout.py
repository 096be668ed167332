"""Measure an HTML report as a browser lays it out: page height (as delivered, and with every
folded block opened), what overflows its box
(tables behind a scrollbar, the page wider than the window), chart text cut at an edge, at
each window width. Headless Chromium (the Debian package) runs a measuring script injected
into a copy of the report; a screenshot of the first screen is saved beside each measurement.

Why a script and not a test: the figures (heights, overflow counts) are what a change to the
report's layout is judged by, before and after; tests/reports/test_reports.py holds the properties.

    python benchmarks/html_layout.py REPORT.html [--widths 1400 1000] [--out DIR]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

MEASURE = """
<script>
window.addEventListener('load', () => {
  const folded = document.documentElement.scrollHeight;
  // Every fold opened, as a reader who opens them all sees the page: overflow is measured so.
  for (const d of document.querySelectorAll('details')) d.open = true;
  const out = {height: folded, opened_height: document.documentElement.scrollHeight,
               page_width: document.documentElement.scrollWidth,
               window_width: window.innerWidth, overflowing: [], cut_text: [], charts: 0,
               charts_per_row: 0};
  for (const el of document.querySelectorAll('body *')) {
    const style = getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1 && ['auto', 'scroll', 'hidden'].includes(style.overflowX)) {
      const section = el.closest('section');
      out.overflowing.push({tag: el.tagName, section: section ? section.id : '',
                            hidden_px: el.scrollWidth - el.clientWidth});
    }
  }
  const svgs = [...document.querySelectorAll('svg')];
  out.charts = svgs.length;
  const tops = {};
  for (const svg of svgs) {
    const box = svg.getBoundingClientRect();
    tops[Math.round(box.top)] = (tops[Math.round(box.top)] || 0) + 1;
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < box.left - 0.5 || r.right > box.right + 0.5)) {
        out.cut_text.push(t.textContent.slice(0, 40));
      }
    }
  }
  out.charts_per_row = Math.max(0, ...Object.values(tops));
  out.sections = {};
  for (const sec of document.querySelectorAll('section')) {
    out.sections[sec.id] = Math.round(sec.getBoundingClientRect().height);
  }
  const pre = document.createElement('pre');
  pre.id = 'layout-measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]


def chromium() -> str:
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("no chromium: apt-get install -y chromium")


def measure(report: Path, width: int, out: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(report.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"))
        common = [
            chromium(),
            *FLAGS,
            f"--user-data-dir={tmp}/profile",
            f"--window-size={width},900",
        ]
        env = {**os.environ, "HOME": tmp}
        dom = subprocess.run(
            [*common, "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
            check=True, capture_output=True, text=True, timeout=300, env=env,
        ).stdout  # fmt: skip
        subprocess.run(
            [*common, f"--screenshot={out / f'{report.stem}-{width}.png'}", page.as_uri()],
            check=True, capture_output=True, timeout=300, env=env,
        )  # fmt: skip
    found = re.search(r"<pre id=\"layout-measure\">(.*?)</pre>", dom, re.S)
    if not found:
        raise SystemExit(f"{report}: the measuring script did not run")
    result: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--widths", type=int, nargs="+", default=[1400, 1000])
    parser.add_argument("--out", type=Path, default=Path("."))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for width in args.widths:
        m = measure(args.report, width, args.out)
        over = m["overflowing"]
        assert isinstance(over, list)
        print(
            f"{width} px: page {m['height']} px tall ({m['opened_height']} px with every fold "
            f"open), {m['page_width']} px wide "
            f"(window {m['window_width']}); {len(over)} box(es) overflow "
            f"{sorted({o['section'] for o in over})}; {len(m['cut_text'])} chart text(s) cut "  # type: ignore[index]
            f"{m['cut_text'][:5]}; {m['charts']} charts, at most {m['charts_per_row']} a row"  # type: ignore[index]
        )
        print(f"  section heights: {m['sections']}")


if __name__ == "__main__":
    main()
