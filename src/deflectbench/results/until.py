"""What ``run --until`` did: the stopping rule, each look made (the claims run so far, each
model's widest interval, whether its cells met the target) and why it ended: every model met
the target, the design was exhausted, or the run stopped first (Ctrl-C, the budget)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.analysis.sequential import Look, UntilRule

__all__ = ["UntilOutcome"]


@dataclass(frozen=True)
class UntilOutcome:
    """The rule, the design's looks (claims run by each, cumulated), the looks made in this
    invocation and each model's stopping look (None: still open)."""

    rule: UntilRule
    sizes: tuple[int, ...]
    looks: tuple[Look, ...]
    stopped: dict[str, int | None]

    @property
    def met(self) -> bool:
        """Every model met the target."""
        return bool(self.stopped) and all(k is not None for k in self.stopped.values())

    @property
    def reason(self) -> str:
        if self.met:
            return "target met"
        if self.looks and self.looks[-1].index == len(self.sizes):
            return "design exhausted"
        return "stopped before the target"

    def line(self) -> str:
        """``--until halfwidth<=0.03 per model in 8 looks: target met at look 3 of 8 (30 of
        80 claims); widest 0.028 (m1 refusal)``."""
        text = f"--until {self.rule}: {self.reason}"
        if self.looks:
            last = self.looks[-1]
            text += f" at look {last.index} of {len(self.sizes)} ({last.claims} of "
            text += f"{self.sizes[-1]} claims)"
            w = last.widest
            if w is not None and math.isfinite(w.halfwidth):
                text += f"; widest half-width {w.halfwidth:.4f} ({' '.join(w.key)} {w.measure})"
        levels = sorted(set(self.rule.levels))
        text += "; intervals at " + " / ".join(f"{100 * v:.4g}%" for v in levels)
        return text + " (docs/until.md)"

    def to_json(self) -> dict[str, Any]:
        return {
            **self.rule.to_json(),
            "sizes": list(self.sizes),
            "looks_made": [look.to_json() for look in self.looks],
            "stopped": dict(self.stopped),
            "met": self.met,
            "reason": self.reason,
        }
