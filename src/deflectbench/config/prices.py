"""``[prices."provider/model"]``: what a model costs, as the run file and :class:`RunConfig`
give it (a model without a price is unknown, never free)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from deflectbench.config.fields import finite
from deflectbench.cost import Price, default_batch_discount


class PriceEntry(BaseModel):
    """``[prices."provider/model"]``: what a model costs; the name may hold ``*`` wildcards."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = finite(
        ..., ge=0.0, le=10_000.0, description="USD per million input tokens."
    )
    output_per_mtok: float = finite(
        ..., ge=0.0, le=10_000.0, description="USD per million output tokens."
    )
    batch_discount: float | None = finite(
        ge=0.0,
        lt=1.0,
        description="The share taken off a request sent in a provider batch (run --batch). "
        "Default: 0.5 for openai/ and anthropic/ models (their batch APIs' rate), else 0.",
    )

    def price(self, name: str) -> Price:
        """The entry as a :class:`~deflectbench.cost.Price` (the provider's batch discount
        unless the entry states one)."""
        discount = self.batch_discount
        return Price(
            self.input_per_mtok,
            self.output_per_mtok,
            default_batch_discount(name) if discount is None else discount,
        )


def file_prices(entries: Mapping[str, PriceEntry]) -> dict[str, Price]:
    """A run file's ``[prices]`` table as prices, by model name (or wildcard)."""
    return {name: entry.price(name) for name, entry in entries.items()}
