"""The terminal's view of ``validate``: each rater against the people, the annotators against
each other and the monitor against both, statistics over their CIs, narrow enough for 80
columns; saying plainly what is missing. Takes the typed :class:`Validation`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.analysis.validity.measures import AGREEMENT_METRICS, CHANCE_METRICS, METRICS
from deflectbench.views.format import DASH, num, pct
from deflectbench.views.terminal.labels import rater_rates_terminal, unset
from deflectbench.views.terminal.style import short_field, titled_table
from deflectbench.vocab import FIELD_SHORT

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.results.validation import Validation

__all__ = ["validation_terminal"]

#: The headers of the tables' metric columns, in :data:`METRICS`' order.
HEADERS = ("acc", "kappa", "AC1", "prec", "recall", "F1")
#: A kappa or AC1 with no value on items (both sides one and the same value): never a number.
UNDEFINED = "undefined"
#: Outcome names narrow enough for the monitor's table.
OUTCOME_SHORT = {"soft_refusal": "soft refusal", "labeled_compliance": "labeled"}


def _cell(row: Any, metric: str) -> str:
    """A statistic over its 95% CI on a second, dimmed line ("–" where undefined; kappa and
    AC1 on items say "undefined": kappa when both sides give one and the same value)."""
    v = getattr(row, metric, None)
    if unset(v):
        return UNDEFINED if metric in CHANCE_METRICS and bool(getattr(row, "n", None)) else DASH
    lo, hi = getattr(row, f"{metric}_lo", None), getattr(row, f"{metric}_hi", None)
    if unset(lo) or unset(hi):
        return num(v)
    return f"{num(v)}\n[dim]{num(lo)}–{num(hi)}[/]"


def _table(title: str) -> Table:
    """A table narrow enough for 80 columns with six statistics over their CIs."""
    return titled_table(title, pad_edge=False, collapse_padding=True)


def _rater_tables(frame: pd.DataFrame) -> list[Table]:
    out = []
    for rater, part in frame.groupby("rater", sort=False):
        t = _table(f"{escape(str(rater))} against the human labels")
        t.add_column("field", no_wrap=True, min_width=5)
        t.add_column("n", justify="right", no_wrap=True, min_width=3)
        for header in HEADERS:
            t.add_column(header, justify="right", no_wrap=True)
        for row in part.itertuples(index=False):
            t.add_row(short_field(row.field), str(row.n), *(_cell(row, m) for m in METRICS))
        out.append(t)
    return out


def _annotator_table(frame: pd.DataFrame) -> Table:
    t = _table("Inter-annotator agreement (pairs of annotators, generations both labeled)")
    for c in ("annotators", "field"):
        t.add_column(c, overflow="fold")
    t.add_column("n", justify="right", no_wrap=True)
    for header in ("agreement", "kappa", "AC1"):
        t.add_column(header, justify="right", no_wrap=True)
    for row in frame.itertuples(index=False):
        pair = f"{escape(row.annotator_a)} / {escape(row.annotator_b)}"
        cells = (_cell(row, m) for m in AGREEMENT_METRICS)
        t.add_row(pair, short_field(row.field), str(row.n), *cells)
    return t


def _monitor_table(frame: pd.DataFrame) -> Table:
    t = _table("The monitor (`deflectbench monitor`) against the consensus and the humans")
    t.add_column("reference", overflow="fold")
    t.add_column("outcome", no_wrap=True)
    t.add_column("n", justify="right", no_wrap=True)
    t.add_column("share", justify="right", no_wrap=True)
    for header in ("prec", "recall", "F1"):
        t.add_column(header, justify="right", no_wrap=True)
    for row in frame.itertuples(index=False):
        share = DASH if unset(row.prevalence) else pct(row.prevalence)
        cells = (_cell(row, m) for m in ("precision", "recall", "f1"))
        outcome = OUTCOME_SHORT.get(row.outcome, row.outcome)
        t.add_row(escape(row.reference), outcome, str(row.n), share, *cells)
    return t


def _header(v: Validation) -> Text:
    """What the numbers rest on, or (no labels) what is missing and how to get it."""
    c, o = v.counts, v.options
    if not c.used:
        why = (
            f" ({c.unsure_left_out} unsure left out: --include-unsure keeps them)"
            if c.unsure_left_out
            else ""
        )
        if c.other_packs_left_out:
            why += f" ({c.other_packs_left_out:,} labels of other packs' generations)"
        for_pack = f" for {v.pack}" if v.pack else ""
        return Text(
            f"No human labels in --db {v.db}{for_pack}{why}: judge validity needs some. Label a "
            "sample with `deflectbench annotate`, then run `deflectbench validate` again.",
            style="bold yellow",
        )
    other = c.other_packs_left_out
    of = f" of {v.pack}" if v.pack else ""
    return Text(
        f"{c.used:,} human labels of {c.labeled_generations:,} generations{of} by "
        f"{c.annotators} annotator(s) ({c.unsure_left_out} unsure left out, "
        f"{c.ties} tied fields left out"
        + (f", {other:,} labels of other packs left out" if other else "")
        + f"); consensus {o.consensus}, judge values "
        f"{o.values}; 95% CIs from {o.n_resamples:,} bootstrap resamples of "
        f"claims (seed {o.seed}). Statistics over their CI (a proportion's CI is at least its exact "
        "interval on its n); kappa undefined where both sides give one same value, `–` where "
        "another statistic is. Fields: "
        + ", ".join(f"{short} {name}" for name, short in FIELD_SHORT.items())
        + "."
    )


def validation_terminal(v: Validation) -> list[Table | Text]:
    """``validate``'s tables, then the cheap raters' corrected rates (with labels)."""
    out: list[Table | Text] = [_header(v)]
    if v.counts.used:
        if len(v.raters):
            out.extend(_rater_tables(v.raters))
        else:
            out.append(
                Text("No judge has scored the labeled generations: run `deflectbench judge`.")
            )
        if len(v.annotators):
            out.append(_annotator_table(v.annotators))
        else:
            out.append(Text("Inter-annotator agreement: no generation labeled by two people."))
    if len(v.monitor):
        out.append(_monitor_table(v.monitor))
    if note := v.validity.small_sample_note:
        out.append(Text(note, style="yellow"))
    if v.corrected is not None:
        out.extend(rater_rates_terminal(v.corrected))
    return out
