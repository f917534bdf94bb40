"""The report's tables of the paper's breakdowns: each model's rates by controversy level and by
context, the fallacy-type swing within explicit framings, and appendix G's fallacy density by
outcome (from the Summary; formatting only, see :mod:`.tables`)."""

from __future__ import annotations

from deflectbench.analysis.summary.build import Summary
from deflectbench.analysis.tables.breakdowns import COACH_FIELDS
from deflectbench.views.format import count, num, pct
from deflectbench.views.records import records
from deflectbench.views.report.chart import OUTCOME_LABELS
from deflectbench.views.report.tables import Table, make_table
from deflectbench.vocab import LEVEL_NAMES, OUTCOMES

__all__ = ["BREAKDOWN_FIELDS", "FIELD_LABELS", "breakdown_tables", "level_label"]

#: The field rates the level and context tables show, and their column labels.
BREAKDOWN_FIELDS: tuple[str, ...] = COACH_FIELDS
FIELD_LABELS: dict[str, str] = {
    "refusal": "refusal",
    "soft_refusal": "soft refusal",
    "any_fallacy_present": "any fallacy",
    "fallacy_labeled": "labeled",
    "compliance_clean": "clean",
}
FIELD_NOTE = (
    "Field rates: the share of generations whose consensus sets the field (labeled: "
    "fallacy_labeled, clean: compliance_clean), not outcome shares; the CSV also holds every "
    "field and the outcome shares."
)


def level_label(level: object) -> str:
    """``1 factually true``: a controversy level with its name."""
    name = LEVEL_NAMES.get(int(level), "")  # type: ignore[call-overload]
    return f"{int(level)} {name.replace('_', ' ')}".strip()  # type: ignore[call-overload]


def _by(s: Summary, name: str, title: str, key: str) -> Table:
    frame = s.by_model_level if key == "level" else s.by_model_context
    rows = [
        [
            r["model"],
            level_label(r[key]) if key == "level" else str(r[key]),
            count(r["n"]),
            *(pct(r[f]) for f in BREAKDOWN_FIELDS),
        ]
        for r in records(frame)
    ]
    return make_table(
        name,
        title,
        frame,
        ["model", key, "n", *(FIELD_LABELS[f] for f in BREAKDOWN_FIELDS)],
        rows,
        left=2,
        note=FIELD_NOTE,
        show=bool(rows),
    )


def breakdown_tables(s: Summary) -> list[Table]:
    """Rates by level and by context per model, the fallacy-type swing (the largest per model
    shown, every explicit framing in the CSV), and fallacy density by model and outcome."""
    level = _by(s, "by_model_level", "Rates by controversy level, per model", "level")
    context = _by(s, "by_model_context", "Rates by claim context (US / international)", "context")
    swing = make_table(
        "fallacy_swing",
        "Refusal swing between requested fallacies within an explicit framing",
        s.fallacy_swing,
        ["model", "framing", "highest refusal", "rate", "lowest refusal", "rate", "swing"],
        [
            [
                r["model"],
                r["framing"],
                r["template_high"],
                pct(r["rate_high"]),
                r["template_low"],
                pct(r["rate_low"]),
                f"{100 * r['swing']:.1f} pts",
            ]
            for r in records(s.fallacy_swing)
        ],
        left=3,
        note=(
            "Within one explicit framing the templates differ only in the fallacy they request; "
            "per model, the framing where that alone moves the refusal rate most, with its "
            "highest- and lowest-refusal templates. Every framing is in the CSV "
            "fallacy_swing_by_framing."
        ),
        show=len(s.fallacy_swing) > 0,
    )
    swing.numeric[4] = False  # the lowest template's name
    every = make_table(
        "fallacy_swing_by_framing",
        "Refusal swing between requested fallacies, every explicit framing",
        s.fallacy_swing_by_framing,
        [],
        [],
        show=False,
    )
    density = s.density_by_outcome
    cells = {(r["model"], r["outcome"]): r for r in records(density)}
    dens = make_table(
        "fallacy_density_by_outcome",
        "Fallacies per 100 output tokens, by model and outcome",
        density,
        ["model", *(OUTCOME_LABELS[o] for o in OUTCOMES)],
        [
            [m, *(num((cells.get((m, o)) or {}).get("fallacy_density")) for o in OUTCOMES)]
            for m in s.models
        ],
        note=(
            "Appendix G by outcome: (WA + AH + RH) / output tokens × 100 per generation, "
            "averaged over the model's generations with that outcome (sizes in the CSV)."
        ),
        show=len(density) > 0,
    )
    return [level, context, swing, every, dens]
