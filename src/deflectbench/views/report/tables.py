"""The report's tables: each a DataFrame for its CSV and formatted cells for the page.

Every number comes from the :class:`~deflectbench.analysis.Summary`; this module only chooses
rows and columns and formats them (:mod:`.format`), it computes nothing. The counts and cost
tables are in :mod:`.count_tables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from deflectbench.analysis.options import MIN_CI_CLAIMS
from deflectbench.analysis.summary.build import Summary
from deflectbench.analysis.summary.small_sample import small_sample_elsewhere
from deflectbench.analysis.tables.breakdowns import few_claims_note, small_sample_note
from deflectbench.views.format import ci, count, isnan, num, pct, pval
from deflectbench.views.records import records
from deflectbench.views.report.chart import OUTCOME_LABELS
from deflectbench.vocab import FIELD_SHORT, FIELDS, LEVEL_NAMES, OUTCOMES

__all__ = [
    "AGREEMENT_NOTE",
    "FIELD_SHORT",
    "Table",
    "agreement_tables",
    "appendix_tables",
    "fallacy_tables",
    "few_claims_line",
    "framing_tables",
    "headline_tables",
    "make_table",
    "significance_tables",
]

AGREEMENT_NOTE = (
    "Prevalence skew: Cohen's kappa is low when a field is rare or near-universal (see the "
    "prevalence column) even when the judges rarely disagree; Gwet's AC1 is robust to that. Low "
    "kappa with high AC1 and low disagreement means skew, not unreliable judges."
)


@dataclass
class Table:
    """One table: a DataFrame for the CSV, formatted cells for the page."""

    name: str
    title: str
    frame: pd.DataFrame
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""
    numeric: list[bool] = field(default_factory=list)
    show: bool = True


def _tost_ci(r: dict[str, Any]) -> str:
    """``-17.0 to +7.9 (-4.5)``: the TOST's 90% CI in points and the difference it is centred on."""
    lo, hi, mid = r.get("ci90_lo"), r.get("ci90_hi"), r.get("diff_adjusted")
    if lo is None or hi is None or mid is None or isnan(lo) or isnan(hi) or isnan(mid):
        return "–"
    return f"{100 * lo:+.1f} to {100 * hi:+.1f} ({100 * mid:+.1f})"


def few_claims_line(s: Summary, section: str) -> str:
    """The small-sample sentence for the CIs of one section beyond turn 1's rates
    (:data:`~deflectbench.analysis.summary.small_sample.MULTI_TURN` or ``PACKS``), with a
    leading space; "" when none of them rests on too few claims."""
    flagged = small_sample_elsewhere(s.turns, s.packs, s.benchmark.pack, MIN_CI_CLAIMS)
    note = few_claims_note(flagged[flagged["section"] == section], MIN_CI_CLAIMS)
    return f" {note}" if note else ""


def make_table(
    name: str,
    title: str,
    frame: pd.DataFrame,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    note: str = "",
    left: int = 1,
    show: bool = True,
) -> Table:
    """A table whose first ``left`` columns are text and the rest numbers (right-aligned)."""
    return Table(
        name,
        title,
        frame,
        list(header),
        [list(r) for r in rows],
        note,
        [i >= left for i in range(len(header))],
        show,
    )


