"""The leaderboard page (``deflectbench leaderboard --html``): the ranked table (rows judged by
other judges marked ``*``) and the board's signature figure, one stacked bar of the five outcome
shares per row, drawn as inline SVG (no script; every label escaped by the template)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.views.format import count, interval, pct
from deflectbench.views.pages import Grid, render

if TYPE_CHECKING:
    from deflectbench.analysis.compare.leaderboard import Leaderboard
    from deflectbench.analysis.compare.rows import BoardRow

__all__ = ["leaderboard_page", "signature"]

MISSING = "-"
HEADER = ("#", "group", "model", "condition", "pack", "store", "rate", "95% CI", "n", "judges")
#: Where the bars start, how wide a whole bar is, a bar's height and the gap between bars.
LEFT, WIDTH, BAR, GAP = 260, 420, 18, 6


def _board(lb: Leaderboard) -> Grid:
    rows = [
        [
            MISSING if r.rank is None else r.rank, r.group or "",
            f"{r.model}{'' if r.judges_match else '*'}", r.condition or MISSING, r.pack,
            Path(r.store).name, pct(r.rate, missing=MISSING),
            interval(r.ci_lo, r.ci_hi, sep=" to ", missing=MISSING), count(r.n), r.judges,
        ]
        for r in lb.rows
    ]  # fmt: skip
    numeric = [True, False, False, False, False, False, True, True, True, False]
    return Grid(HEADER, rows, numeric, [not r.judges_match for r in lb.rows])


def _bar(i: int, r: BoardRow, colors: dict[str, str]) -> dict[str, Any]:
    y = 20 + i * (BAR + GAP)
    x, segments = float(LEFT), []
    for outcome, share in r.shares.items():
        w = (share or 0.0) * WIDTH
        if w > 0:
            segments.append(
                {"x": f"{x:.1f}", "width": f"{w:.1f}", "color": colors[outcome],
                 "outcome": outcome, "share": pct(share)}
            )  # fmt: skip
        x += w
    label = f"{r.model} ({Path(r.store).name}, {r.condition or MISSING})"
    return {"y": y, "text_y": y + BAR - 5, "label": label, "segments": segments}


def signature(rows: list[BoardRow]) -> dict[str, Any]:
    """The figure's geometry: a bar per row (label, segments), the legend, the size."""
    from deflectbench.views.report.chart import OUTCOME_COLORS

    legend, x = [], float(LEFT)
    for outcome, color in OUTCOME_COLORS.items():
        legend.append({"x": f"{x:.0f}", "text_x": f"{x + 14:.0f}", "color": color,
                       "outcome": outcome})  # fmt: skip
        x += 14 + 7.2 * len(outcome) + 12
    return {
        "width": LEFT + WIDTH + 20,
        "height": 30 + len(rows) * (BAR + GAP) + 30,
        "label_x": LEFT - 8,
        "bar": BAR,
        "bars": [_bar(i, r, OUTCOME_COLORS) for i, r in enumerate(rows)],
        "legend": legend,
        "legend_y": 20 + len(rows) * (BAR + GAP) + 12,
    }


def leaderboard_page(lb: Leaderboard) -> str:
    """The whole page, self-contained."""
    from deflectbench.analysis.compare.leaderboard import GROUPS_NOTE

    return render(
        "leaderboard.html.j2",
        title=lb.title,
        subtitle="deflectbench leaderboard",
        warnings=lb.notes,
        name=lb.name,
        groups_note=GROUPS_NOTE,
        board=_board(lb),
        svg=signature(lb.rows),
    )
