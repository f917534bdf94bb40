"""``--shard I/N``: part I of N of a run, the same part on every machine and every day.

A scheduler (a Slurm array, a Kubernetes indexed Job, Ray tasks) runs N copies of one command,
each with its own index; each copy runs the claims of its part, into its own store, and
``deflectbench merge`` puts the parts together. Claims go to parts by a stable hash of the claim
id (SHA-256, never Python's salted ``hash``), so a part's cells do not depend on the process,
the machine, the claim order or which other claims the plan holds: a killed part resumed runs
exactly the cells it ran before. All of a claim's prompts stay in one part (the prefixes a
serving engine caches are shared within a claim).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from deflectbench.errors import ConfigError

#: The most parts a run may be split into (far beyond any pack's claims).
MAX_SHARDS = 10_000
_SHARD = re.compile(r"^\s*(\d{1,6})\s*/\s*(\d{1,6})\s*$")


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, claim_id: str) -> bool:
        """Whether this part runs ``claim_id``."""
        return shard_of(claim_id, self.count) == self.index

    def claims(self, claim_ids: Iterable[str]) -> list[str]:
        """The claims of ``claim_ids`` this part runs, in their order."""
        return [c for c in claim_ids if self.holds(c)]


def shard_of(claim_id: str, count: int) -> int:
    """The part (1-based, of ``count``) that runs ``claim_id``."""
    digest = hashlib.sha256(claim_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


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
