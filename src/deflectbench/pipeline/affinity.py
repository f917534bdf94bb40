"""The routing key of a request: which requests should reach the same serving replica.

A generation's prompts share a long prefix with the other prompts of its claim (the claim's
text under 15 templates and 5 samples), which a serving engine caches per replica; a judge's
prompt about an answer holds the claim's text too. So both are keyed by the claim, and a
judge's requests go to the replica its claim's generations went to (routed by generation
before, the judges took the replicas' slots out of claim order: 88.8% of a real run's requests
were sticky). The key is what :func:`deflectbench.models.endpoints.routed` sends together.
"""

from __future__ import annotations

from typing import Any


def affinity(item: Any) -> str | None:
    """``claim C`` for a cell and for a judge's item alike (both have a ``claim_id``), None for
    anything else."""
    claim = getattr(item, "claim_id", None)
    return None if claim is None else f"claim {claim}"
