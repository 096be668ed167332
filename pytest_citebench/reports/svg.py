"""Inline SVG charts, drawn in Python: the report is one file that opens with no network, so no
chart library from a CDN and no JavaScript. Each chart is a plain ``<svg>`` string with
``<title>`` tooltips holding the exact numbers, so the values behind a bar are one hover away.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

# Tableau 10: distinct for up to ten models, readable for the common forms of colour blindness.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
_FONT = "font-family='system-ui, sans-serif'"
# Widths of one character, generous (wide glyphs, bold titles), so a label is never clipped: the
# layout makes room for the longest label instead of assuming one.
_CHAR_10 = 6.2  # 10-11 px text
_CHAR_TITLE = 8.4  # the 13 px bold chart title
_ROTATION = 35  # degrees the category labels are turned


def _label_room(texts: Sequence[str]) -> tuple[float, float]:
    """(horizontal, vertical) extent of the longest rotated category label."""
    longest = max((len(t) for t in texts), default=0) * _CHAR_10
    angle = math.radians(_ROTATION)
    return longest * math.cos(angle), longest * math.sin(angle)


def color(index: int) -> str:
    """Series colour by position; past ten series the palette repeats."""
    return PALETTE[index % len(PALETTE)]


def _t(x: float) -> str:
    return f"{x:.1f}"


def _nice_max(value: float) -> float:
    if value <= 0 or math.isnan(value):
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * exp:
            return step * exp
    return 10 * exp


def _legend(names: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for i, name in enumerate(names):
        yy = y + i * 16
        out.append(f"<rect x='{_t(x)}' y='{_t(yy)}' width='11' height='11' fill='{color(i)}'/>")
        out.append(
            f"<text x='{_t(x + 16)}' y='{_t(yy + 10)}' font-size='11' {_FONT}>{escape(name)}</text>"
        )
    return out


def grouped_bars(
    title: str,
    categories: Sequence[str],
    series: Sequence[str],
    values: dict[tuple[str, str], tuple[float, float, float]],
    *,
    percent: bool = True,
    css_class: str = "chart",
) -> str:
    """Bars per category (a suite), one per series (a model), each with its 95% CI whisker.

    ``values[(category, series)] = (value, lo, hi)`` on the 0-1 scale when ``percent``. Missing
    pairs leave a gap: a model that did not run a suite is not a zero.
    """
    n_series = max(1, len(series))
    bar = 14 if n_series > 3 else 20
    group_w = n_series * bar + 18
    legend_w = 20 + _CHAR_10 * max((len(s) for s in series), default=4)
    # Room for the rotated labels: the first one reaches left of the plot, every one below it.
    run, rise = _label_room([_short(c) for c in categories])
    left = max(48, math.ceil(run + 6 - 9 - n_series * bar / 2))
    top, bottom = 34, max(96, math.ceil(rise + 34))
    plot_h = 200
    width = left + max(1, len(categories)) * group_w + 20 + legend_w
    width = math.ceil(max(width, 16 + _CHAR_TITLE * len(title)))  # never clip the title
    height = top + plot_h + bottom
    finite = [
        v
        for triple in values.values()
        for v in (triple[0], triple[2])
        if v is not None and not math.isnan(v)
    ]
    y_max = 1.0 if percent else _nice_max(max(finite, default=1.0))
    scale = 100.0 if percent else 1.0

    def y(v: float) -> float:
        return top + plot_h - plot_h * max(0.0, min(v, y_max)) / y_max

    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='{css_class}' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        f"aria-label='{escape(title)}'>",
        f"<text x='8' y='18' font-size='13' font-weight='600' {_FONT}>{escape(title)}</text>",
    ]
    for i in range(6):
        v = y_max * i / 5
        yy = y(v)
        out.append(
            f"<line x1='{left}' x2='{left + len(categories) * group_w}' y1='{_t(yy)}' "
            f"y2='{_t(yy)}' stroke='#e3e3e3'/>"
        )
        out.append(
            f"<text x='{left - 6}' y='{_t(yy + 4)}' font-size='10' text-anchor='end' {_FONT}>"
            f"{v * scale:g}{'%' if percent else ''}</text>"
        )
    for ci, category in enumerate(categories):
        gx = left + ci * group_w + 9
        for si, name in enumerate(series):
            triple = values.get((category, name))
            x = gx + si * bar
            if triple is None or triple[0] is None or math.isnan(triple[0]):
                # Drawn as "no data", never as an empty slot that reads like a zero.
                why = "not run" if triple is None else "no value: undefined on these items"
                cx, base = x + (bar - 2) / 2, top + plot_h - 4
                out.append(
                    f"<text class='nodata' x='{_t(cx)}' y='{_t(base)}' font-size='9' "
                    f"fill='#888' transform='rotate(-90 {_t(cx)} {_t(base)})' {_FONT} "
                    f"dominant-baseline='middle'>no data<title>{escape(name)} · "
                    f"{escape(category)}: {why}</title></text>"
                )
                continue
            value, lo, hi = triple
            out.append(
                f"<rect class='bar' x='{_t(x)}' y='{_t(y(value))}' width='{bar - 2}' "
                f"height='{_t(top + plot_h - y(value))}' fill='{color(si)}'>"
                f"<title>{escape(name)} · {escape(category)}: {value * scale:.1f}"
                f"{'%' if percent else ''}"
                + (
                    f" (95% CI {lo * scale:.1f}–{hi * scale:.1f})"
                    if not (math.isnan(lo) or math.isnan(hi))
                    else ""
                )
                + "</title></rect>"
            )
            if not (math.isnan(lo) or math.isnan(hi)) and lo != hi:
                cx = x + (bar - 2) / 2
                out.append(
                    f"<line x1='{_t(cx)}' x2='{_t(cx)}' y1='{_t(y(lo))}' y2='{_t(y(hi))}' "
                    "stroke='#222' stroke-width='1.2'/>"
                )
                for edge in (lo, hi):
                    out.append(
                        f"<line x1='{_t(cx - 3)}' x2='{_t(cx + 3)}' y1='{_t(y(edge))}' "
                        f"y2='{_t(y(edge))}' stroke='#222' stroke-width='1.2'/>"
                    )
        lx = gx + n_series * bar / 2
        ly = top + plot_h + 12
        out.append(
            f"<text x='{_t(lx)}' y='{_t(ly)}' font-size='10' text-anchor='end' "
            f"transform='rotate(-{_ROTATION} {_t(lx)} {_t(ly)})' {_FONT}>"
            f"{escape(_short(category))}"
            f"<title>{escape(category)}</title></text>"
        )
    out.append(
        f"<line x1='{left}' x2='{left}' y1='{top}' y2='{top + plot_h}' stroke='#555'/>"
        f"<line x1='{left}' x2='{left + len(categories) * group_w}' y1='{top + plot_h}' "
        f"y2='{top + plot_h}' stroke='#555'/>"
    )
    out += _legend(series, left + len(categories) * group_w + 16, top)
    out.append("</svg>")
    return "".join(out)


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def line_chart(
    title: str,
    x_label: str,
    xs: Sequence[float],
    series: Sequence[tuple[str, Sequence[float], str]],
    *,
    css_class: str = "chart",
) -> str:
    """Lines over a shared x axis on a 0-1 y axis; ``series`` = (name, ys, dash pattern).

    Non-finite points (a tau of +inf when too few calibration points) break the line instead of
    being drawn at the edge, so the chart never shows a number that was not computed.
    """
    left, top, plot_w, plot_h = 48, 34, 380, 200
    legend_w = 20 + _CHAR_10 * max((len(name) for name, _, _ in series), default=4)
    width, height = left + plot_w + 24 + legend_w, top + plot_h + 44
    width = math.ceil(max(width, 16 + _CHAR_TITLE * len(title)))
    x_lo, x_hi = min(xs), max(xs)
    span = (x_hi - x_lo) or 1.0

    def px(x: float) -> float:
        return left + plot_w * (x - x_lo) / span

    def py(v: float) -> float:
        return top + plot_h - plot_h * max(0.0, min(v, 1.0))

    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='{css_class}' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        f"aria-label='{escape(title)}'>",
        f"<text x='{left}' y='18' font-size='13' font-weight='600' {_FONT}>{escape(title)}</text>",
    ]
    for i in range(6):
        v = i / 5
        out.append(
            f"<line x1='{left}' x2='{left + plot_w}' y1='{_t(py(v))}' y2='{_t(py(v))}' "
            "stroke='#e3e3e3'/>"
            f"<text x='{left - 6}' y='{_t(py(v) + 4)}' font-size='10' text-anchor='end' "
            f"{_FONT}>{v:g}</text>"
        )
    last = -math.inf
    for x in xs:
        if px(x) - last < 26:  # ticks too close to read (0.01, 0.02, 0.05): keep the first
            continue
        last = px(x)
        out.append(
            f"<text x='{_t(px(x))}' y='{top + plot_h + 14}' font-size='10' text-anchor='middle' "
            f"{_FONT}>{x:g}</text>"
        )
    out.append(
        f"<text x='{_t(left + plot_w / 2)}' y='{top + plot_h + 32}' font-size='11' "
        f"text-anchor='middle' {_FONT}>{escape(x_label)}</text>"
    )
    for si, (name, ys, dash) in enumerate(series):
        segments: list[list[tuple[float, float]]] = [[]]
        for x, v in zip(xs, ys, strict=True):
            if v is None or not math.isfinite(v):
                segments.append([])
                continue
            segments[-1].append((x, v))
        for segment in segments:
            if not segment:
                continue
            points = " ".join(f"{_t(px(x))},{_t(py(v))}" for x, v in segment)
            dash_attr = f" stroke-dasharray='{dash}'" if dash else ""
            out.append(
                f"<polyline class='line' points='{points}' fill='none' stroke='{color(si)}' "
                f"stroke-width='2'{dash_attr}/>"
            )
            for x, v in segment:
                out.append(
                    f"<circle cx='{_t(px(x))}' cy='{_t(py(v))}' r='2.5' fill='{color(si)}'>"
                    f"<title>{escape(name)} at {x:g}: {v:.3f}</title></circle>"
                )
    out.append(
        f"<line x1='{left}' x2='{left}' y1='{top}' y2='{top + plot_h}' stroke='#555'/>"
        f"<line x1='{left}' x2='{left + plot_w}' y1='{top + plot_h}' y2='{top + plot_h}' "
        "stroke='#555'/>"
    )
    out += _legend([name for name, _, _ in series], left + plot_w + 16, top)
    out.append("</svg>")
    return "".join(out)


def stacked_bars(
    title: str,
    rows: Sequence[tuple[str, Sequence[float]]],
    parts: Sequence[tuple[str, str]],
    *,
    css_class: str = "chart",
) -> str:
    """Horizontal stacked bars of counts; ``parts`` = (name, colour) for each segment."""
    labels = [_short(name, 34) for name, _ in rows]
    left = max(120, math.ceil(_CHAR_10 * max((len(x) for x in labels), default=0) + 14))
    top, bar_h, gap, plot_w = 30, 18, 8, 420
    height = top + len(rows) * (bar_h + gap) + 24 + 16 * len(parts)
    width = math.ceil(max(left + plot_w + 60, 16 + _CHAR_TITLE * len(title)))
    total_max = max((sum(v) for _, v in rows), default=1) or 1
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='{css_class}' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        f"aria-label='{escape(title)}'>",
        f"<text x='8' y='18' font-size='13' font-weight='600' {_FONT}>{escape(title)}</text>",
    ]
    for ri, (name, counts) in enumerate(rows):
        yy = top + ri * (bar_h + gap)
        out.append(
            f"<text x='{left - 6}' y='{_t(yy + bar_h - 5)}' font-size='11' text-anchor='end' "
            f"{_FONT}>{escape(_short(name, 34))}<title>{escape(name)}</title></text>"
        )
        x = float(left)
        for (part, fill), count in zip(parts, counts, strict=True):
            w = plot_w * count / total_max
            if w > 0:
                out.append(
                    f"<rect class='bar' x='{_t(x)}' y='{_t(yy)}' width='{_t(w)}' "
                    f"height='{bar_h}' fill='{fill}'><title>{escape(name)}: {escape(part)} "
                    f"{count:g}</title></rect>"
                )
            x += w
        out.append(
            f"<text x='{_t(x + 4)}' y='{_t(yy + bar_h - 5)}' font-size='10' {_FONT}>"
            f"{sum(counts):g}</text>"
        )
    ly = top + len(rows) * (bar_h + gap) + 8
    for i, (part, fill) in enumerate(parts):
        out.append(
            f"<rect x='{left}' y='{ly + i * 16}' width='11' height='11' fill='{fill}'/>"
            f"<text x='{left + 16}' y='{ly + i * 16 + 10}' font-size='11' {_FONT}>"
            f"{escape(part)}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def forest(
    title: str,
    rows: Sequence[tuple[str, float, float, float, bool]],
    *,
    tolerance: float = 0.0,
    css_class: str = "chart",
) -> str:
    """Deltas with CIs around zero, one row each: (label, delta, lo, hi, failed), in points.

    The tolerance band is shaded, so "worse, but within tolerance" is visible at a glance.
    """
    # The labels' column is as wide as the longest label: a fixed one cut long labels at the front.
    labels = [_short(name, 96) for name, *_ in rows]
    left = max(120, math.ceil(_CHAR_10 * max((len(x) for x in labels), default=0) + 16))
    top, row_h, plot_w = 30, 20, 360
    height = top + len(rows) * row_h + 30
    width = math.ceil(max(left + plot_w + 30, 16 + _CHAR_TITLE * len(title)))
    finite = [abs(v) for _, d, lo, hi, _ in rows for v in (d, lo, hi) if math.isfinite(v)]
    span = _nice_max(max(max(finite, default=0.0), tolerance, 0.01) * 1.05)
    mid = left + plot_w / 2

    def px(v: float) -> float:
        return mid + (plot_w / 2) * max(-span, min(v, span)) / span

    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='{css_class}' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        f"aria-label='{escape(title)}'>",
        f"<text x='8' y='18' font-size='13' font-weight='600' {_FONT}>{escape(title)}</text>",
    ]
    if tolerance > 0:
        band = px(tolerance) - px(-tolerance)
        out.append(
            f"<rect x='{_t(px(-tolerance))}' y='{top - 6}' width='{_t(band)}' "
            f"height='{len(rows) * row_h + 6}' fill='#eef3e8'/>"
        )
    out.append(
        f"<line x1='{_t(mid)}' x2='{_t(mid)}' y1='{top - 6}' y2='{top + len(rows) * row_h}' "
        "stroke='#888' stroke-dasharray='3 3'/>"
    )
    for i, (name, delta, lo, hi, failed) in enumerate(rows):
        yy = top + i * row_h + row_h / 2
        stroke = "#c62828" if failed else "#333"
        out.append(
            f"<text x='{left - 8}' y='{_t(yy + 4)}' font-size='11' text-anchor='end' {_FONT}>"
            f"{escape(_short(name, 96))}<title>{escape(name)}</title></text>"
        )
        if math.isfinite(lo) and math.isfinite(hi):
            out.append(
                f"<line x1='{_t(px(lo))}' x2='{_t(px(hi))}' y1='{_t(yy)}' y2='{_t(yy)}' "
                f"stroke='{stroke}' stroke-width='1.5'/>"
            )
        if math.isfinite(delta):
            out.append(
                f"<circle cx='{_t(px(delta))}' cy='{_t(yy)}' r='4' fill='{stroke}'>"
                f"<title>{escape(name)}: {100 * delta:+.1f} points</title></circle>"
            )
    base = top + len(rows) * row_h + 16
    for v in (-span, 0.0, span):
        out.append(
            f"<text x='{_t(px(v))}' y='{base}' font-size='10' text-anchor='middle' {_FONT}>"
            f"{100 * v:+.1f}</text>"
        )
    out.append("</svg>")
    return "".join(out)
