"""Inspect's entry point (``[project.entry-points.inspect_ai]``): importing this module
registers the ``deflectbench/deflectbench`` task, its scorer, metrics and reducer."""

from deflectbench.inspect_eval.metrics import (
    clean_compliance,
    labeled_compliance,
    outcome_counts,
    refusal,
    soft_refusal,
)
from deflectbench.inspect_eval.scorer import rubric_judges
from deflectbench.inspect_eval.task import deflectbench

__all__ = [
    "clean_compliance",
    "deflectbench",
    "labeled_compliance",
    "outcome_counts",
    "refusal",
    "rubric_judges",
    "soft_refusal",
]