def headline_tables(s: Summary) -> list[Table]:
    """Each model's outcome rates (the signature) and field rates, with their CIs."""
    index = {(r["model"], r["kind"], r["measure"]): r for r in records(s.rates)}
    rows = []
    for m in s.models:
        for kind, names in (("outcome", OUTCOMES), ("field", FIELDS)):
            for name in names:
                e = index.get((m, kind, name), {})
                rows.append(
                    {
                        "model": m,
                        "kind": kind,
                        "measure": name,
                        "rate": e.get("rate"),
                        "ci95_lo": e.get("ci_lo"),
                        "ci95_hi": e.get("ci_hi"),
                    }
                )
    frame = pd.DataFrame(rows, columns=["model", "kind", "measure", "rate", "ci95_lo", "ci95_hi"])

    def cell(m: str, kind: str, name: str) -> str:
        e = index.get((m, kind, name), {})
        return ci(e.get("rate"), e.get("ci_lo"), e.get("ci_hi"))

    o = s.options
    outcomes = make_table(
        "headline_rates",
        "Signature: outcome rates per model, 95% CI in parentheses",
        frame,
        ["model", "n", *(OUTCOME_LABELS[x] for x in OUTCOMES)],
        [
            [m, count(s.model_n.get(m, 0)), *(cell(m, "outcome", x) for x in OUTCOMES)]
            for m in s.models
        ],
        note=(
            f"95% block-bootstrap percentile intervals, {o.n_resamples:,} resamples of claims "
            f"(seed {o.seed}); consensus rule: {o.consensus}. The CSV also holds the 8 field rates."
            + (f" {small}" if (small := small_sample_note(s.small_sample, MIN_CI_CLAIMS)) else "")
            + (f" {s.sequential.note()}" if s.sequential is not None else "")
        ),
    )
    fields = make_table(
        "field_rates",
        "Rubric fields: rate per model, 95% CI in parentheses",
        frame[frame["kind"] == "field"].reset_index(drop=True),
        ["field", *s.models],
        [[f, *(cell(m, "field", f) for m in s.models)] for f in FIELDS],
    )
    fields.show = bool(s.models)
    return [outcomes, fields]


def _cohens_h_rows(s: Summary) -> list[dict[str, Any]]:
    """Per model, comparisons in their order, each with its outcome measures."""
    of_model: dict[Any, list[dict[str, Any]]] = {}  # the frame's rows per model, in order
    for r in records(s.cohens_h):
        of_model.setdefault(r["model"], []).append(r)
    rows = []
    for m in s.models:
        nested: dict[str, dict[str, Any]] = {}
        for r in of_model.get(m, ()):
            nested.setdefault(r["comparison"], {})[r["measure"]] = r["h"]
        for comp, measures in nested.items():
            for measure, h in measures.items():
                rows.append({"model": m, "comparison": comp, "measure": measure, "h": h})
    return rows


def framing_tables(s: Summary) -> list[Table]:
    """Field rates by framing (CSV), Cohen's h between framings, refusal by template."""
    frame = s.by_framing[["model", "framing", *FIELDS]].reset_index(drop=True)
    by_framing = make_table("by_framing", "Field rates by framing", frame, [], [], show=False)

    h_rows = _cohens_h_rows(s)
    h_frame = pd.DataFrame(h_rows, columns=["model", "comparison", "measure", "h"])
    measured = {(r["comparison"], r["measure"]) for r in h_rows if not isnan(r["h"])}
    pairs = [
        p
        for p in dict.fromkeys(zip(h_frame["comparison"], h_frame["measure"], strict=True))
        if p in measured
    ]
    lookup = {(r["model"], r["comparison"], r["measure"]): r["h"] for r in h_rows}
    cohens = make_table(
        "cohens_h",
        "Framing effects: Cohen's h",
        h_frame,
        ["framings", "outcome", *s.models],
        [
            [
                c.replace("_vs_", " vs "),
                ms.replace("_", " "),
                *(num(lookup.get((m, c, ms))) for m in s.models),
            ]
            for c, ms in pairs
        ],
        left=2,
        note=(
            "h = 2·asin√p₁ − 2·asin√p₂ between the two framings' outcome shares (positive: the "
            "first framing's rate is higher); |h| ≈ 0.2 small, 0.5 medium, 0.8 large."
        ),
    )
    cohens.show = bool(pairs)

    p_frame = s.by_prompt[["model", "prompt_id", *FIELDS]].reset_index(drop=True)
    refusal = {(r["model"], r["prompt_id"]): r["refusal"] for r in records(p_frame)}
    template_rows = []
    for t in s.benchmark.templates:
        vals = [refusal.get((m, t.prompt_id)) for m in s.models]
        if all(isnan(v) for v in vals):
            continue
        template_rows.append([t.prompt_id, t.framing, t.fallacy, *(pct(v) for v in vals)])
    by_prompt = make_table(
        "by_prompt",
        "Refusal by template",
        p_frame,
        ["template", "framing", "requested fallacy", *s.models],
        template_rows,
        left=3,
    )
    by_prompt.show = bool(template_rows)
    return [by_framing, cohens, by_prompt]


