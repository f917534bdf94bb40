"""The paper's figures: compliance signatures, refusal by framing, any fallacy by framing, and
coach framing by requested fallacy (appendix figures: :mod:`.figures_appendix`).

Every function takes plain tables from the analysis (no store) and returns a :class:`Chart`; a
chart without data carries the reason instead of a figure. Each chart is drawn two ways from
the same arrays: as SVG by the report's own writer (:mod:`.svg_charts`) and, for PNG and PDF
only, with matplotlib's object API (see :mod:`.chart`), imported only when drawn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from deflectbench.analysis.tables.rates import FramingSwing
from deflectbench.views.format import pct
from deflectbench.views.records import records
from deflectbench.views.report.chart import (
    FALLACY_LABELS,
    FORMATS,
    FRAMING_LABELS,
    INK,
    MODEL_COLORS,
    OUTCOME_COLORS,
    OUTCOME_LABELS,
    Chart,
    ci_panel,
    facet_grid,
    model_style,
    outcome_bars,
    pick,
    row_positions,
    save_chart,
    styled_figure,
    text_color,
)
from deflectbench.views.report.figures_appendix import (
    claims_chart,
    sample_counts_chart,
    tokens_chart,
)
from deflectbench.views.report.svg_charts import (
    coach_svg,
    dots_svg,
    heatmap_svg,
    signature_svg,
)
from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FORMATS",
    "MODEL_COLORS",
    "OUTCOME_COLORS",
    "OUTCOME_LABELS",
    "Chart",
    "claims_chart",
    "coach_chart",
    "fallacy_framing_chart",
    "framing_heatmap",
    "sample_counts_chart",
    "save_chart",
    "signature_chart",
    "tokens_chart",
]


def _value(x: Any) -> float:
    return math.nan if x is None else float(x)


def signature_chart(
    models: Sequence[str], rates_ci: pd.DataFrame, sizes: Mapping[str, int]
) -> Chart:
    """The paper's central figure: each model's five outcomes, stacked, with a CI panel each.

    ``rates_ci`` is the analysis's ``rates_with_ci`` (model, kind, measure, rate, ci_lo,
    ci_hi); ``sizes`` each model's scored generations."""
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
    outcomes = rates_ci[rates_ci["kind"] == "outcome"]
    index = {(r["model"], r["measure"]): r for r in records(outcomes)}
    for i, m in enumerate(models):
        for k, o in enumerate(OUTCOMES):
            entry = index.get((m, o), {})
            rates[i, k], lo[i, k], hi[i, k] = (
                100 * _value(entry.get(key)) for key in ("rate", "ci_lo", "ci_hi")
            )
    labels = [f"{m}\n(n = {sizes[m]:,})" if m in sizes else m for m in models]

    def draw() -> Figure:
        with styled_figure(11, 1.6 + 0.62 * n + 1.3 + 0.42 * n) as fig:
            gs = fig.add_gridspec(2, len(OUTCOMES), height_ratios=[0.62 * n + 0.9, 0.42 * n + 0.9])
            ax = fig.add_subplot(gs[0, :])
            xlabel = "share of the model's scored generations (%)"
            outcome_bars(ax, np.nan_to_num(rates), labels, 9, xlabel)
            y = np.arange(n)
            ax.set_xticks(np.arange(0, 101, 10))
            ax.spines["left"].set_visible(False)
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
                ci_panel(axk, o, y, models if k == 0 else [], np.concatenate([l_, r, h_]))
        return fig

    chart.draw = draw
    chart.svg = partial(signature_svg, labels, list(models), rates, lo, hi)
    chart.alt = "Compliance signatures: " + "; ".join(
        f"{m}: "
        + ", ".join(
            f"{OUTCOME_LABELS[o]} {pct(rates[i, k], scale=1)}" for k, o in enumerate(OUTCOMES)
        )
        for i, m in enumerate(models)
    )
    return chart


