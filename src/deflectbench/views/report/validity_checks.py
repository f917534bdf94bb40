"""The report's validity checks: lines for "At a glance" (the positive control, the tie rule,
over-refusal, self-consistency) and the "Validity checks" section (the two-axis figure of
over-refusal against manipulative refusal, and its tables).

They sit beside the signature so a reader sees, before any rate, whether the judges found the
control's known deflections and how a split vote of two judges was decided.
"""

from __future__ import annotations

from deflectbench.analysis.summary.build import Summary
from deflectbench.views.format import count, pct
from deflectbench.views.report.chart import INK, Chart, model_style, styled_figure
from deflectbench.views.report.tables import Table, make_table


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
                    f"{r['model']} refused {pct(r['over_refusal'], 0)} of {r['n_benign']} benign "
                    f"requests (manipulative: {pct(r['refusal'], 0)})"
                    for r in rows
                ),
            )
        )
    sc = v.self_consistency
    if sc is not None and len(sc):
        parts = [
            f"{r['judge']} agrees with itself on {pct(r['self_agreement'], 0)} of the fields of "
            f"{r['n']} re-judged answers (with the other judges: {pct(r['other_agreement'], 0)})"
            for r in sc.to_dict(orient="records")
        ]
        out.append(("judge self-consistency", "; ".join(parts)))
    return out


#: The figure and tables of the report's "Validity checks" section.
VALIDITY_CHECK_FIGURES = ("over_refusal",)
VALIDITY_CHECK_TABLES = ("over_refusal", "self_consistency")
VALIDITY_CHECK_INTRO = (
    "Checks that the benchmark measures what it says (README, Validity checks): over-refusal on "
    "the benign twins (deflectbench-v1-benign) beside the refusal of the manipulative requests, "
    "and each judge's agreement with itself beside its agreement with the other judges."
)


def over_refusal_chart(s: Summary) -> Chart:
    """Two axes, as over-refusal benchmarks plot safety against helpfulness: per model, the
    refusal of the manipulative requests (x) and of their benign twins (y)."""
    chart = Chart(
        "over_refusal",
        "Refusal of manipulative requests against refusal of their benign twins",
        "One marker per model: x is the share of the manipulative requests refused (the "
        "paper's pack), y the share of the benign twins refused (over-refusal). Up and to the "
        "right refuses everything; down and to the right is the careful assistant.",
        "Scatter of manipulative refusal against benign over-refusal, one marker per model.",
    )
    over = s.validity.over_refusal if s.validity is not None else None
    rows = over[over["framing"] == "all"] if over is not None else None
    if rows is None or rows.empty:
        chart.missing = "No scored benign twins (run the pack deflectbench-v1-benign)."
        return chart
    with styled_figure(6.0, 5.0) as fig:
        ax = fig.add_subplot()
        for i, r in enumerate(rows.itertuples()):
            x, y = 100 * float(r.refusal), 100 * float(r.over_refusal)
            ax.plot([x], [y], ls="none", ms=9, mec=INK, mew=0.7, label=r.model, **model_style(i))
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        ax.plot([0, 100], [0, 100], color="#DDDDDD", linewidth=0.8, zorder=0)
        ax.set_xlabel("manipulative requests refused (%)")
        ax.set_ylabel("benign twins refused: over-refusal (%)")
        ax.grid(color="#EEEEEE", linewidth=0.6)
        ax.legend(loc="upper left")
    chart.figure = fig
    return chart


def validity_check_tables(s: Summary) -> list[Table]:
    """Over-refusal per model and framing; each judge's self-consistency."""
    v = s.validity
    out = []
    if v is not None and v.over_refusal is not None and len(v.over_refusal):
        o = v.over_refusal
        out.append(
            make_table(
                "over_refusal",
                "Over-refusal on the benign twins, beside the manipulative requests' refusal",
                o,
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
                        r.model,
                        r.framing,
                        count(r.n_benign),
                        pct(r.over_refusal),
                        pct(r.unlabeled_fallacy),
                        count(r.n_manipulative),
                        pct(r.refusal),
                    ]
                    for r in o.itertuples()
                ],
                left=2,
                note="Over-refusal: the share of benign requests refused; unlabeled fallacy: "
                "fulfilled with a fallacy of the model's own, unlabeled (compliance_clean).",
            )
        )
    if v is not None and v.self_consistency is not None and len(v.self_consistency):
        sc = v.self_consistency
        out.append(
            make_table(
                "self_consistency",
                "Judge self-consistency: a judge against itself and against the other judges",
                sc,
                ["judge", "re-judged", "with itself", "with the other judges"],
                [
                    [r.judge, count(r.n), pct(r.self_agreement), pct(r.other_agreement)]
                    for r in sc.itertuples()
                ],
                note="Shares of the rubric's fields equal across two verdicts on the same answers "
                "(`deflectbench judge --self-consistency`).",
            )
        )
    return out
