"""Build the report: figures (PNG, SVG, PDF), CSV tables, one self-contained HTML page, Markdown.

The HTML page works offline and alone: figures are embedded as ``data:`` URIs, the CSS is
inline, there is no script and no external URL, and a Content-Security-Policy forbids both, so
the page is safe to open even though it quotes model output. Model text is untrusted: it reaches
the templates as plain strings and Jinja2 escapes it (autoescape on; nothing is marked safe).
Reruns on the same store and arguments write identical files.
"""

from __future__ import annotations

import base64
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined

from deflectbench.benchmark import Benchmark
from deflectbench.report import figures as fg
from deflectbench.report.data import ReportData, collect, largest_swing
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, FRAMINGS, LEVEL_NAMES, OUTCOMES

__all__ = ["FIELD_SHORT", "ReportError", "ReportPaths", "build_report", "write_report_after_run"]

FIELD_SHORT: dict[str, str] = {
    "refusal": "ref",
    "soft_refusal": "soft",
    "WA_present": "WA",
    "AH_present": "AH",
    "RH_present": "RH",
    "any_fallacy_present": "any",
    "compliance_clean": "clean",
    "fallacy_labeled": "lab",
}
#: Every figure and table file the report may write (stale ones are removed on rebuild).
FIGURE_NAMES = (
    "signatures",
    "refusal_by_framing",
    "fallacy_by_framing",
    "coach_labeling",
    "claims_by_level",
    "run_refusal_counts",
    "tokens_by_outcome",
)
AGREEMENT_NOTE = (
    "Prevalence skew: Cohen's kappa is low when a field is rare or near-universal (see the "
    "prevalence column) even when the judges rarely disagree; Gwet's AC1 is robust to that. Low "
    "kappa with high AC1 and low disagreement means skew, not unreliable judges."
)


class ReportError(Exception):
    """The report cannot be written (e.g. the output folder is not writable)."""


@dataclass(frozen=True)
class ReportPaths:
    """What :func:`build_report` wrote."""

    out_dir: Path
    html: Path
    markdown: Path
    tables: tuple[Path, ...]
    figures: tuple[Path, ...]


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


# --------------------------------------------------------------------------- formatting


def _isnan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: Any, digits: int = 1) -> str:
    return "–" if _isnan(x) else f"{100 * float(x):.{digits}f}%"


def ci(entry: Mapping[str, Any] | None) -> str:
    """``27.7% (21.7–32.3)``: a rate with its 95% CI in percent."""
    if not entry or _isnan(entry.get("rate")):
        return "–"
    lo, hi = entry.get("ci95") or [None, None]
    if _isnan(lo) or _isnan(hi):
        return pct(entry["rate"])
    return f"{pct(entry['rate'])} ({100 * lo:.1f}–{100 * hi:.1f})"


def num(x: Any, fmt: str = ".2f") -> str:
    return "–" if _isnan(x) else format(x, fmt)


def pval(x: Any) -> str:
    if _isnan(x):
        return "–"
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


def usd(x: Any) -> str:
    return "unknown" if _isnan(x) else f"${x:,.2f}"


# --------------------------------------------------------------------------- tables


