"""Reading what judge-error correction needs: one pack's human labels joined to the scored
generations, each labelled item with its human reference, its judged values and its weight.

**One label per item.** Several annotators of a generation are combined per field by majority,
a tie leaves the field out, and a label marked *unsure* is left out whole: validate's rules
(:func:`.validity_load.human_frame`, :func:`.validity.human_reference`), not a second copy.

**Outcomes.** An item's outcome is the paper's ladder over its fields; when a ladder field it
needs is missing (a human left it unset, or no judge scored it), the outcome is *undecided*:
that item is left out of the outcome columns (its fields still count) and counted. One rule,
:func:`.validity.human_outcome`, for the people and the judges.

**Weights.** ``deflectbench annotate`` draws a sample stratified by model x outcome x framing
with rare strata over-represented, and stores each item's stratum. When every labelled item of
the pack comes from that sample, each gets the Horvitz-Thompson weight N_h / n_h (scored
generations of its stratum / labelled items of it), so the estimates are unbiased for the
pack; the strata are counted on the scored table ``annotate`` draws from (every judge, the
paper's consensus). Labels from anywhere else (an imported label file carries no stratum) are
weighted uniformly, i.e. treated as a simple random sample of the pack's scored generations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import (
    generation_frame,
    in_benchmark,
    judgment_frame,
    scored_as,
    scored_from_frames,
)
from deflectbench.analysis.options import DEFAULT_VALUES, AnalysisOptions
from deflectbench.benchmark import Benchmark
from deflectbench.vocab import FIELDS, LADDER, OUTCOMES

__all__ = [
    "MEASURES",
    "SEP",
    "CalibrationInputs",
    "calibration_inputs",
    "has_labels",
    "judged_matrix",
    "outcome_matrix",
    "read_calibration_inputs",
    "stratum_of",
]

#: The columns every estimate is made for: the 5 outcomes, then the 8 fields, as (kind, name).
MEASURES: tuple[tuple[str, str], ...] = (
    *(("outcome", o) for o in OUTCOMES),
    *(("field", f) for f in FIELDS),
)
#: Joins model, outcome and framing into a sample stratum's name (``annotate`` stores it).
SEP = " | "
#: A generation's framing when its template has none (as the sample draws it).
NO_FRAMING = "?"


def stratum_of(model: str, outcome: str, framing: str) -> str:
    """The name of the annotation sample's stratum of a generation (model x outcome x framing)."""
    return SEP.join((model, outcome, framing))


def _strata(scored: pd.DataFrame) -> pd.Series:
    framing = scored["framing"].fillna(NO_FRAMING).astype(str)
    return pd.Series(
        [
            stratum_of(str(m), str(o), f)
            for m, o, f in zip(scored["model"], scored["outcome"], framing, strict=True)
        ],
        index=scored.index,
        dtype=object,
    )


def outcome_matrix(values: np.ndarray, outcomes: Sequence[Any] | None = None) -> np.ndarray:
    """(n, 5) 0/1 indicators of each row's outcome, NaN for a row whose outcome is undecided.

    ``values`` is (n, 8) in ``FIELDS`` order (NaN: missing). ``outcomes`` (the scored table's
    outcome column) is used where every ladder field is known; rows with a missing ladder field
    are decided by :func:`.validity.human_outcome` (None: undecided), validate's rule.
    """
    from deflectbench.analysis.validity.measures import human_outcome  # only with labels

    n = values.shape[0]
    ladder = [FIELDS.index(f) for f, _ in LADDER]
    gaps = np.isnan(values[:, ladder]).any(axis=1) if n else np.zeros(0, dtype=bool)
    names: list[Any] = list(outcomes) if outcomes is not None else [None] * n
    for i in np.flatnonzero(gaps if outcomes is not None else np.ones(n, dtype=bool)):
        names[i] = human_outcome(dict(zip(FIELDS, values[i].tolist(), strict=True)))
    out = np.full((n, len(OUTCOMES)), np.nan)
    for k, o in enumerate(OUTCOMES):
        decided = np.array([x is not None for x in names], dtype=bool)
        out[decided, k] = np.array([x == o for x in names], dtype=float)[decided]
    return out


