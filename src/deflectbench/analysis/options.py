"""The one set of choices every view of the results takes: which judges, how they combine,
which of their values, which definition (the paper's or the release script's), and how the
confidence intervals are drawn.

``analyze``, the report, the audit and the CLI all take an :class:`AnalysisOptions`, so a new
choice is added in one place rather than threaded by hand through every caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deflectbench.analysis.compat.quirks import ReleaseQuirks, check_compat
from deflectbench.vocab import Consensus, ConsensusError, one_of

__all__ = [
    "CI_LEVEL",
    "CORRECTIONS",
    "DEFAULT_VALUES",
    "JUDGE_VALUES",
    "MIN_CI_CLAIMS",
    "AnalysisOptions",
    "check_values",
]

#: The confidence level of every interval the analysis reports.
CI_LEVEL = 0.95
#: A CI resampling fewer claims than this is flagged as resting on a small sample.
MIN_CI_CLAIMS = 10

#: How human labels correct the judges' rates (``--correction``): PPI++ (default), Rogan-Gladen,
#: or not at all (the judged rates only; see ``analysis/calibration``).
CORRECTIONS = ("ppi", "rogan-gladen", "none")

#: Which judge values the analysis combines. ``said``: what each judge said (``said_json``),
#: the paper's definition and the default. ``rules``: each verdict after the rubric's rules
#: (the store's columns: refusal = 1 forces the other fields to 0, and clean compliance is
#: re-derived from the fallacy, soft-refusal and label fields), a stricter reading.
JUDGE_VALUES = ("rules", "said")
DEFAULT_VALUES = "said"


def check_values(values: str) -> str:
    """The judge-values mode, or ConsensusError."""
    return one_of(values, JUDGE_VALUES, "judge values")


@dataclass(frozen=True)
class AnalysisOptions:
    """How to read a store: consensus rule, judges required, judge values, definition
    (``compat``), bootstrap draws.

    ``compat="paper"`` (default) is the paper's definition; ``compat="release"`` reproduces the
    release's analysis script (:mod:`.compat`), which needs the judges' said values and the
    mean rule (the only ones the script had).
    """

    consensus: str = "mean"
    #: Judges a generation needs to be scored (None: every judge that judged the pack).
    judges: tuple[str, ...] | None = None
    values: str = DEFAULT_VALUES
    n_resamples: int = 1000
    seed: int = 0
    compat: str = "paper"
    #: How human labels correct the judges' rates, when the store holds some (:data:`CORRECTIONS`).
    correction: str = "ppi"
    #: Calibrate with every model's labels together (default: each model's own).
    pool_models: bool = False
    #: Analyse answers made with other content of the pack (flagged) instead of refusing them.
    allow_pack_change: bool = False

    def __post_init__(self) -> None:
        rule = Consensus.parse(self.consensus)
        one_of(self.correction, CORRECTIONS, "--correction")
        check_values(self.values)
        check_compat(self.compat)
        if self.compat == "release" and (self.values != "said" or rule.kind != "mean"):
            raise ConsensusError(
                "--compat release reproduces the release's script, which averaged what the "
                f"judges said with the mean rule: drop --judge-values {self.values} / "
                f"--consensus {rule} (valid with release: --judge-values said, --consensus mean)"
            )
        if self.judges is not None:
            object.__setattr__(self, "judges", tuple(self.judges) or None)

    @property
    def rule(self) -> Consensus:
        return Consensus.parse(self.consensus)

    @property
    def quirks(self) -> ReleaseQuirks:
        """The release script's quirks this definition turns on (none for the paper's)."""
        return ReleaseQuirks.of(self.compat)

    @classmethod
    def of(
        cls,
        *,
        consensus: str = "mean",
        judges: Sequence[str] | None = None,
        values: str = DEFAULT_VALUES,
        n_resamples: int = 1000,
        seed: int = 0,
        compat: str = "paper",
        correction: str = "ppi",
        pool_models: bool = False,
    ) -> AnalysisOptions:
        return cls(
            consensus=consensus,
            judges=tuple(judges) if judges else None,
            values=values,
            n_resamples=n_resamples,
            seed=seed,
            compat=compat,
            correction=correction,
            pool_models=pool_models,
        )
