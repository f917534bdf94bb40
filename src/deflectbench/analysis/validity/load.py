"""Reading what judge validity compares: the human labels, each judge's verdicts, the
consensus, and the texts a caller may score with a rule-based judge or the monitor.

**Unsure labels and unset fields.** A label its annotator marked *unsure* is left out whole by
default (``include_unsure=True`` keeps it): the annotator said it may be wrong, and a
validation set should hold what people are sure of. An unset field (None) is left out of that
field's comparison only, so each field has its own n. Several annotators of one generation
are combined per field by majority; a tie leaves the field out (see
:func:`.measures.human_reference`). The consensus is the analysis' own
(:func:`.scored.scored_as`: the options' rule, judges and values), so the numbers
here describe the same verdicts as ``analyze`` and the report.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import (
    generation_frame,
    in_benchmark,
    judgment_frame,
    scored_as,
    verdicts_from_frames,
)
from deflectbench.analysis.jsonable import jsonable
from deflectbench.analysis.options import MIN_CI_CLAIMS, AnalysisOptions
from deflectbench.analysis.validity.counts import LabelCounts
from deflectbench.analysis.validity.measures import (
    ComparisonOptions,
    annotator_agreement,
    human_outcome,
    human_reference,
    outcome_validity,
    rater_validity,
)
from deflectbench.benchmark import Benchmark
from deflectbench.vocab import FIELDS

__all__ = [
    "Validity",
    "ValidityInputs",
    "generation_texts",
    "human_frame",
    "judge_validity",
    "read_validity_inputs",
    "validity_from_inputs",
]

#: The rule-based judge's name (the judging room's ``lexical.NAME``; the analysis may not
#: import the judges, so the name is repeated here and checked equal in the tests).
LEXICAL = "lexical"


def human_frame(
    labels: Sequence[Any],
    *,
    include_unsure: bool = False,
    annotators: Sequence[str] | None = None,
    gen_ids: Collection[int] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Human labels (``records.HumanLabel``) as one row per (gen_id, annotator), the 8 fields
    as float (NaN: unset), and the counts of what was kept and left out. ``gen_ids`` (the
    analysed pack's generations) leaves out labels of any other generation: a pack's judges
    are validated on that pack's labels only, never on another pack's (or language's)."""
    wanted = set(annotators) if annotators else None
    rows, unsure, other, other_packs = [], 0, 0, 0
    if gen_ids is not None:
        ours = set(gen_ids)
        mine = [lab for lab in labels if int(lab.gen_id) in ours]
        other_packs, labels = len(labels) - len(mine), mine
    for lab in labels:
        if wanted is not None and lab.annotator not in wanted:
            other += 1
            continue
        if lab.unsure and not include_unsure:
            unsure += 1
            continue
        values = {f: np.nan if lab.values.get(f) is None else float(lab.values[f]) for f in FIELDS}
        rows.append({"gen_id": int(lab.gen_id), "annotator": lab.annotator, **values})
    frame = pd.DataFrame(rows, columns=["gen_id", "annotator", *FIELDS])
    frame[list(FIELDS)] = frame[list(FIELDS)].astype(np.float64)
    counts = {
        "labels": len(labels),
        "used": len(rows),
        "unsure_left_out": unsure,
        "other_annotators_left_out": other,
    }
    if gen_ids is not None:
        counts["other_packs_left_out"] = other_packs
    return frame, counts


@dataclass(frozen=True)
class ValidityInputs:
    """One read of a store for validity: humans, their reference, the judges' verdicts and the
    consensus (one row per scored generation: gen_id, claim_id, outcome and the 8 fields)."""

    humans: pd.DataFrame
    reference: pd.DataFrame
    raters: pd.DataFrame
    consensus: pd.DataFrame
    claims: Mapping[int, str]
    judges: tuple[str, ...]
    counts: Mapping[str, int]
    options: AnalysisOptions
    include_unsure: bool = False
    #: The key of the pack whose generations (and labels) these are.
    benchmark: str = ""

    @property
    def has_labels(self) -> bool:
        return not self.humans.empty

    @property
    def annotators(self) -> tuple[str, ...]:
        """Who labelled, sorted (no one without labels)."""
        humans = self.humans
        return tuple(sorted(humans["annotator"].unique().tolist())) if len(humans) else ()

    @property
    def consensus_name(self) -> str:
        return f"consensus ({self.options.consensus})"


