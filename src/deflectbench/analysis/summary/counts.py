"""What became of the generations at each step, and what the requests cost.

The scored table's ``attrs["counts"]`` holds the counts the JSON summary has always had (for
the judges in the consensus); :func:`step_counts` adds the view a reader of the report wants:
each step with its meaning, and every judge in the store, used or not. :func:`cost` adds up the
tokens the store recorded per model and judge and prices them where a price is known (never
counting an unknown price as free).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from deflectbench.analysis.frames.scored import answered
from deflectbench.cost import price_for

__all__ = [
    "Cost",
    "CostRow",
    "JudgeCount",
    "ModelCount",
    "Step",
    "StepCounts",
    "cost",
    "step_counts",
]


@dataclass(frozen=True)
class Step:
    """One step from attempted to scored: its name, what it counts, how many."""

    step: str
    meaning: str
    n: int


@dataclass(frozen=True)
class ModelCount:
    model: str
    attempted: int
    errors: int
    valid: int
    scored: int


@dataclass(frozen=True)
class JudgeCount:
    """One judge's judgments on the valid generations; ``used``: part of the consensus."""

    judge: str
    used: bool
    judged: int
    parsed: int
    parse_errors: int
    errors: int
    missing: int


@dataclass(frozen=True)
class StepCounts:
    """The counts at each step, overall, per model and per judge."""

    steps: tuple[Step, ...]
    by_model: tuple[ModelCount, ...]
    by_judge: tuple[JudgeCount, ...]

    def __getitem__(self, step: str) -> int:
        """The count of one step by name (``attempted``, ``valid``, ``scored``, ...)."""
        for s in self.steps:
            if s.step == step:
                return s.n
        raise KeyError(step)


@dataclass(frozen=True)
class CostRow:
    """Tokens one model or judge used, and their cost (None when no price is known)."""

    role: str
    name: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    price_known: bool


@dataclass(frozen=True)
class Cost:
    """Every model's and judge's tokens; the total of the known costs (None if none is known)
    and the names that used tokens at no known price."""

    rows: tuple[CostRow, ...]
    total_usd: float | None
    unpriced: tuple[str, ...]


def _judge_count(judge: str, used: bool, mine: pd.DataFrame, n_valid: int) -> JudgeCount:
    """One judge's judgments ``mine`` on the valid generations, counted by what became of them."""
    failed = mine["error"].notna()
    parse = ~failed & (mine["parse_error"].fillna(1).astype(int) != 0)
    return JudgeCount(
        judge=judge,
        used=used,
        judged=len(mine),
        parsed=int((~failed & ~parse).sum()),
        parse_errors=int(parse.sum()),
        errors=int(failed.sum()),
        missing=n_valid - len(mine),
    )


def step_counts(
    counts: Mapping[str, Any], attempted: pd.DataFrame, judg: pd.DataFrame
) -> StepCounts:
    """What became of the generations at each step, overall, per model and per judge.

    ``counts`` is the scored table's ``attrs["counts"]`` (:func:`.scored.scored_from_frames`),
    which counts the judges of the consensus; a judge in ``judg`` outside the consensus is
    counted here from its judgments on the valid generations of ``attempted``.
    """
    judges = list(counts["judges"])
    n_valid = int(counts["valid_generations"])
    by_model = tuple(
        ModelCount(
            model=m,
            attempted=c["attempted"],
            errors=c["attempted"] - c["valid_generations"] - c.get("non_answers", 0),
            valid=c["valid_generations"],
            scored=c["scored"],
        )
        for m, c in counts["by_model"].items()
    )
    by_judge = {
        j: JudgeCount(
            judge=j,
            used=True,
            judged=c["parsed"] + c["parse_errors"] + c["errors"],
            parsed=c["parsed"],
            parse_errors=c["parse_errors"],
            errors=c["errors"],
            missing=c["missing"],
        )
        for j, c in counts["by_judge"].items()
    }
    others = set(judg["judge"].dropna().unique().tolist()) - set(judges)
    if others:
        valid_ids = attempted.loc[answered(attempted), "gen_id"]
        on_valid = judg[judg["gen_id"].isin(valid_ids) & judg["judge"].isin(sorted(others))]
        for j, mine in on_valid.groupby("judge", sort=True):
            by_judge[str(j)] = _judge_count(str(j), False, mine, n_valid)
    steps = [
        ("attempted", "generations of this benchmark in the store", counts["attempted"]),
        ("errors", "requests that failed (no response)", counts["errors"]),
        *(
            [
                (
                    "non_answers",
                    "provider refusals, filters and empty replies (stored, never judged): "
                    + ", ".join(f"{n} {k}" for k, n in counts["non_answers"].items()),
                    sum(counts["non_answers"].values()),
                )
            ]
            if counts.get("non_answers")
            else []
        ),
        ("valid", "generations with a response", n_valid),
        (
            "parse_errors",
            "judge replies that did not parse (all judges)",
            sum(r.parse_errors for r in by_judge.values() if r.used),
        ),
        (
            "judge_errors",
            "judge requests that failed (all judges)",
            sum(r.errors for r in by_judge.values() if r.used),
        ),
        ("scored", "valid generations parsed by every judge used", counts["scored"]),
        (
            "unscored",
            "valid generations left out (a judge failed, did not parse, or is missing)",
            counts["unscored"],
        ),
        *(
            [
                (
                    "undecided",
                    "of those, outcome undecided: a ladder field no judge scored (left out and "
                    "counted, never other)",
                    counts["undecided_outcomes"],
                )
            ]
            if counts.get("undecided_outcomes")
            else []
        ),
    ]
    return StepCounts(
        steps=tuple(Step(s, m, int(n)) for s, m, n in steps),
        by_model=by_model,
        by_judge=tuple(by_judge[j] for j in sorted(by_judge)),
    )


def cost(attempted: pd.DataFrame, judg: pd.DataFrame) -> Cost:
    """Tokens the store recorded per model and judge, and their cost where a price is known.

    ``attempted`` and ``judg`` need ``input_tokens`` and ``output_tokens``; judgments count
    when they are on a generation of ``attempted``.
    """
    rows: list[CostRow] = []
    on_bench = judg[judg["gen_id"].isin(attempted["gen_id"])]
    for role, df, key in (("model", attempted, "model"), ("judge", on_bench, "judge")):
        if df.empty:
            continue
        sums = df.groupby(key, sort=True)[["input_tokens", "output_tokens"]].sum()
        for name, r in sums.iterrows():
            tin, tout = int(r["input_tokens"] or 0), int(r["output_tokens"] or 0)
            price = price_for(str(name))
            known = price is not None and (tin or tout)
            rows.append(
                CostRow(
                    role=role,
                    name=str(name),
                    input_tokens=tin,
                    output_tokens=tout,
                    cost_usd=price.cost(tin, tout) if known and price else None,
                    price_known=price is not None,
                )
            )
    known_costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    unpriced = [r.name for r in rows if r.cost_usd is None and (r.input_tokens or r.output_tokens)]
    return Cost(tuple(rows), sum(known_costs) if known_costs else None, tuple(unpriced))
