"""The one set of choices every view of the results takes: which judges, how they combine,
which of their values, and how the confidence intervals are drawn.

``analyze``, the report and the CLI all take an :class:`AnalysisOptions`, so a new choice is
added in one place rather than threaded by hand through every caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deflectbench.vocab import Consensus, ConsensusError

#: The confidence level of every interval the analysis reports.
CI_LEVEL = 0.95

#: Which judge values the analysis combines: after the rubric's rules (the store's columns), or
#: what each judge said (``said_json``; the release's own analysis averaged these).
JUDGE_VALUES = ("rules", "said")


def check_values(values: str) -> str:
    if values not in JUDGE_VALUES:
        raise ConsensusError(f"unknown judge values {values!r}; valid: {', '.join(JUDGE_VALUES)}")
    return values


@dataclass(frozen=True)
class AnalysisOptions:
    """How to read a store: consensus rule, judges required, judge values, bootstrap draws."""

    consensus: str = "mean"
    #: Judges a generation needs to be scored (None: every judge in the store).
    judges: tuple[str, ...] | None = None
    values: str = "rules"
    n_resamples: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        Consensus.parse(self.consensus)
        check_values(self.values)
        if self.judges is not None:
            object.__setattr__(self, "judges", tuple(self.judges) or None)

    @property
    def rule(self) -> Consensus:
        return Consensus.parse(self.consensus)

    @classmethod
    def of(
        cls,
        *,
        consensus: str = "mean",
        judges: Sequence[str] | None = None,
        values: str = "rules",
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> AnalysisOptions:
        return cls(
            consensus=consensus,
            judges=tuple(judges) if judges else None,
            values=values,
            n_resamples=n_resamples,
            seed=seed,
        )
