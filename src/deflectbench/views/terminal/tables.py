"""``analyze``'s headline tables for the terminal, rendered with rich from the typed
:class:`~deflectbench.analysis.summary.build.Summary` (its DataFrames, never its JSON): the
signature, judge agreement, refusal by framing, the paper's breakdowns and the tests."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from deflectbench.views.format import DASH, ci_lines, isnan, num, pct, pval
from deflectbench.vocab import CONTEXTS, FRAMINGS, OUTCOMES

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.analysis.summary.fields import SummaryFields

__all__ = ["SHORT_FRAMING", "breakdown_tables", "render_terminal", "tost_interval"]

#: Column headers narrow enough for an 80-column terminal.
SHORT_FRAMING = {
    "political": "polit.",
    "manipulation": "manip.",
    "implicit_neutral": "impl.neu",
    "implicit_political": "impl.pol",
}


#: The outcomes' column headers, in :data:`~deflectbench.vocab.OUTCOMES`' order.
OUTCOME_LABELS = ("refusal", "soft refusal", "labeled", "clean", "other")


def _by_model(title: str, columns: Iterable[str], caption: str | None = None) -> Table:
    """A table with a row per model: the model (folded when long), then ``columns``, numbers
    aligned right."""
    t = Table(title=title, caption=caption)
    t.add_column("model", overflow="fold")
    for label in columns:
        t.add_column(label, justify="right")
    return t


def _rows(df: pd.DataFrame) -> Iterator[Any]:
    """A table's rows as named tuples (columns as attributes); none for an empty table."""
    return df.itertuples(index=False) if len(df) else iter(())


def _given(x: Any) -> Any:
    """``x``, or None when it is missing (None, NaN, NA)."""
    return None if isnan(x) else x


def tost_interval(lo: Any, hi: Any, mid: Any) -> str:
    """The TOST's 90% CI and the difference it is centred on (the adjusted one), on a second
    line; nothing when a number is missing."""
    if isnan(lo) or isnan(hi) or isnan(mid):
        return ""
    return (
        f"\n[dim]90% CI {100 * lo:+.1f} to {100 * hi:+.1f}, centred on the adjusted "
        f"{100 * mid:+.1f}[/]"
    )


def _definition(s: SummaryFields) -> str:
    """Which definition the numbers follow, in a few words."""
    if s.options.compat == "release":
        return "the release script's computation (--compat release; see `deflectbench audit`)"
    values = s.options.values
    return "the paper's definition" + (
        "" if values == "said" else f" with judge values '{escape(str(values))}'"
    )


def _level_context(s: SummaryFields) -> Table | None:
    """Refusal per model by controversy level and by context."""
    by_level = {(r.model, str(r.level)): r.refusal for r in _rows(s.by_model_level)}
    by_ctx = {(r.model, r.context): r.refusal for r in _rows(s.by_model_context)}
    levels = sorted({lv for _, lv in by_level})
    contexts = [x for x in CONTEXTS if any(k[1] == x for k in by_ctx)]
    if not levels and not contexts:
        return None
    t = _by_model(
        "Refusal rate by controversy level and by context",
        [*(f"L{lv}" for lv in levels), *("US" if x == "us" else "intl" for x in contexts)],
    )
    for model in s.models:
        cells = [pct(by_level.get((model, lv))) for lv in levels]
        cells += [pct(by_ctx.get((model, x))) for x in contexts]
        t.add_row(escape(model), *cells)
    return t


def _swings(s: SummaryFields) -> Table | None:
    """Per model, the framing where the requested fallacy alone moves refusal most."""
    if not len(s.fallacy_swing):
        return None
    t = Table(
        title="Refusal swing between requested fallacies, within an explicit framing",
        caption="per model, the framing where the requested fallacy alone moves refusal most",
    )
    for col in ("model", "framing", "highest", "lowest", "swing"):
        t.add_column(col, justify="right" if col == "swing" else "left", overflow="fold")
    for r in _rows(s.fallacy_swing):
        t.add_row(
            escape(r.model),
            escape(r.framing),
            f"{escape(r.template_high)} {pct(r.rate_high)}",
            f"{escape(r.template_low)} {pct(r.rate_low)}",
            f"{100 * r.swing:.1f} pts",
        )
    return t


def _coach(s: SummaryFields) -> Table | None:
    """Appendix E.3: the coach framing's labeled and clean field rates per requested fallacy."""
    if not len(s.coach_fields):
        return None
    rows = list(_rows(s.coach_fields))
    fallacies = sorted({r.fallacy_requested for r in rows})
    t = _by_model(
        "Coach framing (E.3): labeled / clean rate by requested fallacy",
        [escape(f.replace("_", " ")) for f in fallacies],
        caption="field rates (each field's consensus = 1), not outcome shares",
    )
    cells = {(r.model, r.fallacy_requested): r for r in rows}
    for model in dict.fromkeys(r.model for r in rows):
        found = [cells.get((model, f)) for f in fallacies]
        t.add_row(
            escape(model),
            *(
                f"{pct(r.fallacy_labeled)} / {pct(r.compliance_clean)}" if r else DASH
                for r in found
            ),
        )
    return t


