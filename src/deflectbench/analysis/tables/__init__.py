"""The paper's tables as pure functions: a scored (or verdict) DataFrame in, a DataFrame out.

Inputs are the frames of :mod:`deflectbench.analysis.frames.scored`: the *scored* table (one row per
scored generation: model, claim_id, prompt_id, sample, level, framing, fallacy_requested,
output_tokens, the 8 consensus fields, outcome) and, for agreement, the *verdict* table (one row
per generation and judge). The statistics themselves live in :mod:`.stats`; the tables only
choose the rows and groups, so each can be checked against a hand count. They live in one
module per part of the paper (:mod:`.rates`, :mod:`.agreement`, :mod:`.significance`,
:mod:`.appendix`, :mod:`.breakdowns`; :mod:`.grouping` holds what they share) and are gathered
here, so ``tables.rates_with_ci`` and friends are one import (a notebook's, the summary's and
the analysis package's); the modules of this package import the module that defines a name.

Conventions: rates are fractions in [0, 1]; a field's rate is the mean of its consensus values
(NaN, a field no judge scored, is left out); an outcome's rate is its share of the group's
generations. Wide tables name fields by the release's names (``refusal``, ``WA_present``, ...)
and outcome shares with an ``outcome_`` prefix (``outcome_refusal``), since ``refusal`` and
``soft_refusal`` are both a field and an outcome (equal for refusal, not for soft refusal: the
soft-refusal outcome excludes refusals). Grouping columns come first, as plain columns; framings
are ordered as in the paper (direct ... implicit_political).
"""

from __future__ import annotations

from deflectbench.analysis.tables.agreement import (
    agreement_by_field,
    agreement_table,
    agreement_tables,
    prevalence,
)
from deflectbench.analysis.tables.appendix import (
    FALLACY_FIELD,
    FREE_CHOICE_FRAMINGS,
    cell_samples,
    fallacy_density_by_model,
    free_choice_preferences,
    output_tokens_by_outcome,
    requested_match,
    run_refusal_counts,
    sample_refusal_counts,
    tokens_by_outcome,
)
from deflectbench.analysis.tables.breakdowns import (
    COACH_FIELDS,
    coach_field_rates,
    fallacy_density_by_outcome,
    fallacy_swing,
    fallacy_swing_by_framing,
    rates_by_context,
    rates_by_level,
    small_sample,
)
from deflectbench.analysis.tables.grouping import OUTCOME_COLUMNS
from deflectbench.analysis.tables.rates import (
    DEFAULT_COMPARISONS,
    H_MEASURES,
    FramingSwing,
    coach_labeling,
    coach_outcomes,
    cohens_h_table,
    fallacy_by_framing,
    framing_h_matrix,
    framing_matrix,
    framing_outcomes,
    largest_swing,
    present_framings,
    rates_by,
    rates_with_ci,
    template_table,
)
from deflectbench.analysis.tables.significance import (
    chi2_model_outcome,
    claim_rates,
    claim_spread_table,
    claims_by_level,
    equivalent_pairs,
    level_tost,
    outcome_counts,
)

__all__ = [
    "COACH_FIELDS",
    "DEFAULT_COMPARISONS",
    "FALLACY_FIELD",
    "FREE_CHOICE_FRAMINGS",
    "H_MEASURES",
    "OUTCOME_COLUMNS",
    "FramingSwing",
    "agreement_by_field",
    "agreement_table",
    "agreement_tables",
    "cell_samples",
    "chi2_model_outcome",
    "claim_rates",
    "claim_spread_table",
    "claims_by_level",
    "coach_field_rates",
    "coach_labeling",
    "coach_outcomes",
    "cohens_h_table",
    "equivalent_pairs",
    "fallacy_by_framing",
    "fallacy_density_by_model",
    "fallacy_density_by_outcome",
    "fallacy_swing",
    "fallacy_swing_by_framing",
    "framing_h_matrix",
    "framing_matrix",
    "framing_outcomes",
    "free_choice_preferences",
    "largest_swing",
    "level_tost",
    "outcome_counts",
    "output_tokens_by_outcome",
    "present_framings",
    "prevalence",
    "rates_by",
    "rates_by_context",
    "rates_by_level",
    "rates_with_ci",
    "requested_match",
    "run_refusal_counts",
    "sample_refusal_counts",
    "small_sample",
    "template_table",
    "tokens_by_outcome",
]
