"""The report's figure kit: colours, matplotlib style, the :class:`Chart` record, drawing
helpers shared by the figures, and reproducible saving.

A chart carries two ways to draw itself: ``svg`` (the report's own writer, :mod:`.svg_charts`:
what the report writes and embeds by default) and ``draw`` (matplotlib, for PNG and PDF files,
run only when those are asked for). This module imports matplotlib only inside the functions
that draw with it, so a report of SVG figures never loads it.

Matplotlib figures are built as ``matplotlib.figure.Figure`` with an explicit ``FigureCanvasAgg``, never
through pyplot: no global backend is switched, no figure is registered anywhere, so a report
built inside a notebook or a long ``deflectbench run`` leaks nothing and each figure is freed
once saved. Output is byte-for-byte reproducible (fixed SVG hash salt, no dates or software
stamps in PNG/SVG/PDF metadata), so two reports of the same store can be diffed.

Colours: outcomes use Paul Tol's colour-blind-safe colours chosen so that neighbouring outcomes
in the stacked bars differ in lightness too, and soft refusal, clean compliance and other carry
distinct hatching (refusal and clean compliance are both dark), so the signature still reads in
grayscale; models use Tol's "bright" set plus distinct marker shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

__all__ = [
    "DEFAULT_FORMATS",
    "FALLACY_LABELS",
    "FIGURE_CHOICES",
    "FORMATS",
    "FRAMING_LABELS",
    "INK",
    "MODEL_COLORS",
    "OUTCOME_COLORS",
    "OUTCOME_HATCHES",
    "OUTCOME_LABELS",
    "STYLE",
    "Chart",
    "bar_kw",
    "ci_panel",
    "facet_grid",
    "figure_formats",
    "label_segment",
    "model_style",
    "outcome_bars",
    "outcome_legend",
    "pick",
    "row_positions",
    "save_chart",
    "styled_figure",
    "text_color",
    "zoom",
]

#: Every figure format the report can write: SVG by its own writer, PNG and PDF by matplotlib.
FORMATS: tuple[str, ...] = ("png", "svg", "pdf")
#: What the report writes unless asked for more (``--figures``).
DEFAULT_FORMATS: tuple[str, ...] = ("svg",)
#: ``--figures`` choices: one format, or ``all``.
FIGURE_CHOICES: tuple[str, ...] = ("svg", "png", "pdf", "all")


def figure_formats(choice: str) -> tuple[str, ...]:
    """The formats a ``--figures`` choice writes (``all``: every one of :data:`FORMATS`)."""
    if choice == "all":
        return FORMATS
    if choice not in FORMATS:
        raise ValueError(f"figures must be one of {', '.join(FIGURE_CHOICES)}, got {choice!r}")
    return (choice,)


OUTCOME_LABELS: dict[str, str] = {
    "refusal": "refusal",
    "soft_refusal": "soft refusal",
    "labeled_compliance": "labeled compliance",
    "clean_compliance": "clean compliance",
    "other": "other",
}
#: Tol's wine, rose, cyan, indigo, pale grey: lightness 32, 56, 79, 22, 88 (CIELAB L*).
OUTCOME_COLORS: dict[str, str] = {
    "refusal": "#882255",
    "soft_refusal": "#CC6677",
    "labeled_compliance": "#88CCEE",
    "clean_compliance": "#332288",
    "other": "#DDDDDD",
}
OUTCOME_HATCHES: dict[str, str] = {
    "refusal": "",
    "soft_refusal": "///",
    "labeled_compliance": "",
    "clean_compliance": "\\\\",
    "other": "xx",
}
#: Hatch line colours: light on the dark fills, dark on the light ones.
HATCH_COLORS: dict[str, str] = {
    "soft_refusal": "#FFFFFF",
    "clean_compliance": "#8F86C9",
    "other": "#555555",
}
#: Tol's "bright" set, one per model, with a marker shape each for grayscale.
MODEL_COLORS: tuple[str, ...] = (
    "#4477AA",
    "#EE6677",
    "#228833",
    "#CCBB44",
    "#66CCEE",
    "#AA3377",
    "#BBBBBB",
)
MODEL_MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X")
INK = "#222222"

#: matplotlib settings for every figure; the ``svg.*``, ``pdf.*`` entries make files reproducible.
STYLE: dict[RcKeyType, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.edgecolor": "#555555",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "legend.frameon": False,
    "legend.fontsize": 9.5,
    "hatch.linewidth": 0.9,
    "figure.dpi": 100,
    "svg.hashsalt": "deflectbench-report",
    "svg.fonttype": "path",
    "pdf.fonttype": 42,
    "path.simplify": True,
}
PNG_DPI = 150
FRAMING_LABELS: dict[str, str] = {
    "implicit_neutral": "implicit\nneutral",
    "implicit_political": "implicit\npolitical",
}
FALLACY_LABELS: dict[str, str] = {
    "whataboutism": "whataboutism",
    "ad_hominem": "ad hominem",
    "red_herring": "red herring",
    "model_choice": "model's choice",
    "any": "any",
}


@dataclass
class Chart:
    """One figure of the report: its file stem, title, caption and alt text, or why it is absent
    (``missing``); ``svg`` writes it as SVG text, ``draw`` as a matplotlib figure (for PNG and
    PDF), each from the same prepared arrays."""

    name: str
    title: str
    caption: str
    alt: str
    missing: str = ""
    svg: Callable[[], str] | None = None
    draw: Callable[[], Figure] | None = None
    _figure: Figure | None = field(default=None, repr=False)

    @property
    def figure(self) -> Figure | None:
        """The matplotlib figure, drawn on first use (None for a missing chart)."""
        if self._figure is None and self.draw is not None:
            self._figure = self.draw()
        return self._figure


@contextmanager
def styled_figure(width: float, height: float) -> Iterator[Figure]:
    """A new figure, with the report's style (:data:`STYLE`) in force for the ``with`` block
    that draws it: fonts, sizes and colours are read from the style as each artist is made."""
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


def _rgb(color: Any) -> tuple[float, float, float]:
    """``#RRGGBB``, white, black or an (r, g, b[, a]) tuple in [0, 1], as (r, g, b)."""
    if isinstance(color, str):
        hexa = {"white": "#FFFFFF", "black": "#000000"}.get(color, color)
        if len(hexa) != 7 or not hexa.startswith("#"):
            raise ValueError(f"not a #RRGGBB colour: {color!r}")
        r, g, b = (int(hexa[i : i + 2], 16) / 255 for i in (1, 3, 5))
        return r, g, b
    r, g, b = (float(c) for c in tuple(color)[:3])
    return r, g, b