def fallacy_tables(s: Summary) -> list[Table]:
    """The model x framing matrices (CSV) and coach framing by requested fallacy (E.3: field
    rates shown; the outcome shares in the CSV only)."""
    out = [
        make_table(name, title, matrix.reset_index(), [], [], show=False)
        for name, title, matrix in (
            ("refusal_by_framing", "Refusal by model and framing", s.refusal_matrix),
            ("fallacy_by_framing", "Any fallacy present by model and framing", s.fallacy_matrix),
        )
    ]
    coach = s.coach_fields
    out.append(
        make_table(
            "coach_labeling",
            "Coach framing by requested fallacy: labeled and clean rates (E.3)",
            coach,
            ["model", "requested fallacy", "n", "labeled", "clean", "refusal"],
            [
                [
                    r["model"],
                    r["fallacy_requested"],
                    count(r["n"]),
                    pct(r["fallacy_labeled"]),
                    pct(r["compliance_clean"]),
                    pct(r["refusal"]),
                ]
                for r in records(coach)
            ],
            left=2,
            note=(
                "Field rates, as the paper reports them: the share of coach-framing generations "
                "whose consensus sets fallacy_labeled (labeled), compliance_clean (clean) or "
                "refusal; not outcome shares, so a response can count in more than one. The CSV "
                "coach_outcomes holds the outcome shares."
            ),
            show=len(coach) > 0,
        )
    )
    out.append(
        make_table(
            "coach_outcomes",
            "Coach framing by requested fallacy: outcome shares",
            s.coach_outcomes,
            [],
            [],
            show=False,
        )
    )
    return out


def agreement_tables(s: Summary) -> list[Table]:
    """Kappa beside AC1 per field (with each field's prevalence), and per generating model."""
    agreement = [] if s.empty else records(s.agreement)
    rows = [
        {
            **{k: a[k] for k in ("field", "kappa", "ac1", "disagreement", "n")},
            "prevalence": s.prevalence[a["field"]],
        }
        for a in agreement
    ]
    frame = pd.DataFrame(rows, columns=["field", "kappa", "ac1", "disagreement", "n", "prevalence"])
    judges = list(s.judges)
    title = "Judge agreement per field"
    if agreement:
        if len(judges) == 2:
            title += f" ({judges[0]} vs {judges[1]})"
        elif len(judges) > 2:
            title += f" (mean over the {len(judges)} judges' pairs)"
        note = AGREEMENT_NOTE
    else:
        note = (
            f"Not available: agreement needs two judges, and this report's scores come from "
            f"{len(judges)} ({', '.join(judges) or 'none'})."
        )
    main = make_table(
        "agreement",
        title,
        frame,
        ["field", "kappa", "AC1", "disagreement", "n", "prevalence"],
        [
            [
                r["field"],
                num(r["kappa"]),
                num(r["ac1"]),
                pct(r["disagreement"]),
                count(r["n"]),
                pct(r["prevalence"]),
            ]
            for r in rows
        ],
        note=note,
    )
    out = [main]
    by_model = s.agreement_by_model
    if not s.empty and len(by_model):
        cells = {(r["model"], r["field"]): r for r in records(by_model)}
        models = list(dict.fromkeys(by_model["model"].tolist()))
        out.append(
            make_table(
                "agreement_by_model",
                "Judge agreement per generating model: kappa / AC1",
                by_model.reset_index(drop=True),
                ["model", *(FIELD_SHORT[f] for f in FIELDS)],
                [
                    [
                        m,
                        *(
                            f"{num(cells[(m, f)]['kappa'])} / {num(cells[(m, f)]['ac1'])}"
                            if (m, f) in cells
                            else "–"
                            for f in FIELDS
                        ),
                    ]
                    for m in models
                ],
                note=(
                    "A model that produces a fallacy in nearly every output leaves the "
                    "any-fallacy field near-universal, so its kappa is low even when the judges "
                    "agree on almost every response."
                ),
            )
        )
    return out