def _density(s: SummaryFields) -> Table | None:
    """Appendix G: fallacies per 100 output tokens per model and outcome."""
    if not len(s.density_by_outcome):
        return None
    t = _by_model("Fallacies per 100 output tokens, by outcome (G)", OUTCOME_LABELS)
    cells = {(r.model, r.outcome): r.fallacy_density for r in _rows(s.density_by_outcome)}
    for model in s.models:
        t.add_row(escape(model), *(num(cells.get((model, o))) for o in OUTCOMES))
    return t


def breakdown_tables(s: SummaryFields) -> list[Table]:
    """The paper's breakdowns: refusal by level and context, the fallacy-type swing, coach
    framing as field rates (E.3), and fallacy density by outcome (G)."""
    made = (_level_context(s), _swings(s), _coach(s), _density(s))
    return [t for t in made if t is not None]


def _signature(s: SummaryFields) -> Table:
    """Outcome rates per model with their 95% CIs (at the looks' levels for answers gathered
    by ``run --until``), the counts and the definition below."""
    level = "95%" if s.sequential is None else "adjusted (see the note)"
    caption = (
        f"{s.n_attempted:,} attempted, {s.n_valid:,} valid, {s.n_scored:,} scored "
        f"by {escape(', '.join(s.judges)) or 'no judge'} (consensus: "
        f"{escape(str(s.options.consensus))}); {level} CIs from {s.options.n_resamples:,} "
        "block-bootstrap resamples of claims; " + _definition(s)
    )
    if note := s.small_sample_note:
        caption += f"\n[yellow]{escape(note)}[/]"
    if s.sequential is not None:  # gathered by run --until: the looks' levels, said
        caption += f"\n[yellow]{escape(s.sequential.note())}[/]"
    t = _by_model(
        f"Signature: outcome rates per model, {level} CI below", ("n", *OUTCOME_LABELS), caption
    )
    outcomes = {(r.model, r.measure): r for r in _rows(s.rates) if r.kind == "outcome"}
    for model in s.models:
        cells = (outcomes.get((model, o)) for o in OUTCOMES)
        t.add_row(
            escape(model),
            f"{s.model_n[model]:,}",
            *(ci_lines(r.rate, r.ci_lo, r.ci_hi) if r else DASH for r in cells),
        )
    return t


def _agreement(s: SummaryFields) -> Table | None:
    """Kappa beside AC1 per field, between the judges (the mean over pairs when several)."""
    if not len(s.agreement):
        return None
    pairs = {(p.judge_a, p.judge_b) for p in _rows(s.agreement_pairs)}
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
    fields = {str(a.field): a for a in _rows(s.agreement)}
    for field, a in fields.items():
        t.add_row(field, num(a.kappa), num(a.ac1), pct(a.disagreement), f"{a.n:,}")
    return t


def _framings(s: SummaryFields) -> Table | None:
    """Refusal per model and framing, the framings in the paper's order."""
    refusal = {(r.model, str(r.framing)): r.refusal for r in _rows(s.by_framing)}
    framings = [f for f in FRAMINGS if any(k[1] == f for k in refusal)]
    if not framings:
        return None
    t = _by_model("Refusal rate by framing", [SHORT_FRAMING.get(f, f) for f in framings])
    for model in s.models:
        t.add_row(escape(model), *(pct(refusal.get((model, f))) for f in framings))
    return t


def _tests(s: SummaryFields) -> Table:
    """Chi-square of model by outcome, and TOST of refusal between each pair of levels."""
    t = Table(title="Tests")
    t.add_column("test")
    t.add_column("result", justify="right")
    t.add_column("p", justify="right")
    t.add_column("conclusion")
    chi = next(_rows(s.chi2))
    if len(s.models) < 2 or isnan(chi.dof) or not chi.dof:
        t.add_row("chi-square, model x outcome", "n/a", "", "needs two or more models")
    else:
        p = _given(chi.p_value)
        t.add_row(
            "chi-square, model x outcome",
            f"X2 = {num(chi.statistic, ',.1f')}, dof {chi.dof}, V = {num(chi.cramers_v)}",
            pval(p),
            "outcomes differ by model"
            if p is not None and p < 0.05
            else "no evidence of a difference",
        )
    for r in _rows(s.tost):
        margin = 100 * (_given(r.margin) or 0.05)
        verdict = f"equivalent (±{margin:g} pp)" if _given(r.equivalent) else "not shown equivalent"
        clustered = _given(r.equivalent_clustered)
        if clustered is not None:
            verdict += f"; claim-clustered: {'yes' if clustered else 'no'}"
        t.add_row(
            f"TOST refusal, level {r.level_a} vs {r.level_b}",
            f"diff {100 * r.diff:+.1f} pp" + tost_interval(r.ci90_lo, r.ci90_hi, r.diff_adjusted),
            pval(r.p_value),
            verdict,
        )
    return t


def render_terminal(s: SummaryFields) -> list[Table]:
    """The headline tables of a summary, for a rich Console.

    Signature per model (outcome rates with 95% CIs, and a note when a CI rests on fewer than
    10 claims), judge agreement (kappa beside AC1), refusal by framing, the breakdowns
    (:func:`breakdown_tables`), and the tests (chi-square, TOST by controversy level).
    """
    head = (_signature(s), _agreement(s), _framings(s))
    return [*(t for t in head if t is not None), *breakdown_tables(s), _tests(s)]
