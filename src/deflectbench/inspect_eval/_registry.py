"""Inspect's entry point (``[project.entry-points.inspect_ai]``): importing this module
registers the ``deflectbench/deflectbench`` task, its scorers (the judges' and the human
labels'), metrics (the corrected rates among them) and reducer."""

from deflectbench.inspect_eval.corrected import corrected
from deflectbench.inspect_eval.human import human_labels
from deflectbench.inspect_eval.metrics import (
    claim_ci,
    clean_compliance,
    field_rates,
    judge_agreement,
    labeled_compliance,
    other,
    outcome_counts,
    refusal,
    soft_refusal,
)
from deflectbench.inspect_eval.scorer import rubric_judges
from deflectbench.inspect_eval.task import deflectbench

__all__ = [
    "claim_ci",
    "clean_compliance",
    "corrected",
    "deflectbench",
    "field_rates",
    "human_labels",
    "judge_agreement",
    "labeled_compliance",
    "other",
    "outcome_counts",
    "refusal",
    "rubric_judges",
    "soft_refusal",
]
