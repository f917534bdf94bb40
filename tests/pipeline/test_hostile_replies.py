"""Hostile provider replies (issue 22): usage out of range (negative, 10**30) is refused as the
cell's error row, never a negative or infinite cost, and never credited to the budget; the
model id a reply says served it is kept beside the reply."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from deflectbench.cost import Price
from deflectbench.execute import RunOptions, execute
from deflectbench.models.base import Completion, GenerationParams, Limits, Message, Model, Usage
from deflectbench.store import Store
from support.fakes import plan_for

NAME = "test/hostile"


class Replies(Model):
    """Answers every request with the same usage and served model id."""

    limits = Limits(max_concurrency=2)
    default_max_tokens = 64

    def __init__(self, usage: Usage, served: str | None = None) -> None:
        self.name = NAME
        self.usage = usage
        self.served = served

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        raw = {"model": self.served} if self.served else None
        return Completion("What about the others?", self.usage, "stop", 0.001, raw=raw)


def run(tmp_path, benchmark, model: Model, **options):
    plan = plan_for(benchmark, models=[NAME], judges=["lexical"])
    with Store.open(tmp_path / "r.db") as store:
        report = asyncio.run(
            execute(store, benchmark, plan, {NAME: model}, RunOptions(cache=False, **options))
        )
        return report, store.generation_rows(), store.spent_usd()


@pytest.mark.parametrize(
    "usage", [Usage(-3300, 10), Usage(10, -1), Usage(10**30, 10), Usage(10, 10**30)]
)
def test_usage_out_of_range_is_an_error_row(tmp_path, benchmark, usage):
    price = {NAME: Price(1000.0, 1000.0)}
    report, rows, spent = run(tmp_path, benchmark, Replies(usage), prices=price, max_cost=5.0)
    assert rows and all(r["response"] is None for r in rows)
    assert all("usage" in r["error"] for r in rows)
    assert all(r["input_tokens"] >= 0 and r["output_tokens"] >= 0 for r in rows)
    assert spent >= 0 and report.spent_usd >= 0
    assert not report.complete


def test_the_served_model_is_kept_beside_each_reply_and_a_mismatch_warned(tmp_path, benchmark):
    report, rows, _ = run(tmp_path, benchmark, Replies(Usage(5, 5), served="gpt-4o-evil"))
    assert rows and {r["served_model"] for r in rows} == {"gpt-4o-evil"}
    assert all(r["response"] for r in rows)
    assert f"warning: {len(rows)} replies say they were served by 'gpt-4o-evil'" in report.account()


def test_a_dated_snapshot_of_the_model_asked_for_is_no_mismatch(tmp_path, benchmark):
    report, rows, _ = run(tmp_path, benchmark, Replies(Usage(5, 5), served="hostile-2025-01-01"))
    assert {r["served_model"] for r in rows} == {"hostile-2025-01-01"}
    assert "warning" not in report.account()


def test_a_reply_naming_no_model_keeps_none(tmp_path, benchmark):
    _, rows, _ = run(tmp_path, benchmark, Replies(Usage(5, 5)))
    assert rows and {r["served_model"] for r in rows} == {None}
