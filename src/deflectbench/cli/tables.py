"""Every table the terminal shows, rendered with rich from the analysis' data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from deflectbench.vocab import FRAMINGS, OUTCOMES

#: Column headers narrow enough for an 80-column terminal.
SHORT_FRAMING = {
    "political": "polit.",
    "manipulation": "manip.",
    "implicit_neutral": "impl.neu",
    "implicit_political": "impl.pol",
}


def _pct(x: Any, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def _ci(entry: Mapping[str, Any] | None) -> str:
    """A rate over its CI on a second, dimmed line: narrow enough for an 80-column terminal."""
    if not entry or entry.get("rate") is None:
        return "–"
    lo, hi = entry.get("ci95") or [None, None]
    if lo is None or hi is None:
        return _pct(entry["rate"])
    return f"{_pct(entry['rate'])}\n[dim]{100 * lo:.1f}–{100 * hi:.1f}[/]"


def _num(x: Any, fmt: str = ".2f") -> str:
    return "–" if x is None else format(x, fmt)


def _p(x: Any) -> str:
    if x is None:
        return "–"
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


def render_terminal(summary: Mapping[str, Any]) -> list[Table]:
    """The headline tables of an :func:`analyze` summary, for a rich Console.

    Signature per model (outcome rates with 95% CIs), judge agreement (kappa beside AC1),
    refusal by framing, and the tests (chi-square, TOST by controversy level).
    """
    from rich.markup import escape
    from rich.table import Table

    c = summary["counts"]
    out: list[Table] = []
    caption = (
        f"{c['attempted']:,} attempted, {c['valid_generations']:,} valid, {c['scored']:,} scored "
        f"by {escape(', '.join(c['judges'])) or 'no judge'} (consensus: {escape(summary['consensus'])}); 95% CIs "
        f"from {summary['n_resamples']:,} block-bootstrap resamples of claims"
    )
    t = Table(title="Signature: outcome rates per model, 95% CI below", caption=caption)
    t.add_column("model", overflow="fold")
    t.add_column("n", justify="right")
    for label in ("refusal", "soft refusal", "labeled", "clean", "other"):
        t.add_column(label, justify="right")
    for model, m in summary["models"].items():
        t.add_row(escape(model), f"{m['n']:,}", *(_ci(m["outcomes"].get(k)) for k in OUTCOMES))
    out.append(t)

    agreement = summary.get("agreement") or {}
    if agreement:
        pairs = {(p["judge_a"], p["judge_b"]) for p in summary.get("agreement_pairs", [])}
        who = (
            escape(" vs ".join(next(iter(pairs))))
            if len(pairs) == 1
            else f"mean of {len(pairs)} judge pairs"
        )
        t = Table(
            title=f"Judge agreement per field ({who})",
            caption=(
                "kappa drops when a label is rare or near-universal (prevalence skew) even if the "
                "judges rarely disagree; AC1 does not: low kappa + high AC1 + low disagreement = skew"
            ),
        )
        for col in ("field", "kappa", "AC1", "disagreement", "n"):
            t.add_column(col, justify="left" if col == "field" else "right")
        for f, a in agreement.items():
            row = (_num(a["kappa"]), _num(a["ac1"]), _pct(a["disagreement"]), f"{a['n']:,}")
            t.add_row(f, *row)
        out.append(t)

    framings = [
        f for f in FRAMINGS if any(f in m["by_framing"] for m in summary["models"].values())
    ]
    if framings:
        t = Table(title="Refusal rate by framing")
        t.add_column("model", overflow="fold")
        for f in framings:
            t.add_column(SHORT_FRAMING.get(f, f), justify="right")
        for model, m in summary["models"].items():
            cells = (_pct((m["by_framing"].get(f) or {}).get("refusal")) for f in framings)
            t.add_row(escape(model), *cells)
        out.append(t)

    tests = summary["tests"]
    t = Table(title="Tests")
    t.add_column("test")
    t.add_column("result", justify="right")
    t.add_column("p", justify="right")
    t.add_column("conclusion")
    chi = tests["chi2_model_by_outcome"]
    if len(summary["counts"]["models"]) < 2 or not chi["dof"]:
        t.add_row("chi-square, model x outcome", "n/a", "", "needs two or more models")
    else:
        t.add_row(
            "chi-square, model x outcome",
            f"X2 = {_num(chi['statistic'], ',.1f')}, dof {chi['dof']}, "
            f"V = {_num(chi.get('cramers_v'))}",
            _p(chi["p_value"]),
            "outcomes differ by model"
            if chi["p_value"] is not None and chi["p_value"] < 0.05
            else "no evidence of a difference",
        )
    for r in tests["tost_levels"]:
        margin = 100 * (r.get("margin") or 0.05)
        verdict = f"equivalent (±{margin:g} pp)" if r["equivalent"] else "not shown equivalent"
        clustered = r.get("equivalent_clustered")
        if clustered is not None:
            verdict += f"; claim-clustered: {'yes' if clustered else 'no'}"
        t.add_row(
            f"TOST refusal, level {r['level_a']} vs {r['level_b']}",
            f"diff {100 * r['diff']:+.1f} pp",
            _p(r["p_value"]),
            verdict,
        )
    out.append(t)
    return out