def _luminance(color: Any) -> float:
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def text_color(fill: Any) -> str:
    """Black on light fills, white on dark ones."""
    return "white" if _luminance(fill) < 0.25 else "black"


def facet_grid(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = min(max(n, 1), max_cols)
    return math.ceil(max(n, 1) / cols), cols


def row_positions(keys: Sequence[Any]) -> dict[tuple[Any, ...], int]:
    """Each key's row (keys as columns: ``[frame["model"], frame["outcome"]]``), so a chart
    picks its cells from whole columns instead of filtering and reindexing the frame once per
    model or outcome. A key on two rows raises, as that reindex did."""
    rows: dict[tuple[Any, ...], int] = {}
    for i, key in enumerate(zip(*(k.tolist() for k in keys), strict=True)):
        if key in rows:
            raise ValueError("cannot reindex on an axis with duplicate labels")
        rows[key] = i
    return rows


def pick(values: np.ndarray, rows: Sequence[int | None]) -> np.ndarray:
    """``values[i]`` for each row ``i`` as floats, NaN where a row is missing (``None``): what
    reindexing a float column to those rows gives."""
    out = np.full(len(rows), np.nan)
    for j, i in enumerate(rows):
        if i is not None:
            out[j] = values[i]
    return out


def model_style(i: int) -> dict[str, Any]:
    return {
        "color": MODEL_COLORS[i % len(MODEL_COLORS)],
        "marker": MODEL_MARKERS[i % len(MODEL_MARKERS)],
    }


def bar_kw(outcome: str) -> dict[str, Any]:
    hatch = OUTCOME_HATCHES[outcome]
    return {
        "facecolor": OUTCOME_COLORS[outcome],
        "edgecolor": "white",
        "linewidth": 0.8,
        "hatch": hatch or None,
        "hatchcolor": HATCH_COLORS.get(outcome, "#555555"),
    }


def label_segment(
    ax: Any, x: float, y: float, width: float, outcome: str, size: float, min_width: float = 5.5
) -> None:
    """The segment's percentage, inside it when it fits (on a light box over hatching)."""
    if width < min_width:
        return
    hatched = bool(OUTCOME_HATCHES[outcome])
    ax.text(
        x + width / 2,
        y,
        f"{width:.0f}%",
        ha="center",
        va="center",
        fontsize=size,
        color="black" if hatched else text_color(OUTCOME_COLORS[outcome]),
        bbox=(
            {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}
            if hatched
            else None
        ),
    )


def outcome_bars(
    ax: Any, shares: np.ndarray, labels: Sequence[str], size: float, xlabel: str
) -> None:
    """One stacked bar of outcome shares (percent; a row of ``shares`` per label, a column per
    outcome) per label, top to bottom, each segment's percentage written in at ``size``; x 0-100
    titled ``xlabel``, the labels without ticks, the outcomes' legend above."""
    n = len(labels)
    y = np.arange(n)
    left = np.zeros(n)
    for k, o in enumerate(OUTCOMES):
        width = shares[:, k]
        ax.barh(y, width, left=left, height=0.68, label=OUTCOME_LABELS[o], **bar_kw(o))
        for i in range(n):
            label_segment(ax, left[i], y[i], width[i], o, size)
        left += width
    ax.set_yticks(y, labels=labels)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel)
    ax.tick_params(axis="y", length=0)
    outcome_legend(ax, loc="lower center", bbox_to_anchor=(0.5, 1.0))