def _labels_of(store: Any) -> list[Any]:
    """The store's human labels (a store or reader without them has none)."""
    read = getattr(store, "labels", None)
    return list(read()) if callable(read) else []


def read_validity_inputs(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen, so shared safely)
    *,
    include_unsure: bool = False,
    annotators: Sequence[str] | None = None,
) -> ValidityInputs:
    """Read labels, verdicts and the consensus of ``benchmark``'s generations once (labels of
    another pack's generations are left out, and counted)."""
    gens = in_benchmark(generation_frame(store), benchmark)
    judg = judgment_frame(store, values=options.values)
    verdicts = verdicts_from_frames(gens, judg, benchmark)
    judges = tuple(sorted(verdicts["judge"].unique().tolist())) if len(verdicts) else ()
    scored = scored_as(gens, judg, benchmark, options)
    labels = _labels_of(store)
    humans, counts = human_frame(
        labels,
        include_unsure=include_unsure,
        annotators=annotators,
        gen_ids=gens["gen_id"].astype(int).tolist(),
    )
    reference = human_reference(humans)
    order = [j for j in judges if j != LEXICAL] + [j for j in judges if j == LEXICAL]
    raters = verdicts.rename(columns={"judge": "rater"})[["gen_id", "rater", *FIELDS]]
    raters = pd.concat([raters[raters["rater"] == j] for j in order] or [raters], ignore_index=True)
    consensus = scored[["gen_id", "claim_id", "outcome", *FIELDS]].reset_index(drop=True)
    claims = dict(zip(gens["gen_id"].astype(int), gens["claim_id"], strict=True))
    counts = {
        **counts,
        "labeled_generations": len(reference),
        "ties": int(reference["ties"].sum()) if len(reference) else 0,
        "scored_generations": len(consensus),
    }
    return ValidityInputs(
        humans=humans,
        reference=reference,
        raters=raters,
        consensus=consensus,
        claims=claims,
        judges=judges,
        counts=counts,
        options=options,
        include_unsure=include_unsure,
        benchmark=benchmark.key,
    )


