"""Cascaded judging's estimates: the expensive judges' consensus from a cheap judge on every
answer and the expensive judges on a seeded sample (PPI++ in the claim bootstrap), and the
share of answers a target half-width needs."""

from deflectbench.analysis.cascade.estimate import GroupEstimate, cascade_rates
from deflectbench.analysis.cascade.size import share_for_halfwidth

__all__ = ["GroupEstimate", "cascade_rates", "share_for_halfwidth"]
