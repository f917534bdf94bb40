"""``--shard I/N``: part I of N of a run, the same part on every machine and every day.

A scheduler (a Slurm array, a Kubernetes indexed Job, Ray tasks) runs N copies of one command,
each with its own index; each copy runs the cells of its part, into its own store, and
``deflectbench merge`` puts the parts together.

The split (scheme 2): the plan's claims are ordered by a stable hash of their id (SHA-256, never
Python's salted ``hash``), each claim's cells (template, then sample) kept together in the
plan's order, and that one row of cells is cut into N runs of equal length (they differ by at
most one cell). So the parts are balanced by cells up to as many parts as the plan has cells,
a part depends only on the plan and N (not on the process, the machine or the claim order
given), and a claim's prompts stay in one part except where a cut falls inside it (at most
N - 1 claims are split over two parts: the prefixes a serving engine caches are shared within a
claim, so that is the only cost). Scheme 1 (before) gave each claim to ``hash mod N``: uneven
(5 to 14 claims a part at N=8) and empty parts at cluster sizes; a part stored under scheme 1
is never resumed under scheme 2 (:func:`check_resumable`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deflectbench.errors import ConfigError

#: The most parts a run may be split into (far beyond any pack's claims).
MAX_SHARDS = 10_000
#: How parts are cut, recorded with every part's run (``extra.shard_scheme``); 1 was the claim
#: hash modulo N, 2 is the balanced cut of the claims' cells in hash order.
SCHEME = 2
_SHARD = re.compile(r"^\s*(\d{1,6})\s*/\s*(\d{1,6})\s*$")

#: (claim_id, prompt_id, sample): one cell of a model.
Cell = tuple[str, str, int]


def claim_key(claim_id: str) -> tuple[bytes, str]:
    """Where a claim stands in the row the parts are cut from: its SHA-256, then its id."""
    return hashlib.sha256(claim_id.encode("utf-8")).digest(), claim_id


def bounds(total: int, index: int, count: int) -> tuple[int, int]:
    """Part ``index`` of ``count`` of ``total`` cells in a row: [start, stop)."""
    return (index - 1) * total // count, index * total // count


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, claim_id: str) -> bool:
        """Whether ``judge --shard`` judges the answers of ``claim_id`` in this part (answers
        are split by claim, :func:`shard_of`: N judges over one store judge each answer once)."""
        return shard_of(claim_id, self.count) == self.index

    def claims(self, claim_ids: Iterable[str]) -> list[str]:
        """The claims of ``claim_ids`` whose answers this part judges, in their order."""
        return [c for c in claim_ids if self.holds(c)]

    def cells(self, cells: Iterable[Cell]) -> list[Cell]:
        """The cells of ``cells`` this part holds: claims in hash order, each claim's cells in
        the order given, cut into ``count`` even runs. Raises ConfigError (one line) when the
        part is empty (more parts than cells)."""
        row = ordered(cells)
        start, stop = bounds(len(row), self.index, self.count)
        if start == stop:
            raise ConfigError(
                f"--shard {self}: part {self} is empty: the plan has {len(row):,} "
                f"cell{'s' * (len(row) != 1)}, fewer than {self.count:,} parts; use N of at "
                f"most {len(row):,}"
            )
        return row[start:stop]


def shard_of(claim_id: str, count: int) -> int:
    """The part (1-based, of ``count``) of ``claim_id`` by its hash alone: the judge's split
    of stored answers (and scheme 1's split of a run)."""
    return int.from_bytes(claim_key(claim_id)[0][:8], "big") % count + 1


def ordered(cells: Iterable[Cell]) -> list[Cell]:
    """The row the parts are cut from: claims by :func:`claim_key`, each claim's cells in the
    order given."""
    by_claim: dict[str, list[Cell]] = {}
    for cell in cells:  # a claim's key (a hash) made once, not once per cell
        by_claim.setdefault(cell[0], []).append(cell)
    return [cell for claim in sorted(by_claim, key=claim_key) for cell in by_claim[claim]]


def sizes(n_cells: int, count: int) -> list[int]:
    """How many cells each of ``count`` parts of ``n_cells`` holds."""
    return [b - a for a, b in (bounds(n_cells, i, count) for i in range(1, count + 1))]


def parse_shard(text: str | None) -> Shard | None:
    """``"2/3"`` as :class:`Shard` (None for None or ""); anything else is one line naming it."""
    if text is None or not text.strip():
        return None
    m = _SHARD.match(text)
    if m is None:
        raise ConfigError(
            f"--shard {text!r}: give part I of N as I/N, e.g. --shard 1/3 (I from 1 to N)"
        )
    index, count = int(m.group(1)), int(m.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ConfigError(f"--shard {text!r}: N must be from 1 to {MAX_SHARDS:,}, got {count}")
    if not 1 <= index <= count:
        raise ConfigError(f"--shard {text!r}: I must be from 1 to N ({count}), got {index}")
    return Shard(index, count)


def recorded(config: Mapping[str, Any]) -> tuple[Shard, int] | None:
    """The part a stored run ran and the scheme that cut it (1 when none is recorded), from its
    run row's config; None for a run of the whole plan."""
    extra = config.get("extra") or {}
    part = parse_shard(extra.get("shard")) if isinstance(extra, Mapping) else None
    if part is None:
        return None
    return part, int(extra.get("shard_scheme", 1))


def check_resumable(runs: Sequence[Mapping[str, Any]], shard: Shard | None) -> None:
    """Refuse (ConfigError, one line) to run part ``shard`` into a store whose runs ran a part
    cut by another scheme: the new part's cells are not the old part's, so resuming would leave
    cells of the old part unrun and run other parts' cells, without a word."""
    if shard is None:
        return
    for run in runs:
        got = recorded(run.get("config") or {})
        if got is not None and got[1] != SCHEME:
            raise ConfigError(
                f"this store holds part {got[0]} cut by shard scheme {got[1]} (claims by hash "
                f"modulo N); this version cuts parts by cells (scheme {SCHEME}), so --shard "
                f"{shard} here would not resume it: finish it with the version that started it, "
                "or run the part into a new file"
            )
