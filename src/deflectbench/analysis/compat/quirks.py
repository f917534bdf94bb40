"""The release's analysis script, reproduced quirk by quirk: the one place its departures from
the paper's definition are written.

The paper defines a scored generation and its outcome one way (:mod:`.frames.scored`, the default);
the script the authors released with their data computed the published tables slightly
differently. ``--compat release`` turns on all five differences below, so the tool computes
what the script computes, edge rows included; ``deflectbench audit`` turns them on one at a
time to show how far each moves the headline numbers. Each quirk is a flag of :class:`ReleaseQuirks` and its
whole logic is one method of that class; nothing else in the package knows about them.

(a) ``keep_one_judge``: the script drops judge records that did not parse and then keeps every
    generation with at least one parsed record, so a generation one judge failed on is decided
    by the other judge alone. The paper's definition needs every judge to have parsed it.
(b) ``overwrite_outcomes``: the script assigns the outcome by overwriting a label in the order
    other -> refusal -> clean -> labeled -> soft refusal, so the last true field wins: soft
    refusal, labeled and clean compliance all beat refusal. The paper's ladder puts refusal first
    (refusal > soft refusal > labeled > clean > other).
(c) ``average_missing``: the script averages a field over the parsed judges with the release's
    -1 ("missing") counted as the number -1, so a 1 beside a -1 averages to 0 and the consensus
    is 0. The paper's definition leaves a missing value out of that field's mean (and a field no
    judge scored is missing).
(d) ``keep_unjudged``: the script keeps a valid generation with no parsed judge record at all
    (every judge failed or did not parse it), with every field 0, so it counts as "other". The
    paper's definition leaves it unscored.
(e) ``agree_on_errors``: the script computes agreement (kappa) over every pair of parsed judge
    records, including those of failed requests (the release's ``ERROR:`` rows, which its
    judges were shown). The paper's agreement is over answers only.

Everything else is shared: failed requests are dropped from the rates, unparsed judge records
are dropped, the consensus is the mean ``>= 0.5`` over the judges, and agreement is computed on
each judge's own values (a -1 left out) in both modes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from deflectbench.analysis.consensus import Votes, consensus_fields
from deflectbench.vocab import FIELDS, OUTCOMES, Consensus, one_of, outcome_codes

__all__ = [
    "COMPAT_MODES",
    "QUIRKS",
    "RELEASE_OVERWRITE_ORDER",
    "Quirk",
    "ReleaseQuirks",
    "check_compat",
]

#: ``paper``: the paper's definition (the default); ``release``: the release script's numbers.
COMPAT_MODES = ("paper", "release")

#: Quirk (b): the release script's outcome assignment, in the order it writes the label (each
#: later true field overwrites the earlier label; a row with none of them stays "other").
RELEASE_OVERWRITE_ORDER: tuple[tuple[str, str], ...] = (
    ("refusal", "refusal"),
    ("compliance_clean", "clean_compliance"),
    ("fallacy_labeled", "labeled_compliance"),
    ("soft_refusal", "soft_refusal"),
)


@dataclass(frozen=True)
class Quirk:
    """One difference between the release script and the paper's definition, for the audit."""

    name: str
    label: str
    title: str
    #: Which published numbers it can move.
    affects: str


QUIRKS: tuple[Quirk, ...] = (
    Quirk(
        "keep_one_judge",
        "(a)",
        "keeps generations that only one judge parsed",
        "every rate and count: the generations one judge failed on are added, decided by the "
        "other judge alone",
    ),
    Quirk(
        "overwrite_outcomes",
        "(b)",
        "assigns outcomes by overwriting: other -> refusal -> clean -> labeled -> soft refusal",
        "the outcome shares (signature, outcome by framing, tokens and density by outcome); "
        "field rates are unchanged",
    ),
    Quirk(
        "average_missing",
        "(c)",
        "averages missing values (-1) as numbers",
        "field rates and outcomes of generations where a judge left a field at -1 (imported "
        "release records only: a judge reply that parses always gives 0 or 1)",
    ),
    Quirk(
        "keep_unjudged",
        "(d)",
        "keeps valid generations no judge parsed, every field 0 (outcome other)",
        "every rate and count: the generations no judge parsed are added as 'other'",
    ),
    Quirk(
        "agree_on_errors",
        "(e)",
        "counts judge records of failed requests (ERROR rows) in agreement",
        "inter-judge agreement (kappa, AC1) and its n; rates are unchanged",
    ),
)