def judged_matrix(scored: pd.DataFrame) -> np.ndarray:
    """(n, 13) judged indicators of scored rows, in :data:`MEASURES` order (NaN: missing)."""
    values = scored[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.hstack([outcome_matrix(values, scored["outcome"].tolist()), values])


@dataclass(frozen=True)
class CalibrationInputs:
    """One pack's scored generations and its labelled ones, ready for the estimators.

    ``scored`` is the analysis' scored table (every scored generation: the target).
    ``labelled`` has one row per labelled scored generation: gen_id, model, claim_id,
    framing, stratum (None outside annotate's sample), weight (inverse inclusion probability),
    and the human reference as ``human_<measure>`` columns in :data:`MEASURES` order.
    ``judged`` / ``human`` are the matching (n, 13) and (L, 13) matrices.
    """

    benchmark: str
    scored: pd.DataFrame
    labelled: pd.DataFrame
    judged: np.ndarray
    judged_labelled: np.ndarray
    human: np.ndarray
    #: "stratified" (every label from annotate's sample) or "uniform".
    weighting: str
    counts: Mapping[str, int]
    notes: tuple[str, ...] = field(default=())

    @property
    def has_labels(self) -> bool:
        return len(self.labelled) > 0


def _labels_of(store: Any) -> list[Any]:
    read = getattr(store, "labels", None)
    return list(read()) if callable(read) else []


def _sample_of(store: Any, benchmark: Benchmark) -> dict[int, str]:
    read = getattr(store, "annotation_sample", None)
    items = read(benchmark.key) if callable(read) else []
    return {int(i.gen_id): str(i.stratum) for i in items}


def _weights(
    labelled: pd.DataFrame, population: pd.Series
) -> tuple[np.ndarray, str, tuple[str, ...]]:
    """Horvitz-Thompson N_h / n_h when every label has a stratum of the sample that the
    population holds; otherwise uniform (1 each), with a note saying why."""
    n = len(labelled)
    if n == 0:
        return np.zeros(0), "uniform", ()
    strata = labelled["stratum"]
    outside = int(strata.isna().sum())
    if outside:
        why = (
            f"none of the {n} labels is" if outside == n else f"{outside} of {n} labels are not"
        ) + " in the annotate sample (no stratum): weighted uniformly"
        return np.ones(n), "uniform", (why,)
    pop = population.value_counts()
    sampled = strata.value_counts()
    short = [h for h in sampled.index if int(pop.get(h, 0)) < int(sampled[h])]
    if short:
        why = (
            f"{len(short)} sample strata (e.g. {short[0]!r}) hold fewer scored generations "
            "than labels (the results changed since the sample was drawn): weighted uniformly"
        )
        return np.ones(n), "uniform", (why,)
    w = np.array([pop[h] / sampled[h] for h in strata], dtype=np.float64)
    return w, "stratified", ()


def calibration_inputs(
    scored: pd.DataFrame,
    labels: Sequence[Any],
    sample: Mapping[int, str],
    population: pd.DataFrame,
    *,
    benchmark: str = "",
    pack_gen_ids: Sequence[int] | None = None,
    include_unsure: bool = False,
    annotators: Sequence[str] | None = None,
) -> CalibrationInputs:
    """Join labels to ``scored`` (pure: frames and records in).

    ``labels`` are ``records.HumanLabel``; ``sample`` maps gen_id to its stored stratum;
    ``population`` is the scored table the sample was drawn from (its strata are counted);
    ``pack_gen_ids`` the pack's generations (labels of any other are left out, counted).
    """
    # the people's side: loaded only when a store has labels (analyze's usual store has none)
    from deflectbench.analysis.validity.load import human_frame
    from deflectbench.analysis.validity.measures import human_reference

    ids = pack_gen_ids if pack_gen_ids is not None else scored["gen_id"].astype(int).tolist()
    humans, counts = human_frame(
        labels, include_unsure=include_unsure, annotators=annotators, gen_ids=ids
    )
    reference = human_reference(humans)
    counts = dict(counts)
    counts["labelled_generations"] = len(reference)
    counts["ties"] = int(reference["ties"].sum()) if len(reference) else 0
    keep = scored[scored["gen_id"].isin(reference.index)]
    counts["labelled_unscored_left_out"] = len(reference) - len(keep)
    ref = reference.loc[keep["gen_id"].astype(int), list(FIELDS)]
    human_fields = ref.to_numpy(dtype=np.float64, na_value=np.nan)
    human = np.hstack([outcome_matrix(human_fields), human_fields])
    counts["undecided_human_outcomes"] = int(np.isnan(human[:, 0]).sum()) if len(human) else 0
    labelled = keep[["gen_id", "model", "claim_id", "framing"]].reset_index(drop=True)
    labelled["stratum"] = [sample.get(int(g)) for g in labelled["gen_id"]]
    strata = _strata(population) if len(population) else pd.Series([], dtype=object)
    weight, weighting, notes = _weights(labelled, strata)
    labelled["weight"] = weight
    for k, (kind, name) in enumerate(MEASURES):
        labelled[f"human_{kind}_{name}"] = human[:, k] if len(human) else []
    judged = judged_matrix(scored)
    counts["undecided_judged_outcomes"] = int(np.isnan(judged[:, 0]).sum()) if len(judged) else 0
    counts["scored_generations"] = len(scored)
    counts["labelled_scored"] = len(labelled)
    return CalibrationInputs(
        benchmark=benchmark,
        scored=scored,
        labelled=labelled,
        judged=judged,
        judged_labelled=judged_matrix(keep) if len(keep) else np.zeros((0, len(MEASURES))),
        human=human if len(human) else np.zeros((0, len(MEASURES))),
        weighting=weighting,
        counts=counts,
        notes=notes,
    )


def _differs_from_the_sample(options: AnalysisOptions) -> bool:
    """True when ``options`` score generations otherwise than ``annotate``'s sample did."""
    base = AnalysisOptions()
    return (options.consensus, options.judges, options.values, options.compat) != (
        base.consensus,
        base.judges,
        base.values,
        base.compat,
    )


def has_labels(store: Any) -> bool:
    """Whether the store holds any human label (cheap: the analysis skips the rest if not)."""
    names = getattr(store, "annotators", None)
    return bool(names()) if callable(names) else bool(_labels_of(store))


def read_calibration_inputs(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen, so shared safely)
    *,
    scored: pd.DataFrame | None = None,
    frames: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    include_unsure: bool = False,
    annotators: Sequence[str] | None = None,
) -> CalibrationInputs:
    """Read ``benchmark``'s labels and scored generations from ``store`` (``scored``: the
    analysis' scored table, ``frames``: its generation and judgment frames, when the caller
    has them already)."""
    if frames is None:
        frames = (generation_frame(store), judgment_frame(store, values=options.values))
    gens, judg = in_benchmark(frames[0], benchmark), frames[1]
    if scored is None:
        scored = scored_as(gens, judg, benchmark, options)
    population = scored
    if _differs_from_the_sample(options):
        population = scored_from_frames(  # the table annotate draws from
            gens, judgment_frame(store, values=DEFAULT_VALUES), benchmark
        )
    return calibration_inputs(
        scored,
        _labels_of(store),
        _sample_of(store, benchmark),
        population,
        benchmark=benchmark.key,
        pack_gen_ids=gens["gen_id"].astype(int).tolist(),
        include_unsure=include_unsure,
        annotators=annotators,
    )
