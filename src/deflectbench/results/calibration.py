"""What ``deflectbench calibrate`` shows, typed: each judge's sensitivity and specificity against
the people, every model's rates judged and corrected, the label budget and the Dawid-Skene fit;
or, without labels, the line saying so and the labels a budget would need.

It sets the rule-based ``lexical`` judge (scored now) beside the stored judges, so it gathers
the judging room with the analysis and lives here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.analysis.calibration.shown import (
    DawidSkeneFit,
    LabelNeed,
    ModelBudget,
    Shift,
    no_labels_note,
)
from deflectbench.analysis.jsonable import jsonable
from deflectbench.analysis.validity.counts import LabelCounts
from deflectbench.results.rule_raters import english_only, lexical_fields

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.analysis.calibration.corrected import Corrected
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.benchmark import Benchmark

__all__ = ["Calibration", "calibration"]


@dataclass(frozen=True, eq=False)
class Calibration:
    """``calibrate``'s result. With labels (``corrected`` set): ``judges`` (sensitivity and
    specificity per rater and field), ``shifts``, ``budget`` and ``dawid_skene``. Without:
    ``needs``, the labels a corrected CI within the target would need, and :attr:`note`."""

    db: Path
    #: The pack's title (as the lines name it) and key.
    pack: str
    benchmark: str
    #: The budget's goal: every headline rate's corrected 95% CI within ± this many points.
    target: float
    #: The label counts as the JSON writes them (:attr:`label_counts`: typed).
    counts: Mapping[str, Any]
    corrected: Corrected | None = None
    #: Why the lexical judge was left out (a ``note: ...`` line), or None.
    left_out: str | None = None
    judges: pd.DataFrame | None = None
    shifts: tuple[Shift, ...] = ()
    budget: Mapping[str, ModelBudget] = field(default_factory=dict)
    dawid_skene: DawidSkeneFit | None = None
    needs: Mapping[str, LabelNeed] = field(default_factory=dict)

    @property
    def has_labels(self) -> bool:
        return self.corrected is not None

    @property
    def label_counts(self) -> LabelCounts:
        return LabelCounts.of(self.counts)

    @property
    def target_fraction(self) -> float:
        return self.target / 100.0

    @property
    def note(self) -> str:
        """Without labels: the line saying so and how to get them."""
        c = self.label_counts
        return no_labels_note(
            self.db, self.pack, other_packs=c.other_packs_left_out, unsure=c.unsure_left_out
        )

    @property
    def shift_table(self) -> pd.DataFrame:
        """One row per model and measure: judged and corrected with CIs, lambda, moved."""
        import pandas as pd

        rows = [
            {
                "model": s.model,
                "kind": s.kind,
                "measure": s.measure,
                "judged": s.judged.rate,
                "judged_lo": s.judged.lo,
                "judged_hi": s.judged.hi,
                "corrected": s.corrected.rate,
                "corrected_lo": s.corrected.lo,
                "corrected_hi": s.corrected.hi,
                "lambda": s.lam,
                "moved_points": s.moved_points,
                "judged_ci_excludes_corrected": s.judged_ci_excludes_corrected,
            }
            for s in self.shifts
        ]
        return pd.DataFrame(rows)

    @property
    def budget_table(self) -> pd.DataFrame:
        """One row per model: labels now, needed and more (with labels), else labels needed."""
        import pandas as pd

        source = self.budget or self.needs
        return pd.DataFrame([{"model": m, **b.to_json()} for m, b in source.items()])

    def to_json(self) -> dict[str, Any]:
        """``calibrate --json``."""
        if self.corrected is None:
            need = {m: n.to_json() for m, n in self.needs.items()}
            return {
                "labels": 0,
                "note": self.note,
                "budget_without_labels": jsonable(need),
                "counts": jsonable(dict(self.counts)),
            }
        settings = {
            **self.corrected.settings_json(),
            "target": self.target_fraction,
            "benchmark": self.benchmark,
            **({"left_out": self.left_out.removeprefix("note: ")} if self.left_out else {}),
        }
        judges = self.judges
        data = {
            "settings": settings,
            "counts": dict(self.counts),
            "judges": [] if judges is None else judges.to_dict(orient="records"),
            "shifts": [s.to_json() for s in self.shifts],
            "budget": {m: b.to_json() for m, b in self.budget.items()},
            "dawid_skene": None if self.dawid_skene is None else self.dawid_skene.to_json(),
        }
        out: dict[str, Any] = jsonable(data)
        return out


def calibration(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions,
    *,
    db: Path,
    target: float = 3.0,
    correction: str = "ppi",
    pool_models: bool = False,
    include_unsure: bool = False,
    annotators: Sequence[str] | None = None,
) -> Calibration:
    """Everything ``calibrate`` shows, from one store (``target`` in points)."""
    from deflectbench.analysis.calibration.corrected import corrected_rates
    from deflectbench.analysis.calibration.load import read_calibration_inputs
    from deflectbench.analysis.calibration.review import (
        budget,
        dawid_skene,
        judge_accuracy,
        label_needs,
        shifts,
    )
    from deflectbench.analysis.frames.scored import verdict_table
    from deflectbench.analysis.validity.load import LEXICAL
    from deflectbench.benchmark.title import pack_title

    inputs = read_calibration_inputs(
        store, benchmark, options, include_unsure=include_unsure, annotators=annotators
    )
    made = Calibration(
        db=db, pack=pack_title(benchmark), benchmark=benchmark.key, target=target, counts={}
    )
    fraction = made.target_fraction
    if not inputs.has_labels:
        from dataclasses import replace

        from deflectbench.analysis import rates_with_ci

        rates = rates_with_ci(inputs.scored, n_resamples=options.n_resamples, seed=options.seed)
        return replace(made, counts=inputs.counts, needs=label_needs(rates, fraction))
    corr = corrected_rates(
        inputs,
        correction="ppi" if correction == "none" else correction,
        pool_models=pool_models,
        resamples=options.n_resamples,
        seed=options.seed,
        framings=False,
    )
    assert corr is not None
    verdicts = verdict_table(store, benchmark, values=options.values)
    judges = sorted(verdicts["judge"].unique().tolist()) if len(verdicts) else []
    left_out = english_only(benchmark)
    if left_out is None and LEXICAL not in judges:  # the rule-based judge, scored now
        import pandas as pd

        ids = inputs.scored["gen_id"].astype(int).tolist()
        lexical = lexical_fields(store, benchmark, ids).assign(judge=LEXICAL)
        verdicts = pd.concat([verdicts, lexical], ignore_index=True)
        judges.append(LEXICAL)
    return Calibration(
        db=db,
        pack=made.pack,
        benchmark=benchmark.key,
        target=target,
        counts=dict(inputs.counts),
        corrected=corr,
        left_out=left_out,
        judges=judge_accuracy(
            inputs,
            verdicts,
            consensus_name=f"consensus ({options.consensus})",
            resamples=options.n_resamples,
            seed=options.seed,
        ),
        shifts=tuple(shifts(corr)),
        budget=budget(corr, inputs, fraction),
        dawid_skene=dawid_skene(inputs, verdicts, judges),
    )
