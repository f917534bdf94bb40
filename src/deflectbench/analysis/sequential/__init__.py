"""Runs that stop when a target precision is met, with intervals that stay valid after
stopping on the data (``run --until``; docs/until.md).

The design is group-sequential with a pre-declared number of looks K: the run's claims, in a
seeded order balanced over the controversy levels, are cut into K rounds; after each round
every scope cell's interval is the claim-block bootstrap percentile interval at level
1 - alpha / K (Bonferroni over the looks, Jennison and Turnbull 2000, ch. 2), and the run stops
at the first look where every cell's half-width reaches the target. By the union bound the K
intervals cover together with probability at least 1 - alpha, so the interval of any look,
chosen by any rule (this one, a tighter target later, a person), covers with at least 1 - alpha.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.analysis.sequential.looks import Look, LookCell, check_look
    from deflectbench.analysis.sequential.record import (
        SequentialRecord,
        adjusted_rates,
        sequential_record,
    )
    from deflectbench.analysis.sequential.rule import (
        ALPHA,
        DEFAULT_LOOKS,
        HEADLINE_OUTCOMES,
        UntilRule,
        claim_order,
        look_level,
        look_sizes,
        parse_until,
    )

#: Where each name lives, loaded on first use: analyze reads the looks' record (:mod:`.record`) of
#: every store, the rule and the looks only of one ``run --until`` gathered.
_HOMES = {
    **dict.fromkeys(("Look", "LookCell", "check_look"), "looks"),
    **dict.fromkeys(("SequentialRecord", "adjusted_rates", "sequential_record"), "record"),
    **dict.fromkeys(
        (
            "ALPHA",
            "DEFAULT_LOOKS",
            "HEADLINE_OUTCOMES",
            "UntilRule",
            "claim_order",
            "look_level",
            "look_sizes",
            "parse_until",
        ),
        "rule",
    ),
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"deflectbench.analysis.sequential.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'deflectbench.analysis.sequential' has no attribute {name!r}")


__all__ = [
    "ALPHA",
    "DEFAULT_LOOKS",
    "HEADLINE_OUTCOMES",
    "Look",
    "LookCell",
    "SequentialRecord",
    "UntilRule",
    "adjusted_rates",
    "check_look",
    "claim_order",
    "look_level",
    "look_sizes",
    "parse_until",
    "sequential_record",
]
