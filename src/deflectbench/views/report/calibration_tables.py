"""The report's "Corrected for judge error" section: judged, labels-only and corrected rates
per model side by side, per framing where labels allow, the label counts, one plain sentence
per model whose judged CI excludes its corrected rate, and, without labels, what the
intervals cover and how many labels would be needed (numbers from
:mod:`deflectbench.analysis.calibration`; this module only lays them out)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from deflectbench.analysis.calibration.budget import budget_without_labels
from deflectbench.analysis.summary.build import Summary
from deflectbench.views.format import DASH, count, pct
from deflectbench.views.report.chart import OUTCOME_LABELS
from deflectbench.views.report.tables import FIELD_SHORT, Table, make_table
from deflectbench.vocab import FIELDS, OUTCOMES

if TYPE_CHECKING:  # the estimators load only for a store with labels
    from deflectbench.analysis.calibration.corrected import Corrected

__all__ = [
    "CORRECTED_FIGURES",
    "CORRECTED_TABLES",
    "Footnotes",
    "corrected_intro",
    "corrected_intro_of",
    "corrected_report_tables",
    "corrected_tables",
    "estimate_cell",
]

#: The section's tables and figures, in order.
CORRECTED_TABLES = ("corrected_rates", "corrected_by_framing")
CORRECTED_FIGURES = ("corrected_signatures",)


#: The mark of a flagged estimate (thin labels), explained once under the table.
THIN = "†"
THIN_LEGEND = (
    f"{THIN} thin labels: none of the cell's labels disagrees with the judges (or all are of "
    "one value), so its interval is widened to the exact bound on the judges' unseen error; "
    "label more generations there."
)


class Footnotes:
    """The notes of a table's cells, each said once under the table: a cell shows a mark
    ([1], [2], ...) instead of repeating its note (a long note in every cell pushed the
    corrected column off-screen at 1,400 px)."""

    def __init__(self) -> None:
        self.marks: dict[str, int] = {}
        self.thin = False

    def mark(self, note: str) -> str:
        key = _FEW.sub("too few labels for a corrected rate", note)
        return f"[{self.marks.setdefault(key, len(self.marks) + 1)}]"

    def cell(self, e: Any) -> str:
        """``27.7 (21.7–32.3)``; a note's mark instead of a missing number or interval."""
        thin = ""
        if getattr(e, "flag", None):
            self.thin, thin = True, f" {THIN}"
        if e.rate is None:
            return DASH if not e.note else f"{DASH} {self.mark(e.note)}"
        if e.ci95 is None:
            return f"{pct(e.rate)} {self.mark(e.note or 'no CI')}{thin}"
        return f"{pct(e.rate)} ({100 * e.ci95[0]:.1f}–{100 * e.ci95[1]:.1f}){thin}"

    def legend(self) -> str:
        """The notes once each, with their marks (and the thin-label mark's meaning)."""
        parts = [f"[{k}] {note}." for note, k in self.marks.items()]
        if self.thin:
            parts.append(THIN_LEGEND)
        return " ".join(parts)


_FEW = re.compile(r"^\d+ labels? \(at least \d+ needed\)$")


def estimate_cell(e: Any) -> str:
    """``27.7% (21.7–32.3)``; without a number, the estimate's note (e.g. too few labels)."""
    if e.rate is None:
        return e.note or DASH
    if e.ci95 is None:
        return f"{pct(e.rate)} ({e.note or 'no CI'})"
    thin = f" {THIN}" if getattr(e, "flag", None) else ""
    return f"{pct(e.rate)} ({100 * e.ci95[0]:.1f}–{100 * e.ci95[1]:.1f}){thin}"


