"""The report's own SVG writer: the few shapes its figures use (bars, hatched bars, whiskers,
markers, lines, text), axes with ticks and grids, and legends, written as text.

Why not matplotlib: drawing and saving the report's figures through it cost most of the
command's time (issue 36); the figures are bars, points and intervals, which SVG says plainly.
The output is deterministic (numbers rounded to 0.01 px, elements in drawing order, no dates,
ids or random salts), every text is XML-escaped (model and judge names are untrusted input),
and nothing here imports matplotlib. PNG and PDF files are still drawn by matplotlib when asked
(:func:`deflectbench.views.report.chart.save_chart`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "FONT",
    "Axes",
    "LegendItem",
    "Svg",
    "escape",
    "fmt",
    "legend",
    "nice_ticks",
    "text_width",
]

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
INK = "#222222"
SPINE = "#555555"
TICK = "#333333"
GRID = "#DDDDDD"

#: Hatch name -> the lines of one 8 x 8 pattern tile (as in matplotlib's "///", "\\\\", "xx").
_HATCH_LINES: dict[str, tuple[tuple[float, float, float, float], ...]] = {
    "///": ((0, 8, 8, 0), (-2, 2, 2, -2), (6, 10, 10, 6)),
    "\\\\": ((0, 0, 8, 8), (-2, 6, 2, 10), (6, -2, 10, 2)),
    "xx": ((0, 8, 8, 0), (0, 0, 8, 8)),
}

#: Marker outlines (matplotlib's letters) on a unit radius; "o" is drawn as a circle.
_SHAPES: dict[str, tuple[tuple[float, float], ...]] = {
    "s": ((-1, -1), (1, -1), (1, 1), (-1, 1)),
    "^": ((0, -1.15), (1.1, 0.85), (-1.1, 0.85)),
    "v": ((0, 1.15), (1.1, -0.85), (-1.1, -0.85)),
    "D": ((0, -1.25), (1.0, 0), (0, 1.25), (-1.0, 0)),
    "P": ((-0.35, -1), (0.35, -1), (0.35, -0.35), (1, -0.35), (1, 0.35), (0.35, 0.35),
          (0.35, 1), (-0.35, 1), (-0.35, 0.35), (-1, 0.35), (-1, -0.35), (-0.35, -0.35)),
    "X": ((-1, -0.6), (-0.6, -1), (0, -0.4), (0.6, -1), (1, -0.6), (0.4, 0), (1, 0.6),
          (0.6, 1), (0, 0.4), (-0.6, 1), (-1, 0.6), (-0.4, 0)),
}  # fmt: skip


#: The attributes that place an element (a NaN or infinite value there drops the element).
_PLACES = frozenset(
    {"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height", "points"}
)


def fmt(v: float) -> str:
    """A coordinate: at most two decimals, no trailing zeros, never ``-0`` (``nan`` or
    ``inf`` when it is not finite: :meth:`Svg._el` leaves such an element out)."""
    if not math.isfinite(v):
        return "nan"
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def escape(text: object) -> str:
    """Text as XML character data or an attribute value (``& < > " '`` escaped)."""
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


@functools.cache
def _attr_name(key: str) -> str:
    """An attribute's SVG name from its Python key: ``stroke_width`` is ``stroke-width``,
    ``class_`` is ``class``."""
    return key.rstrip("_").replace("_", "-")


_NARROW = set("iljtfrI.,:;|!'()[] ")
_WIDE = set("mwMWOQGCDHNU%@")


def text_width(text: str, size: float) -> float:
    """An estimate of the widest line's width in px (DejaVu Sans-like advances), for layout."""
    widest = 0.0
    for line in str(text).split("\n"):
        units = sum(0.33 if c in _NARROW else 0.86 if c in _WIDE else 0.6 for c in line)
        widest = max(widest, units * size)
    return widest


def nice_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Round tick values within [lo, hi], at most ``most`` of them (steps 1, 2, 2.5, 5 x 10^k)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(most - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    ladder = [m * mag for m in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10)]
    i = next(i for i, step in enumerate(ladder) if step >= raw)
    while True:  # the roundest step that leaves a tick inside
        step = ladder[i]
        first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
        if last >= first or i == 0:
            return [round(k * step, 10) for k in range(first, last + 1)]
        i -= 1


def tick_label(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e6 else f"{v:,.0f}"


class Svg:
    """One SVG document, built element by element and written by :meth:`render`."""

    def __init__(self, width: float, height: float, title: str = "") -> None:
        self.width, self.height, self.title = width, height, title
        self.parts: list[str] = []
        self.patterns: dict[tuple[str, str, str], tuple[str, str]] = {}

    def _el(self, tag: str, attrs: dict[str, object], body: str | None = None) -> None:
        """Append one element; one placed at a missing (NaN) coordinate is left out."""
        a = []
        for k, v in attrs.items():
            if k in _PLACES and "n" in str(v):  # "nan", "inf" (or None) where it is placed
                return
            if v is not None:
                a.append(f' {_attr_name(k)}="{escape(v)}"')
        a_ = "".join(a)
        self.parts.append(f"<{tag}{a_}/>" if body is None else f"<{tag}{a_}>{body}</{tag}>")

    def hatch(self, fill: str, hatch: str, color: str) -> str:
        """The fill reference of ``fill`` crossed by ``hatch`` lines of ``color`` (a pattern)."""
        spec = (fill, hatch, color)
        if spec not in self.patterns:
            key = f"h{len(self.patterns)}"
            lines = "".join(
                f'<line x1="{fmt(a)}" y1="{fmt(b)}" x2="{fmt(c)}" y2="{fmt(d)}" '
                f'stroke="{escape(color)}" stroke-width="0.9"/>'
                for a, b, c, d in _HATCH_LINES.get(hatch, ())
            )
            self.patterns[spec] = (
                key,
                f'<pattern id="{key}" patternUnits="userSpaceOnUse" width="8" height="8">'
                f'<rect width="8" height="8" fill="{escape(fill)}"/>{lines}</pattern>',
            )
        return f"url(#{self.patterns[spec][0]})"

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: str,
        *,
        stroke: str | None = None,
        width: float | None = None,
        hatch: str = "",
        hatch_color: str = "#555555",
        opacity: float | None = None,
        rx: float | None = None,
    ) -> None:
        if w < 0:
            x, w = x + w, -w
        if h < 0:
            y, h = y + h, -h
        paint = self.hatch(fill, hatch, hatch_color) if hatch else fill
        self._el(
            "rect",
            {
                "x": fmt(x),
                "y": fmt(y),
                "width": fmt(w),
                "height": fmt(h),
                "rx": None if rx is None else fmt(rx),
                "fill": paint,
                "fill_opacity": None if opacity is None else fmt(opacity),
                "stroke": stroke,
                "stroke_width": None if width is None else fmt(width),
            },
        )

    def line(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        stroke: str,
        width: float = 1.0,
        *,
        cls: str | None = None,
    ) -> None:
        self._el(
            "line",
            {
                "class": cls,
                "x1": fmt(x1),
                "y1": fmt(y1),
                "x2": fmt(x2),
                "y2": fmt(y2),
                "stroke": stroke,
                "stroke_width": fmt(width),
            },
        )

    def marker(
        self,
        shape: str,
        x: float,
        y: float,
        size: float,
        fill: str,
        stroke: str = INK,
        width: float = 0.7,
    ) -> None:
        """A point marker of diameter ``size`` px: o s ^ v D P X (matplotlib's letters)."""
        r = size / 2
        style = {"fill": fill, "stroke": stroke, "stroke_width": fmt(width)}
        if shape == "o":
            self._el("circle", {"cx": fmt(x), "cy": fmt(y), "r": fmt(r), **style})
            return
        pts = " ".join(f"{fmt(x + r * a)},{fmt(y + r * b)}" for a, b in _SHAPES.get(shape, ()))
        self._el("polygon", {"points": pts, **style})

    def text(
        self,
        x: float,
        y: float,
        text: object,
        *,
        size: float = 10,
        anchor: str = "start",
        valign: str = "middle",
        color: str = INK,
        bold: bool = False,
        rotate: float | None = None,
        box: bool = False,
    ) -> None:
        """``text`` (escaped; ``\\n`` starts a line) at (x, y): ``anchor`` start, middle or end;
        ``valign`` top, middle or bottom of the block; ``box`` a light box behind it."""
        lines = str(text).split("\n")
        lead = 1.2 * size
        first = {
            "top": 0.8 * size,
            "middle": 0.35 * size - (len(lines) - 1) * lead / 2,
            "bottom": -0.25 * size - (len(lines) - 1) * lead,
        }[valign]
        if box:
            w = text_width(str(text), size) + 0.4 * size
            h = len(lines) * lead
            bx = {"start": x - 0.2 * size, "middle": x - w / 2, "end": x - w + 0.2 * size}[anchor]
            self.rect(bx, y + first - 0.95 * size, w, h, "white", opacity=0.85, rx=2)
        y0 = y + first
        body = (
            escape(lines[0])
            if len(lines) == 1
            else "".join(
                f'<tspan x="{fmt(x)}" y="{fmt(y0 + i * lead)}">{escape(s)}</tspan>'
                for i, s in enumerate(lines)
            )
        )
        self._el(
            "text",
            {
                "x": fmt(x),
                "y": fmt(y0),
                "font_size": fmt(size),
                "text_anchor": None if anchor == "start" else anchor,
                "font_weight": "bold" if bold else None,
                "fill": color,
                "transform": None if rotate is None else f"rotate({fmt(rotate)} {fmt(x)} {fmt(y)})",
            },
            body,
        )

    def render(self) -> str:
        """The document: XML declaration, one ``<svg>``, its patterns, then the elements."""
        defs = "".join(markup for _, markup in self.patterns.values())
        head = (
            '<?xml version="1.0" encoding="utf-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{fmt(self.width)}" '
            f'height="{fmt(self.height)}" viewBox="0 0 {fmt(self.width)} {fmt(self.height)}" '
            f'font-family="{FONT}" role="img">\n'
        )
        title = f"<title>{escape(self.title)}</title>\n" if self.title else ""
        background = f'<rect width="{fmt(self.width)}" height="{fmt(self.height)}" fill="white"/>\n'
        body = "\n".join(self.parts)
        return f"{head}{title}{f'<defs>{defs}</defs>' + chr(10) if defs else ''}{background}{body}\n</svg>\n"


@dataclass
class Axes:
    """A plotting box at (left, top) of ``width`` x ``height`` px showing data ``x`` (left to
    right) and ``y`` (bottom to top; give it reversed, as (n - 0.5, -0.5), for rows from the
    top)."""

    svg: Svg
    left: float
    top: float
    width: float
    height: float
    x: tuple[float, float] = (0.0, 1.0)
    y: tuple[float, float] = (0.0, 1.0)

    def px(self, v: float) -> float:
        return self.left + (v - self.x[0]) / (self.x[1] - self.x[0]) * self.width

    def py(self, v: float) -> float:
        return self.top + self.height - (v - self.y[0]) / (self.y[1] - self.y[0]) * self.height

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def ticks(
        self,
        axis: str,
        values: Sequence[float],
        labels: Sequence[str] | None = None,
        *,
        size: float = 9,
        grid: str | None = None,
        mark: bool = True,
    ) -> None:
        """Ticks at ``values`` under the box (``axis`` x) or left of it (y), labelled with the
        values or ``labels``; a ``grid`` line across the box at each when given a colour."""
        right, svg = self.left + self.width, self.svg
        for i, v in enumerate(values):
            label = tick_label(v) if labels is None else labels[i]
            if axis == "x":
                at = self.px(v)
                grid_line = (at, self.top, at, self.bottom)
                tick = (at, self.bottom, at, self.bottom + 3.5)
            else:
                at = self.py(v)
                grid_line = (self.left, at, right, at)
                tick = (self.left - 3.5, at, self.left, at)
            if grid:
                svg.line(*grid_line, grid, 0.6)
            if mark:
                svg.line(*tick, TICK, 0.8)
            if axis == "x":
                svg.text(at, self.bottom + 5, label, size=size, anchor="middle", valign="top")
            else:
                svg.text(self.left - 6, at, label, size=size, anchor="end")

    def spines(self, left: bool = True, bottom: bool = True) -> None:
        if left:
            self.svg.line(self.left, self.top, self.left, self.bottom, SPINE, 0.8)
        if bottom:
            self.svg.line(self.left, self.bottom, self.left + self.width, self.bottom, SPINE, 0.8)

    def xlabel(self, text: str, below: float = 20, size: float = 10) -> None:
        self.svg.text(
            self.left + self.width / 2, self.bottom + below, text, size=size, anchor="middle",
            valign="top",
        )  # fmt: skip

    def ylabel(self, text: str, aside: float = 40, size: float = 10) -> None:
        x, y = self.left - aside, self.top + self.height / 2
        self.svg.text(x, y, text, size=size, anchor="middle", rotate=-90)

    def title(self, text: str, *, size: float = 10, bold: bool = True, loc: str = "center") -> None:
        x = self.left + self.width / 2 if loc == "center" else self.left
        anchor = "middle" if loc == "center" else "start"
        self.svg.text(x, self.top - 6, text, size=size, anchor=anchor, valign="bottom", bold=bold)


@dataclass(frozen=True)
class LegendItem:
    """One legend entry: a ``patch`` (filled, maybe hatched), a ``marker`` or a ``line``."""

    label: str
    kind: str = "patch"
    color: str = INK
    hatch: str = ""
    hatch_color: str = "#555555"
    marker: str = "o"
    edge: str = "#666666"


def legend(
    svg: Svg,
    items: Iterable[LegendItem],
    x: float,
    top: float,
    ncols: int,
    *,
    size: float = 9.5,
    align: str = "middle",
) -> float:
    """Draw the items in rows of ``ncols`` from ``top``, each row centred on ``x`` (``align``
    middle) or starting at it (start); return the height used."""
    items = list(items)
    ncols = max(ncols, 1)
    rows = [items[i : i + ncols] for i in range(0, len(items), ncols)]
    step = 1.5 * size
    for r, row in enumerate(rows):
        widths = [24 + text_width(it.label, size) + 14 for it in row]
        at = x - sum(widths) / 2 if align == "middle" else x
        y = top + r * step + step / 2
        for it, w in zip(row, widths, strict=True):
            if it.kind == "patch":
                svg.rect(
                    at, y - 5, 18, 10, it.color, stroke=it.edge, width=0.6, hatch=it.hatch,
                    hatch_color=it.hatch_color,
                )  # fmt: skip
            elif it.kind == "marker":
                svg.marker(it.marker, at + 9, y, 8, it.color, it.edge, 1.0)
            else:
                svg.line(at, y, at + 18, y, it.color, 1.8)
            svg.text(at + 24, y, it.label, size=size)
            at += w
    return len(rows) * step
