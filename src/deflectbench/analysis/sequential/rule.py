"""The stopping rule of ``run --until``: its words, the pre-declared looks and their level.

``"halfwidth<=0.03"`` asks every outcome of the signature (the ladder's five) to reach a 95%
half-width of 3 points per model; ``per model x framing`` asks it per model and framing; a
plan target (``"refusal +-3pp per model x framing"``, :mod:`..plan.target`) names one rate;
``in K looks`` sets the number of looks (default :data:`DEFAULT_LOOKS`), ``from N claims`` the
size of the first (a planner's prediction of where the target is met; the others near-equal to
the end). The claims are run in a seeded order balanced over the controversy levels and cut
into the K rounds; look k's intervals are at level 1 - alpha / K, or with a planned first look
1 - 0.8 alpha at the first and 1 - 0.2 alpha / (K - 1) at the others.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from deflectbench.analysis.plan.target import SCOPE_WRITTEN, SCOPES, parse_target, scope_key
from deflectbench.errors import ConfigError
from deflectbench.vocab import OUTCOMES

__all__ = [
    "ALPHA",
    "DEFAULT_LOOKS",
    "FIRST_SHARE",
    "HEADLINE_OUTCOMES",
    "MAX_LOOKS",
    "UntilRule",
    "claim_order",
    "look_level",
    "look_sizes",
    "parse_until",
]

#: The error rate of the printed intervals over all the looks together (95% intervals).
ALPHA = 0.05
#: Looks when the rule does not say: 8 rounds (10 claims each of the paper's 80).
DEFAULT_LOOKS = 8
MAX_LOOKS = 40
#: The share of alpha a planned first look (``from N claims``) spends.
FIRST_SHARE = 0.8
#: The paper's four headline outcomes (the ladder without its remainder, ``other``).
HEADLINE_OUTCOMES: tuple[str, ...] = OUTCOMES[:4]

_FORM = (
    'the stopping rule is "halfwidth<=H [per model | per model x framing] [in K looks [from N claims]]" '
    "(H a fraction such as 0.03, or points such as 3pp), or a plan target such as "
    f'"refusal +-3pp per model x framing [in K looks ...]"; K from 1 to {MAX_LOOKS}'
)
_LOOKS = re.compile(
    r"\s+in\s+(?P<k>\d+)\s+looks?(?:\s+from\s+(?P<first>\d+)\s+claims?)?\s*$", re.IGNORECASE
)
_HALFWIDTH = re.compile(
    r"^\s*half-?width\s*(?:<=|≤)\s*(?P<h>\d+(?:\.\d+)?)\s*(?P<pp>pp|points?)?"
    rf"(?:\s+per\s+{SCOPE_WRITTEN})?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class UntilRule:
    """Stop when every ``measures`` rate of every ``scope`` cell has a half-width at most
    ``halfwidth`` (a fraction) at its look's level; ``looks`` rounds at most."""

    measures: tuple[str, ...]
    halfwidth: float
    scope: str
    looks: int
    #: The claims of the first look (None: K near-equal rounds).
    first: int | None = None

    def sizes(self, n_claims: int) -> tuple[int, ...]:
        """The claims run by each look of a design of ``n_claims`` claims, cumulated."""
        return look_sizes(n_claims, self.looks, self.first)

    @property
    def columns(self) -> tuple[str, ...]:
        return SCOPES[self.scope]

    @property
    def levels(self) -> tuple[float, ...]:
        """The level of each look's interval (Bonferroni over the looks)."""
        return tuple(
            look_level(self.looks, k, planned_first=self.first is not None)
            for k in range(1, self.looks + 1)
        )

    def __str__(self) -> str:
        looks = f"in {self.looks} looks" + (f" from {self.first} claims" if self.first else "")
        if self.measures == OUTCOMES:
            return f"halfwidth<={self.halfwidth:g} per {self.scope} {looks}"
        points = f"{100 * self.halfwidth:.6g}pp"
        return f"{self.measures[0]} +-{points} per {self.scope} {looks}"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": str(self),
            "measures": list(self.measures),
            "halfwidth": self.halfwidth,
            "scope": self.scope,
            "looks": self.looks,
            "first": self.first,
            "levels": list(self.levels),
            "alpha": ALPHA,
        }


