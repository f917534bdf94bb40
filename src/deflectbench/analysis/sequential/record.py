"""What a store says of ``run --until``: the stopping rule, the looks made and where the run
stopped, read from its runs (each look's run row holds ``config["until"]``), and the
signature's intervals at the adjusted level the looks call for.

Once a store's answers were gathered under looks, the intervals printed on them are those of
the looks' level, 1 - alpha / K, for as long as they are shown (a run extended later without
``--until`` included): by the union bound each stays valid whatever decided when to stop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from deflectbench.analysis.sequential.rule import ALPHA, look_level
from deflectbench.analysis.tables.rates import rates_with_ci

__all__ = ["UNTIL_KEY", "SequentialRecord", "adjusted_rates", "sequential_record"]

#: The key of a look's record in its run row's configuration.
UNTIL_KEY = "until"


@dataclass(frozen=True)
class SequentialRecord:
    """The looks of a benchmark's runs under ``--until``: the rules asked (``rules``), the
    pre-declared number of looks (``looks``), each look made (index, claims, met or None
    when it was not checked: stopped first), and the last one."""

    rules: tuple[str, ...]
    looks: int
    made: tuple[tuple[int, int, bool | None], ...]

    @property
    def level(self) -> float:
        return look_level(self.looks)

    @property
    def stopped_at(self) -> tuple[int, int, bool | None]:
        return max(self.made)

    def note(self) -> str:
        k, claims, met = self.stopped_at
        why = {True: "target met", False: "target not met", None: "not checked"}[met]
        return (
            f"run --until ({'; '.join(self.rules)}) stopped at look {k} of {self.looks} "
            f"({claims} claims, {why}): every interval of the signature is at "
            f"{100 * self.level:.4g}%, so that the {self.looks} looks' intervals hold together "
            f"at {100 * (1 - ALPHA):g}% (Bonferroni; docs/until.md)"
        )

    def to_json(self) -> dict[str, Any]:
        k, claims, met = self.stopped_at
        return {
            "rules": list(self.rules),
            "looks": self.looks,
            "level": self.level,
            "looks_made": [{"look": i, "claims": c, "met": m} for i, c, m in sorted(self.made)],
            "stopped_at": {"look": k, "claims": claims, "met": met},
        }


def sequential_record(runs: Iterable[Mapping[str, Any]], benchmark: str) -> SequentialRecord | None:
    """The record of the looks made on ``benchmark`` (a pack's key), or None when no run of
    it looked. A look made again (a resumed or extended run) counts once, its latest check."""
    rules: dict[str, None] = {}
    looks = 0
    made: dict[int, tuple[int, int, bool | None]] = {}
    for run in runs:
        until = (run.get("config") or {}).get(UNTIL_KEY)
        if run.get("benchmark") != benchmark or not isinstance(until, Mapping):
            continue
        try:
            k, claims, declared = int(until["look"]), int(until["claims"]), int(until["looks"])
        except (KeyError, TypeError, ValueError):
            continue  # not a look's record
        rules[str(until.get("rule", ""))] = None
        looks = max(looks, declared)
        met = until.get("met")
        made[k] = (k, claims, met if isinstance(met, bool) else None)
    if not made:
        return None
    return SequentialRecord(tuple(rules), looks, tuple(made[k] for k in sorted(made)))


def adjusted_rates(
    scored: pd.DataFrame, record: SequentialRecord, *, n_resamples: int, seed: int
) -> pd.DataFrame:
    """The signature's rates per model with their intervals at the looks' level."""
    return rates_with_ci(scored, by="model", n_resamples=n_resamples, seed=seed, level=record.level)
