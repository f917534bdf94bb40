"""The appendix figures: per-claim refusal by controversy level, refusals per cell across a
cell's samples (appendix F) and output length by outcome (appendix G).

Like :mod:`.figures`, each takes plain tables from the analysis and returns a :class:`Chart`
that draws itself as SVG (:mod:`.svg_charts`) or, for PNG and PDF, with matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from deflectbench.views.records import records
from deflectbench.views.report.chart import (
    HATCH_COLORS,
    INK,
    MODEL_COLORS,
    OUTCOME_COLORS,
    OUTCOME_HATCHES,
    OUTCOME_LABELS,
    Chart,
    bar_kw,
    facet_grid,
    pick,
    row_positions,
    styled_figure,
)
from deflectbench.views.report.svg import LegendItem
from deflectbench.views.report.svg_charts import claims_svg, counts_svg, grouped_bars_svg
from deflectbench.vocab import LEVEL_NAMES, OUTCOMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["claims_chart", "sample_counts_chart", "tokens_chart"]


def claims_chart(
    claims: pd.DataFrame, spread: Mapping[str, Any] | None, level_means: pd.DataFrame
) -> Chart:
    """Per-claim refusal (pooled over models) by controversy level: one point per claim.

    ``claims`` is the analysis's ``claim_rates`` (claim_id, level, context, rate), ``spread``
    its claim spread (min, max, spread_pp, claim_min, claim_max, n_claims) and ``level_means``
    its ``claims_by_level`` (level, mean_rate).
    """
    title = "Per-claim refusal by controversy level"
    chart = Chart("claims_by_level", title, "", "")
    data = claims.dropna(subset=["rate"]) if len(claims) else claims
    if data.empty or not spread:
        chart.missing = "No scored generations."
        return chart
    r = 100 * data["rate"].to_numpy(dtype=float)
    ids = data["claim_id"].tolist()
    lo_i, hi_i = ids.index(spread["claim_min"]), ids.index(spread["claim_max"])
    if f"{100 * spread['min']:.1f}" == f"{100 * spread['max']:.1f}":
        span = f"Every claim's refusal rate is {100 * spread['min']:.1f}%: no spread."
    else:
        span = (
            f"Per-claim refusal spans {100 * spread['min']:.1f}% ({spread['claim_min']}) to "
            f"{100 * spread['max']:.1f}% ({spread['claim_max']}), a "
            f"{spread['spread_pp']:.1f}-point spread."
        )
    chart.caption = (
        f"Each point is one claim's refusal rate, pooled over models, templates and samples "
        f"({spread['n_claims']} claim{'' if spread['n_claims'] == 1 else 's'}). {span} Filled: "
        "US context; open: international. "
        "Bars: the level's mean over its claims."
    )
    chart.alt = chart.caption
    means = dict(zip(level_means["level"], level_means["mean_rate"], strict=True))
    levels = sorted(int(v) for v in data["level"].unique())
    rng = np.random.default_rng(0)
    jitter = rng.uniform(-0.22, 0.22, size=len(data))
    x = data["level"].to_numpy(dtype=float) + jitter
    us = (data["context"] == "us").to_numpy()
    pad = max(2.0, 0.15 * (r.max() - r.min()))
    y_lo, y_hi = max(0.0, r.min() - pad), min(100.0, r.max() + pad)
    # The lowest claim's name goes under its dot, unless the dot sits on the axis, where
    # the name would collide with the tick labels: then above it.
    low_room = r[lo_i] - y_lo > 0.08 * (y_hi - y_lo)
    notes = [
        (i, str(data["claim_id"].iloc[i]), where)
        for i, where in ((lo_i, "top" if low_room else "bottom"), (hi_i, "bottom"))
    ]
    level_labels = [f"{lv}\n{LEVEL_NAMES.get(lv, '').replace('_', ' ')}" for lv in levels]

    def draw() -> Figure:
        with styled_figure(8.5, 4.6) as fig:
            ax = fig.add_subplot()
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
                mean = 100 * float(means[lv])
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
            for i, name, where in notes:
                ax.annotate(
                    name,
                    (x[i], r[i]),
                    xytext=(0, -12 if where == "top" else 10),
                    textcoords="offset points",
                    ha="center",
                    va=where,
                    fontsize=8,
                    color=INK,
                )
            ax.set_xticks(levels, labels=level_labels)
            ax.set_xlim(min(levels) - 0.6, max(levels) + 0.75)
            ax.set_ylim(y_lo, y_hi)
            ax.set_xlabel("controversy level")
            ax.set_ylabel("refusal (% of the claim's generations)")
            ax.grid(axis="y", color="#DDDDDD", linewidth=0.6)
            ax.set_axisbelow(True)
            ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2)
        return fig

    chart.draw = draw
    chart.svg = partial(
        claims_svg, title, x, r, us, levels, level_labels, means, notes, (y_lo, y_hi)
    )
    return chart


def sample_counts_chart(models: Sequence[str], counts: pd.DataFrame, runs: int) -> Chart:
    """Appendix F: how many of a cell's samples refused, per model (bimodal = prompt-driven).

    ``counts`` is the analysis's ``sample_refusal_counts`` (model, "0".."5", cells); ``runs``
    the samples per cell shown."""
    title = f"Refusals per cell (of {runs} samples)"
    caption = (
        f"A cell is one model x claim x template, sampled {runs} times. Bars: share of a model's "
        f"cells refused in 0, 1, ..., {runs} of the samples. Mass at the ends (0/{runs} and "
        f"{runs}/{runs}) means refusal is decided by the prompt, not by chance."
    )
    chart = Chart("run_refusal_counts", title, caption, caption)
    labels = [c for c in counts.columns if c not in ("model", "cells", "incomplete_cells")]
    by_model = {r["model"]: r for r in records(counts)}
    dists = {m: {k: by_model[m][k] for k in labels} if m in by_model else {} for m in models}
    dists = {m: d for m, d in dists.items() if d and sum(d.values())}
    if not dists:
        chart.missing = "No scored generations."
        return chart
    rows, cols = facet_grid(len(dists), 4)
    panels: list[tuple[str, list[str], np.ndarray]] = []
    for m, d in dists.items():
        keys = [k for k in sorted(d, key=int) if int(k) <= runs]
        cells = np.array([d[k] for k in keys], dtype=float)
        panels.append((f"{m}\n{int(cells.sum()):,} cells", keys, 100 * cells / cells.sum()))

    def draw() -> Figure:
        with styled_figure(min(3.0 * cols + 0.8, 12.5), 0.6 + 2.8 * rows) as fig:
            axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
            for idx, (name, keys, share) in enumerate(panels):
                ax = axes[idx // cols][idx % cols]
                bars = ax.bar(
                    np.arange(len(keys)), share, color=OUTCOME_COLORS["refusal"], width=0.7
                )
                ax.bar_label(
                    bars,
                    labels=[f"{s:.0f}" if s >= 0.5 else "" for s in share],
                    fontsize=8,
                    padding=1,
                )
                ax.set_xticks(np.arange(len(keys)), labels=keys)
                ax.set_title(name, fontsize=9.5)
                ax.set_xlabel(f"samples refused (of {runs})")
                if idx % cols == 0:
                    ax.set_ylabel("cells (%)")
                ax.set_ylim(0, 105)
            for idx in range(len(dists), rows * cols):
                axes[idx // cols][idx % cols].set_visible(False)
        return fig

    chart.draw = draw
    chart.svg = partial(counts_svg, title, panels, runs, OUTCOME_COLORS["refusal"])
    return chart


def tokens_chart(
    tokens: pd.DataFrame, models: Sequence[str], overall: Mapping[str, float]
) -> Chart:
    """Appendix G: mean output length by outcome, per model, with the model's overall mean.

    ``tokens`` is the analysis's ``tokens_by_outcome`` (model, outcome, mean_tokens);
    ``overall`` each model's mean over all its scored generations."""
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
    seen = set(tokens["model"].tolist())
    present = [m for m in models if m in seen]
    n = len(present)
    width = 0.8 / len(OUTCOMES)
    # each outcome's mean per present model (NaN where it has none), from the whole columns
    rows = row_positions([tokens["outcome"], tokens["model"]])
    means = tokens["mean_tokens"].to_numpy(dtype=float)
    by_outcome = {o: pick(means, [rows.get((o, m)) for m in present]) for o in OUTCOMES}
    marks = [overall.get(m) for m in present]
    finite = [v for vals in by_outcome.values() for v in vals if math.isfinite(v)]
    finite += [float(v) for v in marks if v is not None and not math.isnan(v)]
    tallest = max(finite, default=0.0)
    # headroom above the tallest bar, so it never touches the legend above the axes
    top = tallest * 1.15 if tallest > 0 else 1.0
    # a long name breaks after its provider, so neighbouring labels never run together
    names = [m.replace("/", "/\n", 1) if len(m) > 18 else m for m in present]

    def draw() -> Figure:
        with styled_figure(min(3.5 + 1.9 * n, 12), 4.6) as fig:
            ax = fig.add_subplot()
            for k, o in enumerate(OUTCOMES):
                vals = by_outcome[o]
                x = np.arange(n) - 0.4 + width * (k + 0.5)
                ok = np.isfinite(vals)
                ax.bar(x[ok], vals[ok], width=width * 0.92, label=OUTCOME_LABELS[o], **bar_kw(o))
            for i, mean in enumerate(marks):
                if mean is not None and not math.isnan(mean):
                    ax.plot(
                        [i - 0.42, i + 0.42],
                        [mean, mean],
                        color="black",
                        lw=1.8,
                        label="all outcomes (mean)" if i == 0 else None,
                    )
                    ax.text(i + 0.43, mean, f"{mean:.0f}", va="center", fontsize=8.5)
            ax.set_ylim(0, top)
            ax.set_xticks(np.arange(n), labels=names, rotation=0 if n <= 5 else 20)
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
        return fig

    chart.draw = draw
    series = [
        (
            LegendItem(
                OUTCOME_LABELS[o], color=OUTCOME_COLORS[o], hatch=OUTCOME_HATCHES[o],
                hatch_color=HATCH_COLORS.get(o, "#555555"),
            ),
            by_outcome[o],
            None,
        )
        for o in OUTCOMES
    ]  # fmt: skip
    chart.svg = partial(
        grouped_bars_svg, title, names, series, ylabel="mean output length (tokens)", y_max=top,
        marks=[None if v is None else float(v) for v in marks], mark_label="all outcomes (mean)",
        width=min(350 + 190 * n, 1200),
    )  # fmt: skip
    return chart
