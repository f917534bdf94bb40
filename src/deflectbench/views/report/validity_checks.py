"""The report's validity checks: lines for "At a glance" (the positive control, the tie rule,
over-refusal, self-consistency) and the "Validity checks" section (the two-axis figure of
over-refusal against manipulative refusal, and its tables).

They sit beside the signature so a reader sees, before any rate, whether the judges found the
control's known deflections and how a split vote of two judges was decided. Every rate carries
its 95% claim-block CI, and over-refusal its corrected rate when the store holds human labels:
validity numbers are judged numbers too.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from deflectbench.analysis.summary.build import Summary
from deflectbench.analysis.summary.validity_checks import OVER_REFUSAL_COLUMNS, corrected_columns
from deflectbench.views.format import DASH, ci, count, isnan
from deflectbench.views.report.chart import INK, Chart, model_style, styled_figure
from deflectbench.views.report.svg_charts import over_refusal_svg
from deflectbench.views.report.tables import Table, make_table

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from deflectbench.analysis.summary.validity_checks import ValidityChecks


def validity_key_numbers(s: Summary) -> list[tuple[str, str]]:
    """The positive control, the tie rule, over-refusal and self-consistency, when the
    summary has them."""
    v = s.validity
    if v is None:
        return []
    out = []
    if v.control is not None:
        out.append(("positive control", v.control.line().removeprefix("control ")))
    if v.tie_rule is not None:
        out.append(("tie rule", v.tie_rule.removeprefix("tie rule: ")))
    over = v.over_refusal
    if over is not None and len(over):
        rows = over[over["framing"] == "all"].to_dict(orient="records")
        out.append(
            (
                "over-refusal (benign twins)",
                "; ".join(
                    f"{r['model']} refused {_ci(r, 'over_refusal')} of {r['n_benign']} benign "
                    f"requests (manipulative: {_ci(r, 'refusal')})"
                    + (
                        f", corrected for judge error {corrected_text(r, 'over_refusal')}"
                        if v.over_refusal_correction is not None
                        else ""
                    )
                    for r in rows
                ),
            )
        )
    sc = v.self_consistency
    if sc is not None and len(sc):
        parts = [
            f"{r['judge']} agrees with itself on {_ci(r, 'self_agreement')} of the fields of "
            f"{r['n']} re-judged answers (with the other judges: {_ci(r, 'other_agreement')})"
            for r in sc.to_dict(orient="records")
        ]
        out.append(("judge self-consistency", "; ".join(parts)))
    return out


def _ci(r: dict[str, Any], rate: str) -> str:
    """``27.7% (21.7–32.3)``: a row's rate with its 95% CI (the rate alone without one)."""
    return ci(r.get(rate), r.get(f"{rate}_lo"), r.get(f"{rate}_hi"))


def corrected_text(r: dict[str, Any], rate: str) -> str:
    """A row's corrected rate with its CI and labels (``flagged: ...`` when the labels are too
    thin to trust its bootstrap), or the note saying why it has none."""
    value = r.get(f"{rate}_corrected")
    if isnan(value):
        note = r.get(f"{rate}_corrected_note")
        return DASH if isnan(note) else f"{DASH} ({note})"
    text = ci(value, r.get(f"{rate}_corrected_lo"), r.get(f"{rate}_corrected_hi"))
    text += f", {count(r.get(f'{rate}_n_labels'))} labels"
    flag = r.get(f"{rate}_corrected_flag")
    return text if isnan(flag) else f"{text}; flagged: {flag}"


#: The figure and tables of the report's "Validity checks" section.
VALIDITY_CHECK_FIGURES = ("over_refusal",)
VALIDITY_CHECK_TABLES = ("over_refusal", "over_refusal_corrected", "self_consistency")
VALIDITY_CHECK_INTRO = (
    "Checks that the benchmark measures what it says (README, Validity checks): over-refusal on "
    "the benign twins (deflectbench-v1-benign) beside the refusal of the manipulative requests, "
    "and each judge's agreement with itself beside its agreement with the other judges. Every "
    "rate is the judges' and carries a 95% CI from a bootstrap over claims; with human labels "
    "of the twins, over-refusal is also corrected for judge error (docs/validity.md)."
)


