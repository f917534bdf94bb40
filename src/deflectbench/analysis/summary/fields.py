"""The fields of a summary: every table and number of one analysis, typed, with no code.

:class:`SummaryFields` is what :mod:`.to_json` serialises and what the views read; the
:class:`~.build.Summary` that :func:`~.build.summarize` returns is this plus its JSON. Kept apart
so the serialiser and the builder each import it and never each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from deflectbench.analysis.options import MIN_CI_CLAIMS, AnalysisOptions
from deflectbench.analysis.summary.counts import Cost, StepCounts
from deflectbench.analysis.summary.packs import PackComparison
from deflectbench.analysis.summary.small_sample import small_sample_elsewhere
from deflectbench.analysis.summary.turns import TurnAnalysis
from deflectbench.analysis.summary.validity_checks import ValidityChecks
from deflectbench.analysis.tables.breakdowns import few_claims_note, small_sample_note
from deflectbench.analysis.tables.rates import FramingSwing
from deflectbench.benchmark import Benchmark

if TYPE_CHECKING:  # the types of sections only some stores or ``detail`` fill
    from deflectbench.analysis.calibration.corrected import Corrected
    from deflectbench.analysis.cascade.section import Cascaded
    from deflectbench.analysis.sequential.record import SequentialRecord
    from deflectbench.analysis.summary.examples import Example
    from deflectbench.analysis.summary.metadata import RunMetadata

__all__ = ["SummaryFields"]


@dataclass(frozen=True)
class SummaryFields:
    """Everything the paper reports for one store and one set of :class:`AnalysisOptions`.

    Rates are fractions in [0, 1]; tables are the DataFrames of :mod:`..tables` (documented
    there). ``counts`` is the scored table's step counts for the JSON (judges in the consensus);
    ``steps`` the same with every judge, for the report. ``examples`` and ``metadata`` are
    filled by ``summarize(..., detail=True)`` only.
    """

    benchmark: Benchmark
    options: AnalysisOptions
    #: One row per scored generation (:func:`.scored.scored_from_frames`).
    scored: pd.DataFrame
    #: Each judge's parsed verdict on each valid generation.
    verdicts: pd.DataFrame
    counts: Mapping[str, Any]
    models: tuple[str, ...]
    #: Judges in the consensus (a generation needs all of them to be scored).
    judges: tuple[str, ...]
    #: Judges with a parsed verdict in the store, whatever the consensus.
    judges_in_store: tuple[str, ...]
    #: Framings present in the scored table, in the paper's order.
    framings: tuple[str, ...]
    #: Per model: scored generations and distinct claims.
    model_n: Mapping[str, int]
    model_claims: Mapping[str, int]
    rates: pd.DataFrame
    by_framing: pd.DataFrame
    by_prompt: pd.DataFrame
    by_level: pd.DataFrame
    sample_refusal: pd.DataFrame
    output_tokens: pd.DataFrame
    fallacy_density: pd.DataFrame
    cohens_h: pd.DataFrame
    agreement_pairs: pd.DataFrame
    agreement: pd.DataFrame
    agreement_by_model: pd.DataFrame
    claim_spread: pd.DataFrame
    chi2: pd.DataFrame
    tost: pd.DataFrame
    templates: pd.DataFrame
    fallacy_by_framing: pd.DataFrame
    coach_labeling: pd.DataFrame
    free_choice: pd.DataFrame
    requested_match: pd.DataFrame
    claim_refusal: pd.DataFrame
    framing_h_refusal: Mapping[str, pd.DataFrame]
    # --- views the report shows beside the paper's tables (the JSON's "report" key)
    steps: StepCounts
    cost: Cost
    coach_outcomes: pd.DataFrame
    tokens_by_outcome: pd.DataFrame
    claims_by_level: pd.DataFrame
    prevalence: Mapping[str, float]
    #: Model x framing refusal and any-fallacy rates (the numbers of ``by_framing``).
    refusal_matrix: pd.DataFrame
    fallacy_matrix: pd.DataFrame
    largest_swing: FramingSwing | None
    #: Samples per cell shown in appendix F (fewer than planned when no cell has them all).
    samples_per_cell: int
    tost_equivalent: int
    # --- the paper's breakdowns (:mod:`.breakdowns`; appended to the JSON's appendix)
    #: Appendix E.3: coach framing, field rates per model and requested fallacy.
    coach_fields: pd.DataFrame
    #: Per model and controversy level / context: field rates and outcome shares.
    by_model_level: pd.DataFrame
    by_model_context: pd.DataFrame
    #: Per model and explicit framing, the refusal swing between requested fallacies; and per
    #: model its largest.
    fallacy_swing_by_framing: pd.DataFrame
    fallacy_swing: pd.DataFrame
    #: Appendix G: fallacies per 100 output tokens per model and outcome.
    density_by_outcome: pd.DataFrame
    #: Models whose CIs rest on fewer than :data:`.options.MIN_CI_CLAIMS` claims.
    small_sample: pd.DataFrame
    # --- detail: texts and records (``summarize(..., detail=True)``)
    examples: tuple[Example, ...] = ()
    metadata: RunMetadata | None = None
    notes: tuple[str, ...] = ()
    #: The other benchmark packs in the store beside this one (None: no other pack).
    packs: PackComparison | None = None
    #: Turn 2 of a multi-turn pack by turn-1 outcome (None: no later turn of this pack).
    turns: TurnAnalysis | None = None
    #: Rates corrected for judge error with the store's human labels of this pack (None: no
    #: labels, or ``options.correction == "none"``; :mod:`.calibration.corrected`).
    corrected: Corrected | None = None
    #: The tie rule, the control and the judges' self-consistency (:mod:`.validity_checks`).
    validity: ValidityChecks | None = None
    #: Answers made with other content of this pack id, analysed as asked
    #: (``options.allow_pack_change``): what changed, in one line (None: nothing changed).
    pack_change: str | None = None
    #: A pack judged in cascade: the expensive judges' consensus estimated over every answer
    #: (None: no cascade design; :mod:`..cascade.section`).
    cascade: Cascaded | None = None
    #: Answers gathered by ``run --until``: its looks, and the signature's intervals (``rates``)
    #: at their adjusted levels (None: no run of this pack looked; :mod:`..sequential`).
    sequential: SequentialRecord | None = None

    @property
    def empty(self) -> bool:
        """No scored generation (nothing to report but the counts)."""
        return self.scored.empty

    @property
    def n_attempted(self) -> int:
        """Generations of this pack in the store (the first step)."""
        return int(self.counts["attempted"])

    @property
    def n_valid(self) -> int:
        """Generations without a request error (or a non-answer)."""
        return int(self.counts["valid_generations"])

    @property
    def n_scored(self) -> int:
        """Valid generations every judge in the consensus parsed."""
        return int(self.counts["scored"])

    @property
    def small_sample_note(self) -> str | None:
        """The sentence under turn 1's CIs when a model's rest on few claims (None: none)."""
        return small_sample_note(self.small_sample, MIN_CI_CLAIMS)

    @property
    def small_sample_elsewhere(self) -> pd.DataFrame:
        """The other CIs printed (turn 2, the other packs) that rest on few claims."""
        return small_sample_elsewhere(self.turns, self.packs, self.benchmark.pack, MIN_CI_CLAIMS)

    @property
    def elsewhere_note(self) -> str | None:
        """The sentence for :attr:`small_sample_elsewhere` (None: none)."""
        return few_claims_note(self.small_sample_elsewhere, MIN_CI_CLAIMS)
