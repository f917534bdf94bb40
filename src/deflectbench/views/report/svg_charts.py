"""The report's figures as SVG, drawn with :mod:`.svg` from the arrays each chart function
prepares (the same arrays the matplotlib drawing uses for PNG and PDF): stacked outcome bars,
rate panels with 95% CI whiskers, the framing heat map, dot rows, grouped and faceted bars,
the claims' scatter and the over-refusal plane. Sizes follow the matplotlib figures' (100 px an
inch); text is escaped by the writer; the same arrays give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from deflectbench.views.format import pct
from deflectbench.views.report.chart import (
    HATCH_COLORS,
    INK,
    MODEL_COLORS,
    MODEL_MARKERS,
    OUTCOME_COLORS,
    OUTCOME_HATCHES,
    OUTCOME_LABELS,
    text_color,
    zoom,
)
from deflectbench.views.report.svg import GRID, Axes, LegendItem, Svg, legend, nice_ticks
from deflectbench.views.report.svg import text_width as tw
from deflectbench.vocab import OUTCOMES

__all__ = [
    "CIVIDIS",
    "Interval",
    "cividis",
    "claims_svg",
    "coach_svg",
    "counts_svg",
    "dots_svg",
    "grouped_bars_svg",
    "heatmap_svg",
    "intervals_svg",
    "over_refusal_svg",
    "signature_svg",
    "stacked_svg",
]

#: matplotlib's cividis at 33 evenly spaced points (interpolated linearly between them).
CIVIDIS: tuple[str, ...] = (
    "#00224E", "#00285B", "#002E6A", "#053371", "#1A386F", "#273E6E", "#32436D", "#3B496C",
    "#434E6C", "#4B546C", "#535A6D", "#5A5F6E", "#61656F", "#686A71", "#6F7073", "#767676",
    "#7D7C78", "#848279", "#8C8878", "#938E78", "#9B9476", "#A39A74", "#ABA072", "#B4A76F",
    "#BCAE6C", "#C4B468", "#CDBB63", "#D5C25E", "#DEC958", "#E7D150", "#F0D846", "#F9E03A",
    "#FEE838",
)  # fmt: skip
MISSING_FILL = "#F2F2F2"


def cividis(t: float) -> str:
    """The colour of ``t`` in [0, 1] on the cividis scale, as ``#RRGGBB``."""
    t = min(max(t, 0.0), 1.0) * (len(CIVIDIS) - 1)
    i = min(int(t), len(CIVIDIS) - 2)
    f = t - i
    a, b = CIVIDIS[i], CIVIDIS[i + 1]
    rgb = (round((1 - f) * int(a[k : k + 2], 16) + f * int(b[k : k + 2], 16)) for k in (1, 3, 5))
    return "#" + "".join(f"{c:02X}" for c in rgb)


def _model(i: int) -> tuple[str, str]:
    return MODEL_COLORS[i % len(MODEL_COLORS)], MODEL_MARKERS[i % len(MODEL_MARKERS)]


def _outcome_items() -> list[LegendItem]:
    return [
        LegendItem(
            OUTCOME_LABELS[o],
            color=OUTCOME_COLORS[o],
            hatch=OUTCOME_HATCHES[o],
            hatch_color=HATCH_COLORS.get(o, "#555555"),
        )
        for o in OUTCOMES
    ]


def _label_width(labels: Sequence[str], size: float) -> float:
    return max((tw(s, size) for s in labels), default=0.0)


def _stacked_rows(svg: Svg, ax: Axes, rates: np.ndarray, size: float) -> None:
    """Each row's outcome shares (percent, columns in OUTCOMES' order), left to right, each
    segment's percentage inside it when it is at least 5.5 points wide."""
    for i in range(rates.shape[0]):
        left = 0.0
        for k, o in enumerate(OUTCOMES):
            w = float(np.nan_to_num(rates[i, k]))
            if w > 0:
                y0, y1 = ax.py(i - 0.34), ax.py(i + 0.34)
                svg.rect(
                    ax.px(left), y0, ax.px(left + w) - ax.px(left), y1 - y0, OUTCOME_COLORS[o],
                    stroke="white", width=0.8, hatch=OUTCOME_HATCHES[o],
                    hatch_color=HATCH_COLORS.get(o, "#555555"),
                )  # fmt: skip
            if w >= 5.5:
                hatched = bool(OUTCOME_HATCHES[o])
                svg.text(
                    ax.px(left + w / 2), ax.py(i), f"{w:.0f}%", size=size, anchor="middle",
                    color="black" if hatched else text_color(OUTCOME_COLORS[o]), box=hatched,
                )  # fmt: skip
            left += w