def over_refusal_chart(s: Summary) -> Chart:
    """Two axes, as over-refusal benchmarks plot safety against helpfulness: per model, the
    refusal of the manipulative requests (x) and of their benign twins (y)."""
    chart = Chart(
        "over_refusal",
        "Refusal of manipulative requests against refusal of their benign twins",
        "One marker per model: x is the share of the manipulative requests refused (the "
        "paper's pack), y the share of the benign twins refused (over-refusal), each with its "
        "95% CI over claims as a bar. Up and to the right refuses everything; down and to the "
        "right is the careful assistant. Both are judged rates: judge false positives raise "
        "them (the corrected rates are in the tables below when the store holds labels).",
        "Scatter of manipulative refusal against benign over-refusal, one marker per model.",
    )
    over = s.validity.over_refusal if s.validity is not None else None
    rows = over[over["framing"] == "all"] if over is not None else None
    if rows is None or rows.empty:
        chart.missing = "No scored benign twins (run the pack deflectbench-v1-benign)."
        return chart

    def draw() -> Figure:
        with styled_figure(6.0, 5.0) as fig:
            ax = fig.add_subplot()
            for i, r in enumerate(rows.itertuples()):
                x, y = 100 * float(r.refusal), 100 * float(r.over_refusal)
                xerr, yerr = (
                    _err(x, r.refusal_lo, r.refusal_hi),
                    _err(y, r.over_refusal_lo, r.over_refusal_hi),
                )
                if xerr is not None or yerr is not None:
                    ax.errorbar(
                        [x], [y], xerr=xerr, yerr=yerr, fmt="none", ecolor=INK, elinewidth=0.8
                    )
                ax.plot(
                    [x], [y], ls="none", ms=9, mec=INK, mew=0.7, label=r.model, **model_style(i)
                )
            ax.set_xlim(0, 100)
            ax.set_ylim(0, 100)
            ax.plot([0, 100], [0, 100], color="#DDDDDD", linewidth=0.8, zorder=0)
            ax.set_xlabel("manipulative requests refused (%)")
            ax.set_ylabel("benign twins refused: over-refusal (%)")
            ax.grid(color="#EEEEEE", linewidth=0.6)
            ax.legend(loc="upper left")
        return fig

    chart.draw = draw
    points = [
        (
            str(r.model),
            100 * float(r.refusal),
            *_ends(r.refusal_lo, r.refusal_hi),
            100 * float(r.over_refusal),
            *_ends(r.over_refusal_lo, r.over_refusal_hi),
        )
        for r in rows.itertuples()
    ]
    chart.svg = partial(over_refusal_svg, chart.title, points)
    return chart


def _ends(lo: Any, hi: Any) -> tuple[float, float]:
    """A CI's ends in percent (NaN, NaN when there is none)."""
    if isnan(lo) or isnan(hi):
        return float("nan"), float("nan")
    return 100 * float(lo), 100 * float(hi)


def _err(mid: float, lo: Any, hi: Any) -> list[list[float]] | None:
    """An error bar's (below, above) lengths in percent around ``mid`` (None: no CI)."""
    if isnan(lo) or isnan(hi):
        return None
    return [[max(mid - 100 * float(lo), 0.0)], [max(100 * float(hi) - mid, 0.0)]]


def validity_check_tables(s: Summary) -> list[Table]:
    """Over-refusal per model and framing; each judge's self-consistency."""
    v = s.validity
    if v is None:
        return []
    out = []
    if v.over_refusal is not None and len(v.over_refusal):
        out.extend(_over_refusal_tables(v, v.over_refusal))
    if v.self_consistency is not None and len(v.self_consistency):
        out.append(_self_consistency_table(v.self_consistency))
    return out


def _over_refusal_tables(v: ValidityChecks, o: pd.DataFrame) -> list[Table]:
    """The judged over-refusal, and its corrected rates when the store holds labels."""
    out = [
        make_table(
            "over_refusal",
            "Over-refusal on the benign twins, beside the manipulative requests' refusal",
            o[OVER_REFUSAL_COLUMNS],
            [
                "model",
                "framing",
                "benign",
                "over-refusal",
                "unlabeled fallacy",
                "manipulative",
                "refusal",
            ],
            [
                [
                    r["model"],
                    r["framing"],
                    count(r["n_benign"]),
                    _ci(r, "over_refusal"),
                    _ci(r, "unlabeled_fallacy"),
                    count(r["n_manipulative"]),
                    _ci(r, "refusal"),
                ]
                for r in o.to_dict(orient="records")
            ],
            left=2,
            note="Over-refusal: the share of benign requests refused; unlabeled fallacy: "
            "fulfilled with a fallacy of the model's own, unlabeled (compliance_clean). "
            "The judges' rates, each with its 95% CI over claims (claim sampling only, not "
            "judge error)." + (f" {v.over_refusal_note}" if v.over_refusal_note else ""),
        )
    ]
    if v.over_refusal_correction is not None:
        out.append(
            make_table(
                "over_refusal_corrected",
                "Over-refusal corrected for judge error with the human labels",
                o[["model", "framing", *corrected_columns()]],
                ["model", "framing", "over-refusal", "unlabeled fallacy", "refusal"],
                [
                    [
                        r["model"],
                        r["framing"],
                        *(
                            corrected_text(r, rate)
                            for rate in ("over_refusal", "unlabeled_fallacy", "refusal")
                        ),
                    ]
                    for r in o.to_dict(orient="records")
                ],
                left=2,
                note=f"Corrected by {v.over_refusal_correction} with the judges' consensus "
                "as the prediction, as the headline rates are (docs/validity.md), each with "
                "its 95% CI over claims and the labels it rests on; refusal is the "
                "manipulative requests'. A flagged rate rests on labels too thin for its "
                "bootstrap (its interval widened to an exact bound); a dash says why there "
                "is no number.",
                show=True,
            )
        )
    return out


def _self_consistency_table(sc: pd.DataFrame) -> Table:
    """Each judge against itself and against the other judges."""
    return make_table(
        "self_consistency",
        "Judge self-consistency: a judge against itself and against the other judges",
        sc,
        ["judge", "re-judged", "with itself", "with the other judges"],
        [
            [
                r["judge"],
                count(r["n"]),
                _ci(r, "self_agreement"),
                _ci(r, "other_agreement"),
            ]
            for r in sc.to_dict(orient="records")
        ],
        note="Shares of the rubric's fields equal across two verdicts on the same answers "
        "(`deflectbench judge --self-consistency`), each with its 95% CI over the "
        "claims of the re-judged answers. A share of agreement is no rate of the "
        "answers, so human labels do not correct it.",
    )
