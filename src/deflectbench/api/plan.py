"""``deflectbench.plan``: the cheapest design reaching a target precision, priced, beside the
paper's (``deflectbench plan`` is this function and a view; docs/plan.md).

    import deflectbench as db

    p = db.plan("refusal +-3pp per model", pilot="pilot.db")
    p.best, p.paper     # the designs: claims, templates, samples, judged share, price
    p.to_json()         # `plan --json`; p.exit_code is 1 when no design reaches the target
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from deflectbench.api._common import (
    DbPath,
    OnBusy,
    open_store,
    pick_benchmark,
    split,
    stored_benchmark,
)

if TYPE_CHECKING:
    from deflectbench.cost import Price
    from deflectbench.results.plan import PlanResult

__all__ = ["plan"]


def plan(
    target: str,
    *,
    pilot: DbPath | None = None,
    benchmark: str | None = None,
    models: Sequence[str] | str | None = None,
    judges: Sequence[str] | str | None = None,
    prices: Mapping[str, Price] | None = None,
    quantile: float = 1.0,
    rho: float | None = None,
    on_busy: OnBusy | None = None,
) -> PlanResult:
    """The cheapest design (claims, templates, samples per cell, the share of answers the
    expensive ``judges`` see while the cheap ``lexical`` judge sees all) whose 95% intervals
    reach ``target`` (``"MEASURE +-Hpp per SCOPE"``) in every cell (or the ``quantile`` of
    the cells), and its price per provider, beside the paper's full design. The variance
    components come from the ``pilot`` store (per cell, method of moments), else from the
    paper's published spreads; ``models`` (default: the pilot's, else the paper's) are priced
    with the bundled table and ``prices`` over it; ``rho`` sets the cheap judge's correlation
    with the consensus (default: measured on the pilot, else 0.5). ConfigError for a target
    the grammar refuses, or a pilot with nothing to measure."""
    from deflectbench.analysis.plan import make_plan, parse_target
    from deflectbench.analysis.plan.planner import Tokens
    from deflectbench.cost import prices_as_of
    from deflectbench.judging.judges import DEFAULT_JUDGES_WITH_KEYS
    from deflectbench.pipeline import JUDGE_OUTPUT_TOKENS, TYPICAL_OUTPUT_TOKENS
    from deflectbench.results.plan import PlanResult

    goal = parse_target(target)
    names = split(models) or None
    expensive = split(judges) or list(DEFAULT_JUDGES_WITH_KEYS)
    table = dict(prices or {})
    tokens = Tokens(TYPICAL_OUTPUT_TOKENS, JUDGE_OUTPUT_TOKENS)
    if pilot is None:
        made = make_plan(
            goal,
            pick_benchmark(benchmark),
            pilot=None,
            models=names,
            judges=expensive,
            prices=table,
            quantile=quantile,
            rho=rho,
            tokens=tokens,
        )
    else:
        from pathlib import Path

        from deflectbench.errors import ConfigError

        if not Path(pilot).is_file():
            raise ConfigError(
                f"no pilot results at --pilot {pilot}: run a pilot (deflectbench run) first, "
                "or leave --pilot out to plan from the paper's spreads"
            )
        with open_store(pilot, must_exist=True, on_busy=on_busy) as store:
            made = make_plan(
                goal,
                stored_benchmark(store, benchmark),
                pilot=store,
                models=names,
                judges=expensive,
                prices=table,
                quantile=quantile,
                rho=rho,
                pilot_name=str(pilot),
                tokens=tokens,
            )
    return PlanResult(made, prices_as_of())