def framing_heatmap(matrix: pd.DataFrame, swing: FramingSwing | None) -> Chart:
    """Refusal by model x framing, values in the cells, the largest within-model swing outlined."""
    title = "Refusal by framing"
    caption = "Refusal rate (%) of each model under each framing (templates of a framing pooled)."
    if swing is not None:
        caption += (
            f" Largest within-model framing swing (outlined): {swing.model}, "
            f"{100 * swing.rate_low:.1f}% under {swing.low} to "
            f"{100 * swing.rate_high:.1f}% under {swing.high}, "
            f"{100 * swing.swing:.1f} percentage points."
        )
    chart = Chart("refusal_by_framing", title, caption, caption)
    if matrix.empty or matrix.shape[1] == 0:
        chart.missing = "No scored generations."
        return chart
    values = 100 * matrix.to_numpy(dtype=float)
    nrow, ncol = values.shape
    cols = list(matrix.columns)
    outline: list[tuple[int, int]] = []
    heading = ""
    if swing is not None:
        i = list(matrix.index).index(swing.model)
        outline = [(i, cols.index(key)) for key in (swing.high, swing.low)]
        heading = (
            f"largest swing: {swing.model}, {100 * swing.swing:.1f} points "
            f"({swing.low} → {swing.high})"
        )

    def draw() -> Figure:
        import matplotlib as mpl
        from matplotlib.patches import Rectangle

        cmap = mpl.colormaps["cividis"].with_extremes(bad="#F2F2F2")
        with styled_figure(min(2.6 + 1.15 * ncol, 12), 1.5 + 0.55 * nrow) as fig:
            ax = fig.add_subplot()
            im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=100, aspect="auto")
            for i in range(nrow):
                for j in range(ncol):
                    v = values[i, j]
                    fill = cmap(v / 100) if np.isfinite(v) else "#F2F2F2"
                    ax.text(
                        j,
                        i,
                        pct(v, scale=1),
                        ha="center",
                        va="center",
                        fontsize=9.5,
                        color=text_color(fill) if np.isfinite(v) else "#777777",
                    )
            ax.set_xticks(np.arange(ncol), labels=[FRAMING_LABELS.get(c, c) for c in cols])
            ax.set_yticks(np.arange(nrow), labels=list(matrix.index))
            ax.tick_params(length=0)
            for side in ax.spines.values():
                side.set_visible(False)
            ax.set_xlabel("framing")
            for i, j in outline:
                for lw, ec in ((3.2, "black"), (1.2, "white")):
                    ax.add_patch(
                        Rectangle((j - 0.47, i - 0.44), 0.94, 0.88, fill=False, lw=lw, ec=ec)
                    )
            if heading:
                ax.set_title(
                    heading,
                    fontsize=9.5,
                    fontweight="normal",
                    loc="left",
                )
            bar = fig.colorbar(im, ax=ax, shrink=0.9, pad=0.02)
            bar.set_label("refusal (%)")
        return fig

    chart.draw = draw
    chart.svg = partial(
        heatmap_svg,
        title,
        values,
        list(matrix.index),
        [FRAMING_LABELS.get(c, c) for c in cols],
        outline,
        heading,
    )
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

    def draw() -> Figure:
        with styled_figure(8.5, 1.4 + 0.5 * len(framings) + 0.1 * n) as fig:
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
                    **model_style(i),
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
        return fig

    chart.draw = draw
    chart.svg = partial(
        dots_svg,
        title,
        100 * matrix.to_numpy(dtype=float),
        models,
        [f.replace("_", " ") for f in framings],
    )
    return chart


#: Appendix E.3's bars: (field, label, colour), from the outcome the field names.
COACH_BARS: tuple[tuple[str, str, str], ...] = (
    ("fallacy_labeled", "labeled", OUTCOME_COLORS["labeled_compliance"]),
    ("compliance_clean", "clean", OUTCOME_COLORS["clean_compliance"]),
    ("refusal", "refusal", OUTCOME_COLORS["refusal"]),
)


def coach_chart(coach: pd.DataFrame, models: Sequence[str]) -> Chart:
    """Appendix E.3: under coach framing, per model and requested fallacy, the labeled, clean
    and refusal field rates (``coach`` is the analysis's ``coach_field_rates``)."""
    title = "Coach framing: labeled and clean rates, by requested fallacy"
    caption = (
        "Coach framing only, per model and requested fallacy: the share of generations the "
        "judges' consensus calls labeled (the fallacy is named while produced), clean (produced "
        "with no label or caveat) and refused. Field rates, as the paper reports them, not "
        "outcome shares: a response can count in more than one bar."
    )
    chart = Chart("coach_labeling", title, caption, caption)
    if coach.empty:
        chart.missing = "No scored generations under the coach framing."
        return chart
    seen = set(coach["model"].tolist())
    present = [m for m in models if m in seen]
    fallacies = sorted(coach["fallacy_requested"].unique().tolist())
    rows, cols = facet_grid(len(present), 2)
    height = 0.9 + rows * (0.75 * len(fallacies) + 0.9)
    bar = 0.8 / len(COACH_BARS)
    # per model, its row for each requested fallacy (None: no such row), from whole columns
    where = row_positions([coach["model"], coach["fallacy_requested"]])
    counts = coach["n"].fillna(0).astype(int).tolist()
    rates = {f: coach[f].to_numpy(dtype=float) for f, _, _ in COACH_BARS}
    panels: list[tuple[str, list[str], list[np.ndarray]]] = []
    for m in present:
        at = [where.get((m, f)) for f in fallacies]
        ns = [0 if i is None else counts[i] for i in at]
        names = [
            f"{FALLACY_LABELS.get(f, f)} (n = {k:,})" for f, k in zip(fallacies, ns, strict=True)
        ]
        panels.append((m, names, [100 * pick(rates[f], at) for f, _, _ in COACH_BARS]))

    def draw() -> Figure:
        with styled_figure(11 if cols > 1 else 7, height) as fig:
            axes = fig.subplots(rows, cols, squeeze=False, sharex=True)
            for idx, (m, names, widths) in enumerate(panels):
                ax = axes[idx // cols][idx % cols]
                y = np.arange(len(fallacies))
                for k, (_, label, color) in enumerate(COACH_BARS):
                    width = widths[k]
                    pos = y - 0.4 + bar * (k + 0.5)
                    ax.barh(pos, np.nan_to_num(width), height=bar * 0.92, color=color, label=label)
                    for yy, w in zip(pos, width, strict=True):
                        if math.isnan(w):
                            continue
                        inside = w > 85  # no room after the bar: the label goes inside its end
                        ax.text(
                            w - 1 if inside else w + 1,
                            yy,
                            pct(w, scale=1),
                            va="center",
                            ha="right" if inside else "left",
                            fontsize=8,
                            color=text_color(color) if inside else INK,
                        )
                ax.set_yticks(y, labels=names)
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
            handles, labels = axes[0][0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="outside upper center", ncols=len(COACH_BARS))
        return fig

    chart.draw = draw
    chart.svg = partial(coach_svg, title, panels, [(lb, c) for _, lb, c in COACH_BARS], cols)
    return chart
