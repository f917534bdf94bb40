"""The judges' consensus per field, for every generation at once: the one place the analysis
combines verdicts (the scored table, the release's averaging quirk and validity all read it).

The rules themselves (``mean``, ``all``, ``judge:NAME``) are :class:`deflectbench.vocab.Consensus`
on the ground floor, beside the one-generation form the pipeline uses to choose a follow-up
(:func:`deflectbench.vocab.consensus_outcome`). Both count, per field, the judges who said 1
and those who scored it, and decide with :meth:`~deflectbench.vocab.Consensus.decide_fields`;
here the counts are taken for all generations in one pass (:class:`Votes`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from deflectbench.vocab import FIELDS, Consensus

__all__ = ["Votes", "consensus_fields"]


@dataclass(frozen=True)
class Votes:
    """Verdicts grouped by generation: what every consensus over judges counts."""

    #: The generations, sorted (the index of every consensus frame).
    gen_ids: pd.Index
    #: Each verdict's generation, as a position in ``gen_ids``.
    codes: np.ndarray
    #: Each verdict's 8 fields in ``FIELDS`` order (0/1 scored; -1 or NaN not scored).
    values: np.ndarray

    @classmethod
    def of(cls, verdicts: pd.DataFrame) -> Votes:
        """From one row per (gen_id, judge) with the 8 field columns."""
        codes, uniq = pd.factorize(verdicts["gen_id"], sort=True)
        values = verdicts[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
        return cls(pd.Index(uniq, name="gen_id"), codes, values)

    def total(self, weights: np.ndarray) -> np.ndarray:
        """Per generation, the sum of ``weights`` (one per verdict)."""
        return np.bincount(self.codes, weights=weights, minlength=len(self.gen_ids))

    def judges(self) -> np.ndarray:
        """Per generation, how many verdicts it has."""
        return np.bincount(self.codes, minlength=len(self.gen_ids))

    def frame(self, combined: np.ndarray) -> pd.DataFrame:
        """One row per generation: the combined fields and ``n_judges``."""
        out = pd.DataFrame(combined, index=self.gen_ids, columns=list(FIELDS))
        out["n_judges"] = self.judges()
        return out


def consensus_fields(verdicts: pd.DataFrame, rule: str | Consensus = "mean") -> pd.DataFrame:
    """Per generation, the rule over its judges' parsed verdicts.

    ``verdicts`` holds one row per (gen_id, judge) with the 8 fields as 0/1 (-1 or missing
    means the judge did not score that field). Returns one row per gen_id (index), the 8
    combined fields (NaN where no judge scored the field) and ``n_judges`` (verdicts combined).
    For ``judge:NAME`` pass that judge's verdicts only; any one-judge input is its own verdict.
    """
    consensus = Consensus.parse(rule)
    if verdicts.empty:
        out = pd.DataFrame(columns=[*FIELDS, "n_judges"], index=pd.Index([], name="gen_id"))
        return out.astype(float).astype({"n_judges": int})
    votes = Votes.of(verdicts)
    scored = (votes.values == 0) | (votes.values == 1)
    combined = np.empty((len(votes.gen_ids), len(FIELDS)))
    for j in range(len(FIELDS)):
        ones, seen = votes.total(votes.values[:, j] == 1), votes.total(scored[:, j])
        combined[:, j] = consensus.decide_fields(ones, seen)
    return votes.frame(combined)
