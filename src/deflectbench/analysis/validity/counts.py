"""The counts of human labels, typed: what was used and what was left out (unsure, another
pack's, tied fields), as validity and calibration count them.

The analyses keep their counts as the JSON writes them (a mapping, keys in the JSON's order);
:class:`LabelCounts` reads that mapping once, so a view reads attributes, never keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["LabelCounts"]


@dataclass(frozen=True)
class LabelCounts:
    """Labels stored, used and left out; the generations they cover; the annotators."""

    labels: int = 0
    used: int = 0
    unsure_left_out: int = 0
    other_packs_left_out: int = 0
    labeled_generations: int = 0
    ties: int = 0
    annotators: int = 0
    #: Calibration's: labelled generations that are scored, and the scored generations.
    labelled_scored: int = 0
    scored_generations: int = 0

    @classmethod
    def of(cls, counts: Mapping[str, Any] | None) -> LabelCounts:
        """From validity's or calibration's counts (a count they do not hold is 0)."""
        c = dict(counts or {})
        c.setdefault("labeled_generations", c.get("labelled_generations"))
        return cls(**{name: int(c.get(name) or 0) for name in cls.__dataclass_fields__})
