"""``analyze``'s validity checks on the terminal: over-refusal on the benign twins beside the
manipulative requests' refusal, and each judge's self-consistency, every rate with its 95%
claim-block CI; with human labels, over-refusal corrected for judge error, flagged where the
labels are too thin. Nothing is printed for a check the store has no data for, so the output
of a store without benign twins or re-judgments is what it was.

Validity numbers are judged numbers: two judges whose false positives are 3% and 6% turn a
true over-refusal of 0.8% into about 10% under the OR tie rule, so the CI and the corrected
rate stand beside each rate, never apart from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.views.format import DASH, ci_lines, count, isnan
from deflectbench.views.terminal.style import titled_table

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from deflectbench.analysis.summary.fields import SummaryFields

__all__ = ["validity_check_terminal"]

#: The over-refusal table's rates and their headers.
RATES = (
    ("over_refusal", "over-ref."),
    ("unlabeled_fallacy", "unlab. fall."),
    ("refusal", "manip. ref."),
)


def _table(
    title: str, fold: Sequence[str] = (), plain: Sequence[str] = (), right: Sequence[str] = ()
) -> Table:
    """A table titled ``title`` with its columns in order: ``fold`` (long names folded),
    ``plain``, then ``right`` (numbers, right-justified)."""
    t = titled_table(title)
    for name in fold:
        t.add_column(name, overflow="fold")
    for name in plain:
        t.add_column(name)
    for name in right:
        t.add_column(name, justify="right")
    return t


def corrected_cell(r: dict[str, Any], rate: str) -> str:
    """A corrected rate over its CI (``*`` when flagged: the flag is said under the table), or
    a dash (``†``: its note is said under the table)."""
    value = r.get(f"{rate}_corrected")
    if isnan(value):
        return DASH + ("" if isnan(r.get(f"{rate}_corrected_note")) else "†")
    mark = "*" if not isnan(r.get(f"{rate}_corrected_flag")) else ""
    return ci_lines(value, r.get(f"{rate}_corrected_lo"), r.get(f"{rate}_corrected_hi")) + mark


def _over_refusal(o: pd.DataFrame) -> Table:
    t = _table(
        "Over-refusal on the benign twins, beside the manipulative requests' refusal "
        "(judged; %, 95% CI over claims)",
        fold=("model",),
        plain=("framing",),
        right=("benign", "over-ref.", "unlab. fall.", "manip.", "refusal"),
    )
    for r in o.to_dict(orient="records"):
        t.add_row(
            escape(str(r["model"])),
            escape(str(r["framing"])),
            count(r["n_benign"]),
            ci_lines(r["over_refusal"], r["over_refusal_lo"], r["over_refusal_hi"]),
            ci_lines(r["unlabeled_fallacy"], r["unlabeled_fallacy_lo"], r["unlabeled_fallacy_hi"]),
            count(r["n_manipulative"]),
            ci_lines(r["refusal"], r["refusal_lo"], r["refusal_hi"]),
        )
    return t


def _corrected(o: pd.DataFrame, method: str) -> list[Table | Text]:
    t = _table(
        f"Over-refusal corrected for judge error ({method}; %, 95% CI over claims)",
        fold=("model",),
        plain=("framing",),
    )
    for _, header in RATES:
        t.add_column(header, overflow="fold")
    t.add_column("labels", justify="right")
    flags: list[str] = []
    notes: dict[str, None] = {}
    for r in o.to_dict(orient="records"):
        t.add_row(
            escape(str(r["model"])),
            escape(str(r["framing"])),
            *(corrected_cell(r, rate) for rate, _ in RATES),
            f"{int(r['over_refusal_n_labels'])}/{int(r['refusal_n_labels'])}",
        )
        flags += [
            f"* {r['model']}, {r['framing']}, {header}: {r[f'{rate}_corrected_flag']}"
            for rate, header in RATES
            if not isnan(r.get(f"{rate}_corrected_flag"))
        ]
        for rate, header in RATES:
            note = r.get(f"{rate}_corrected_note")
            if isnan(r.get(f"{rate}_corrected")) and not isnan(note):
                notes[f"† {header}: {note}"] = None
    key = Text(
        "labels: the labels of the twins / of the manipulative requests each rests on",
        style="dim",
    )
    return [
        t,
        key,
        *(Text(f, style="yellow") for f in flags),
        *(Text(n, style="dim") for n in notes),
    ]


def _self_consistency(sc: pd.DataFrame) -> Table:
    t = _table(
        "Judge self-consistency: a judge against itself and the other judges (%, 95% CI)",
        fold=("judge",),
        right=("re-judged", "with itself", "with the others"),
    )
    for r in sc.to_dict(orient="records"):
        t.add_row(
            escape(str(r["judge"])),
            count(r["n"]),
            ci_lines(r["self_agreement"], r.get("self_agreement_lo"), r.get("self_agreement_hi")),
            ci_lines(
                r["other_agreement"], r.get("other_agreement_lo"), r.get("other_agreement_hi")
            ),
        )
    return t


def validity_check_terminal(s: SummaryFields) -> list[Table | Text]:
    """The validity checks' tables (none when the store has neither benign twins nor
    re-judgments): over-refusal with CIs, its corrected rates when the store holds labels,
    the small-sample note, and self-consistency with CIs."""
    v = s.validity
    if v is None:
        return []
    out: list[Table | Text] = []
    o = v.over_refusal
    if o is not None and len(o):
        out.append(_over_refusal(o))
        if note := v.over_refusal_note:
            out.append(Text(note, style="yellow"))
        if v.over_refusal_correction is not None:
            out.extend(_corrected(o, v.over_refusal_correction))
        elif s.options.correction != "none":
            out.append(
                Text(
                    "Over-refusal is the judges' rate: its CI covers claim sampling, not judge "
                    "error. Label a sample of the benign twins (`deflectbench annotate "
                    "--benchmark deflectbench-v1-benign`) to correct it.",
                    style="dim",
                )
            )
    sc = v.self_consistency
    if sc is not None and len(sc):
        out.append(_self_consistency(sc))
    return out