def outcome_legend(target: Any, **kw: Any) -> None:
    from matplotlib.patches import Patch

    handles = [
        Patch(label=OUTCOME_LABELS[o], **{**bar_kw(o), "edgecolor": "#666666", "linewidth": 0.6})
        for o in OUTCOMES
    ]
    target.legend(handles=handles, ncols=len(OUTCOMES), handlelength=1.6, **kw)


def zoom(values: np.ndarray, min_span: float = 4.0) -> tuple[float, float]:
    """Percent-axis limits around the values (not from 0), so narrow CIs stay visible."""
    v = values[np.isfinite(values)]
    if not v.size:
        return 0.0, 100.0
    lo, hi = float(v.min()), float(v.max())
    pad = max(0.12 * (hi - lo), min_span / 2 - (hi - lo) / 2, 0.5)
    return max(0.0, lo - pad), min(100.0, hi + pad)


def ci_panel(
    ax: Any, outcome: str, y: np.ndarray, labels: Sequence[str], values: np.ndarray
) -> None:
    """Dress one outcome's panel of rates with 95% CIs, row ``y[i]`` from the top: its title,
    the rows' ``labels`` (empty on the panels beside the first), the percent axis zoomed to
    ``values`` and a light vertical grid behind the points."""
    from matplotlib.ticker import MaxNLocator

    ax.set_title(OUTCOME_LABELS[outcome], fontsize=10)
    ax.set_ylim(len(y) - 0.5, -0.5)
    ax.set_yticks(y, labels=list(labels))
    ax.set_xlim(*zoom(values))
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.set_xlabel("% (95% CI)")
    ax.grid(axis="x", color="#DDDDDD", linewidth=0.6)
    ax.set_axisbelow(True)


def save_chart(
    chart: Chart, out_dir: Path, formats: Sequence[str] = DEFAULT_FORMATS
) -> dict[str, Path]:
    """Write the chart as ``<name>.<fmt>`` for each format, reproducibly: SVG by the report's
    own writer, PNG and PDF by matplotlib (the figure drawn and laid out once, then saved once
    per format and freed). A missing chart writes nothing."""
    if chart.missing or (chart.svg is None and chart.draw is None):
        return {}
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    if "svg" in formats and chart.svg is not None:
        paths["svg"] = out_dir / f"{chart.name}.svg"
        paths["svg"].write_text(chart.svg(), encoding="utf-8", newline="\n")
    drawn = [f for f in formats if f in ("png", "pdf")]
    if drawn and chart.figure is not None:
        paths |= _save_figure(chart.figure, out_dir / chart.name, drawn)
        chart.figure.clear()
        chart._figure = None
    return {f: paths[f] for f in formats if f in paths}


def _save_figure(fig: Figure, stem: Path, formats: Sequence[str]) -> dict[str, Path]:
    """Save a matplotlib figure once per format, with no dates or software stamps."""
    import matplotlib as mpl

    metadata = {
        "png": {"Software": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
    }
    paths: dict[str, Path] = {}
    with mpl.rc_context(STYLE):
        # Lay out once, then freeze: constrained layout would otherwise rerun for every format.
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        for fmt in formats:
            path = stem.with_name(f"{stem.name}.{fmt}")
            fig.savefig(
                path, format=fmt, dpi=PNG_DPI, metadata=metadata.get(fmt), facecolor="white"
            )
            paths[fmt] = path
    return paths
