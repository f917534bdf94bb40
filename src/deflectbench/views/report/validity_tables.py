"""The report's "judge validity" tables: each judge and the consensus against the human labels,
and the annotators against each other (numbers from :mod:`deflectbench.analysis.validity.load`;
this module only lays them out)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from deflectbench.analysis.validity.load import Validity
from deflectbench.analysis.validity.measures import AGREEMENT_METRICS, CHANCE_METRICS, METRICS
from deflectbench.views.format import count, isnan, num
from deflectbench.views.report.tables import Table, make_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "NO_LABELS",
    "VALIDITY_INTRO",
    "VALIDITY_TABLES",
    "validity_intro",
    "validity_tables",
]

#: The section's tables, in order (the page lists them by name).
VALIDITY_TABLES = ("judge_validity", "annotator_agreement")

VALIDITY_INTRO = (
    "Agreement between two LLM judges is a lower bound on reliability, not validity. Here each "
    "judge and the consensus are compared with the human labels in the store, per rubric "
    "field, with 95% CIs from a bootstrap that resamples claims. Labels marked unsure are left "
    "out; several annotators of one generation count by majority (a tie leaves the field out). "
    "`deflectbench validate` prints the same numbers, with the lexical judge and the monitor."
)


def _with_ci(row: dict[str, Any], metric: str) -> str:
    """``0.81 (0.70–0.90)``; the value alone without a CI, a dash when undefined (kappa and AC1
    on items say "undefined": both sides gave one and the same value)."""
    v, lo, hi = row.get(metric), row.get(f"{metric}_lo"), row.get(f"{metric}_hi")
    if isnan(v):
        return "undefined" if metric in CHANCE_METRICS and row.get("n") else "–"
    return num(v) if isnan(lo) or isnan(hi) else f"{num(v)} ({num(lo)}–{num(hi)})"


def _field_rows(
    frame: pd.DataFrame,
    who: Callable[[dict[str, Any]], str],
    metrics: Sequence[str],
    *,
    prevalence: bool = False,
) -> list[list[str]]:
    """Both tables' rows, one per rater (or pair of annotators) and field: who, the field, n,
    the field's prevalence (``prevalence``), then each statistic over its CI."""
    return [
        [
            who(r),
            str(r["field"]),
            count(r["n"]),
            *([num(r["prevalence"])] if prevalence else []),
            *(_with_ci(r, m) for m in metrics),
        ]
        for r in frame.to_dict(orient="records")
    ]


NO_LABELS = (
    "No human labels in this store, so judge validity cannot be measured: the judges' "
    "agreement with each other (above) is only a lower bound on their reliability, not evidence "
    "that they score as people would. Label a sample with `deflectbench annotate` (labels marked "
    "unsure do not count) and build the report again."
)


def validity_intro(tables: Mapping[str, Table], pack: str | None = None) -> str:
    """The section's first paragraph: what it shows, or plainly that there is nothing yet.
    ``pack`` (given when the store holds several packs) says whose labels count: this pack's
    generations' only."""
    if pack is None:
        return VALIDITY_INTRO if "judge_validity" in tables else NO_LABELS
    if "judge_validity" in tables:
        return f"{VALIDITY_INTRO} Only labels of {pack}'s generations count."
    return NO_LABELS.replace("in this store", f"of {pack}'s generations in this store", 1)


def validity_tables(v: Validity) -> list[Table]:
    """``judge_validity`` and ``annotator_agreement``; none without human labels (the
    section's intro then says so, see :func:`validity_intro`)."""
    if not v.has_labels:
        return []
    frame = v.raters.reset_index(drop=True)
    c = v.counts
    note = (
        f"{count(c.get('used'))} labels of {count(c.get('labeled_generations'))} generations by "
        f"{count(c.get('annotators'))} annotator(s); {count(c.get('unsure_left_out'))} unsure "
        f"and {count(c.get('ties'))} tied fields left out"
        + (
            f"; {count(c['other_packs_left_out'])} labels of other packs' generations left out"
            if c.get("other_packs_left_out")
            else ""
        )
        + ". Statistic (95% CI); accuracy, precision and recall with at least their exact "
        "(Clopper-Pearson) interval on their n, so a count of 0 or of n keeps a width; kappa and "
        "AC1 side by side because a rare field drives kappa down (see the prevalence column); "
        "kappa undefined where judge and people give one same value, – where precision or "
        "recall has no item."
    )
    main = make_table(
        "judge_validity",
        "Judges against the human labels, per field",
        frame,
        [
            "judge",
            "field",
            "n",
            "prevalence",
            "accuracy",
            "kappa",
            "AC1",
            "precision",
            "recall",
            "F1",
        ],
        _field_rows(frame, lambda r: str(r["rater"]), METRICS, prevalence=True),
        left=2,
        note=note,
    )
    pairs = v.annotators.reset_index(drop=True)
    agreement = make_table(
        "annotator_agreement",
        "Inter-annotator agreement, per pair of annotators and field",
        pairs,
        ["annotators", "field", "n", "agreement", "kappa", "AC1"],
        _field_rows(pairs, lambda r: f"{r['annotator_a']} / {r['annotator_b']}", AGREEMENT_METRICS),
        left=2,
        note=""
        if len(pairs)
        else "No generation was labeled by two annotators, so there is no inter-annotator "
        "agreement yet.",
    )
    return [main, agreement]
