"""Prices, cost estimates before a run (the dry run) and the budget a run may not exceed.

Prices are data (``models/prices.json``), overridable per run configuration. A model without a
known price is never silently counted as free: estimates say "unknown" for it, and a budgeted
run refuses it unless told to allow it. Models run in this process (``local/``, ``gguf/``)
and the rule-based ``lexical`` judge are priced at 0 in the bundled table.

The budget is kept by reservation: before a request is sent its maximum cost (an upper bound
of its input plus ``max_tokens`` at the output price) is set aside, and the real cost replaces
it when the reply comes (a failed request releases it). A request whose reservation does not
fit is not sent, so however many requests are in flight the budget is never overshot. The
meter starts from what the store has already spent, so re-running with the same budget
spends nothing more once it is used.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from deflectbench import gate
from deflectbench.errors import ConfigError

if TYPE_CHECKING:  # asyncio costs every command that reads prices (analyze, compare) 15 ms
    import asyncio


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    #: The share taken off a request sent in a provider batch (OpenAI Batch API, Anthropic
    #: Message Batches: 0.5); 0 where the table states none.
    batch_discount: float = 0.0

    def cost(self, input_tokens: int | float, output_tokens: int | float) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6

    def in_batch(self) -> Price:
        """What a request costs when it goes in a provider batch (batch mode)."""
        keep = 1.0 - self.batch_discount
        return Price(self.input_per_mtok * keep, self.output_per_mtok * keep)


#: What the providers with a batch API take off a batched request (their published rate).
BATCH_DISCOUNTS = {"openai": 0.5, "anthropic": 0.5}


def default_batch_discount(name: str) -> float:
    """A price entry's batch discount when it states none: its provider's, else 0."""
    return BATCH_DISCOUNTS.get(name.split("/", 1)[0], 0.0)


@cache
def bundled_prices() -> dict[str, Price]:
    raw = json.loads(resources.files("deflectbench.models").joinpath("prices.json").read_text())
    return {k: Price(**v) for k, v in raw.items() if not k.startswith("_")}


@cache
def prices_as_of() -> str:
    """The month the bundled price table was taken from the providers' pages (``_as_of``)."""
    raw = json.loads(resources.files("deflectbench.models").joinpath("prices.json").read_text())
    return str(raw.get("_as_of", "unknown"))


