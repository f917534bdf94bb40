"""What ``deflectbench validate`` shows, typed: the judges, the consensus and the rule-based
judge against the people, the annotators against each other, the monitor against both, and the
cheap raters' rates corrected with the labels.

It gathers the analysis' validity and calibration with the judging room's rule-based raters
scored now (:mod:`.rule_raters`), so it lives here, not in either room.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.analysis.calibration.shown import RateEstimate
from deflectbench.analysis.validity.counts import LabelCounts
from deflectbench.results.rule_raters import (
    ProgressBars,
    english_only,
    lexical_fields,
    monitor_outcomes,
)

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.analysis.validity.load import Validity
    from deflectbench.benchmark import Benchmark

__all__ = ["RaterRate", "RaterRates", "Validation", "rater_rates", "validation"]

#: How the cheap raters' rates are corrected (PPI++ within each model).
RATER_METHOD = "ppi++"
RATER_SCOPE = "within each model (a model's rates use that model's labels only)"


@dataclass(frozen=True)
class RaterRate:
    """One model's rate by a cheap rater: its own, the labels' alone, and corrected."""

    model: str
    kind: str
    measure: str
    rater: RateEstimate
    labels_only: RateEstimate
    corrected: RateEstimate


@dataclass(frozen=True)
class RaterRates:
    """The monitor's and the lexical judge's rates per model corrected with the human labels,
    beside their own rate and the labels alone (``raters``: name -> rows)."""

    raters: Mapping[str, tuple[RaterRate, ...]]
    method: str = RATER_METHOD
    scope: str = RATER_SCOPE

    def to_json(self) -> dict[str, Any]:
        raters: dict[str, dict[str, dict[str, Any]]] = {}
        for name, rows in self.raters.items():
            models = raters.setdefault(name, {})
            for r in rows:
                models.setdefault(r.model, {})[f"{r.kind}:{r.measure}"] = {
                    "rater": r.rater.to_json(),
                    "labels_only": r.labels_only.to_json(),
                    "corrected": r.corrected.to_json(),
                }
        return {"method": self.method, "scope": self.scope, "raters": raters}

    @property
    def table(self) -> pd.DataFrame:
        """One row per rater, model and measure: the rater's own rate (``own``), the labels'
        alone and the corrected one, each with its CI (``_lo``, ``_hi``)."""
        import pandas as pd

        rows = [
            {
                "rater": name,
                "model": r.model,
                "kind": r.kind,
                "measure": r.measure,
                **{
                    f"{column}{suffix}": getattr(getattr(r, which), attr)
                    for column, which in (
                        ("own", "rater"),
                        ("labels_only", "labels_only"),
                        ("corrected", "corrected"),
                    )
                    for suffix, attr in (("", "rate"), ("_lo", "lo"), ("_hi", "hi"))
                },
                "n_labels": r.corrected.n_labels,
            }
            for name, part in self.raters.items()
            for r in part
        ]
        return pd.DataFrame(rows)


@dataclass(frozen=True, eq=False)
class Validation:
    """``validate``'s result: the validity tables (:class:`Validity`), the pack they are of,
    why the rule-based raters were left out (if they were), and their corrected rates."""

    validity: Validity
    #: The results file and the pack's title, as the lines about missing labels name them.
    db: Path
    pack: str
    options: AnalysisOptions
    #: Why the lexical judge and the monitor were left out (a ``note: ...`` line), or None.
    left_out: str | None = None
    corrected: RaterRates | None = None

    @property
    def has_labels(self) -> bool:
        return self.validity.has_labels

    @property
    def counts(self) -> LabelCounts:
        return self.validity.label_counts

    @property
    def raters(self) -> pd.DataFrame:
        """Each judge, the consensus and the lexical judge against the people, per field."""
        return self.validity.raters

    @property
    def annotators(self) -> pd.DataFrame:
        """Each pair of annotators' agreement per field."""
        return self.validity.annotators

    @property
    def monitor(self) -> pd.DataFrame:
        """The monitor's outcomes against the consensus and the people."""
        return self.validity.monitor

    def to_json(self) -> dict[str, Any]:
        """``validate --json``."""
        data = self.validity.to_json()
        if self.left_out:
            data["settings"]["left_out"] = self.left_out.removeprefix("note: ")
        if self.corrected is not None:
            data["corrected"] = self.corrected.to_json()
        return data