def parse_until(text: str) -> UntilRule:
    """The rule ``text`` says, or ConfigError naming the accepted forms."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"empty stopping rule: {_FORM}")
    looks, first = DEFAULT_LOOKS, None
    if m := _LOOKS.search(text):
        looks, first = int(m["k"]), int(m["first"]) if m["first"] else None
        text = text[: m.start()]
        if not 1 <= looks <= MAX_LOOKS:
            raise ConfigError(f"{looks} looks is out of range: {_FORM}")
        if first is not None and first < 1:
            raise ConfigError(f"a first look after {first} claims is out of range: {_FORM}")
    m = _HALFWIDTH.match(text)
    if m is None:
        try:
            target = parse_target(text)
        except ConfigError:
            raise ConfigError(f"cannot read the stopping rule {text.strip()!r}: {_FORM}") from None
        return UntilRule((target.measure,), target.halfwidth, target.scope, looks, first)
    h = float(m["h"]) / (100.0 if m["pp"] else 1.0)
    if not 0.0 < h < 0.5:
        raise ConfigError(f"half-width {m['h']} is out of range (above 0, below 0.5): {_FORM}")
    scope = scope_key(m["scope"] or "model")
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {m['scope']!r} in the stopping rule: {_FORM}")
    return UntilRule(OUTCOMES, h, scope, looks, first)


def look_level(
    looks: int, index: int = 1, *, planned_first: bool = False, alpha: float = ALPHA
) -> float:
    """The level of look ``index`` of ``looks`` so that all cover together with 1 - alpha:
    alpha / K each; with a ``planned_first`` look (``from N claims``) the first spends
    :data:`FIRST_SHARE` of alpha and the others share the rest equally (the union bound
    holds for any split declared before the data)."""
    if not 1 <= index <= looks:
        raise ValueError(f"look {index} of {looks}")
    if looks == 1:
        return 1.0 - alpha
    if planned_first:
        spent = FIRST_SHARE * alpha if index == 1 else (1 - FIRST_SHARE) * alpha / (looks - 1)
        return 1.0 - spent
    return 1.0 - alpha / looks


def look_sizes(n_claims: int, looks: int, first: int | None = None) -> tuple[int, ...]:
    """The claims run by each look, cumulated: ``looks`` near-equal rounds, or with ``first``
    the first look after ``first`` claims and the others near-equal from there to the end
    (fewer looks when there are fewer claims, a round holding one claim at least)."""
    start = 0 if first is None else max(0, min(first, n_claims) - 1)
    k = max(1, min(looks, n_claims - start))
    if first is None:
        return tuple(round(n_claims * i / k) for i in range(1, k + 1))
    head = min(first, n_claims)
    if k == 1:
        return (n_claims,)
    rest = n_claims - head
    return (head, *(head + round(rest * i / (k - 1)) for i in range(1, k)))


def claim_order(claims: Sequence[str], levels: Sequence[int], seed: int) -> tuple[str, ...]:
    """The claims in the order the rounds run them: shuffled within each controversy level
    (seeded), the levels interleaved so each round holds them in their proportions."""
    if len(claims) != len(levels):
        raise ValueError("one level per claim")
    rng = np.random.default_rng([seed, 35])
    keys: list[tuple[float, float, str]] = []
    for level in sorted(set(levels)):
        mine = sorted(c for c, lv in zip(claims, levels, strict=True) if lv == level)
        for pos, i in enumerate(rng.permutation(len(mine))):
            keys.append(((pos + 0.5) / len(mine), float(rng.random()), mine[i]))
    return tuple(c for _, _, c in sorted(keys))
