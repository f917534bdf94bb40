"""Cascaded judging's design in the store (migration ``m011_cascades``), and the answers it samples.

A cascade has a cheap judge score every answer and the expensive judges only a seeded share of
them. Which answers are in that share is a pure function of the design and the answer's key,
so the judge command, a resumed or extended run and the analysis all draw the same sample
without storing it: answer a of stratum h is in the sample when u(seed, a) < share_h, u a
uniform number from a hash of the seed and the answer's portable key (benchmark, model,
condition, claim, template, sample). That is Poisson sampling with inclusion probability
share_h; it is monotone, so an answer added later never moves another in or out, and a
larger share keeps every answer a smaller one held.

The design is stored per pack (one row), so the analysis knows which verdicts are the cheap
judge's (every answer) and which the expensive judges' (the sample): the provenance of each
verdict. People's labels are another table (``human_labels``) and never mix with these.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from deflectbench.records import now_iso
from deflectbench.store.files import StoreError

__all__ = [
    "STRATIFY",
    "CascadeDesign",
    "answer_key",
    "cascade_sample",
    "copy_cascades",
    "load_cascade",
    "save_cascade",
    "stratum_key",
    "uniform",
]

#: How a cascade may stratify its sample: one share for all, per model, per model x framing.
STRATIFY = ("none", "model", "model,framing")
_SEP = "\x1f"


def answer_key(
    benchmark: str, model: str, condition: str, claim_id: str, prompt_id: str, sample: int
) -> str:
    """An answer's portable key (the store's unique cell key): the same in every store the
    answer is merged into."""
    return _SEP.join((benchmark, model, condition, claim_id, prompt_id, str(int(sample))))


def uniform(seed: int, key: str) -> float:
    """The answer's draw in [0, 1): the first 8 bytes of sha256(seed, key)."""
    digest = hashlib.sha256(f"{int(seed)}{_SEP}{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def stratum_key(stratify: str, model: str, condition: str, framing: str | None) -> str:
    """The stratum of an answer under ``stratify`` (:data:`STRATIFY`): ``*`` for one share,
    ``model [condition]``, or that and `` | framing``."""
    if stratify == "none":
        return "*"
    name = f"{model} [{condition}]"
    return name if stratify == "model" else f"{name} | {framing or '?'}"


@dataclass(frozen=True)
class CascadeDesign:
    """One pack's cascade: the cheap judge, the expensive judges, the seed, how the sample is
    stratified, the target it was sized for (None: a share was given) and the share of each
    stratum (``default`` for a stratum not listed)."""

    cheap: str
    expensive: tuple[str, ...]
    seed: int
    stratify: str = "none"
    default: float = 1.0
    shares: Mapping[str, float] = field(default_factory=dict)
    target: str | None = None

    def share(self, stratum: str) -> float:
        return float(self.shares.get(stratum, self.default))

    def sampled(self, key: str, stratum: str) -> bool:
        """Whether the expensive judges see this answer."""
        return uniform(self.seed, key) < self.share(stratum)

    def same_sample_as(self, other: CascadeDesign) -> bool:
        """Whether ``other`` draws its sample as this one does (judges, seed, strata, target)."""
        return (self.cheap, tuple(self.expensive), self.seed, self.stratify, self.target) == (
            other.cheap,
            tuple(other.expensive),
            other.seed,
            other.stratify,
            other.target,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "cheap_judge": self.cheap,
            "expensive_judges": list(self.expensive),
            "seed": self.seed,
            "stratify": self.stratify,
            "target": self.target,
            "share": self.default,
            "shares": dict(sorted(self.shares.items())),
        }


def cascade_sample(
    store: Any, benchmark: str, design: CascadeDesign, framing_of: Callable[[str], str | None]
) -> dict[int, tuple[str, bool]]:
    """Every stored answer of the pack: gen_id -> (its stratum, whether the expensive judges
    see it); ``framing_of`` gives a template's framing (the pack knows it, the store not)."""
    rows = store.conn.execute(
        "SELECT gen_id, model, condition, claim_id, prompt_id, sample FROM generations "
        "WHERE benchmark = ?",
        (benchmark,),
    ).fetchall()
    out: dict[int, tuple[str, bool]] = {}
    for gen_id, model, condition, claim_id, prompt_id, sample in rows:
        h = stratum_key(design.stratify, model, condition, framing_of(prompt_id))
        key = answer_key(benchmark, model, condition, claim_id, prompt_id, sample)
        out[int(gen_id)] = (h, design.sampled(key, h))
    return out


def save_cascade(store: Any, benchmark: str, design: CascadeDesign) -> None:
    """Store (replace) the pack's cascade design."""
    with store.transaction():
        _put(store, benchmark, design)


def _put(store: Any, benchmark: str, design: CascadeDesign) -> None:
    shares = {"default": design.default, "strata": dict(sorted(design.shares.items()))}
    now = now_iso()
    store.conn.execute(
        "INSERT INTO cascades (benchmark, cheap_judge, expensive_json, seed, stratify, "
        "target, shares_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (benchmark) DO UPDATE SET cheap_judge = excluded.cheap_judge, "
        "expensive_json = excluded.expensive_json, seed = excluded.seed, "
        "stratify = excluded.stratify, target = excluded.target, "
        "shares_json = excluded.shares_json, updated_at = excluded.updated_at",
        (
            benchmark,
            design.cheap,
            json.dumps(list(design.expensive)),
            int(design.seed),
            design.stratify,
            design.target,
            json.dumps(shares, sort_keys=True, allow_nan=False),
            now,
            now,
        ),
    )


def load_cascade(store: Any, benchmark: str) -> CascadeDesign | None:
    """The pack's cascade design, or None (no cascade, or a store from before m011)."""
    try:
        row = store.conn.execute(
            "SELECT cheap_judge, expensive_json, seed, stratify, target, shares_json "
            "FROM cascades WHERE benchmark = ?",
            (benchmark,),
        ).fetchone()
    except sqlite3.OperationalError:  # a store from before m011 (read-only: not upgraded)
        return None
    if row is None:
        return None
    try:  # a store is hostile input: the row is checked, not trusted
        shares = json.loads(row[5])
        design = CascadeDesign(
            cheap=str(row[0]),
            expensive=tuple(str(x) for x in json.loads(row[1])),
            seed=int(row[2]),
            stratify=str(row[3]),
            default=float(shares.get("default", 1.0)),
            shares={str(k): float(v) for k, v in shares.get("strata", {}).items()},
            target=None if row[4] is None else str(row[4]),
        )
        shares_ok = all(0.0 < x <= 1.0 for x in (design.default, *design.shares.values()))
        if design.stratify not in STRATIFY or not shares_ok or not design.expensive:
            raise ValueError("a share outside (0, 1], unknown strata or no expensive judge")
    except (ValueError, TypeError, AttributeError, OverflowError) as exc:
        raise StoreError(
            f"the store's cascade design of {benchmark} cannot be read ({exc}); judge again "
            "with the cascade's settings to rewrite it"
        ) from None
    return design


def copy_cascades(out: Any, src: Any) -> list[str]:
    """Another store's cascade designs copied into ``out`` (a merge of parts), inside the
    caller's transaction: a pack ``out`` has none for gets ``src``'s; the same design is kept;
    another one is kept as it was and said (one line per pack, returned)."""
    try:
        packs = [str(r[0]) for r in src.conn.execute("SELECT benchmark FROM cascades")]
    except sqlite3.OperationalError:  # a store from before m011
        return []
    said = []
    for pack in packs:
        theirs = load_cascade(src, pack)
        mine = load_cascade(out, pack)
        if theirs is None or mine == theirs:
            continue
        if mine is None:
            _put(out, pack, theirs)
        else:
            said.append(
                f"{pack}: another cascade design than the merged one's (kept the first); "
                "analyze estimates with the first's sample"
            )
    return said
