"""Cascaded judging's estimates: the expensive judges' consensus from a cheap judge on every
answer and the expensive judges on a seeded sample (PPI++ in the claim bootstrap), and the
share of answers a target half-width needs."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.analysis.cascade.estimate import GroupEstimate, cascade_rates
    from deflectbench.analysis.cascade.size import share_for_halfwidth

#: Where each name lives, loaded on first use: a store judged without a cascade needs none of the
#: estimators.
_HOMES = {
    **dict.fromkeys(("GroupEstimate", "cascade_rates"), "estimate"),
    "share_for_halfwidth": "size",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"deflectbench.analysis.cascade.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'deflectbench.analysis.cascade' has no attribute {name!r}")


__all__ = ["GroupEstimate", "cascade_rates", "share_for_halfwidth"]
