"""The summary of a store: every table and number any view of the results shows, computed once.

:func:`summarize` reads the store once (:mod:`.load`), builds the scored and verdict tables and
runs every table of :mod:`.tables` on them, and returns a :class:`Summary`: typed, with the
tables as DataFrames. Its :meth:`Summary.to_json` is ``deflectbench analyze --json`` (and what
:func:`analyze` returns); the report renders the same object, so the JSON, the terminal and the
report cannot disagree. ``summarize(..., detail=True)`` also picks example responses and the
run's metadata, which need the texts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from deflectbench.analysis import tables
from deflectbench.analysis.calibration.load import has_labels, read_calibration_inputs
from deflectbench.analysis.frames.load import StoreFrames, StoreReader, read_store
from deflectbench.analysis.frames.scored import (
    GEN_COLUMNS,
    in_benchmark,
    scored_as,
    take_counts,
    verdicts_from_frames,
)
from deflectbench.analysis.options import CI_LEVEL, MIN_CI_CLAIMS, AnalysisOptions
from deflectbench.analysis.sharing import shared_codes
from deflectbench.analysis.summary.counts import cost, step_counts
from deflectbench.analysis.summary.fields import SummaryFields
from deflectbench.analysis.summary.pack_change import check_pack_content
from deflectbench.analysis.summary.packs import compare_packs, packs_note
from deflectbench.analysis.summary.to_json import summary_json
from deflectbench.analysis.summary.turns import turn_analysis
from deflectbench.analysis.summary.validity_checks import (
    validity_checks,
    with_labels,
    with_store,
)
from deflectbench.benchmark import Benchmark

__all__ = [
    "Summary",
    "analyze",
    "analyze_frames",
    "summarize",
    "summarize_frames",
]


@dataclass(frozen=True)
class Summary(SummaryFields):
    """A summary's fields (:class:`.fields.SummaryFields`) and its JSON."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data: exactly ``deflectbench analyze --json`` (NaN as null)."""
        return summary_json(self)


def summarize_frames(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen, so shared safely)
) -> Summary:
    """:func:`summarize` on frames already loaded (``generation_frame``, ``judgment_frame``
    with ``values=options.values``); the cost counts judge tokens when ``judg`` has them."""
    return _summary(StoreFrames(gens, judg, options.values), benchmark, options)


def summarize(
    store: StoreReader,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008
    *,
    detail: bool = False,
) -> Summary:
    """Everything the paper reports, from one store, as a :class:`Summary`.

    ``options.consensus`` is ``mean`` (the paper's rule), ``all`` or ``judge:NAME``;
    ``options.judges`` (default: every judge that judged this pack) are the judges a generation
    needs to be scored. CIs are 95% block-bootstrap percentile intervals over claims with
    ``options.n_resamples`` draws from ``options.seed``, so the same store and options give the
    same numbers. Agreement is always between every pair of judges in the store, whatever the
    rule (it needs each judge's own verdicts). ``options.values``: ``said`` (default: what each
    judge said, the paper's definition) or ``rules`` (each verdict after the rubric's rules).
    ``options.compat``: ``paper`` (the paper's definition) or ``release`` (the
    release script's numbers, :mod:`.compat`). ``detail`` also reads the texts, for example
    responses and run metadata. Raises ConsensusError for an unknown rule or judge.
    """
    changed = check_pack_content(store, benchmark, options.allow_pack_change)
    frames = read_store(store, values=options.values, detail=detail)
    summary = _summary(frames, benchmark, options)
    checks = with_store(  # the control's texts and the re-judgments: the store's
        summary.validity,
        frames.generations,
        summary.verdicts,
        summary.judges,
        store,
        options,
        rules=options.values == "rules",
    )
    summary = replace(summary, validity=checks)
    if changed is not None:
        summary = replace(summary, notes=(*summary.notes, changed), pack_change=changed)
    if not summary.empty:  # answers gathered by run --until: intervals at the looks' levels
        summary = _sequential(summary, store, benchmark, options)
    if not summary.empty:  # a pack judged in cascade: its estimates (docs/cascade.md)
        from deflectbench.analysis.cascade.section import cascade_section

        cascaded = cascade_section(store, benchmark, options, frames.generations, frames.judgments)
        if cascaded is not None:
            summary = replace(summary, cascade=cascaded)
    if options.correction == "none" or summary.empty or not has_labels(store):
        return summary  # nothing to correct with: the summary (and its JSON) as without labels
    from deflectbench.analysis.calibration.corrected import corrected_as  # a store with labels

    inputs = read_calibration_inputs(
        store,
        benchmark,
        options,
        scored=summary.scored,
        frames=(frames.generations, frames.judgments),
    )
    corrected = corrected_as(inputs, options)
    frame_pair = (frames.generations, frames.judgments)
    checks = with_labels(checks, store, frame_pair, benchmark, summary.scored, options, corrected)
    return replace(summary, corrected=corrected, validity=checks)


