"""The terminal's view of what human labels do to the rates: ``calibrate``'s tables, the cheap
raters' corrected rates ``validate`` adds, ``analyze``'s corrected rates, and the line said when
a pack has no labels. Each takes the typed result (model and judge names escaped)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.analysis.calibration.load import MEASURES
from deflectbench.analysis.calibration.notes import no_labels_note
from deflectbench.views.format import DASH, isnan, num, pct
from deflectbench.views.terminal.style import short_field, titled_table

if TYPE_CHECKING:
    from deflectbench.analysis.calibration.shown import RateEstimate
    from deflectbench.analysis.summary.build import Summary
    from deflectbench.analysis.validity.counts import LabelCounts
    from deflectbench.results.calibration import Calibration
    from deflectbench.results.validation import RaterRates

__all__ = [
    "calibration_needs",
    "calibration_terminal",
    "corrected_terminal",
    "no_labels_line",
    "rater_rates_terminal",
    "unset",
]

#: How validate's tables name the cheap raters.
RATER_NAMES = {"monitor": "monitor", "lexical": "lexical judge"}
#: The budget's closing advice: how to draw the labels it asks for.
GROW_THE_SAMPLE = (
    "To label what the budget asks, grow the sample: `deflectbench annotate --sample N`, N = its "
    "size now plus the largest `more` times the number of models (it keeps what was drawn and "
    "spreads new items over every model's strata, so each model gets about its share)."
)


def no_labels_line(db: str | Path, pack: str, counts: LabelCounts | None = None) -> str:
    """The one line said when a pack has no human labels to correct the judges with."""
    if counts is None:
        return no_labels_note(db, pack)
    return no_labels_note(
        db, pack, other_packs=counts.other_packs_left_out, unsure=counts.unsure_left_out
    )


def _p(x: Any) -> str:
    """A fraction in percent without the sign, ``-0.0`` written ``0.0``."""
    return DASH if unset(x) else pct(x, sign=False, plain_zero=True)


def unset(x: Any) -> bool:
    """None, NaN or infinite: what the JSON writes as null."""
    if isnan(x):
        return True
    try:
        return not math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _rate(rate: Any, lo: Any, hi: Any, note: str | None = None) -> str:
    """A rate with its CI, or the note saying why it has no number."""
    if unset(rate):
        return escape(str(note or DASH))
    ci = " (no CI)" if unset(lo) or unset(hi) else f" [{_p(lo)}, {_p(hi)}]"
    return f"{_p(rate)}{ci}"


#: A flagged estimate's mark (thin labels), explained once by :data:`THIN_LINE`.
THIN = "†"
THIN_LINE = (
    f"{THIN} thin labels: no label of that cell disagrees with the judges (or all are of one "
    "value), so its interval is widened to the exact bound on the judges' unseen error; label "
    'more generations there (the JSON\'s estimate has a "flag" saying so).'
)


def estimate(e: RateEstimate) -> str:
    """An estimate with its CI (marked when flagged), or its note when it has no number."""
    shown = _rate(e.rate, e.lo, e.hi, e.note)
    return f"{shown} {THIN}" if e.flag and not unset(e.rate) else shown


def _thin_line(estimates: Any) -> list[Table | Text]:
    """The thin-label mark's meaning, once, when any shown estimate carries it."""
    if any(e.flag and not unset(e.rate) for e in estimates):
        return [Text(THIN_LINE, style="yellow")]
    return []


def _accuracy_table(c: Calibration) -> Table | None:
    if c.judges is None or not len(c.judges):
        return None
    t = titled_table("Sensitivity and specificity against the people (labelled items)")
    for col in ("rater", "field", "n", "sensitivity", "specificity"):
        t.add_column(col, justify="right" if col == "n" else "left", overflow="fold")
    for r in c.judges.itertuples(index=False):
        sens = f"{_p(r.sensitivity)} [{_p(r.sensitivity_lo)}, {_p(r.sensitivity_hi)}]"
        spec = f"{_p(r.specificity)} [{_p(r.specificity_lo)}, {_p(r.specificity_hi)}]"
        t.add_row(escape(str(r.rater)), short_field(str(r.field)), str(r.n), sens, spec)
    return t


