"""The compare page (``deflectbench compare --html``): every difference of the comparison
(rows judged by other judges marked; each row's Holm family and its size), the flipped cells
with both sides' examples, the runs' manifests and the gate's lines; the judge, manifest and
coverage notes (sides holding different cells, sides one result lacks) as warnings. Model text
is escaped by the template."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deflectbench.views.format import count, interval, num, pct, points, pval
from deflectbench.views.pages import Grid, render

if TYPE_CHECKING:
    from deflectbench.analysis.compare.api import Comparison

__all__ = ["compare_page"]

MISSING = "-"
DIFF_HEADER = ("A", "B", "measure", "scope", "framing", "template", "rate A", "rate B", "diff",
               "95% CI", "p", "p (Holm)", "h", "other judges", "Holm family", "m")  # fmt: skip
FLIP_HEADER = ("A", "B", "claim", "template", "framing", "A's majority", "B's majority",
               "A example", "B example")  # fmt: skip


def _differences(c: Comparison) -> Grid:
    rows = [
        [
            r.model_a, r.model_b, r.name, r.scope, r.framing or MISSING, r.template or MISSING,
            pct(r.rate_a, missing=MISSING), pct(r.rate_b, missing=MISSING),
            points(r.diff, missing=MISSING),
            interval(r.ci_lo, r.ci_hi, sep=" to ", signed=True, missing=MISSING),
            pval(r.p, missing=MISSING), pval(r.p_holm, missing=MISSING),
            num(r.h, "+.2f", missing=MISSING), "yes" if r.judges_differ else "",
            r.holm_family or MISSING, MISSING if r.holm_m is None else count(r.holm_m),
        ]
        for r in c.rows
    ]  # fmt: skip
    numeric = [False] * 6 + [True] * 7 + [False, False, True]
    return Grid(DIFF_HEADER, rows, numeric, [r.judges_differ for r in c.rows])


def _flips(c: Comparison) -> Grid:
    rows = [
        [
            f.model_a, f.model_b, f.claim_id, f.prompt_id, f.framing,
            f"{f.outcome_a} ({pct(f.share_a, missing=MISSING)})",
            f"{f.outcome_b} ({pct(f.share_b, missing=MISSING)})",
            f.example_a or "", f.example_b or "",
        ]
        for f in c.flip_rows
    ]  # fmt: skip
    return Grid(FLIP_HEADER, rows)


def compare_page(c: Comparison) -> str:
    """The whole page, self-contained."""
    from deflectbench.analysis.compare.recorded import RECORDED_HEADER

    return render(
        "compare.html.j2",
        title=c.title,
        subtitle="deflectbench compare",
        warnings=[*c.judge_notes, *c.manifest_notes, *c.coverage_notes],
        differences=_differences(c),
        flips=_flips(c),
        recorded=Grid(RECORDED_HEADER, c.recorded_rows),
        holm_family=c.holm_family,
        gate=c.gate_lines(),
    )