def rater_rates(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions,
    *,
    monitor: Mapping[int, str] | None = None,
    lexical: bool = True,
    include_unsure: bool = False,
    annotators: Sequence[str] | None = None,
) -> RaterRates | None:
    """The monitor's and the lexical judge's rates per model corrected with the human labels
    (PPI++, within each model), so the cheap signals carry an honest error bar; None without
    labels."""
    from deflectbench.analysis.calibration.corrected import (
        MONITOR_OUTCOMES,
        corrected_rates,
        with_rater,
    )
    from deflectbench.analysis.calibration.load import MEASURES, read_calibration_inputs

    inputs = read_calibration_inputs(
        store, benchmark, options, include_unsure=include_unsure, annotators=annotators
    )
    if not inputs.has_labels:
        return None
    views: list[tuple[str, Any, tuple[tuple[str, str], ...]]] = []
    if monitor:
        shown = tuple(("outcome", o) for o in MONITOR_OUTCOMES)
        views.append(("monitor", with_rater(inputs, outcomes=monitor), shown))
    if lexical:
        ids = inputs.scored["gen_id"].astype(int).tolist()
        fields = lexical_fields(store, benchmark, ids)
        views.append(("lexical", with_rater(inputs, fields=fields), MEASURES))
    raters: dict[str, tuple[RaterRate, ...]] = {}
    for name, rated, shown in views:
        corr = corrected_rates(
            rated, resamples=options.n_resamples, seed=options.seed, framings=False
        )
        if corr is None:
            continue
        raters[name] = tuple(
            RaterRate(
                model,
                kind,
                m,
                rater=cell.shown("judged", kind, m),
                labels_only=cell.shown("labels", kind, m),
                corrected=cell.shown("corrected", kind, m),
            )
            for model, cell in corr.models.items()
            for kind, m in shown
        )
    return RaterRates(raters)


def validation(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions,
    *,
    db: Path,
    include_unsure: bool = False,
    annotators: Sequence[str] | None = None,
    monitor: bool = True,
    bars: ProgressBars | None = None,
) -> Validation:
    """Everything ``validate`` shows, from one store: the lexical judge scored now when the
    store has none of its verdicts, the monitor on every scored or labeled generation (unless
    not ``monitor``; ``bars`` shows its progress), both left out for a pack not in English."""
    import pandas as pd

    from deflectbench.analysis.validity.load import (
        LEXICAL,
        read_validity_inputs,
        validity_from_inputs,
    )
    from deflectbench.benchmark.title import pack_title

    inputs = read_validity_inputs(
        store, benchmark, options, include_unsure=include_unsure, annotators=annotators
    )
    left_out = english_only(benchmark)
    extra = None
    if not left_out:
        extra = pd.DataFrame()
        if LEXICAL not in inputs.judges and inputs.has_labels:
            ids = inputs.reference.index.tolist()
            extra = lexical_fields(store, benchmark, ids).assign(rater=LEXICAL)
    outcomes = None
    if monitor and not left_out:
        wanted = {*inputs.consensus["gen_id"].astype(int), *inputs.reference.index.astype(int)}
        outcomes = monitor_outcomes(store, benchmark, wanted, bars)
    corrected = None
    if not left_out and inputs.has_labels:
        corrected = rater_rates(
            store,
            benchmark,
            options,
            monitor=outcomes,
            include_unsure=include_unsure,
            annotators=annotators,
        )
    return Validation(
        validity=validity_from_inputs(inputs, extra_raters=extra, monitor=outcomes),
        db=db,
        pack=pack_title(benchmark),
        options=options,
        left_out=left_out,
        corrected=corrected,
    )