def stacked_svg(title: str, labels: Sequence[str], rates: np.ndarray, xlabel: str) -> str:
    """Stacked outcome bars, one row per label (the second turn's figure)."""
    return _stacked_and_panels(title, labels, rates, xlabel, 8, 1000, None)


@dataclass(frozen=True)
class Interval:
    """One series of a CI panel: per row (rate, lo, hi) in percent, drawn ``dy`` rows off the
    row's centre with a marker of ``fill`` and whiskers of ``color``."""

    values: np.ndarray
    dy: float
    fill: str
    color: str = INK


def _panels(
    svg: Svg,
    top: float,
    left: float,
    right: float,
    labels: Sequence[str],
    series: Sequence[Sequence[Interval]],
    row_px: float,
    notes: Sequence[str] = (),
) -> float:
    """One panel per outcome: each row's intervals, the axis zoomed to them (not from 0);
    ``notes[k]`` written at the foot of panel k. Returns the bottom of the drawing."""
    n = len(labels)
    gap = 26.0
    pw = (right - left - gap * (len(OUTCOMES) - 1)) / len(OUTCOMES)
    height = row_px * n + 10
    for k, o in enumerate(OUTCOMES):
        values = np.concatenate([s.values[:, k].ravel() for s in series[k]])
        ax = Axes(svg, left + k * (pw + gap), top, pw, height, zoom(values), (n - 0.5, -0.5))
        ax.ticks("x", nice_ticks(*ax.x, 5), grid=GRID)
        ax.spines()
        ax.title(OUTCOME_LABELS[o], size=10)
        if k == 0:
            ax.ticks("y", list(range(n)), list(labels))
        for s in series[k]:
            for i in range(n):
                r, lo, hi = (float(v) for v in s.values[i, k])
                if not math.isfinite(r):
                    continue
                y = ax.py(i + s.dy)
                lo, hi = (r if not math.isfinite(v) else v for v in (lo, hi))
                svg.line(ax.px(lo), y, ax.px(hi), y, s.color, 1.6, cls="ci")
                for v in (lo, hi):
                    svg.line(ax.px(v), y - 3.5, ax.px(v), y + 3.5, s.color, 1.3)
                svg.marker("o", ax.px(r), y, 5.5, s.fill, INK, 0.8)
        if k < len(notes) and notes[k]:
            svg.text(ax.left + pw / 2, ax.bottom - 4, notes[k], size=7, anchor="middle",
                     valign="bottom")  # fmt: skip
        ax.xlabel("% (95% CI)")
    return top + height + 38


def _stacked_and_panels(
    title: str,
    labels: Sequence[str],
    rates: np.ndarray,
    xlabel: str,
    size: float,
    width: float,
    panels: tuple[Sequence[str], Sequence[Sequence[Interval]]] | None,
) -> str:
    n = len(labels)
    margin = max(_label_width(labels, 9), _label_width(panels[0], 9) if panels else 0) + 16
    top = 12 + legend(Svg(0, 0), _outcome_items(), 0, 0, len(OUTCOMES)) + 6
    bars_h = 62.0 * n if panels else 55.0 * n
    panel_h = (42.0 * n + 10 + 38 + 34) if panels else 0.0
    svg = Svg(width, top + bars_h + 48 + panel_h + 6, title)
    legend(svg, _outcome_items(), margin + (width - margin - 16) / 2, 10, len(OUTCOMES))
    ax = Axes(svg, margin, top, width - margin - 16, bars_h, (0, 100), (n - 0.5, -0.5))
    _stacked_rows(svg, ax, rates, size)
    ax.spines(left=False)
    ax.ticks("x", list(range(0, 101, 10)))
    ax.ticks("y", list(range(n)), list(labels), mark=False)
    ax.xlabel(xlabel)
    if panels is not None:
        _panels(svg, ax.bottom + 48 + 34, margin, width - 16, panels[0], panels[1], 42.0)
    return svg.render()