def _sequential(
    summary: Summary, store: StoreReader, benchmark: Benchmark, options: AnalysisOptions
) -> Summary:
    """The summary with the signature's intervals at the looks' levels, when ``run --until``
    gathered this pack's answers (docs/until.md); else as it is."""
    from deflectbench.analysis.sequential.record import adjusted_rates, sequential_record

    record = sequential_record(store.runs(), benchmark.key)
    if record is None:
        return summary
    rates = adjusted_rates(
        summary.scored, record, n_resamples=options.n_resamples, seed=options.seed
    )
    return replace(summary, rates=rates, sequential=record)


def analyze(
    store: StoreReader,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008
) -> dict[str, Any]:
    """The JSON of ``deflectbench analyze --json``: :func:`summarize` then
    :meth:`Summary.to_json`. Rates are fractions, NaN is null, no numpy types."""
    return summarize(store, benchmark, options).to_json()


def analyze_frames(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008
) -> dict[str, Any]:
    """:func:`analyze` on frames already loaded (see :func:`summarize_frames`)."""
    return summarize_frames(gens, judg, benchmark, options).to_json()


def _summary(frames: StoreFrames, benchmark: Benchmark, options: AnalysisOptions) -> Summary:
    with shared_codes():  # the tables group the one scored table: its codes computed once
        return _tables(frames, benchmark, options)


