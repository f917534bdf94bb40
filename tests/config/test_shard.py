"""``--shard I/N``: parts by a stable hash of the claim id, the same in every process."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.config import resolve_plan
from deflectbench.config.plan import shard_plan
from deflectbench.config.shard import Shard, parse_shard, shard_of
from deflectbench.errors import ConfigError

CLAIMS = [c.claim_id for c in default_benchmark().claims]


def test_parts_partition_the_claims() -> None:
    parts = [Shard(i, 3).claims(CLAIMS) for i in (1, 2, 3)]
    assert sorted(c for p in parts for c in p) == sorted(CLAIMS)
    assert all(parts)  # 80 claims: no part is empty
    assert Shard(1, 1).claims(CLAIMS) == CLAIMS


def test_a_part_does_not_depend_on_the_process_nor_the_claim_order() -> None:
    """Python's hash is salted per process; the part must not be."""
    code = (
        "from deflectbench.config.shard import shard_of;"
        "print([shard_of(f'L{i}_US_01', 7) for i in range(1, 5)])"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": seed},
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert seen == {str([shard_of(f"L{i}_US_01", 7) for i in range(1, 5)]) + "\n"}
    assert Shard(2, 3).claims(CLAIMS[::-1]) == Shard(2, 3).claims(CLAIMS)[::-1]
    digest = hashlib.sha256(b"L1_US_01").digest()
    assert shard_of("L1_US_01", 3) == 1 + int.from_bytes(digest[:8], "big") % 3


def test_the_plan_of_a_part_keeps_the_rest_and_says_which_part() -> None:
    plan = resolve_plan(default_benchmark(), models=["m"], judges=["lexical"], preset="full")
    part = shard_plan(plan, Shard(2, 4))
    assert part.claim_ids == tuple(Shard(2, 4).claims(plan.claim_ids))
    assert (part.prompt_ids, part.runs, part.seed) == (plan.prompt_ids, plan.runs, plan.seed)
    assert part.to_json()["extra"] == {"shard": "2/4"}
    assert shard_plan(plan, None) is plan


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0/3", "I must be from 1 to N"),
        ("4/3", "I must be from 1 to N"),
        ("1/0", "N must be from 1"),
        ("a/b", "give part I of N as I/N"),
        ("2", "give part I of N as I/N"),
        ("1/99999", "N must be from 1 to 10,000"),
    ],
)
def test_a_bad_part_is_one_line(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as exc:
        parse_shard(text)
    assert "\n" not in str(exc.value)


def test_no_part_is_the_whole_run() -> None:
    assert parse_shard(None) is None and parse_shard("") is None
    assert parse_shard(" 2 / 3 ") == Shard(2, 3)
