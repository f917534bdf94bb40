"""The paper's figures, drawn with matplotlib's object API on the Agg canvas.

Figures are built as ``matplotlib.figure.Figure`` with an explicit ``FigureCanvasAgg``, never
through pyplot: no global backend is switched, no figure is registered anywhere, so a report
built inside a notebook or a long ``deflectbench run`` leaks nothing and each figure is freed
once saved. Output is byte-for-byte reproducible (fixed SVG hash salt, no dates or software
stamps in PNG/SVG/PDF metadata), so two reports of the same store can be diffed.

Colours: outcomes use Paul Tol's colour-blind-safe colours chosen so that neighbouring outcomes
in the stacked bars differ in lightness too, and soft refusal, clean compliance and other carry
distinct hatching (refusal and clean compliance are both dark), so the signature still reads in
grayscale; models use Tol's "bright" set plus distinct marker shapes.
Every function takes plain tables (no store) and returns a :class:`Chart`; a chart without data
carries the reason instead of a figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from deflectbench.vocab import LEVEL_NAMES, OUTCOMES

__all__ = [
    "FORMATS",
    "MODEL_COLORS",
    "OUTCOME_COLORS",
    "OUTCOME_LABELS",
    "STYLE",
    "Chart",
    "claims_chart",
    "coach_chart",
    "fallacy_framing_chart",
    "framing_heatmap",
    "run_counts_chart",
    "save_chart",
    "signature_chart",
    "tokens_chart",
]

FORMATS: tuple[str, ...] = ("png", "svg", "pdf")

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
STYLE: dict[str, Any] = {
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
    """One figure of the report: its file stem, title, caption and alt text, or why it is absent."""

    name: str
    title: str
    caption: str
    alt: str
    figure: Figure | None = None
    missing: str = ""


# --------------------------------------------------------------------------- helpers


def _new_figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _luminance(color: Any) -> float:
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _text_color(fill: Any) -> str:
    """Black on light fills, white on dark ones."""
    return "white" if _luminance(fill) < 0.25 else "black"


def _pct(x: float, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}%"


def _facet_grid(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = min(max(n, 1), max_cols)
    return math.ceil(max(n, 1) / cols), cols


def _model_style(i: int) -> dict[str, Any]:
    return {
        "color": MODEL_COLORS[i % len(MODEL_COLORS)],
        "marker": MODEL_MARKERS[i % len(MODEL_MARKERS)],
    }


def _bar_kw(outcome: str) -> dict[str, Any]:
    hatch = OUTCOME_HATCHES[outcome]
    return {
        "facecolor": OUTCOME_COLORS[outcome],
        "edgecolor": "white",
        "linewidth": 0.8,
        "hatch": hatch or None,
        "hatchcolor": HATCH_COLORS.get(outcome, "#555555"),
    }


def _label_segment(
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
        color="black" if hatched else _text_color(OUTCOME_COLORS[outcome]),
        bbox=(
            {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}
            if hatched
            else None
        ),
    )


def _outcome_legend(target: Any, **kw: Any) -> None:
    handles = [
        Patch(label=OUTCOME_LABELS[o], **{**_bar_kw(o), "edgecolor": "#666666", "linewidth": 0.6})
        for o in OUTCOMES
    ]
    target.legend(handles=handles, ncols=len(OUTCOMES), handlelength=1.6, **kw)


def _zoom(values: np.ndarray, min_span: float = 4.0) -> tuple[float, float]:
    """Percent-axis limits around the values (not from 0), so narrow CIs stay visible."""
    v = values[np.isfinite(values)]
    if not v.size:
        return 0.0, 100.0
    lo, hi = float(v.min()), float(v.max())
    pad = max(0.12 * (hi - lo), min_span / 2 - (hi - lo) / 2, 0.5)
    return max(0.0, lo - pad), min(100.0, hi + pad)


# --------------------------------------------------------------------------- figures


def signature_chart(
    models: Sequence[str], summary: Mapping[str, Any], sizes: Mapping[str, int]
) -> Chart:
    """The paper's central figure: each model's five outcomes, stacked, with a CI panel each."""
    title = "Compliance signatures"
    caption = (
        "Top: each model's scored generations split into the five mutually exclusive outcomes "
        "(assigned in the order refusal, soft refusal, labeled compliance, clean compliance, "
        "other). Bottom: the same rates with 95% block-bootstrap confidence intervals "
        "(claims resampled), one panel per outcome, each zoomed to its own range (not from 0)."
    )
    chart = Chart("signatures", title, caption, "Stacked bars of outcome shares per model.")
    if not models:
        chart.missing = "No scored generations."
        return chart
    n = len(models)
    rates = np.full((n, len(OUTCOMES)), np.nan)
    lo, hi = rates.copy(), rates.copy()
    for i, m in enumerate(models):
        sec = summary["models"][m]
        for k, o in enumerate(OUTCOMES):
            entry = sec["outcomes"].get(o) or {}
            rate = entry.get("rate")
            ci = entry.get("ci95") or [None, None]
            rates[i, k] = np.nan if rate is None else 100 * rate
            lo[i, k] = np.nan if ci[0] is None else 100 * ci[0]
            hi[i, k] = np.nan if ci[1] is None else 100 * ci[1]
    with mpl.rc_context(STYLE):
        fig = _new_figure(11, 1.6 + 0.62 * n + 1.3 + 0.42 * n)
        gs = fig.add_gridspec(2, len(OUTCOMES), height_ratios=[0.62 * n + 0.9, 0.42 * n + 0.9])
        ax = fig.add_subplot(gs[0, :])
        y = np.arange(n)
        left = np.zeros(n)
        for k, o in enumerate(OUTCOMES):
            width = np.nan_to_num(rates[:, k])
            ax.barh(y, width, left=left, height=0.68, label=OUTCOME_LABELS[o], **_bar_kw(o))
            for i in range(n):
                _label_segment(ax, left[i], y[i], width[i], o, 9)
            left += width
        labels = [f"{m}\n(n = {sizes[m]:,})" if m in sizes else m for m in models]
        ax.set_yticks(y, labels=labels)
        ax.set_ylim(n - 0.5, -0.5)
        ax.set_xlim(0, 100)
        ax.set_xticks(np.arange(0, 101, 10))
        ax.set_xlabel("share of the model's scored generations (%)")
        ax.spines["left"].set_visible(False)
        ax.tick_params(axis="y", length=0)
        _outcome_legend(ax, loc="lower center", bbox_to_anchor=(0.5, 1.0))
        for k, o in enumerate(OUTCOMES):
            axk = fig.add_subplot(gs[1, k])
            r, l_, h_ = rates[:, k], lo[:, k], hi[:, k]
            err = np.vstack([np.nan_to_num(r - l_), np.nan_to_num(h_ - r)])
            axk.errorbar(
                r,
                y,
                xerr=err,
                fmt="o",
                color=INK,
                mfc=OUTCOME_COLORS[o],
                mec=INK,
                ms=5.5,
                capsize=3.5,
                elinewidth=1.6,
                capthick=1.3,
            )
            axk.set_title(OUTCOME_LABELS[o], fontsize=10)
            axk.set_ylim(n - 0.5, -0.5)
            axk.set_yticks(y, labels=list(models) if k == 0 else [])
            axk.set_xlim(*_zoom(np.concatenate([l_, r, h_])))
            axk.xaxis.set_major_locator(mpl.ticker.MaxNLocator(4))
            axk.set_xlabel("% (95% CI)")
            axk.grid(axis="x", color="#DDDDDD", linewidth=0.6)
            axk.set_axisbelow(True)
    chart.figure = fig
    chart.alt = "Compliance signatures: " + "; ".join(
        f"{m}: "
        + ", ".join(f"{OUTCOME_LABELS[o]} {_pct(rates[i, k])}" for k, o in enumerate(OUTCOMES))
        for i, m in enumerate(models)
    )
    return chart


def framing_heatmap(matrix: pd.DataFrame, swing: Mapping[str, Any] | None) -> Chart:
    """Refusal by model x framing, values in the cells, the largest within-model swing outlined."""
    title = "Refusal by framing"
    caption = "Refusal rate (%) of each model under each framing (templates of a framing pooled)."
    if swing is not None:
        caption += (
            f" Largest within-model framing swing (outlined): {swing['model']}, "
            f"{100 * swing['rate_low']:.1f}% under {swing['low']} to "
            f"{100 * swing['rate_high']:.1f}% under {swing['high']}, "
            f"{100 * swing['swing']:.1f} percentage points."
        )
    chart = Chart("refusal_by_framing", title, caption, caption)
    if matrix.empty or matrix.shape[1] == 0:
        chart.missing = "No scored generations."
        return chart
    values = 100 * matrix.to_numpy(dtype=float)
    nrow, ncol = values.shape
    cmap = mpl.colormaps["cividis"].with_extremes(bad="#F2F2F2")
    with mpl.rc_context(STYLE):
        fig = _new_figure(min(2.6 + 1.15 * ncol, 12), 1.5 + 0.55 * nrow)
        ax = fig.add_subplot()
        im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=100, aspect="auto")
        for i in range(nrow):
            for j in range(ncol):
                v = values[i, j]
                fill = cmap(v / 100) if np.isfinite(v) else "#F2F2F2"
                ax.text(
                    j,
                    i,
                    _pct(v),
                    ha="center",
                    va="center",
                    fontsize=9.5,
                    color=_text_color(fill) if np.isfinite(v) else "#777777",
                )
        cols = list(matrix.columns)
        ax.set_xticks(np.arange(ncol), labels=[FRAMING_LABELS.get(c, c) for c in cols])
        ax.set_yticks(np.arange(nrow), labels=list(matrix.index))
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        ax.set_xlabel("framing")
        if swing is not None:
            i = list(matrix.index).index(swing["model"])
            for key in ("high", "low"):
                j = cols.index(swing[key])
                for lw, ec in ((3.2, "black"), (1.2, "white")):
                    ax.add_patch(
                        Rectangle((j - 0.47, i - 0.44), 0.94, 0.88, fill=False, lw=lw, ec=ec)
                    )
            ax.set_title(
                f"largest swing: {swing['model']}, {100 * swing['swing']:.1f} points "
                f"({swing['low']} → {swing['high']})",
                fontsize=9.5,
                fontweight="normal",
                loc="left",
            )
        bar = fig.colorbar(im, ax=ax, shrink=0.9, pad=0.02)
        bar.set_label("refusal (%)")
    chart.figure = fig
    return chart


def fallacy_framing_chart(matrix: pd.DataFrame) -> Chart:
    """Appendix E.2: the share of responses with any fallacy, by framing, one marker per model."""
    title = "Any fallacy present, by framing"
    caption = (
        "Share of scored generations whose consensus marks at least one fallacy (whataboutism, "
        "ad hominem or red herring) present, per framing; one marker shape per model."
    )
    chart = Chart("fallacy_by_framing", title, caption, caption)
    if matrix.empty or matrix.shape[1] == 0:
        chart.missing = "No scored generations."
        return chart
    models = list(matrix.index)
    framings = list(matrix.columns)
    n = len(models)
    with mpl.rc_context(STYLE):
        fig = _new_figure(8.5, 1.4 + 0.5 * len(framings) + 0.1 * n)
        ax = fig.add_subplot()
        y = np.arange(len(framings))
        step = min(0.16, 0.7 / max(n, 1))
        for i, m in enumerate(models):
            offset = (i - (n - 1) / 2) * step
            vals = 100 * matrix.loc[m].to_numpy(dtype=float)
            ax.plot(
                vals,
                y + offset,
                ls="none",
                ms=7,
                mec=INK,
                mew=0.7,
                label=m,
                clip_on=False,
                **_model_style(i),
            )
        ax.set_yticks(y, labels=[f.replace("_", " ") for f in framings])
        ax.set_ylim(len(framings) - 0.5, -0.5)
        ax.set_xlim(0, 100)
        ax.set_xlabel("responses with any fallacy present (%)")
        ax.grid(axis="x", color="#DDDDDD", linewidth=0.6)
        for yy in y[:-1]:
            ax.axhline(yy + 0.5, color="#EEEEEE", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=min(n, 4))
    chart.figure = fig
    return chart


def coach_chart(coach: pd.DataFrame, models: Sequence[str]) -> Chart:
    """Appendix E.3: under coach framing, per model and requested fallacy, the outcome split."""
    title = "Coach framing: labeled vs clean, by requested fallacy"
    caption = (
        "Coach framing only: the outcome split per model and requested fallacy. Labeled "
        "compliance names the fallacy while producing it; clean compliance produces it without "
        "any label or caveat."
    )
    chart = Chart("coach_labeling", title, caption, caption)
    if coach.empty:
        chart.missing = "No scored generations under the coach framing."
        return chart
    present = [m for m in models if (coach["model"] == m).any()]
    fallacies = sorted(coach["fallacy_requested"].unique().tolist())
    rows, cols = _facet_grid(len(present), 2)
    with mpl.rc_context(STYLE):
        fig = _new_figure(11 if cols > 1 else 7, 0.9 + rows * (0.45 * len(fallacies) + 0.9))
        axes = fig.subplots(rows, cols, squeeze=False, sharex=True)
        for idx, m in enumerate(present):
            ax = axes[idx // cols][idx % cols]
            sub = coach[coach["model"] == m].set_index("fallacy_requested").reindex(fallacies)
            y = np.arange(len(fallacies))
            left = np.zeros(len(fallacies))
            for o in OUTCOMES:
                width = 100 * sub[o].fillna(0).to_numpy(dtype=float)
                ax.barh(y, width, left=left, height=0.7, **_bar_kw(o))
                for i in range(len(fallacies)):
                    _label_segment(ax, left[i], y[i], width[i], o, 8.5, min_width=11)
                left += width
            ns = sub["n"].fillna(0).astype(int).tolist()
            ax.set_yticks(
                y,
                labels=[
                    f"{FALLACY_LABELS.get(f, f)} (n = {k:,})"
                    for f, k in zip(fallacies, ns, strict=True)
                ],
            )
            ax.set_ylim(len(fallacies) - 0.5, -0.5)
            ax.set_xlim(0, 100)
            ax.set_title(m, loc="left")
            ax.tick_params(axis="y", length=0)
            ax.spines["left"].set_visible(False)
            if idx + cols >= len(present):
                ax.set_xlabel("share of coach-framing generations (%)")
                ax.xaxis.set_tick_params(labelbottom=True)
        for idx in range(len(present), rows * cols):
            axes[idx // cols][idx % cols].set_visible(False)
        _outcome_legend(fig, loc="outside upper center")
    chart.figure = fig
    return chart


def claims_chart(claims: pd.DataFrame, spread: Mapping[str, Any] | None) -> Chart:
    """Per-claim refusal (pooled over models) by controversy level: one point per claim."""
    title = "Per-claim refusal by controversy level"
    chart = Chart("claims_by_level", title, "", "")
    data = claims.dropna(subset=["refusal"]) if len(claims) else claims
    if data.empty:
        chart.missing = "No scored generations."
        return chart
    r = 100 * data["refusal"].to_numpy(dtype=float)
    lo_i, hi_i = int(np.argmin(r)), int(np.argmax(r))
    chart.caption = (
        f"Each point is one claim's refusal rate, pooled over models, templates and samples "
        f"({len(data)} claims). Per-claim refusal spans {r[lo_i]:.1f}% "
        f"({data['claim_id'].iloc[lo_i]}) to {r[hi_i]:.1f}% ({data['claim_id'].iloc[hi_i]}), "
        f"a {r[hi_i] - r[lo_i]:.1f}-point spread. Filled: US context; open: international. "
        "Bars: the level's mean over its claims."
    )
    chart.alt = chart.caption
    levels = sorted(int(v) for v in data["level"].unique())
    rng = np.random.default_rng(0)
    jitter = rng.uniform(-0.22, 0.22, size=len(data))
    with mpl.rc_context(STYLE):
        fig = _new_figure(8.5, 4.6)
        ax = fig.add_subplot()
        x = data["level"].to_numpy(dtype=float) + jitter
        us = (data["context"] == "us").to_numpy()
        ax.scatter(
            x[us],
            r[us],
            s=30,
            c=MODEL_COLORS[0],
            edgecolors=INK,
            linewidths=0.6,
            label="US context",
            zorder=3,
        )
        ax.scatter(
            x[~us],
            r[~us],
            s=30,
            facecolors="white",
            edgecolors=MODEL_COLORS[0],
            linewidths=1.3,
            label="international context",
            zorder=3,
        )
        for lv in levels:
            mean = float(np.mean(r[data["level"].to_numpy() == lv]))
            ax.plot([lv - 0.32, lv + 0.32], [mean, mean], color=INK, lw=2, zorder=4)
            ax.text(
                lv + 0.35,
                mean,
                f"{mean:.1f}%",
                va="center",
                fontsize=8.5,
                color=INK,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                zorder=5,
            )
        pad = max(2.0, 0.15 * (r.max() - r.min()))
        y_lo, y_hi = max(0.0, r.min() - pad), min(100.0, r.max() + pad)
        # The lowest claim's name goes under its dot, unless the dot sits on the axis, where
        # the name would collide with the tick labels: then above it.
        low_room = r[lo_i] - y_lo > 0.08 * (y_hi - y_lo)
        for i, where in ((lo_i, "top" if low_room else "bottom"), (hi_i, "bottom")):
            ax.annotate(
                data["claim_id"].iloc[i],
                (x[i], r[i]),
                xytext=(0, -12 if where == "top" else 10),
                textcoords="offset points",
                ha="center",
                va=where,
                fontsize=8,
                color=INK,
            )
        ax.set_xticks(
            levels, labels=[f"{lv}\n{LEVEL_NAMES.get(lv, '').replace('_', ' ')}" for lv in levels]
        )
        ax.set_xlim(min(levels) - 0.6, max(levels) + 0.75)
        ax.set_ylim(y_lo, y_hi)
        ax.set_xlabel("controversy level")
        ax.set_ylabel("refusal (% of the claim's generations)")
        ax.grid(axis="y", color="#DDDDDD", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2)
    chart.figure = fig
    return chart


def run_counts_chart(models: Sequence[str], summary: Mapping[str, Any], runs: int) -> Chart:
    """Appendix F: how many of a cell's samples refused, per model (bimodal = prompt-driven)."""
    title = f"Refusals per cell (of {runs} samples)"
    caption = (
        f"A cell is one model x claim x template, sampled {runs} times. Bars: share of a model's "
        f"cells refused in 0, 1, ..., {runs} of the samples. Mass at the ends (0/{runs} and "
        f"{runs}/{runs}) means refusal is decided by the prompt, not by chance."
    )
    chart = Chart("run_refusal_counts", title, caption, caption)
    dists = {m: summary["models"][m].get("run_refusal_counts") or {} for m in models}
    dists = {m: d for m, d in dists.items() if d and sum(d.values())}
    if not dists:
        chart.missing = "No scored generations."
        return chart
    rows, cols = _facet_grid(len(dists), 4)
    with mpl.rc_context(STYLE):
        fig = _new_figure(min(3.0 * cols + 0.8, 12.5), 0.6 + 2.8 * rows)
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for idx, (m, d) in enumerate(dists.items()):
            ax = axes[idx // cols][idx % cols]
            keys = [k for k in sorted(d, key=int) if int(k) <= runs]
            counts = np.array([d[k] for k in keys], dtype=float)
            share = 100 * counts / counts.sum()
            bars = ax.bar(np.arange(len(keys)), share, color=OUTCOME_COLORS["refusal"], width=0.7)
            ax.bar_label(
                bars, labels=[f"{s:.0f}" if s >= 0.5 else "" for s in share], fontsize=8, padding=1
            )
            ax.set_xticks(np.arange(len(keys)), labels=keys)
            ax.set_title(f"{m}\n{int(counts.sum()):,} cells", fontsize=9.5)
            ax.set_xlabel(f"samples refused (of {runs})")
            if idx % cols == 0:
                ax.set_ylabel("cells (%)")
            ax.set_ylim(0, 105)
        for idx in range(len(dists), rows * cols):
            axes[idx // cols][idx % cols].set_visible(False)
    chart.figure = fig
    return chart


def tokens_chart(tokens: pd.DataFrame, models: Sequence[str], summary: Mapping[str, Any]) -> Chart:
    """Appendix G: mean output length by outcome, per model, with the model's overall mean."""
    title = "Output length by outcome"
    caption = (
        "Mean output tokens per model and outcome (provider-reported). The black line is the "
        "model's mean over all its scored generations, which partly reflects its outcome mix when "
        "outcomes differ in length (refusals are often short)."
    )
    chart = Chart("tokens_by_outcome", title, caption, caption)
    if tokens.empty or not tokens["mean_tokens"].fillna(0).any():
        chart.missing = "No output token counts recorded."
        return chart
    present = [m for m in models if (tokens["model"] == m).any()]
    n = len(present)
    width = 0.8 / len(OUTCOMES)
    with mpl.rc_context(STYLE):
        fig = _new_figure(min(3.5 + 1.9 * n, 12), 4.6)
        ax = fig.add_subplot()
        for k, o in enumerate(OUTCOMES):
            sub = tokens[tokens["outcome"] == o].set_index("model").reindex(present)
            vals = sub["mean_tokens"].to_numpy(dtype=float)
            x = np.arange(n) - 0.4 + width * (k + 0.5)
            ok = np.isfinite(vals)
            ax.bar(x[ok], vals[ok], width=width * 0.92, label=OUTCOME_LABELS[o], **_bar_kw(o))
        for i, m in enumerate(present):
            mean = summary["models"][m].get("mean_output_tokens")
            if mean is not None:
                ax.plot(
                    [i - 0.42, i + 0.42],
                    [mean, mean],
                    color="black",
                    lw=1.8,
                    label="all outcomes (mean)" if i == 0 else None,
                )
                ax.text(i + 0.43, mean, f"{mean:.0f}", va="center", fontsize=8.5)
        ax.set_xticks(np.arange(n), labels=present, rotation=0 if n <= 5 else 20)
        ax.set_xlim(-0.55, n - 0.35)
        ax.set_ylabel("mean output length (tokens)")
        ax.grid(axis="y", color="#DDDDDD", linewidth=0.6)
        ax.set_axisbelow(True)
        handles, labels = ax.get_legend_handles_labels()
        order = [i for i, lab in enumerate(labels) if lab in OUTCOME_LABELS.values()]
        order += [i for i in range(len(labels)) if i not in order]
        ax.legend(
            [handles[i] for i in order],
            [labels[i] for i in order],
            loc="lower center",
            bbox_to_anchor=(0.5, 1.0),
            ncols=3,
        )
    chart.figure = fig
    return chart


# --------------------------------------------------------------------------- saving


def save_chart(chart: Chart, out_dir: Path, formats: Sequence[str] = FORMATS) -> dict[str, Path]:
    """Write the chart as ``<name>.<fmt>`` for each format, reproducibly; then free the figure."""
    if chart.figure is None:
        return {}
    out_dir.mkdir(parents=True, exist_ok=True)
    metadata = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
    }
    paths: dict[str, Path] = {}
    with mpl.rc_context(STYLE):
        # Lay out once, then freeze: constrained layout would otherwise rerun for every format.
        chart.figure.draw_without_rendering()
        chart.figure.set_layout_engine("none")
        for fmt in formats:
            path = out_dir / f"{chart.name}.{fmt}"
            chart.figure.savefig(
                path,
                format=fmt,
                dpi=PNG_DPI,
                metadata=metadata.get(fmt),
                facecolor="white",
            )
            paths[fmt] = path
    chart.figure.clear()
    chart.figure = None
    return paths
