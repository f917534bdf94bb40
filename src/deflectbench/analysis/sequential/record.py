"""What a store says of ``run --until``: the stopping rule, the looks made and where the run
stopped, read from its runs (each look's run row holds ``config["extra"]["until"]``), and the
signature's intervals at the adjusted levels the looks call for.

Once a store's answers were gathered under looks, the intervals printed on them are at a
look's level for as long as they are shown: a model's answers on a look's claims at that
look's level, answers on other claim counts (a run extended later without ``--until``) at the
strictest look's. By the union bound each stays valid whatever decided when to stop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from deflectbench.analysis.tables.rates import rates_with_ci

__all__ = ["UNTIL_KEY", "SequentialRecord", "adjusted_rates", "sequential_record"]

#: The key of a look's record in its run row's configuration.
UNTIL_KEY = "until"


@dataclass(frozen=True)
class SequentialRecord:
    """The looks of a benchmark's runs under ``--until``: the rules asked (``rules``), the
    declared looks (claims run by each, cumulated: ``sizes``) and each look's level
    (``levels``), and each look made (index, claims, met: every open model met the target;
    None: not checked, the round stopped first)."""

    rules: tuple[str, ...]
    sizes: tuple[int, ...]
    levels: tuple[float, ...]
    made: tuple[tuple[int, int, bool | None], ...]

    @property
    def looks(self) -> int:
        return len(self.levels)

    @property
    def stopped_at(self) -> tuple[int, int, bool | None]:
        return max(self.made)

    def level_for(self, claims: int) -> float:
        """The level of the intervals of a model's answers on ``claims`` claims: its look's
        when they are a declared look's claims, else (extended past its look, or short of
        one) the strictest of the looks'."""
        if claims in self.sizes:
            return self.levels[self.sizes.index(claims)]
        return max(self.levels)

    def note(self) -> str:
        from deflectbench.analysis.sequential.rule import ALPHA  # the rule: only for a record

        k, claims, met = self.stopped_at
        why = {True: "target met", False: "target not met", None: "not checked"}[met]
        levels = " / ".join(f"{100 * v:.4g}%" for v in sorted(set(self.levels), reverse=True))
        return (
            f"run --until ({'; '.join(self.rules)}) looked {len(self.made)} times, the last at "
            f"look {k} of {self.looks} ({claims} claims, {why}): the signature's intervals are "
            f"at {levels} (each model's look), not 95%, so that the {self.looks} looks' "
            f"intervals hold together at {100 * (1 - ALPHA):g}% (Bonferroni; docs/until.md)"
        )

    def to_json(self) -> dict[str, Any]:
        k, claims, met = self.stopped_at
        return {
            "rules": list(self.rules),
            "looks": self.looks,
            "sizes": list(self.sizes),
            "levels": list(self.levels),
            "looks_made": [{"look": i, "claims": c, "met": m} for i, c, m in sorted(self.made)],
            "stopped_at": {"look": k, "claims": claims, "met": met},
        }


def sequential_record(runs: Iterable[Mapping[str, Any]], benchmark: str) -> SequentialRecord | None:
    """The record of the looks made on ``benchmark`` (a pack's key), or None when no run of
    it looked. A look made again (a resumed or extended run) counts once, its latest check."""
    rules: dict[str, None] = {}
    sizes: tuple[int, ...] = ()
    levels: tuple[float, ...] = ()
    made: dict[int, tuple[int, int, bool | None]] = {}
    for run in runs:
        until = ((run.get("config") or {}).get("extra") or {}).get(UNTIL_KEY)
        if run.get("benchmark") != benchmark or not isinstance(until, Mapping):
            continue
        try:
            k, claims = int(until["look"]), int(until["claims"])
            sizes = tuple(int(x) for x in until["sizes"])
            levels = tuple(float(x) for x in until["levels"])
        except (KeyError, TypeError, ValueError):
            continue  # not a look's record
        rules[str(until.get("rule", ""))] = None
        met = until.get("met")
        made[k] = (k, claims, met if isinstance(met, bool) else None)
    if not made or not levels:
        return None
    return SequentialRecord(tuple(rules), sizes, levels, tuple(made[k] for k in sorted(made)))


def adjusted_rates(
    scored: pd.DataFrame, record: SequentialRecord, *, n_resamples: int, seed: int
) -> pd.DataFrame:
    """The signature's rates per model with their intervals at each model's level (its
    look's, from the claims its answers cover)."""
    if scored.empty:
        return rates_with_ci(scored, by="model", n_resamples=n_resamples, seed=seed)
    parts = [
        rates_with_ci(
            sub,
            by="model",
            n_resamples=n_resamples,
            seed=seed,
            level=record.level_for(int(sub["claim_id"].nunique())),
        )
        for _, sub in scored.groupby("model", sort=True)
    ]
    return pd.concat(parts, ignore_index=True)
