"""The one rule for a number a run file or a keyword gives: finite. ``nan`` and ``inf`` are
valid TOML floats, so every number setting refuses them in one place; its bounds and words are
its own."""

from __future__ import annotations

from typing import Any

from pydantic import Field


def finite(
    default: Any = None,
    *,
    description: str,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
) -> Any:
    """A number setting's field: ``default`` (None: unset until something gives it; ``...``:
    required), finite, within the bounds given."""
    return Field(default, ge=ge, gt=gt, le=le, lt=lt, allow_inf_nan=False, description=description)
