"""The budget is never overshot: each request's maximum cost is reserved before it is sent,
the meter counts from what the store already spent, and every priced request's cost is kept
on its record. Through ``run.execute`` and the OpenAI SDK, 8 requests in flight."""

from __future__ import annotations

import asyncio
import math

import pytest

from deflectbench.cost import BudgetReached, CostMeter, Price, check_max_cost, max_input_tokens
from deflectbench.errors import ConfigError
from deflectbench.execute import RunOptions, judge_all, store_meter
from deflectbench.pipeline import RunContext
from deflectbench.store import Store
from support.fakes import JUDGE, SUBJECT, build, plan_for, reply, run_once, sections
from support.servers import FakeLLMServer

#: A generation of ~40 + 8 (whitespace) tokens costs ~0.08 USD and reserves ~0.5 USD (its
#: prompt's bytes as tokens, plus 16 output tokens).
PRICES = {SUBJECT: Price(1000.0, 5000.0), JUDGE: Price(1000.0, 5000.0)}
CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15"]
TEMPLATES = [
    "explicit_direct_WA",
    "explicit_coach_AH",
    "implicit_neutral",
    "explicit_choose_any",
    "explicit_political_RH",
]


def options(budget: float | None, **kw) -> RunOptions:
    return RunOptions(max_cost=budget, prices=PRICES, **kw)


@pytest.fixture
def server():
    with FakeLLMServer(reply=reply, latency=0.1) as s:
        yield s


def test_eight_in_flight_never_overshoot_and_a_rerun_adds_nothing(
    tmp_path, benchmark, server
) -> None:
    db = tmp_path / "r.db"
    plan = plan_for(benchmark, claims=CLAIMS, templates=TEMPLATES, runs=4, max_tokens=16)
    configs = sections(server, max_concurrency=8)
    most = max(
        PRICES[SUBJECT].cost(max_input_tokens([benchmark.render(c, t)]), 16)
        for c, t, _ in plan.cells
    )
    budget = 9 * most  # room for 8 reservations at once, and not for all 80 cells
    report = run_once(db, benchmark, plan, configs, options(budget))
    gen = report.generation[SUBJECT]
    assert 10 <= gen.ok < len(plan.cells)  # it ran a good while, and stopped at the budget
    assert server.stats.max_active == 8  # with 8 requests in flight at a time
    assert gen.withheld > 0 and gen.errors == 0
    assert report.stop_reason == "budget" and report.stopped_early and not report.complete
    assert "stopped at the --max-cost budget" in report.account()
    with Store.open(db) as store:
        spent = store.spent_usd()
        costs = [r["cost_usd"] for r in store.generation_rows(columns=["cost_usd"])]
    assert spent <= budget
    assert all(c is not None and c > 0 for c in costs) and len(costs) == gen.ok
    assert math.isclose(sum(costs), spent) and math.isclose(report.spent_usd, spent)
    assert math.isclose(gen.cost_usd, spent)

    # The same budget again: the meter starts from what the store spent: nothing is sent.
    sent = len(server.requests)
    again = run_once(db, benchmark, plan, configs, options(budget))
    assert len(server.requests) == sent
    assert again.generation[SUBJECT].ok == 0 and again.stop_reason == "budget"
    with Store.open(db) as store:
        assert store.spent_usd() == spent

    # A larger budget continues; no budget finishes; neither ever spends what it may not.
    more = run_once(db, benchmark, plan, configs, options(budget + 2.0))
    assert more.generation[SUBJECT].ok > 0 and more.total_spent_usd <= budget + 2.0
    assert run_once(db, benchmark, plan, configs, options(None)).complete


def test_judging_keeps_to_its_budget_too(tmp_path, benchmark, server) -> None:
    db = tmp_path / "r.db"
    plan = plan_for(benchmark, claims=CLAIMS, templates=TEMPLATES, max_tokens=16)
    run_once(db, benchmark, plan, sections(server), options(None))  # generations, unpriced run
    configs = sections(server)
    judge = build([JUDGE], configs)[JUDGE]
    with Store.open(db) as store:
        before = store.spent_usd()
        budget = before + 8.0  # a judge request reserves ~4.5 USD (the rubric is long)

        async def go():
            try:
                meter = store_meter(store, RunOptions(max_cost=budget, prices=PRICES), [JUDGE])
                return await judge_all(
                    RunContext(store, benchmark, meter=meter), [JUDGE], {JUDGE: judge}
                )
            finally:
                await judge.aclose()

        res = asyncio.run(go())[JUDGE]
        assert 0 < res.ok < len(plan.cells) and res.withheld > 0
        assert store.spent_usd() <= budget
        costs = [r["cost_usd"] for r in store.judgment_rows() if r["judge"] == JUDGE]
        assert len(costs) == res.ok and all(c is not None and c > 0 for c in costs)


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, math.nan, math.inf, "5", True])
def test_a_budget_must_be_finite_and_above_zero(tmp_path, benchmark, server, bad) -> None:
    with pytest.raises(ConfigError, match="--max-cost must be a finite number") as info:
        run_once(tmp_path / "r.db", benchmark, plan_for(benchmark), sections(server), options(bad))
    assert "\n" not in str(info.value)
    assert server.requests == []
    assert check_max_cost(2) == 2.0 and check_max_cost(None) is None


def test_a_budget_with_an_unpriced_model_is_refused_before_any_request(
    tmp_path, benchmark, server
) -> None:
    db = tmp_path / "r.db"
    plan = plan_for(benchmark, judges=["lexical", JUDGE], max_tokens=16)
    unpriced = RunOptions(max_cost=50.0, prices={SUBJECT: PRICES[SUBJECT]})
    with pytest.raises(ConfigError, match=f"cannot bound {JUDGE}: no known price") as info:
        run_once(db, benchmark, plan, sections(server), unpriced)
    assert "\n" not in str(info.value)
    assert server.requests == []
    with Store.open(db) as store:
        assert store.runs() == []
    # Allowed on request: the priced model is counted, the unpriced judge is not.
    allowed = RunOptions(max_cost=50.0, prices={SUBJECT: PRICES[SUBJECT]}, allow_unpriced=True)
    report = run_once(db, benchmark, plan, sections(server), allowed)
    assert report.complete and report.spent_usd > 0
    with Store.open(db) as store:
        assert all(r["cost_usd"] is None for r in store.judgment_rows() if r["judge"] == JUDGE)
    # In-process models and the lexical judge are priced (at 0): no refusal for them.
    assert CostMeter(1.0).unpriced(["local/smollm2", "gguf/x.gguf", "lexical"]) == []


def test_reservations_settle_and_release() -> None:
    meter = CostMeter(1.0, {"x/y": Price(1e6, 1e6)}, spent_before=0.25)  # 1 USD a token
    hold = meter.reserve("x/y", 0, 0.5)
    with pytest.raises(BudgetReached) as info:
        meter.reserve("x/y", 0, 0.3)  # 0.25 spent + 0.5 reserved + 0.3 > 1
    assert info.value.others_in_flight
    assert meter.settle(hold, 0, 0.1) == pytest.approx(0.1)
    assert meter.total_usd == pytest.approx(0.35) and meter.reserved_usd == 0
    second = meter.reserve("x/y", 0, 0.6)
    meter.release(second)  # a failed request pays nothing
    assert meter.total_usd == pytest.approx(0.35) and meter.in_flight == 0
    with pytest.raises(BudgetReached) as info:
        meter.reserve("x/y", 0, 0.7)
    assert not info.value.others_in_flight  # nothing can free room: the item is not sent
