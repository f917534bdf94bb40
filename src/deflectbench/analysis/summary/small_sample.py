"""The small-sample flag beyond turn 1's rates: every other CI the tool prints (the turn-2
shares of a multi-turn pack, the other packs' refusal) rests on some number of claims, and a
reader is told when it is fewer than :data:`..options.MIN_CI_CLAIMS` (turn 1's rates have
their own flag, :func:`..tables.breakdowns.small_sample`)."""

from __future__ import annotations

import pandas as pd

from deflectbench.analysis.summary.packs import PackComparison
from deflectbench.analysis.summary.turns import TurnAnalysis
from deflectbench.analysis.tables.breakdowns import few_claims

__all__ = ["MULTI_TURN", "PACKS", "small_sample_elsewhere"]

#: The sections named in the flag.
MULTI_TURN = "multi-turn"
PACKS = "other packs"


def _rows(section: str, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s CIs as flag rows (its ``pack`` column when it has one, else "")."""
    if frame.empty or "n_claims" not in frame:
        return pd.DataFrame(columns=["section", "pack", "model", "n_claims"])
    rows = frame[frame["n_claims"].notna()]
    return pd.DataFrame(
        {
            "section": section,
            "pack": rows["pack"].astype(str) if "pack" in rows else "",
            "model": rows["model"].astype(str),
            "n_claims": rows["n_claims"].astype(int),
        }
    )


def small_sample_elsewhere(
    turns: TurnAnalysis | None, packs: PackComparison | None, analysed: str, min_claims: int
) -> pd.DataFrame:
    """Per section, pack and model, the fewest claims under a CI printed outside turn 1's
    rates, where fewer than ``min_claims``: columns section, pack, model, n_claims. The
    analysed pack's rows in the packs table are turn 1's rates (flagged there), so left out."""
    parts = []
    if turns is not None:
        parts += [_rows(MULTI_TURN, turns.transitions), _rows(MULTI_TURN, turns.stripped)]
    if packs is not None:
        others = packs.by_pack[packs.by_pack["pack"] != analysed]
        parts.append(_rows(PACKS, others))
    parts = [p for p in parts if len(p)]
    if not parts:
        return few_claims(pd.DataFrame(), min_claims)
    return few_claims(pd.concat(parts, ignore_index=True), min_claims)