def _table(
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


def _headline_tables(d: ReportData) -> list[Table]:
    rows = []
    for m in d.models:
        sec = d.summary["models"][m]
        for kind, key, names in (("outcome", "outcomes", OUTCOMES), ("field", "rates", FIELDS)):
            for name in names:
                e = sec[key].get(name) or {}
                lo, hi = e.get("ci95") or [None, None]
                rows.append(
                    {
                        "model": m,
                        "kind": kind,
                        "measure": name,
                        "rate": e.get("rate"),
                        "ci95_lo": lo,
                        "ci95_hi": hi,
                    }
                )
    frame = pd.DataFrame(rows, columns=["model", "kind", "measure", "rate", "ci95_lo", "ci95_hi"])
    n = d.scored.groupby("model").size().to_dict() if len(d.scored) else {}
    outcomes = _table(
        "headline_rates",
        "Signature: outcome rates per model, 95% CI in parentheses",
        frame,
        ["model", "n", *(fg.OUTCOME_LABELS[o] for o in OUTCOMES)],
        [
            [
                m,
                f"{n.get(m, 0):,}",
                *(ci(d.summary["models"][m]["outcomes"].get(o)) for o in OUTCOMES),
            ]
            for m in d.models
        ],
        note=(
            f"95% block-bootstrap percentile intervals, {d.n_resamples:,} resamples of claims "
            f"(seed {d.seed}); consensus rule: {d.consensus}. The CSV also holds the 8 field rates."
        ),
    )
    fields = _table(
        "field_rates",
        "Rubric fields: rate per model, 95% CI in parentheses",
        frame[frame["kind"] == "field"].reset_index(drop=True),
        ["field", *d.models],
        [[f, *(ci(d.summary["models"][m]["rates"].get(f)) for m in d.models)] for f in FIELDS],
    )
    fields.show = bool(d.models)
    return [outcomes, fields]


def _framing_tables(d: ReportData) -> list[Table]:
    rows = []
    for m in d.models:
        for f, values in (d.summary["models"][m].get("by_framing") or {}).items():
            rows.append({"model": m, "framing": f, **{k: values.get(k) for k in FIELDS}})
    rank = {f: i for i, f in enumerate(FRAMINGS)}
    frame = pd.DataFrame(rows, columns=["model", "framing", *FIELDS])
    if len(frame):
        frame = frame.sort_values(
            ["model", "framing"], key=lambda c: c.map(rank) if c.name == "framing" else c
        ).reset_index(drop=True)
    by_framing = _table("by_framing", "Field rates by framing", frame, [], [], show=False)

    h_rows = []
    for m in d.models:
        for comp, measures in (d.summary["models"][m].get("cohens_h") or {}).items():
            for measure, h in measures.items():
                h_rows.append({"model": m, "comparison": comp, "measure": measure, "h": h})
    h_frame = pd.DataFrame(h_rows, columns=["model", "comparison", "measure", "h"])
    pairs = [
        p
        for p in dict.fromkeys(zip(h_frame["comparison"], h_frame["measure"], strict=True))
        if any(not _isnan(r["h"]) for r in h_rows if (r["comparison"], r["measure"]) == p)
    ]
    lookup = {(r["model"], r["comparison"], r["measure"]): r["h"] for r in h_rows}
    cohens = _table(
        "cohens_h",
        "Framing effects: Cohen's h",
        h_frame,
        ["framings", "outcome", *d.models],
        [
            [
                c.replace("_vs_", " vs "),
                ms.replace("_", " "),
                *(num(lookup.get((m, c, ms))) for m in d.models),
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

    p_rows = []
    for m in d.models:
        for pid, values in (d.summary["models"][m].get("by_prompt") or {}).items():
            p_rows.append({"model": m, "prompt_id": pid, **{k: values.get(k) for k in FIELDS}})
    p_frame = pd.DataFrame(p_rows, columns=["model", "prompt_id", *FIELDS])
    template_rows = []
    for t in d.benchmark.templates:
        vals = [
            (d.summary["models"][m].get("by_prompt") or {}).get(t.prompt_id, {}).get("refusal")
            for m in d.models
        ]
        if all(_isnan(v) for v in vals):
            continue
        template_rows.append([t.prompt_id, t.framing, t.fallacy, *(pct(v) for v in vals)])
    by_prompt = _table(
        "by_prompt",
        "Refusal by template",
        p_frame,
        ["template", "framing", "requested fallacy", *d.models],
        template_rows,
        left=3,
    )
    by_prompt.show = bool(template_rows)
    return [by_framing, cohens, by_prompt]


def _fallacy_tables(d: ReportData) -> list[Table]:
    out = []
    for name, title in (
        ("refusal_by_framing", "Refusal by model and framing"),
        ("fallacy_by_framing", "Any fallacy present by model and framing"),
    ):
        m = d.frames[name]
        out.append(_table(name, title, m.reset_index(), [], [], show=False))
    coach = d.frames["coach"]
    out.append(
        _table(
            "coach_labeling",
            "Coach framing by requested fallacy",
            coach,
            ["model", "requested fallacy", "n", "labeled", "clean", "refusal"],
            [
                [
                    r["model"],
                    r["fallacy_requested"],
                    f"{int(r['n']):,}",
                    pct(r["labeled_compliance"]),
                    pct(r["clean_compliance"]),
                    pct(r["refusal"]),
                ]
                for r in coach.to_dict(orient="records")
            ],
            left=2,
            show=len(coach) > 0,
        )
    )
    return out


def _agreement_tables(d: ReportData) -> list[Table]:
    agreement = d.summary.get("agreement") or {}
    prevalence = {f: float(d.scored[f].mean()) if len(d.scored) else math.nan for f in FIELDS}
    rows = [
        {
            "field": f,
            **{k: a.get(k) for k in ("kappa", "ac1", "disagreement", "n")},
            "prevalence": prevalence[f],
        }
        for f, a in agreement.items()
    ]
    frame = pd.DataFrame(rows, columns=["field", "kappa", "ac1", "disagreement", "n", "prevalence"])
    judges = d.summary["counts"].get("judges") or d.judges
    if agreement:
        title = "Judge agreement per field"
        if len(judges) == 2:
            title += f" ({judges[0]} vs {judges[1]})"
        elif len(judges) > 2:
            title += f" (mean over the {len(judges)} judges' pairs)"
        note = AGREEMENT_NOTE
    else:
        title = "Judge agreement per field"
        note = (
            f"Not available: agreement needs two judges, and this report's scores come from "
            f"{len(judges)} ({', '.join(judges) or 'none'})."
        )
    main = _table(
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
                f"{int(r['n']):,}" if not _isnan(r["n"]) else "–",
                pct(r["prevalence"]),
            ]
            for r in rows
        ],
        note=note,
    )
    out = [main]
    by_model = d.summary.get("agreement_by_model")  # optional key of the summary
    if isinstance(by_model, Mapping) and by_model:
        long = [
            {"model": m, "field": f, **{k: a.get(k) for k in ("kappa", "ac1", "disagreement", "n")}}
            for m, per in by_model.items()
            for f, a in (per or {}).items()
        ]
        lf = pd.DataFrame(long, columns=["model", "field", "kappa", "ac1", "disagreement", "n"])
        cells = {(r["model"], r["field"]): r for r in long}
        out.append(
            _table(
                "agreement_by_model",
                "Judge agreement per generating model: kappa / AC1",
                lf,
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
                    for m in by_model
                ],
                note=(
                    "A model that produces a fallacy in nearly every output leaves the "
                    "any-fallacy field near-universal, so its kappa is low even when the judges "
                    "agree on almost every response."
                ),
            )
        )
    return out


def _test_tables(d: ReportData) -> list[Table]:
    tests = d.summary.get("tests") or {}
    chi = tests.get("chi2_model_by_outcome") or {}
    chi_frame = (
        pd.DataFrame([chi]) if chi else pd.DataFrame(columns=["statistic", "dof", "p_value"])
    )
    chi_rows = []
    if chi and len(d.models) >= 2:
        verdict = (
            "outcome distributions differ by model"
            if not _isnan(chi.get("p_value")) and chi["p_value"] < 0.05
            else "no evidence the distributions differ"
        )
        chi_rows.append(
            [
                num(chi.get("statistic"), ",.1f"),
                str(chi.get("dof")),
                pval(chi.get("p_value")),
                verdict,
            ]
        )
    chi_t = _table(
        "tests_chi2",
        "Chi-square test: model x outcome",
        chi_frame,
        ["X²", "dof", "p", "conclusion"],
        chi_rows,
        left=0,
        note="" if chi_rows else "Needs at least two models.",
    )
    chi_t.numeric[-1] = False
    tost = tests.get("tost_levels") or []
    keep = ["level_a", "level_b", "rate_a", "rate_b", "diff", "p_value", "equivalent"]
    tost_frame = pd.DataFrame(tost)
    if tost_frame.empty:
        tost_frame = pd.DataFrame(columns=keep)
    tost_rows = [
        [
            f"{r['level_a']} vs {r['level_b']}",
            pct(r.get("rate_a")) if "rate_a" in r else "–",
            pct(r.get("rate_b")) if "rate_b" in r else "–",
            f"{100 * r['diff']:+.1f} pts" if not _isnan(r.get("diff")) else "–",
            pval(r.get("p_value")),
            "yes" if r.get("equivalent") else "no",
        ]
        for r in tost
    ]
    tost_t = _table(
        "tests_tost",
        "Equivalence of controversy levels (TOST, refusal, margin ±5 points)",
        tost_frame,
        ["levels", "rate a", "rate b", "difference", "p (TOST)", "equivalent"],
        tost_rows,
        left=1,
        note=(
            "Two one-sided tests that the refusal rates of two controversy levels differ by less "
            "than 5 percentage points; equivalent when p < 0.05. Level names: "
            + ", ".join(f"{k} {v.replace('_', ' ')}" for k, v in LEVEL_NAMES.items())
            + "."
            if tost_rows
            else "Needs scored generations from at least two controversy levels."
        ),
    )
    tost_t.numeric[-1] = False
    return [chi_t, tost_t]


def _count_tables(d: ReportData) -> list[Table]:
    c = d.counts
    steps = _table(
        "counts",
        "Counts at each step",
        pd.DataFrame(c["steps"]),
        ["step", "meaning", "n"],
        [[s["step"], s["meaning"], f"{s['n']:,}"] for s in c["steps"]],
        left=2,
    )
    bm = pd.DataFrame(c["by_model"], columns=["model", "attempted", "errors", "valid", "scored"])
    by_model = _table(
        "counts_by_model",
        "Generations per model",
        bm,
        ["model", "attempted", "errors", "valid", "scored"],
        [
            [r["model"], *(f"{r[k]:,}" for k in ("attempted", "errors", "valid", "scored"))]
            for r in c["by_model"]
        ],
        show=bool(c["by_model"]),
    )
    jcols = ["judge", "used", "judged", "parsed", "parse_errors", "errors", "missing"]
    bj = pd.DataFrame(c["by_judge"], columns=jcols)
    by_judge = _table(
        "counts_by_judge",
        "Judgments per judge (on valid generations)",
        bj,
        ["judge", "in consensus", "judged", "parsed", "parse errors", "request errors", "missing"],
        [
            [
                r["judge"],
                "yes" if r["used"] else "no",
                *(f"{r[k]:,}" for k in ("judged", "parsed", "parse_errors", "errors", "missing")),
            ]
            for r in c["by_judge"]
        ],
        left=2,
        show=bool(c["by_judge"]),
    )
    cost_frame = pd.DataFrame(
        d.cost, columns=["role", "name", "input_tokens", "output_tokens", "cost_usd", "price_known"]
    )
    known = [r["cost_usd"] for r in d.cost if r["cost_usd"] is not None]
    unknown = [
        r["name"]
        for r in d.cost
        if r["cost_usd"] is None and (r["input_tokens"] or r["output_tokens"])
    ]
    note = "Tokens as reported by the providers and stored with each request."
    if known:
        note += f" Known cost in total: {usd(sum(known))}"
        note += f" (no price known for {', '.join(unknown)})." if unknown else "."
    elif d.cost:
        note += " No cost: no price is known for these models, or no tokens were recorded."
    cost = _table(
        "cost",
        "Tokens and cost",
        cost_frame,
        ["role", "name", "input tokens", "output tokens", "cost"],
        [
            [
                r["role"],
                r["name"],
                f"{r['input_tokens']:,}",
                f"{r['output_tokens']:,}",
                _cost_cell(r),
            ]
            for r in d.cost
        ],
        left=2,
        note=note,
        show=bool(d.cost),
    )
    return [steps, by_model, by_judge, cost]


def _cost_cell(row: Mapping[str, Any]) -> str:
    if not (row["input_tokens"] or row["output_tokens"]):
        return "– (no tokens recorded)"
    return usd(row["cost_usd"]) if row["price_known"] else "unknown (no price)"


def _appendix_tables(d: ReportData) -> list[Table]:
    claims = d.frames["claims"]
    tokens = d.frames["tokens"]
    runs = []
    for m in d.models:
        dist = d.summary["models"][m].get("run_refusal_counts") or {}
        runs.append({"model": m, **dist})
    return [
        _table("claim_refusal", "Per-claim refusal", claims, [], [], show=False),
        _table("tokens_by_outcome", "Output tokens by outcome", tokens, [], [], show=False),
        _table("run_refusal_counts", "Refusals per cell", pd.DataFrame(runs), [], [], show=False),
    ]


# --------------------------------------------------------------------------- examples


def _example_groups(d: ReportData) -> list[dict[str, Any]]:
    """Examples grouped by model, then outcome, in the ladder's order."""
    groups: list[dict[str, Any]] = []
    for m in d.models:
        per = [
            {
                "outcome": o,
                "label": fg.OUTCOME_LABELS[o],
                "examples": [e for e in d.examples if e["model"] == m and e["outcome"] == o],
            }
            for o in OUTCOMES
        ]
        groups.append({"model": m, "outcomes": [p for p in per if p["examples"]]})
    return groups


# --------------------------------------------------------------------------- assembling


def _charts(d: ReportData) -> list[fg.Chart]:
    refusal = d.frames["refusal_by_framing"]
    sizes = d.scored.groupby("model").size().to_dict() if len(d.scored) else {}
    runs = d.benchmark.runs_per_cell
    if len(d.scored):
        per_cell = d.scored.groupby(["model", "claim_id", "prompt_id"])["sample"].nunique()
        runs = min(runs, int(per_cell.max()))
    return [
        fg.signature_chart(d.models, d.summary, sizes),
        fg.framing_heatmap(refusal, largest_swing(refusal)),
        fg.fallacy_framing_chart(d.frames["fallacy_by_framing"]),
        fg.coach_chart(d.frames["coach"], d.models),
        fg.claims_chart(d.frames["claims"], d.summary.get("claims")),
        fg.run_counts_chart(d.models, d.summary, runs),
        fg.tokens_chart(d.frames["tokens"], d.models, d.summary),
    ]


def _key_numbers(d: ReportData, swing: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    c = d.counts
    out = [
        (
            "scored generations",
            f"{c['scored']:,} of {c['attempted']:,} attempted ({c['valid']:,} valid)",
        ),
        ("models", ", ".join(d.models) or "none"),
        ("judges", f"{', '.join(d.judges) or 'none'} (consensus: {d.consensus})"),
    ]
    claims = d.summary.get("claims") or {}
    if not _isnan(claims.get("refusal_min")) and not _isnan(claims.get("refusal_max")):
        out.append(
            (
                "per-claim refusal",
                f"{pct(claims['refusal_min'])} to {pct(claims['refusal_max'])} "
                f"({num(claims.get('refusal_spread_pp'), '.1f')}-point spread)",
            )
        )
    if swing is not None:
        out.append(
            (
                "largest framing swing",
                f"{swing['model']}: refusal {pct(swing['rate_low'])} ({swing['low']}) to "
                f"{pct(swing['rate_high'])} ({swing['high']})",
            )
        )
    chi = (d.summary.get("tests") or {}).get("chi2_model_by_outcome") or {}
    if chi and len(d.models) >= 2:
        out.append(
            (
                "model x outcome",
                f"χ² = {num(chi.get('statistic'), ',.1f')}, dof {chi.get('dof')}, "
                f"p {pval(chi.get('p_value'))}",
            )
        )
    tost = (d.summary.get("tests") or {}).get("tost_levels") or []
    if tost:
        eq = sum(1 for r in tost if r.get("equivalent"))
        out.append(("controversy levels", f"{eq} of {len(tost)} pairs equivalent within ±5 points"))
    return out


def _context(
    d: ReportData, views: list[dict[str, Any]], tables: dict[str, Table]
) -> dict[str, Any]:
    swing = largest_swing(d.frames["refusal_by_framing"])
    charts = {v["name"]: v for v in views}

    def section(
        sid: str, title: str, intro: str, chart_names: Sequence[str], table_names: Sequence[str]
    ) -> dict[str, Any]:
        return {
            "id": sid,
            "title": title,
            "intro": intro,
            "charts": [charts[n] for n in chart_names if n in charts],
            "tables": [tables[n] for n in table_names if n in tables and tables[n].show],
        }

    sections = [
        section(
            "signatures",
            "Compliance signatures",
            "How each model answers a request to deflect a claim with a fallacy.",
            ["signatures"],
            ["headline_rates", "field_rates"],
        ),
        section(
            "framing",
            "Framing effects",
            f"The same claims and fallacies under {len(d.framings)} of the {len(FRAMINGS)} "
            "framings of the request"
            + (" (the others are not in this run)." if len(d.framings) < len(FRAMINGS) else "."),
            ["refusal_by_framing"],
            ["cohens_h", "by_prompt"],
        ),
        section(
            "fallacies",
            "Which fallacies, and labeled or clean",
            "Appendix E.2 and E.3.",
            ["fallacy_by_framing", "coach_labeling"],
            ["coach_labeling"],
        ),
        section(
            "claims",
            "Claims and controversy levels",
            "Does refusal depend on the claim, or on how controversial it is?",
            ["claims_by_level"],
            ["tests_tost"],
        ),
        section(
            "consistency",
            "Run-level consistency and length",
            "Appendix F and G.",
            ["run_refusal_counts", "tokens_by_outcome"],
            [],
        ),
        section("agreement", "Judge agreement", "", [], ["agreement", "agreement_by_model"]),
        section("tests", "Model differences", "", [], ["tests_chi2"]),
        section(
            "counts",
            "Counts and cost",
            "",
            [],
            ["counts", "counts_by_model", "counts_by_judge", "cost"],
        ),
    ]
    if d.empty:
        sections = [s for s in sections if s["id"] == "counts"]
    return {
        "title": f"DeflectBench report: {d.benchmark.name} v{d.benchmark.version}",
        "meta": d.meta,
        "empty": d.empty,
        "empty_message": _empty_message(d),
        "notes": d.notes,
        "key_numbers": _key_numbers(d, swing) if not d.empty else [],
        "sections": sections,
        "example_groups": _example_groups(d),
        "fields": list(FIELDS),
        "field_short": FIELD_SHORT,
        "outcome_labels": fg.OUTCOME_LABELS,
        "consensus": d.consensus,
        "n_resamples": d.n_resamples,
        "seed": d.seed,
        "models": d.models,
        "judges": d.judges,
        "snippet_chars": 600,
        "table_files": [f"tables/{t.name}.csv" for t in tables.values()],
    }


def _empty_message(d: ReportData) -> str:
    c = d.counts
    if c["attempted"] == 0:
        return (
            f"No results yet: the store holds no generations of {d.benchmark.key}. Run "
            "`deflectbench run` (or import the release with `deflectbench import`) and build the "
            "report again."
        )
    if c["valid"] == 0:
        return (
            f"No results yet: all {c['attempted']:,} generations in the store failed (see the "
            "counts below); retry them with `deflectbench run --retry-errors`."
        )
    return (
        f"No scored generations yet: {c['valid']:,} valid generations, but none judged by every "
        f"judge ({', '.join(d.judges) or 'no judge'}). Run `deflectbench judge`, or choose a "
        "judge with `--consensus judge:NAME`."
    )


def _environment(kind: str) -> Environment:
    """Jinja2 for ``html`` (autoescape on: model text is untrusted, nothing is marked safe) or
    ``md`` (every value's ``<`` and ``>`` escaped on output, so text cannot become HTML in a
    Markdown viewer, while apostrophes and quotes stay readable in the raw file)."""
    env = Environment(
        loader=PackageLoader("deflectbench.report", "templates"),
        autoescape=kind == "html",
        finalize=None if kind == "html" else _md_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = pct
    env.filters["md_cell"] = _md_cell
    env.filters["md_text"] = _md_text
    return env


def _md_finalize(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("<", "&lt;").replace(">", "&gt;")
    return value


def _md_cell(value: Any) -> str:
    """A Markdown table cell: no pipes or newlines to break the row."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_text(value: Any) -> str:
    """Untrusted text as Markdown that renders as plain text (markup characters escaped)."""
    out = []
    for ch in str(value):
        out.append("\\" + ch if ch in "\\`*_{}[]()#!|~" else ch)
    return "".join(out)


def _write_text(path: Path, text: str) -> None:
    """Replace the file atomically, so a reader never sees half a report."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _data_uri(path: Path) -> str:
    kind = {"svg": "image/svg+xml", "png": "image/png"}[path.suffix[1:]]
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _prepare(out: Path) -> None:
    try:
        for sub in ("", "figures", "tables"):
            (out / sub).mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ReportError(f"cannot write the report to {out}: {exc.strerror or exc}") from None


def _remove_stale(folder: Path, names: Sequence[str], exts: Sequence[str], keep: set[Path]) -> None:
    """Drop this report's own files from an earlier build that this build did not rewrite."""
    for name in names:
        for ext in exts:
            p = folder / f"{name}.{ext}"
            if p not in keep and p.exists():
                p.unlink()


def build_report(
    store: Store,
    benchmark: Benchmark,
    out_dir: str | Path,
    *,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    formats: Sequence[str] = fg.FORMATS,
    embed: str = "svg",
    values: str = "rules",
) -> ReportPaths:
    """Write ``report.html`` (self-contained), ``report.md``, ``tables/*.csv`` and
    ``figures/*.{png,svg,pdf}`` under ``out_dir``; return their paths.

    ``consensus``, ``judges``, ``n_resamples`` and ``seed`` are the analysis's (see
    :func:`deflectbench.analysis.analyze`); ``seed`` also picks the example responses. An empty
    store gives a report that says so. ``embed`` is the figure format inlined in the HTML
    (``svg`` or ``png``; it is always written). Raises ReportError when ``out_dir`` is not
    writable, ConsensusError for an unknown rule. ``values`` picks the judge values combined:
    ``rules`` (after the rubric's rules) or ``said`` (as the release's own analysis did).
    """
    if embed not in ("svg", "png"):
        raise ValueError(f"embed must be 'svg' or 'png', got {embed!r}")
    formats = tuple(dict.fromkeys([*formats, embed]))
    out = Path(out_dir)
    _prepare(out)
    d = collect(
        store,
        benchmark,
        consensus=consensus,
        judges=judges,
        n_resamples=n_resamples,
        seed=seed,
        values=values,
    )

    figure_paths: list[Path] = []
    views: list[dict[str, Any]] = []
    for chart in _charts(d):
        paths = fg.save_chart(chart, out / "figures", formats)
        figure_paths.extend(paths.values())
        views.append(
            {
                "name": chart.name,
                "title": chart.title,
                "caption": chart.caption,
                "alt": chart.alt,
                "missing": chart.missing,
                "src": _data_uri(paths[embed]) if paths else "",
                "files": {fmt: f"figures/{p.name}" for fmt, p in paths.items()},
            }
        )
    _remove_stale(out / "figures", FIGURE_NAMES, fg.FORMATS, set(figure_paths))

    tables: dict[str, Table] = {}
    builders: list[Callable[[ReportData], list[Table]]] = [
        _headline_tables,
        _framing_tables,
        _fallacy_tables,
        _agreement_tables,
        _test_tables,
        _count_tables,
        _appendix_tables,
    ]
    for make in builders:
        for t in make(d):
            tables[t.name] = t
    table_paths = []
    for t in tables.values():
        path = out / "tables" / f"{t.name}.csv"
        _write_text(path, t.frame.to_csv(index=False, lineterminator="\n"))
        table_paths.append(path)

    ctx = _context(d, views, tables)
    html_path, md_path = out / "report.html", out / "report.md"
    _write_text(html_path, _environment("html").get_template("report.html.j2").render(**ctx))
    _write_text(md_path, _environment("md").get_template("report.md.j2").render(**ctx))
    return ReportPaths(out, html_path, md_path, tuple(table_paths), tuple(figure_paths))


def write_report_after_run(store: Store, benchmark: Benchmark, out_dir: str | Path) -> Path:
    """The report at the end of ``deflectbench run``, with the analysis defaults; its HTML path."""
    return build_report(store, benchmark, out_dir).html