def check_compat(compat: str) -> str:
    """The mode, or ConsensusError (the CLI's one-line error for a bad analysis option)."""
    return one_of(compat, COMPAT_MODES, "compat mode")


@dataclass(frozen=True)
class ReleaseQuirks:
    """Which of the release script's five quirks are on (all off: the paper's definition)."""

    keep_one_judge: bool = False
    overwrite_outcomes: bool = False
    average_missing: bool = False
    keep_unjudged: bool = False
    agree_on_errors: bool = False

    @classmethod
    def of(cls, compat: Literal["paper", "release"] | str) -> ReleaseQuirks:
        """``paper``: none; ``release``: all five."""
        on = check_compat(compat) == "release"
        return cls(on, on, on, on, on)

    @classmethod
    def only(cls, name: str) -> ReleaseQuirks:
        """One quirk on its own (``keep_one_judge``, ``overwrite_outcomes``, ``average_missing``)."""
        if name not in {q.name for q in QUIRKS}:
            raise ValueError(f"unknown quirk {name!r}")
        return cls(**{name: True})

    @property
    def any(self) -> bool:
        return any(getattr(self, q.name) for q in QUIRKS)

    # -- (a) which generations are scored -----------------------------------------------------

    def keep(self, consensus: pd.DataFrame, n_judges: int) -> pd.DataFrame:
        """The generations scored: with every one of the ``n_judges`` judges' parsed verdicts
        (the paper), or with at least one (quirk a)."""
        if not n_judges:
            return consensus.iloc[:0]
        if self.keep_one_judge:
            return consensus[consensus["n_judges"] >= 1]
        return consensus[consensus["n_judges"] == n_judges]

    # -- (d) valid generations no judge parsed --------------------------------------------

    def unjudged(self, consensus: pd.DataFrame, valid_ids: pd.Series) -> pd.DataFrame:
        """``consensus`` as it is (the paper), or with a row of 0s (``n_judges`` 0) for each
        valid generation that has none (quirk d: the script's "other")."""
        if not self.keep_unjudged:
            return consensus
        missing = pd.Index(valid_ids.unique()).difference(consensus.index)
        if not len(missing):
            return consensus
        zeros = pd.DataFrame(0.0, index=missing, columns=list(FIELDS))
        zeros["n_judges"] = 0
        out = pd.concat([consensus, zeros]) if len(consensus) else zeros
        return out.astype({"n_judges": int})

    # -- (c) how missing values enter the mean ------------------------------------------------

    def combine(self, verdicts: pd.DataFrame, rule: str | Consensus) -> pd.DataFrame:
        """Per generation, the consensus of its parsed verdicts: a missing value left out of
        the field's mean (the paper, :func:`.consensus.consensus_fields`), or counted as -1
        (quirk c: every field has a value, the mean over all the parsed judges)."""
        if not self.average_missing:
            return consensus_fields(verdicts, rule)
        if Consensus.parse(rule).kind != "mean":
            raise ValueError("the release's averaging of -1 is defined for the mean rule only")
        if verdicts.empty:
            return consensus_fields(verdicts, rule)
        votes = Votes.of(verdicts)
        scored = (votes.values == 0) | (votes.values == 1)
        values = np.where(scored, votes.values, -1.0)  # missing -> the number -1
        n = votes.judges().astype(np.float64)
        combined = np.empty((len(votes.gen_ids), len(FIELDS)))
        for j in range(len(FIELDS)):
            combined[:, j] = votes.total(values[:, j]) / n >= 0.5
        return votes.frame(combined)

    # -- (b) the outcome of a generation ------------------------------------------------------

    def outcomes(self, columns: Mapping[str, object]) -> np.ndarray:
        """The outcome name of each row: the paper's ladder, or the release's overwriting
        (quirk b: the last true field of :data:`RELEASE_OVERWRITE_ORDER` wins)."""
        if not self.overwrite_outcomes:
            return outcome_codes(columns)
        label = np.full(len(np.asarray(columns[FIELDS[0]])), OUTCOMES[-1], dtype=object)
        for field, name in RELEASE_OVERWRITE_ORDER:
            label[np.asarray(columns[field]) == 1] = name
        return label