def _rows(c: Corrected, cells: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    from deflectbench.analysis.calibration.review import judged_excludes

    out = []
    for name, cell in cells.items():
        for kind, names in (("outcome", OUTCOMES), ("field", FIELDS)):
            for m in names:
                j, lab, cor = (cell.get(w, kind, m) for w in ("judged", "labels", "corrected"))
                row: dict[str, Any] = {key: name, "kind": kind, "measure": m}
                for label, e in (("judged", j), ("labels_only", lab), ("corrected", cor)):
                    lo, hi = e.ci95 if e.ci95 is not None else (None, None)
                    row |= {f"{label}": e.rate, f"{label}_lo": lo, f"{label}_hi": hi}
                row |= {
                    "n": cell.n,
                    "n_labels": cor.n_labels,
                    "method": c.method,
                    "note": cor.note or "",
                    "flag": getattr(cor, "flag", None) or "",
                    "judged_ci_excludes_corrected": judged_excludes(j, cor),
                }
                out.append(row)
    return out


def _label(kind: str, m: str) -> str:
    return OUTCOME_LABELS.get(m, m) if kind == "outcome" else f"{FIELD_SHORT.get(m, m)} (field)"


def corrected_tables(c: Corrected | None) -> list[Table]:
    """``corrected_rates`` (every model, outcome and field) and ``corrected_by_framing`` (the
    outcomes per model and framing); none without labels (the intro then says so)."""
    if c is None:
        return []
    note = (
        f"Judged: the judges' consensus, CI over claims only. Labels only: the human labels "
        f"alone (CI: the claim bootstrap's hull with the exact interval). Corrected: "
        f"{c.method}, calibrated {c.scope}; labels weighted {c.weighting}. Percent (95% CI "
        f"from a bootstrap over claims); a cell with fewer than {c.min_labels} labels has a "
        "mark instead of a number."
    )
    frame = pd.DataFrame(_rows(c, c.models, "model"))
    marks = Footnotes()
    cells = [
        [
            str(r["model"]),
            _label(r["kind"], r["measure"]),
            *(
                marks.cell(c.models[r["model"]].get(w, r["kind"], r["measure"]))
                for w in ("judged", "labels", "corrected")
            ),
            count(r["n_labels"]),
        ]
        for r in frame.to_dict(orient="records")
    ]
    if marks.legend():
        note += " " + marks.legend()
    main = make_table(
        "corrected_rates",
        "Judged, labels-only and corrected rates per model",
        frame,
        ["model", "rate", "judged", "labels only", "corrected", "labels"],
        cells,
        left=2,
        note=note,
    )
    rows = []
    for model, frames in c.by_framing.items():
        for framing, cell in frames.items():
            for o in OUTCOMES:
                j, cor = cell.get("judged", "outcome", o), cell.get("corrected", "outcome", o)
                lo, hi = cor.ci95 if cor.ci95 is not None else (None, None)
                rows.append(
                    {
                        "model": model,
                        "framing": framing,
                        "outcome": o,
                        "judged": j.rate,
                        "corrected": cor.rate,
                        "corrected_lo": lo,
                        "corrected_hi": hi,
                        "n": cell.n,
                        "n_labels": cor.n_labels,
                        "note": cor.note or "",
                        "flag": getattr(cor, "flag", None) or "",
                        "_j": j,
                        "_c": cor,
                    }
                )
    by = pd.DataFrame(rows)
    framing_marks = Footnotes()
    framing_cells = [
        [
            str(r["model"]),
            str(r["framing"]),
            OUTCOME_LABELS.get(r["outcome"], r["outcome"]),
            framing_marks.cell(r["_j"]),
            framing_marks.cell(r["_c"]),
            count(r["n_labels"]),
        ]
        for r in rows
    ]
    framing_note = (
        f"Corrected with the labels of that model and framing ({c.method}); a framing "
        f"with fewer than {c.min_labels} labels has a mark instead of a number."
    )
    if framing_marks.legend():
        framing_note += " " + framing_marks.legend()
    per_framing = make_table(
        "corrected_by_framing",
        "Corrected outcome rates per model and framing",
        by.drop(columns=["_j", "_c"]) if len(by) else by,
        ["model", "framing", "outcome", "judged", "corrected", "labels"],
        framing_cells,
        left=3,
        note=framing_note,
    )
    return [main, per_framing]


def excluded_sentences(c: Corrected) -> list[str]:
    """One plain sentence per model whose judged CI excludes a corrected outcome rate."""
    from deflectbench.analysis.calibration.review import judged_excludes

    out = []
    for model, cell in c.models.items():
        moved = []
        for o in OUTCOMES:
            j, cor = cell.get("judged", "outcome", o), cell.get("corrected", "outcome", o)
            if judged_excludes(j, cor):
                moved.append(f"{OUTCOME_LABELS.get(o, o).lower()} {pct(j.rate)} → {pct(cor.rate)}")
        if moved:
            out.append(
                f"For {model}, the judged 95% CI leaves out the corrected rate: "
                + "; ".join(moved)
                + " (judged → corrected)."
            )
    return out


def corrected_intro(
    c: Corrected | None, needed: Mapping[str, Mapping[str, Any]] | None = None
) -> str:
    """The section's text: what the three estimates are and where the judged CI misses, or,
    without labels, what the intervals cover and (``needed``: per model, from the budget) how
    many labels would be needed."""
    if c is None:
        text = (
            "No human labels of this pack, so these rates are the judges' and their 95% CIs "
            "cover the sampling of claims only, not judge error: when the judges err, the "
            "interval is tight around a wrong number. Label a sample with `deflectbench "
            "annotate` (or import a label file) and build the report again to get rates "
            "corrected for judge error."
        )
        if needed:
            parts = [
                f"{m} about {count(r['labels'])}" for m, r in needed.items() if r.get("labels")
            ]
            if parts:
                text += (
                    " For every outcome's corrected CI within ±"
                    f"{100 * next(iter(needed.values()))['target_half_width']:.0f} points, the "
                    "label budget asks for at most (labels alone, before any credit for the "
                    "judges): " + ", ".join(parts) + "."
                )
        return text
    n = c.counts.get("labelled_scored", 0)
    text = (
        f"{count(n)} scored generations carry human labels. Each rate three ways: judged (the "
        "judges' consensus, its CI covering claim sampling only), labels only (the human "
        f"labels alone) and corrected ({c.method}: the judged rate on every generation plus "
        f"the judges' error measured on the labelled ones), calibrated {c.scope}."
    )
    sentences = excluded_sentences(c)
    if sentences:
        text += " " + " ".join(sentences)
    else:
        text += " For no model does the judged CI leave out a corrected outcome rate."
    return text


def corrected_report_tables(s: Summary) -> list[Table]:
    """The section's tables of a summary (none without labels)."""
    return corrected_tables(s.corrected)


def corrected_intro_of(s: Summary) -> str:
    """The section's text for a summary; without labels it names the labels needed."""
    if s.corrected is not None or s.empty:
        return corrected_intro(s.corrected)
    return corrected_intro(None, budget_without_labels(s.rates))