def _tables(frames: StoreFrames, benchmark: Benchmark, options: AnalysisOptions) -> Summary:
    gens, judg = frames.generations, frames.judgments
    if "input_tokens" not in judg:
        judg = judg.assign(input_tokens=0, output_tokens=0)
    scored = scored_as(gens[GEN_COLUMNS] if frames.detail else gens, judg, benchmark, options)
    counts = take_counts(scored)
    verdicts = verdicts_from_frames(gens, judg, benchmark, quirks=options.quirks)
    models = tuple(sorted(scored["model"].unique().tolist())) if len(scored) else ()
    judges = tuple(counts["judges"])
    framings = tuple(tables.present_framings(scored))
    by_model = scored.groupby("model", sort=True) if len(scored) else None

    by_framing = tables.rates_by(scored, ["model", "framing"])
    rates = tables.rates_with_ci(
        scored, by="model", n_resamples=options.n_resamples, seed=options.seed, level=CI_LEVEL
    )
    swings = tables.fallacy_swing_by_framing(scored)
    tost = tables.level_tost(scored)
    agree, agree_by_model = tables.agreement_tables(verdicts, by="model")
    claim_refusal = tables.claim_rates(scored)
    refusal_matrix = tables.framing_matrix(by_framing, models, framings, "refusal")
    attempted = in_benchmark(gens, benchmark)
    steps = step_counts(counts, attempted, judg)
    detail: dict[str, Any] = {}
    if frames.detail:  # the report's: analyze and compare need neither module
        from deflectbench.analysis.summary.examples import pick_examples
        from deflectbench.analysis.summary.metadata import run_metadata

        examples = pick_examples(scored, frames.texts, judg, benchmark, judges, options.seed)
        meta, notes = run_metadata(
            benchmark,
            attempted,
            judg,
            frames.runs,
            store=frames.store,
            schema_version=frames.schema_version,
            ci_level=CI_LEVEL,
        )
        detail = {"examples": examples, "metadata": meta, "notes": notes}
    packs = compare_packs(gens, judg, benchmark, options)
    if packs is not None:
        detail["notes"] = (*detail.get("notes", ()), packs_note(packs, benchmark))
    turns = turn_analysis(gens, judg, frames.turn_links, benchmark, options)
    validity = validity_checks(
        gens,
        verdicts,
        judges,
        options,
        judgments=judg,
        benchmark=benchmark,
        scored=scored,
    )
    return Summary(
        validity=validity,
        turns=turns,
        benchmark=benchmark,
        options=options,
        scored=scored,
        verdicts=verdicts,
        counts=counts,
        models=models,
        judges=judges,
        judges_in_store=tuple(sorted(verdicts["judge"].unique().tolist())) if len(verdicts) else (),
        framings=framings,
        model_n=by_model.size().to_dict() if by_model is not None else {},
        model_claims=by_model["claim_id"].nunique().to_dict() if by_model is not None else {},
        rates=rates,
        by_framing=by_framing,
        by_prompt=tables.rates_by(scored, ["model", "prompt_id"]),
        by_level=tables.rates_by(scored, "level"),
        sample_refusal=tables.sample_refusal_counts(scored, benchmark.runs_per_cell),
        output_tokens=tables.output_tokens_by_outcome(scored),
        fallacy_density=tables.fallacy_density_by_model(scored),
        cohens_h=tables.cohens_h_table(scored),
        agreement_pairs=agree,
        agreement=tables.agreement_by_field(agree),
        agreement_by_model=tables.agreement_by_field(agree_by_model, by="model"),
        claim_spread=tables.claim_spread_table(scored),
        chi2=tables.chi2_model_outcome(scored),
        tost=tost,
        templates=tables.template_table(scored),
        fallacy_by_framing=tables.fallacy_by_framing(scored),
        coach_labeling=tables.coach_labeling(scored),
        free_choice=tables.free_choice_preferences(scored),
        requested_match=tables.requested_match(scored),
        claim_refusal=claim_refusal,
        framing_h_refusal={
            str(m): tables.framing_h_matrix(sub, "refusal")
            for m, sub in (
                scored[["model", "framing", "outcome"]].groupby("model", sort=True)
                if by_model is not None
                else []
            )
        },
        steps=steps,
        cost=cost(attempted, judg),
        coach_outcomes=tables.coach_outcomes(scored),
        tokens_by_outcome=tables.tokens_by_outcome(scored),
        claims_by_level=tables.claims_by_level(claim_refusal),
        prevalence=tables.prevalence(scored),
        refusal_matrix=refusal_matrix,
        fallacy_matrix=tables.framing_matrix(by_framing, models, framings, "any_fallacy_present"),
        largest_swing=tables.largest_swing(refusal_matrix),
        samples_per_cell=tables.cell_samples(scored, benchmark.runs_per_cell),
        tost_equivalent=tables.equivalent_pairs(tost),
        coach_fields=tables.coach_field_rates(scored),
        by_model_level=tables.rates_by_level(scored),
        by_model_context=tables.rates_by_context(scored),
        fallacy_swing_by_framing=swings,
        fallacy_swing=tables.fallacy_swing(swings),
        density_by_outcome=tables.fallacy_density_by_outcome(scored),
        small_sample=tables.small_sample(rates, MIN_CI_CLAIMS),
        packs=packs,
        **detail,
    )