def signature_svg(
    labels: Sequence[str],
    models: Sequence[str],
    rates: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> str:
    """The compliance signatures: stacked shares on top, one CI panel per outcome below."""
    values = np.stack([rates, lo, hi], axis=2)
    series = [[Interval(values, 0.0, OUTCOME_COLORS[o])] for o in OUTCOMES]
    return _stacked_and_panels(
        "Compliance signatures", labels, rates,
        "share of the model's scored generations (%)", 9, 1100, (models, series),
    )  # fmt: skip


def intervals_svg(
    title: str, labels: Sequence[str], series: Sequence[Sequence[Interval]], notes: Sequence[str]
) -> str:
    """CI panels only (the judged and corrected signatures)."""
    n = len(labels)
    margin = _label_width(labels, 9) + 16
    svg = Svg(1100, 30 + 42 * n + 10 + 40, title)
    _panels(svg, 26, margin, 1100 - 16, labels, series, 42.0, notes)
    return svg.render()


def heatmap_svg(
    title: str,
    values: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    outline: Sequence[tuple[int, int]],
    heading: str,
) -> str:
    """Refusal (percent) per model (row) and framing (column) on the cividis scale; the cells
    of ``outline`` framed; ``heading`` above the map."""
    nrow, ncol = values.shape
    margin = _label_width(rows, 9) + 16
    cell_w, cell_h = 100.0, 50.0
    top = 30.0 if heading else 12.0
    width = margin + cell_w * ncol + 110
    svg = Svg(width, top + cell_h * nrow + 70, title)
    ax = Axes(
        svg, margin, top, cell_w * ncol, cell_h * nrow, (-0.5, ncol - 0.5), (nrow - 0.5, -0.5)
    )
    for i in range(nrow):
        for j in range(ncol):
            v = float(values[i, j])
            fill = cividis(v / 100) if math.isfinite(v) else MISSING_FILL
            x0, y0 = ax.px(j - 0.5), ax.py(i - 0.5)
            svg.rect(x0, y0, cell_w, cell_h, fill)
            svg.text(
                ax.px(j), ax.py(i), pct(v, scale=1), size=9.5, anchor="middle",
                color=text_color(fill) if math.isfinite(v) else "#777777",
            )  # fmt: skip
    for i, j in outline:
        for lw, ec in ((3.2, "black"), (1.2, "white")):
            svg.rect(
                ax.px(j - 0.47), ax.py(i - 0.44), 0.94 * cell_w, 0.88 * cell_h, "none",
                stroke=ec, width=lw,
            )  # fmt: skip
    ax.ticks("x", list(range(ncol)), list(cols), mark=False)
    ax.ticks("y", list(range(nrow)), list(rows), mark=False)
    ax.xlabel("framing", below=34)
    if heading:
        ax.title(heading, size=9.5, bold=False, loc="left")
    bar = Axes(svg, ax.left + ax.width + 14, top, 14, ax.height, (0, 1), (0, 100))
    steps = 50
    for s in range(steps):
        y0, y1 = bar.py(100 * (s + 1) / steps), bar.py(100 * s / steps)
        svg.rect(bar.left, y0, bar.width, y1 - y0 + 0.3, cividis((s + 0.5) / steps))
    for t in range(0, 101, 20):
        y = bar.py(t)
        svg.line(bar.left + bar.width, y, bar.left + bar.width + 3.5, y, "#333333", 0.8)
        svg.text(bar.left + bar.width + 6, y, str(t), size=9)
    svg.text(bar.left + bar.width + 40, top + ax.height / 2, "refusal (%)", size=10,
             anchor="middle", rotate=-90)  # fmt: skip
    return svg.render()


def dots_svg(title: str, matrix: np.ndarray, models: Sequence[str], rows: Sequence[str]) -> str:
    """One row per framing, one marker per model (``matrix``: models x rows, percent)."""
    n, nrow = len(models), len(rows)
    margin = _label_width(rows, 9) + 16
    items = [
        LegendItem(m, kind="marker", color=_model(i)[0], marker=_model(i)[1], edge=INK)
        for i, m in enumerate(models)
    ]
    head = legend(Svg(0, 0), items, 0, 0, min(n, 4)) + 16
    height = 50.0 * nrow + 10 * n
    svg = Svg(850, head + height + 50, title)
    ax = Axes(svg, margin, head, 850 - margin - 20, height, (0, 100), (nrow - 0.5, -0.5))
    legend(svg, items, ax.left + ax.width / 2, 8, min(n, 4))
    ax.ticks("x", nice_ticks(0, 100, 6), grid=GRID)
    for yy in range(nrow - 1):
        svg.line(ax.left, ax.py(yy + 0.5), ax.left + ax.width, ax.py(yy + 0.5), "#EEEEEE", 0.8)
    ax.spines()
    ax.ticks("y", list(range(nrow)), list(rows))
    step = min(0.16, 0.7 / max(n, 1))
    for i in range(n):
        color, shape = _model(i)
        for j in range(nrow):
            v = float(matrix[i, j])
            if math.isfinite(v):
                svg.marker(shape, ax.px(v), ax.py(j + (i - (n - 1) / 2) * step), 7, color)
    ax.xlabel("responses with any fallacy present (%)")
    return svg.render()


def coach_svg(
    title: str,
    panels: Sequence[tuple[str, Sequence[str], Sequence[np.ndarray]]],
    bars: Sequence[tuple[str, str]],
    cols: int,
) -> str:
    """Faceted horizontal bars: per panel (title, row labels, one array of percents per bar
    kind in ``bars`` (label, colour)), value labels after each bar (inside when past 85)."""
    rows_n = math.ceil(len(panels) / cols)
    nfal = max(len(p[1]) for p in panels)
    width = 1100.0 if cols > 1 else 700.0
    margin = max(_label_width(p[1], 9) for p in panels) + 16
    items = [LegendItem(label, color=color, edge=color) for label, color in bars]
    head = legend(Svg(0, 0), items, 0, 0, len(bars)) + 14
    ph = 75.0 * nfal
    block = ph + 30 + 44
    svg = Svg(width, head + rows_n * block + 10, title)
    legend(svg, items, width / 2, 6, len(bars))
    pw = (width - 20) / cols - margin - 10
    bar = 0.8 / len(bars)
    for idx, (name, labels, widths) in enumerate(panels):
        r, c = divmod(idx, cols)
        left = c * (width - 20) / cols + margin
        ax = Axes(svg, left, head + r * block + 22, pw, ph, (0, 100), (len(labels) - 0.5, -0.5))
        ax.title(name, loc="left")
        for k, (_, color) in enumerate(bars):
            for i, w in enumerate(widths[k]):
                y = i - 0.4 + bar * (k + 0.5)
                y0, y1 = ax.py(y - bar * 0.46), ax.py(y + bar * 0.46)
                if not math.isfinite(w):
                    continue
                svg.rect(ax.px(0), y0, ax.px(w) - ax.px(0), y1 - y0, color)
                inside = w > 85
                svg.text(
                    ax.px(w - 1 if inside else w + 1), ax.py(y), pct(w, scale=1), size=8,
                    anchor="end" if inside else "start",
                    color=text_color(color) if inside else INK,
                )  # fmt: skip
        ax.spines(left=False)
        ax.ticks("y", list(range(len(labels))), list(labels), mark=False)
        ax.ticks("x", nice_ticks(0, 100, 6))
        if idx + cols >= len(panels):
            ax.xlabel("share of coach-framing generations (%)")
    return svg.render()


def claims_svg(
    title: str,
    x: np.ndarray,
    r: np.ndarray,
    us: np.ndarray,
    levels: Sequence[int],
    level_labels: Sequence[str],
    means: Mapping[int, float],
    notes: Sequence[tuple[int, str, str]],
    y_range: tuple[float, float],
) -> str:
    """One point per claim at (level + jitter, refusal %), filled for US claims and open for
    international ones; each level's mean as a bar; ``notes`` (point index, text, top or
    bottom) name the lowest and highest claims."""
    items = [
        LegendItem("US context", kind="marker", color=MODEL_COLORS[0], edge=INK),
        LegendItem("international context", kind="marker", color="white", edge=MODEL_COLORS[0]),
    ]
    svg = Svg(850, 460, title)
    ax = Axes(svg, 70, 36, 850 - 90, 460 - 36 - 70, (min(levels) - 0.6, max(levels) + 0.75),
              y_range)  # fmt: skip
    legend(svg, items, ax.left + ax.width / 2, 6, 2)
    ax.ticks("y", nice_ticks(*y_range, 7), grid=GRID)
    ax.spines()
    for i in range(len(r)):
        fill, edge = (MODEL_COLORS[0], INK) if us[i] else ("white", MODEL_COLORS[0])
        svg.marker("o", ax.px(float(x[i])), ax.py(float(r[i])), 6.2, fill, edge,
                   0.6 if us[i] else 1.3)  # fmt: skip
    for lv in levels:
        mean = 100 * float(means[lv])
        svg.line(ax.px(lv - 0.32), ax.py(mean), ax.px(lv + 0.32), ax.py(mean), INK, 2)
        svg.text(ax.px(lv + 0.35), ax.py(mean), f"{mean:.1f}%", size=8.5, box=True)
    for i, text, where in notes:
        dy = 12 if where == "top" else -10
        svg.text(ax.px(float(x[i])), ax.py(float(r[i])) + dy, text, size=8, anchor="middle",
                 valign=where)  # fmt: skip
    ax.ticks("x", list(levels), list(level_labels))
    ax.xlabel("controversy level", below=36)
    ax.ylabel("refusal (% of the claim's generations)", aside=46)
    return svg.render()


def counts_svg(
    title: str, panels: Sequence[tuple[str, Sequence[str], np.ndarray]], runs: int, color: str
) -> str:
    """Faceted vertical bars, up to four panels a row: per panel (title, bar keys, shares %)."""
    cols = min(len(panels), 4)
    rows = math.ceil(len(panels) / cols)
    width = min(300.0 * cols + 80, 1250)
    pw = (width - 70) / cols - 24
    block = 280.0
    svg = Svg(width, rows * block + 10, title)
    for idx, (name, keys, share) in enumerate(panels):
        r, c = divmod(idx, cols)
        ax = Axes(svg, 64 + c * (pw + 24), r * block + 44, pw, block - 44 - 48,
                  (-0.6, len(keys) - 0.4), (0, 105))  # fmt: skip
        ax.title(name, size=9.5)
        for i, s in enumerate(share):
            x0, x1 = ax.px(i - 0.35), ax.px(i + 0.35)
            svg.rect(x0, ax.py(float(s)), x1 - x0, ax.py(0) - ax.py(float(s)), color)
            if s >= 0.5:
                svg.text(ax.px(i), ax.py(float(s)) - 2, f"{s:.0f}", size=8, anchor="middle",
                         valign="bottom")  # fmt: skip
        ax.spines()
        ax.ticks("x", list(range(len(keys))), list(keys))
        ax.ticks("y", nice_ticks(0, 105, 6))
        ax.xlabel(f"samples refused (of {runs})")
        if c == 0:
            ax.ylabel("cells (%)", aside=36)
    return svg.render()


def grouped_bars_svg(
    title: str,
    groups: Sequence[str],
    series: Sequence[tuple[LegendItem, np.ndarray, np.ndarray | None]],
    *,
    ylabel: str,
    xlabel: str = "",
    y_max: float,
    marks: Sequence[float | None] = (),
    mark_label: str = "",
    width: float = 800,
    legend_right: bool = False,
) -> str:
    """Vertical bars grouped by ``groups``: per series (legend entry, values, optional
    (lo, hi) rows as a 2 x n array of whisker ends); ``marks``: a level line per group."""
    n, k = len(groups), len(series)
    items = [s[0] for s in series] + (
        [LegendItem(mark_label, kind="line", color="black")] if mark_label else []
    )
    side = (max(tw(it.label, 9.5) for it in items) + 50) if legend_right else 0.0
    head = 12.0 if legend_right else legend(Svg(0, 0), items, 0, 0, 3) + 16
    rows_of_label = max(len(g.split("\n")) for g in groups) if groups else 1
    svg = Svg(width, head + 300 + 14 * rows_of_label + 30, title)
    ax = Axes(svg, 70, head, width - 90 - side, 300, (-0.55, n - 0.45), (0, y_max))
    if legend_right:
        legend(svg, items, ax.left + ax.width + 16, head, 1, align="start")
    else:
        legend(svg, items, ax.left + ax.width / 2, 6, 3)
    ax.ticks("y", nice_ticks(0, y_max, 6), grid=GRID)
    w = 0.8 / max(k, 1)
    for j, (item, vals, err) in enumerate(series):
        for i in range(n):
            v = float(vals[i])
            if not math.isfinite(v):
                continue
            x = i - 0.4 + w * (j + 0.5)
            x0, x1 = ax.px(x - w * 0.46), ax.px(x + w * 0.46)
            svg.rect(x0, ax.py(v), x1 - x0, ax.py(0) - ax.py(v), item.color,
                     stroke="white" if item.hatch else None, width=0.8 if item.hatch else None,
                     hatch=item.hatch, hatch_color=item.hatch_color)  # fmt: skip
            if err is not None and math.isfinite(err[0, i]) and math.isfinite(err[1, i]):
                lo, hi = ax.py(float(err[0, i])), ax.py(float(err[1, i]))
                svg.line(ax.px(x), lo, ax.px(x), hi, INK, 1.0, cls="ci")
                for yy in (lo, hi):
                    svg.line(ax.px(x) - 3, yy, ax.px(x) + 3, yy, INK, 1.0)
    for i, m in enumerate(marks):
        if m is not None and math.isfinite(m):
            svg.line(ax.px(i - 0.42), ax.py(m), ax.px(i + 0.42), ax.py(m), "black", 1.8)
            svg.text(ax.px(i + 0.43), ax.py(m), f"{m:.0f}", size=8.5)
    ax.spines()
    ax.ticks("x", list(range(n)), list(groups), mark=False)
    ax.ylabel(ylabel, aside=48)
    if xlabel:
        ax.xlabel(xlabel, below=10 + 14 * rows_of_label)
    return svg.render()


def over_refusal_svg(
    title: str, points: Sequence[tuple[str, float, float, float, float, float, float]]
) -> str:
    """Per model (name, x, x_lo, x_hi, y, y_lo, y_hi), percent: a marker with its CI bars on
    the plane of manipulative refusal (x) against benign over-refusal (y)."""
    svg = Svg(600, 500, title)
    ax = Axes(svg, 70, 20, 500, 410, (0, 100), (0, 100))
    ticks = nice_ticks(0, 100, 6)
    ax.ticks("x", ticks, grid="#EEEEEE")
    ax.ticks("y", ticks, grid="#EEEEEE")
    svg.line(ax.px(0), ax.py(0), ax.px(100), ax.py(100), GRID, 0.8)
    ax.spines()
    for i, (_, x, xlo, xhi, y, ylo, yhi) in enumerate(points):
        if math.isfinite(xlo) and math.isfinite(xhi):
            svg.line(ax.px(xlo), ax.py(y), ax.px(xhi), ax.py(y), INK, 0.8, cls="ci")
        if math.isfinite(ylo) and math.isfinite(yhi):
            svg.line(ax.px(x), ax.py(ylo), ax.px(x), ax.py(yhi), INK, 0.8, cls="ci")
        color, shape = _model(i)
        svg.marker(shape, ax.px(x), ax.py(y), 9, color)
    items = [
        LegendItem(p[0], kind="marker", color=_model(i)[0], marker=_model(i)[1], edge=INK)
        for i, p in enumerate(points)
    ]
    legend(svg, items, ax.left + 8, ax.top + 4, 1, align="start")
    ax.xlabel("manipulative requests refused (%)")
    ax.ylabel("benign twins refused: over-refusal (%)", aside=46)
    return svg.render()
