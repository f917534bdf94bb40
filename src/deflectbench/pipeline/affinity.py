"""The routing key of a request: which requests should reach the same serving replica.

A generation's prompts share a long prefix with the other prompts of its claim (the claim's
text under 15 templates and 5 samples), which a serving engine caches per replica; a judge's
requests about one generation (a retry, a second ask) share theirs. The key is what
:func:`deflectbench.models.endpoints.routed` sends together.
"""

from __future__ import annotations

from typing import Any


def affinity(item: Any) -> str | None:
    """``generation N`` for a judge's item (it has a ``gen_id``), ``claim C`` for a cell (a
    ``claim_id``), None for anything else."""
    gen_id = getattr(item, "gen_id", None)
    if gen_id is not None:
        return f"generation {gen_id}"
    claim = getattr(item, "claim_id", None)
    return None if claim is None else f"claim {claim}"