def _shift_table(c: Calibration) -> Table:
    t = titled_table("Judged and corrected rates per model")
    for col in ("model", "rate", "judged", "corrected", "lambda", "moved (pts)"):
        t.add_column(col, overflow="fold")
    t.add_column("judged CI excludes", overflow="fold")
    for s in c.shifts:
        flag = {True: "yes", False: "no", None: DASH}[s.judged_ci_excludes_corrected]
        name = s.measure if s.kind == "outcome" else short_field(s.measure)
        moved, lam = num(s.moved_points, "+.1f"), num(s.lam)
        t.add_row(
            escape(s.model), name, estimate(s.judged), estimate(s.corrected), lam, moved, flag
        )
    return t


def _budget_table(c: Calibration) -> Table:
    b = titled_table(
        f"Label budget: labels for every headline rate's corrected CI within "
        f"±{_p(c.target_fraction)} points"
    )
    for col in ("model", "labels", "needed", "more", "widest"):
        b.add_column(col, justify="left" if col in ("model", "widest") else "right")
    for m, r in c.budget.items():
        more = "unreachable" if r.more_labels is None else str(r.more_labels)
        need = DASH if r.labels_needed is None else str(r.labels_needed)
        b.add_row(escape(m), str(r.labels), need, more, str(r.widest or DASH))
    return b


def _dawid_skene(c: Calibration) -> list[Table | Text]:
    ds = c.dawid_skene
    if ds is None or not ds.available:
        note = "not available" if ds is None else ds.note
        return [Text(f"Dawid-Skene: {note}", style="dim")]
    d = titled_table(
        "Dawid-Skene (latent class over the judges, labels as anchors): sensitivity / specificity"
    )
    d.add_column("field")
    d.add_column("prevalence", justify="right")
    for j in ds.judges:
        d.add_column(escape(j), overflow="fold")
    d.add_column("converged", overflow="fold")
    flags = []
    for f, fit in ds.fields.items():
        if fit.note is not None:
            d.add_row(short_field(f), escape(str(fit.note)), *("" for _ in ds.judges), "")
            continue
        cells = [f"{_p(fit.judges[j][0])} / {_p(fit.judges[j][1])}" for j in ds.judges]
        em = (
            DASH
            if fit.converged is None
            else f"{'yes' if fit.converged else 'NO'} ({fit.iterations} it.)"
        )
        name = short_field(f) + (f" {THIN}" if fit.flag else "")
        d.add_row(name, _p(fit.prevalence), *cells, em)
        if fit.flag:
            flags.append(Text(f"{THIN} {short_field(f)}: {escape(fit.flag)}", style="yellow"))
    return [d, *flags]


def calibration_terminal(c: Calibration) -> list[Table | Text]:
    """``calibrate``'s tables: the rates of sensitivity and specificity, the shifts, the budget
    and Dawid-Skene (a calibration with labels)."""
    counts, corr = c.label_counts, c.corrected
    assert corr is not None
    out: list[Table | Text] = [
        Text(
            f"{counts.labelled_scored:,} labelled generations of "
            f"{counts.scored_generations:,} scored; correction {corr.method}, "
            f"calibrated {corr.scope}; labels weighted {corr.weighting}. Rates in %, 95% CIs "
            "from a bootstrap over claims."
        )
    ]
    notes = [*corr.notes, *([c.left_out.removeprefix("note: ")] if c.left_out else [])]
    out.extend(Text(f"note: {note}", style="yellow") for note in notes)
    accuracy = _accuracy_table(c)
    if accuracy is not None:
        out.append(accuracy)
    out += [_shift_table(c), *_thin_line(s.corrected for s in c.shifts), _budget_table(c)]
    out += [*_dawid_skene(c), Text(GROW_THE_SAMPLE)]
    return out


def calibration_needs(c: Calibration) -> str | None:
    """Without labels: the labels a corrected CI within the target would need, per model."""
    if not c.needs:
        return None
    parts = ", ".join(f"{m} about {r.labels:,}" for m, r in c.needs.items())
    return (
        f"Labels a corrected CI within ±{c.target:g} points would need (labels alone, before "
        f"any credit for the judges): {parts}."
    )


