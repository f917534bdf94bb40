"""The signature figure corrected for judge error: per outcome, each model's judged and
corrected 95% intervals side by side (plain tables in, a :class:`~.chart.Chart` out, drawn as
SVG by :mod:`.svg_charts` or, for PNG and PDF, with matplotlib)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from deflectbench.views.format import pct
from deflectbench.views.report.chart import (
    INK,
    OUTCOME_COLORS,
    OUTCOME_LABELS,
    Chart,
    ci_panel,
    styled_figure,
)
from deflectbench.views.report.svg_charts import Interval, intervals_svg
from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:  # (the estimators load only for a store with labels)
    from matplotlib.figure import Figure

    from deflectbench.analysis.calibration.corrected import Corrected

__all__ = ["corrected_chart"]

#: The judged interval's colour (the corrected one takes its outcome's colour).
JUDGED = "#9A9A9A"


def _triple(e: object) -> tuple[float, float, float]:
    rate = getattr(e, "rate", None)
    ci = getattr(e, "ci95", None)
    if rate is None:
        return math.nan, math.nan, math.nan
    lo, hi = ci if ci is not None else (rate, rate)
    return 100 * rate, 100 * lo, 100 * hi


def _why_missing(c: Corrected, shown: Sequence[str], outcome: str) -> str | None:
    """Why no model has a corrected rate of ``outcome`` (each reason once, with its models
    when they differ), None when some model has one."""
    reasons: dict[str, list[str]] = {}
    for m in shown:
        e = c.models[m].get("corrected", "outcome", outcome)
        if e.rate is not None:
            return None
        reasons.setdefault(e.note or "undefined", []).append(m)
    if len(reasons) == 1:
        return next(iter(reasons))
    return ", ".join(f"{why} ({', '.join(ms)})" for why, ms in reasons.items())


def corrected_chart(models: Sequence[str], c: Corrected | None) -> Chart:
    """One panel per outcome; per model the judged interval (grey, above) and the corrected
    one (coloured, below). Absent, with the reason, when there are no labels; a panel with no
    corrected value says why in the panel and the caption."""
    title = "Compliance signatures corrected for judge error"
    caption = (
        "Each outcome's rate per model with its 95% CI (bootstrap over claims): judged (grey, "
        "the judges' consensus; its interval covers claim sampling only) above the rate "
        "corrected with the human labels (coloured). Each panel is zoomed to its own range."
    )
    chart = Chart("corrected_signatures", title, caption, "Judged and corrected intervals.")
    if c is None or not models:
        chart.missing = (
            "No human labels of this pack: nothing to correct the judges' rates with."
            if c is None
            else "No scored generations."
        )
        return chart
    shown = [m for m in models if m in c.models]
    n = len(shown)
    judged = np.full((n, len(OUTCOMES), 3), np.nan)
    corr = judged.copy()
    for i, m in enumerate(shown):
        cell = c.models[m]
        for k, o in enumerate(OUTCOMES):
            judged[i, k] = _triple(cell.get("judged", "outcome", o))
            corr[i, k] = _triple(cell.get("corrected", "outcome", o))
    whys = [_why_missing(c, shown, o) for o in OUTCOMES]
    missing = [f"{OUTCOME_LABELS[o]}: {w}" for o, w in zip(OUTCOMES, whys, strict=True) if w]
    note = "no corrected value\n(see caption)"

    def draw() -> Figure:
        with styled_figure(11, 1.4 + 0.6 * n) as fig:
            y = np.arange(n)
            for k, o in enumerate(OUTCOMES):
                ax = fig.add_subplot(1, len(OUTCOMES), k + 1)
                for vals, dy, color in ((judged, -0.17, JUDGED), (corr, 0.17, OUTCOME_COLORS[o])):
                    r, lo, hi = vals[:, k, 0], vals[:, k, 1], vals[:, k, 2]
                    err = np.vstack([np.nan_to_num(r - lo), np.nan_to_num(hi - r)])
                    ax.errorbar(
                        r,
                        y + dy,
                        xerr=err,
                        fmt="o",
                        color=INK,
                        mfc=color,
                        mec=INK,
                        ecolor=color,
                        ms=5,
                        capsize=3,
                        elinewidth=1.8,
                    )
                both = np.concatenate([judged[:, k].ravel(), corr[:, k].ravel()])
                ci_panel(ax, o, y, shown if k == 0 else [], both)
                if whys[k] is not None:
                    ax.text(
                        0.5,
                        0.02,
                        note,
                        transform=ax.transAxes,
                        ha="center",
                        va="bottom",
                        fontsize=7,
                        color=INK,
                    )
        return fig

    chart.draw = draw
    series = [
        [
            Interval(judged, -0.17, JUDGED, JUDGED),
            Interval(corr, 0.17, OUTCOME_COLORS[o], OUTCOME_COLORS[o]),
        ]
        for o in OUTCOMES
    ]
    notes = [note if w is not None else "" for w in whys]
    chart.svg = partial(intervals_svg, title, shown, series, notes)
    if missing:
        chart.caption += " No corrected value in a panel: " + "; ".join(missing) + "."
    chart.alt = "Judged and corrected outcome rates: " + "; ".join(
        f"{m}: "
        + ", ".join(
            f"{OUTCOME_LABELS[o]} judged {pct(judged[i, k, 0], scale=1)}, corrected "
            f"{pct(corr[i, k, 0], scale=1)}"
            for k, o in enumerate(OUTCOMES)
        )
        for i, m in enumerate(shown)
    )
    return chart
