"""Combining judges into one verdict per generation.

The release's rule (``mean``): per field, the mean over the judges whose reply parsed, and
``>= 0.5`` -> 1, so with two judges a 1 from either wins. ``all`` needs every judge to say 1;
``judge:NAME`` takes one judge's word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deflectbench.judging.fields import FIELDS

CONSENSUS_RULES = ("mean", "all", "judge:<name>")


class ConsensusError(ValueError):
    pass


def check_rule(rule: str, judges: Sequence[str] | None = None) -> str:
    if rule in ("mean", "all"):
        return rule
    if rule.startswith("judge:") and rule[6:]:
        if judges is not None and rule[6:] not in judges:
            raise ConsensusError(
                f"--consensus {rule}: no judge {rule[6:]!r} in the store; judges: {', '.join(judges) or 'none'}"
            )
        return rule
    raise ConsensusError(f"unknown consensus rule {rule!r}; valid: {', '.join(CONSENSUS_RULES)}")


def combine(verdicts: Mapping[str, Mapping[str, int]], rule: str = "mean") -> dict[str, int] | None:
    """One verdict from several judges' rule-applied scores (None when nothing to combine)."""
    if rule.startswith("judge:"):
        v = verdicts.get(rule[6:])
        return None if v is None else {f: int(v[f]) for f in FIELDS}
    if not verdicts:
        return None
    n = len(verdicts)
    out = {}
    for f in FIELDS:
        total = sum(int(v[f]) for v in verdicts.values())
        out[f] = int(total / n >= 0.5) if rule == "mean" else int(total == n)
    return out
