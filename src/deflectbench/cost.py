"""Prices, cost estimates before a run (the dry run) and a meter that stops a run at a budget.

Prices are data (``models/prices.json``), overridable per run configuration. A model without a
known price is never silently counted as free: estimates say "unknown" for it.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int | float, output_tokens: int | float) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


@cache
def bundled_prices() -> dict[str, Price]:
    raw = json.loads(resources.files("deflectbench.models").joinpath("prices.json").read_text())
    return {k: Price(**v) for k, v in raw.items() if not k.startswith("_")}


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


#: Rough characters per token for English text, for estimates before any request.
CHARS_PER_TOKEN = 4.0


def estimate_tokens(text: str) -> int:
    return max(1, round(len(text) / CHARS_PER_TOKEN))


class CostMeter:
    """Adds up the cost of the requests of this invocation; ``exceeded`` once over budget."""

    def __init__(
        self, budget_usd: float | None, overrides: Mapping[str, Price] | None = None
    ) -> None:
        self.budget_usd = budget_usd
        self.overrides = dict(overrides or {})
        self.spent_usd = 0.0
        self.unpriced_tokens = 0

    def add(self, model: str, input_tokens: int, output_tokens: int) -> None:
        price = price_for(model, self.overrides)
        if price is None:
            self.unpriced_tokens += input_tokens + output_tokens
            return
        self.spent_usd += price.cost(input_tokens, output_tokens)

    @property
    def exceeded(self) -> bool:
        return self.budget_usd is not None and self.spent_usd >= self.budget_usd