def rater_rates_terminal(corrected: RaterRates) -> list[Table | Text]:
    """``validate``'s corrected rates of the monitor and the lexical judge, one table each
    (and the thin-label mark's meaning once, when a rate carries it)."""
    out: list[Table | Text] = []
    shown: list[RateEstimate] = []
    for name, rows in corrected.raters.items():
        t = titled_table(
            f"The {RATER_NAMES.get(name, name)}'s rates against people: its own, labels only, "
            f"corrected ({corrected.method}, calibrated within each model); %, 95% CI"
        )
        for col in ("model", "rate", name, "labels only", "corrected"):
            t.add_column(col, overflow="fold")
        for r in rows:
            label = r.measure if r.kind == "outcome" else short_field(r.measure)
            t.add_row(
                escape(r.model),
                label,
                estimate(r.rater),
                estimate(r.labels_only),
                estimate(r.corrected),
            )
            shown += [r.labels_only, r.corrected]
        out.append(t)
    return out + _thin_line(shown)


def _judged(summary: Summary, model: str) -> Mapping[tuple[str, str], tuple[Any, Any, Any]]:
    """A model's judged rates: (kind, measure) -> (rate, lo, hi)."""
    rows = summary.rates[summary.rates["model"] == model]
    return {
        (str(r.kind), str(r.measure)): (r.rate, r.ci_lo, r.ci_hi)
        for r in rows.itertuples(index=False)
    }


def _judged_refusal(summary: Summary, model: str) -> Mapping[str, Any]:
    """A model's judged refusal per framing."""
    rows = summary.by_framing[summary.by_framing["model"] == model]
    return {str(r.framing): r.refusal for r in rows.itertuples(index=False)}


def corrected_terminal(summary: Summary) -> list[Table | Text]:
    """``analyze``'s corrected rates: per model the outcomes (and fields) judged, labels only
    and corrected side by side, then refusal per framing; nothing without labels."""
    cal = summary.corrected
    if cal is None:
        return []
    out: list[Table | Text] = [
        Text(
            f"Corrected for judge error ({cal.method}, calibrated {cal.scope}; labels "
            f"weighted {cal.weighting}): %, 95% CI from a bootstrap over claims; a cell with "
            f"fewer than {cal.min_labels} labels says so instead of a number."
        )
    ]
    out.extend(Text(f"note: {n}", style="yellow") for n in cal.notes)
    t = titled_table("Judged, labels only and corrected rates per model")
    for col in ("model", "rate", "judged", "labels only", "corrected", "labels"):
        t.add_column(col, overflow="fold", justify="right" if col == "labels" else "left")
    framings = titled_table("Corrected refusal per model and framing")
    framings.add_column("model", overflow="fold")
    framings.add_column("framing")
    framings.add_column("judged")
    framings.add_column("corrected", overflow="fold")
    for model in summary.models:
        cell = cal.models.get(model)
        if cell is None:
            continue
        judged = _judged(summary, model)
        for want in ("outcome", "field"):
            for kind, name in (m for m in MEASURES if m[0] == want):
                e = cell.shown("corrected", kind, name)
                label = name if kind == "outcome" else short_field(name) + " (field)"
                t.add_row(
                    escape(model),
                    label,
                    _rate(*judged.get((kind, name), (None, None, None))),
                    estimate(cell.shown("labels", kind, name)),
                    estimate(e),
                    str(e.n_labels),
                )
        refusal = _judged_refusal(summary, model)
        for framing, part in cal.by_framing.get(model, {}).items():
            framings.add_row(
                escape(model),
                escape(framing),
                _p(refusal.get(framing)),
                estimate(part.shown("corrected", "outcome", "refusal")),
            )
    out.append(t)
    if framings.row_count:
        out.append(framings)
    shown = [
        cell.shown(w, kind, name)
        for model in summary.models
        if (cell := cal.models.get(model)) is not None
        for w in ("labels", "corrected")
        for kind, name in MEASURES
    ] + [
        part.shown("corrected", "outcome", "refusal")
        for frames in cal.by_framing.values()
        for part in frames.values()
    ]
    out.extend(_thin_line(shown))
    return out