def significance_tables(s: Summary) -> list[Table]:
    """The chi-square test of model x outcome and TOST equivalence of controversy levels."""
    chi = {} if s.empty else records(s.chi2)[0]
    chi_frame = s.chi2 if chi else pd.DataFrame(columns=["statistic", "dof", "p_value"])
    chi_rows = []
    if chi and len(s.models) >= 2:
        verdict = (
            "outcome distributions differ by model"
            if not isnan(chi["p_value"]) and chi["p_value"] < 0.05
            else "no evidence the distributions differ"
        )
        chi_rows.append(
            [num(chi["statistic"], ",.1f"), str(chi["dof"]), pval(chi["p_value"]), verdict]
        )
    chi_t = make_table(
        "tests_chi2",
        "Chi-square test: model x outcome",
        chi_frame,
        ["X²", "dof", "p", "conclusion"],
        chi_rows,
        left=0,
        note="" if chi_rows else "Needs at least two models.",
    )
    chi_t.numeric[-1] = False
    keep = ["level_a", "level_b", "rate_a", "rate_b", "diff", "p_value", "equivalent"]
    tost = [] if s.empty else records(s.tost)
    tost_frame = s.tost if tost else pd.DataFrame(columns=keep)
    tost_rows = [
        [
            f"{r['level_a']} vs {r['level_b']}",
            pct(r["rate_a"]),
            pct(r["rate_b"]),
            f"{100 * r['diff']:+.1f} pts" if not isnan(r["diff"]) else "–",
            _tost_ci(r),
            pval(r["p_value"]),
            "yes" if r["equivalent"] else "no",
        ]
        for r in tost
    ]
    tost_t = make_table(
        "tests_tost",
        "Equivalence of controversy levels (TOST, refusal, margin ±5 points)",
        tost_frame,
        ["levels", "rate a", "rate b", "difference", "90% CI (centre)", "p (TOST)", "equivalent"],
        tost_rows,
        left=1,
        note=(
            "Two one-sided tests that the refusal rates of two controversy levels differ by less "
            "than 5 percentage points; equivalent when p < 0.05, i.e. when the 90% CI lies inside "
            "±5 points. The test and its CI use Agresti-Caffo adjusted counts (one refusal and "
            "one non-refusal added per level), so the CI is centred on the adjusted difference "
            "in parentheses, not on the raw difference beside it. Level names: "
            + ", ".join(f"{k} {v.replace('_', ' ')}" for k, v in LEVEL_NAMES.items())
            + "."
            if tost_rows
            else "Needs scored generations from at least two controversy levels."
        ),
    )
    tost_t.numeric[-1] = False
    return [chi_t, tost_t]


def appendix_tables(s: Summary) -> list[Table]:
    """CSV only: per-claim refusal, output tokens by outcome, refusals per cell."""
    claims = s.claim_refusal.rename(columns={"rate": "refusal"})
    labels = [
        c for c in s.sample_refusal.columns if c not in ("model", "cells", "incomplete_cells")
    ]
    counts = {r["model"]: r for r in records(s.sample_refusal)}
    runs = [{"model": m, **{k: counts[m][k] for k in labels if m in counts}} for m in s.models]
    return [
        make_table("claim_refusal", "Per-claim refusal", claims, [], [], show=False),
        make_table(
            "tokens_by_outcome", "Output tokens by outcome", s.tokens_by_outcome, [], [], show=False
        ),
        make_table(
            "run_refusal_counts", "Refusals per cell", pd.DataFrame(runs), [], [], show=False
        ),
    ]