def price_for(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """Exact name first (overrides, then bundled), then the longest matching wildcard."""
    tables = [dict(overrides or {}), bundled_prices()]
    for table in tables:
        if model in table:
            return table[model]
    for table in tables:
        matches = [k for k in table if "*" in k and fnmatch.fnmatchcase(model, k)]
        if matches:
            return table[max(matches, key=len)]
    return None


def check_max_cost(value: object) -> float | None:
    """A budget is a finite number of USD above 0 (None: no budget)."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(
            f"--max-cost must be a finite number of USD above 0, got {value!r} "
            "(leave it out for no budget)"
        )
    return float(value)


#: Rough characters per token for English text, for estimates before any request.
CHARS_PER_TOKEN = 4.0
#: Tokens a chat template adds around each message, at most (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 16


def estimate_tokens(text: str) -> int:
    return max(1, round(len(text) / CHARS_PER_TOKEN))


def max_input_tokens(texts: list[str]) -> int:
    """An upper bound of the input tokens of a request made of these messages: no tokenizer in
    use makes a token of less than one byte."""
    return sum(len(t.encode()) + MESSAGE_OVERHEAD_TOKENS for t in texts) + MESSAGE_OVERHEAD_TOKENS


@dataclass(frozen=True)
class Reservation:
    """Money set aside for one request in flight."""

    model: str
    amount_usd: float


class BudgetReached(Exception):
    """This request's reservation does not fit in what is left of the budget."""

    def __init__(self, message: str, *, others_in_flight: bool) -> None:
        super().__init__(message)
        #: Requests in flight still hold reservations: once they settle, it may fit.
        self.others_in_flight = others_in_flight


class CostMeter:
    """What requests cost, and a budget they may not exceed (``budget_usd`` None: no budget).

    ``spent_before`` is what the store had spent before this invocation (the meter counts
    from it); ``spent_usd`` is what this invocation spent. ``batch``: requests go in provider
    batches, priced at the table's batch price (:meth:`Price.in_batch`).
    """

    def __init__(
        self,
        budget_usd: float | None,
        overrides: Mapping[str, Price] | None = None,
        *,
        spent_before: float = 0.0,
        batch: bool = False,
    ) -> None:
        self.budget_usd = check_max_cost(budget_usd)
        self.overrides = dict(overrides or {})
        self.batch = batch
        #: Each name's price, looked up once (the tables do not change during a meter's life).
        self._prices: dict[str, Price | None] = {}
        self.spent_before = spent_before
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.in_flight = 0
        self.unpriced_tokens = 0
        self._released: asyncio.Event | None = None

    def price(self, model: str) -> Price | None:
        if model not in self._prices:
            price = price_for(model, self.overrides)
            self._prices[model] = price.in_batch() if self.batch and price else price
        return self._prices[model]

    def for_batches(self, spent_before: float) -> CostMeter:
        """A meter of the same budget and prices for requests sent in provider batches,
        counting from ``spent_before`` (what the store spent, and what open batches hold)."""
        meter = CostMeter(self.budget_usd, self.overrides, spent_before=spent_before, batch=True)
        if self.batch:
            meter._prices = self._prices  # the same prices: share what was looked up
        return meter

    def unpriced(self, names: list[str] | tuple[str, ...]) -> list[str]:
        """The names among ``names`` with no known price."""
        return [n for n in dict.fromkeys(names) if self.price(n) is None]

    @property
    def total_usd(self) -> float:
        """Spent across every run on this store, this one included."""
        return self.spent_before + self.spent_usd

    @property
    def exceeded(self) -> bool:
        return self.budget_usd is not None and self.total_usd >= self.budget_usd

    def reserve(self, model: str, input_tokens_max: int, output_tokens_max: int) -> Reservation:
        """Set aside the most this request can cost, or raise :class:`BudgetReached` (the
        request is withheld). The one budget step of every request, sent alone or in a batch.

        An unpriced model reserves nothing (a budgeted run admits one only when told to)."""
        price = self.price(model)
        amount = 0.0 if price is None else price.cost(input_tokens_max, output_tokens_max)
        budget = self.budget_usd
        if budget is not None and self.total_usd + self.reserved_usd + amount > budget:
            left = budget - self.total_usd - self.reserved_usd
            raise BudgetReached(
                f"{model}: a request may cost up to {amount:.4f} USD; {max(left, 0):.4f} USD "
                f"of the {budget:g} USD budget is left",
                others_in_flight=self.in_flight > 0,
            )
        self.reserved_usd += amount
        self.in_flight += 1
        return Reservation(model, amount)

    def release(self, reservation: Reservation) -> None:
        """The request failed or was answered from the cache: nothing was paid."""
        self.reserved_usd = max(0.0, self.reserved_usd - reservation.amount_usd)
        self.in_flight -= 1
        if self._released is not None:
            self._released.set()
            self._released = None

    async def released(self) -> None:
        """Return once a reservation in flight is released or settled (room may be left)."""
        import asyncio  # here: a run has it already; analyze and compare never wait

        if self._released is None:
            self._released = asyncio.Event()
        await self._released.wait()

    def settle(
        self, reservation: Reservation, input_tokens: int, output_tokens: int
    ) -> float | None:
        """Replace the reservation by the real cost; return it (None: no known price)."""
        self.release(reservation)
        return self.add(reservation.model, input_tokens, output_tokens)

    def add(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Count a request's cost (None when its model has no known price)."""
        input_tokens, output_tokens = billable(input_tokens), billable(output_tokens)
        price = self.price(model)
        if price is None:
            self.unpriced_tokens += input_tokens + output_tokens
            return None
        cost = price.cost(input_tokens, output_tokens)
        self.spent_usd += cost
        return cost


def billable(tokens: int) -> int:
    """Usage as the budget counts it: never below 0 (a reply claiming negative usage is no
    credit; the gate makes it an error row) nor above the gate's ceiling (no overflow)."""
    return min(max(tokens, 0), gate.MAX_TOKENS)


def refuse_unpriced(meter: CostMeter, names: Sequence[str], allow_unpriced: bool) -> None:
    """A budget cannot bound what it cannot price: refuse before any request (ConfigError)."""
    if meter.budget_usd is None or allow_unpriced:
        return
    unpriced = meter.unpriced(list(names))
    if unpriced:
        raise ConfigError(
            f"--max-cost cannot bound {', '.join(unpriced)}: no known price; add "
            f'[prices."{unpriced[0]}"] to the run configuration, or allow unpriced models '
            "(--allow-unpriced; their cost is then not counted)"
        )