def generation_texts(
    store: Any, benchmark: Benchmark, gen_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """gen_id, claim_id, claim (its text, "" for a claim not in the benchmark) and response of
    answered generations of ``benchmark`` (all, or ``gen_ids``), for a caller that scores texts
    itself."""
    columns = ["gen_id", "benchmark", "claim_id", "response", "error"]
    frame = pd.DataFrame(store.generation_rows(columns=columns), columns=columns)
    ok = frame["error"].isna() & frame["response"].notna() & (frame["benchmark"] == benchmark.key)
    frame = frame[ok]
    if gen_ids is not None:
        frame = frame[frame["gen_id"].isin(list(gen_ids))]
    text = {c.claim_id: c.text for c in benchmark.claims}
    frame = frame.assign(claim=[text.get(c, "") for c in frame["claim_id"]])
    return frame[["gen_id", "claim_id", "claim", "response"]].reset_index(drop=True)


@dataclass(frozen=True)
class Validity:
    """Judges against people (``raters``), people against each other (``annotators``), and the
    monitor's outcomes against the consensus and the people (``monitor``)."""

    raters: pd.DataFrame
    annotators: pd.DataFrame
    monitor: pd.DataFrame
    counts: Mapping[str, Any]
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_labels(self) -> bool:
        return self.label_counts.used > 0

    @property
    def label_counts(self) -> LabelCounts:
        """The counts, typed (labels used and left out, generations, annotators)."""
        return LabelCounts.of(self.counts)

    def to_json(self) -> dict[str, Any]:
        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return jsonable(frame.to_dict(orient="records"))

        return {
            "settings": jsonable(dict(self.settings)),
            "counts": jsonable(dict(self.counts)),
            "judges_vs_humans": records(self.raters),
            "inter_annotator": records(self.annotators),
            "monitor": records(self.monitor),
            "small_sample": self.small_sample(),
        }

    def small_sample(self) -> dict[str, Any]:
        """The small-sample flag over every CI ``validate`` prints: the fewest claims any
        comparison's CIs resampled, and a sentence when fewer than :data:`MIN_CI_CLAIMS`."""
        fewest = self.fewest_claims
        few = fewest is not None and fewest < MIN_CI_CLAIMS
        note = self.small_sample_note
        return {"min_claims": MIN_CI_CLAIMS, "any": few, "fewest_claims": fewest, "note": note}

    @property
    def fewest_claims(self) -> int | None:
        """The fewest claims any comparison's CIs resampled (None: no comparison)."""
        frames = [f for f in (self.raters, self.annotators, self.monitor) if "claims" in f]
        claims = [int(c) for f in frames for c, n in zip(f["claims"], f["n"], strict=True) if n]
        return min(claims) if claims else None

    @property
    def small_sample_note(self) -> str | None:
        """A sentence when some CI rests on fewer than :data:`MIN_CI_CLAIMS` claims."""
        fewest = self.fewest_claims
        if fewest is None or fewest >= MIN_CI_CLAIMS:
            return None
        return (
            f"Small sample: some of these 95% CIs rest on {fewest} claim"
            f"{'' if fewest == 1 else 's'} (fewer than {MIN_CI_CLAIMS}); the bootstrap "
            "resamples claims, so these intervals are rough"
            + ("; over one claim a CI is undefined (shown as -)." if fewest < 2 else ".")
        )


def validity_from_inputs(
    inputs: ValidityInputs,
    *,
    extra_raters: pd.DataFrame | None = None,
    monitor: Mapping[int, str] | None = None,
) -> Validity:
    """The validity tables from one read: each judge, the consensus and ``extra_raters`` (one
    row per gen_id and rater, e.g. the lexical judge scored now) against the human reference;
    the annotators against each other; and, given the monitor's outcome per gen_id, its
    precision and recall against the consensus and against the people's outcome."""
    o = inputs.options
    boot: dict[str, Any] = {"n_resamples": o.n_resamples, "seed": o.seed}
    raters = [inputs.raters]
    raters.append(inputs.consensus[["gen_id", *FIELDS]].assign(rater=inputs.consensus_name))
    if extra_raters is not None and len(extra_raters):
        raters.append(extra_raters[["gen_id", "rater", *FIELDS]])
    frame = pd.concat([r[["gen_id", "rater", *FIELDS]] for r in raters], ignore_index=True)
    by_rater = rater_validity(frame, inputs.reference, inputs.claims, ComparisonOptions(**boot))
    pairs = annotator_agreement(inputs.humans, inputs.claims, ComparisonOptions(**boot))
    monitor_rows = []
    if monitor:
        cons = inputs.consensus[inputs.consensus["gen_id"].isin(list(monitor))]
        if len(cons):
            monitor_rows.append(
                outcome_validity(
                    [monitor[int(g)] for g in cons["gen_id"]],
                    cons["outcome"].tolist(),
                    cons["claim_id"].tolist(),
                    name=inputs.consensus_name,
                    **boot,
                )
            )
        ref = inputs.reference
        ids = [int(g) for g in ref.index if int(g) in monitor]
        if ids:
            monitor_rows.append(
                outcome_validity(
                    [monitor[g] for g in ids],
                    [human_outcome(ref.loc[g, list(FIELDS)].to_dict()) for g in ids],
                    [inputs.claims.get(g) for g in ids],
                    name="humans",
                    **boot,
                )
            )
    monitored = pd.concat(monitor_rows, ignore_index=True) if monitor_rows else pd.DataFrame()
    settings = {
        "benchmark": inputs.benchmark,
        "consensus": o.consensus,
        "judge_values": o.values,
        "judges": list(inputs.judges),
        "annotators": list(inputs.annotators),
        "include_unsure": inputs.include_unsure,
        "n_resamples": o.n_resamples,
        "seed": o.seed,
        "ci": "95% percentile bootstrap, resampling claims",
        "human_reference": "majority of the annotators who set the field; ties left out",
    }
    counts = {**inputs.counts, "annotators": len(inputs.annotators)}
    return Validity(by_rater, pairs, monitored, counts, settings)


def judge_validity(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen, so shared safely)
) -> Validity:
    """Judges (as stored) against the human labels, and the annotators against each other:
    what the report shows (every annotator's labels, unsure ones left out; another choice of
    labels: :func:`validity_from_inputs` of :func:`read_validity_inputs`). ``deflectbench
    validate`` adds the lexical judge and the monitor."""
    if not _labels_of(store):  # nothing to compare: skip reading the judgments
        settings = {
            "benchmark": benchmark.key,
            "consensus": options.consensus,
            "judge_values": options.values,
        }
        empty = pd.DataFrame()
        counts = {"labels": 0, "used": 0, "unsure_left_out": 0, "annotators": 0}
        return Validity(empty, empty, empty, counts, settings)
    return validity_from_inputs(read_validity_inputs(store, benchmark, options))
