"""``--shard I/N``: parts cut from the plan's cells in claim-hash order, balanced, the same in
every process; the judge's split of stored answers by claim hash."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deflectbench.benchmark import default_benchmark
from deflectbench.config import resolve_plan
from deflectbench.config.plan import shard_plan
from deflectbench.config.shard import (
    SCHEME,
    Shard,
    check_resumable,
    claim_key,
    ordered,
    parse_shard,
    shard_of,
)
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


PAPER = resolve_plan(default_benchmark(), models=["m"], judges=["lexical"], preset="full")


def test_the_plan_of_a_part_keeps_the_rest_and_says_which_part() -> None:
    part = shard_plan(PAPER, Shard(2, 4))
    assert part.cells == Shard(2, 4).cells(PAPER.cells)
    assert (part.prompt_ids, part.runs, part.seed) == (PAPER.prompt_ids, PAPER.runs, PAPER.seed)
    extra = part.to_json()["extra"]
    assert extra["shard"] == "2/4" and extra["shard_scheme"] == SCHEME == 2
    assert extra["shard_of_cells"] == len(PAPER.cells) == 80 * 15 * 5
    assert shard_plan(PAPER, None) is PAPER


def sizes_by_hand(n_cells: int, n: int) -> list[int]:
    """Independent: deal the cells one by one, the first n_cells % n parts one more."""
    return [n_cells // n + (1 if i < n_cells % n else 0) for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 8, 64, 81, 6000])
def test_parts_of_the_paper_plan_are_balanced_disjoint_and_whole(n: int) -> None:
    parts = [shard_plan(PAPER, Shard(i, n)).cells for i in range(1, n + 1)]
    every = [c for p in parts for c in p]
    assert len(every) == len(set(every)) and set(every) == set(PAPER.cells)
    sizes = [len(p) for p in parts]
    assert sorted(sizes) == sorted(sizes_by_hand(len(PAPER.cells), n))
    mean = len(PAPER.cells) / n
    assert min(sizes) > 0 and max(sizes) <= 1.25 * mean
    if n == 64:  # the figure: 93 or 94 cells a part, 1.003x the mean at most
        assert (min(sizes), max(sizes)) == (93, 94)
    if n <= 80:  # a claim is split over two parts only where a cut falls inside it
        held = sum(len({c for c, _, _ in p}) for p in parts)
        assert held <= 80 + n - 1


def test_a_part_depends_on_the_plan_and_n_only() -> None:
    """Not on the claim order given, nor the process."""
    reordered = resolve_plan(
        default_benchmark(),
        models=["m"],
        judges=["lexical"],
        preset="full",
        claims=list(reversed(PAPER.claim_ids)),
    )
    for i in (1, 5, 8):
        assert shard_plan(reordered, Shard(i, 8)).cells == shard_plan(PAPER, Shard(i, 8)).cells


def test_an_empty_part_is_one_line() -> None:
    small = resolve_plan(
        default_benchmark(),
        models=["m"],
        judges=["lexical"],
        claims=[CLAIMS[0]],
        runs=1,
        templates=["explicit_direct_WA", "implicit_neutral"],
    )
    assert [len(shard_plan(small, Shard(i, 2)).cells) for i in (1, 2)] == [1, 1]
    with pytest.raises(ConfigError, match="part 1/3 is empty: the plan has 2 cells") as exc:
        shard_plan(small, Shard(1, 3))
    assert "\n" not in str(exc.value) and "N of at most 2" in str(exc.value)
    assert [len(shard_plan(small, Shard(i, 3)).cells) for i in (2, 3)] == [1, 1]


def test_a_part_cut_by_the_old_scheme_is_not_resumed() -> None:
    old = [{"config": {"extra": {"shard": "3/8"}}}]
    with pytest.raises(ConfigError, match="part 3/8 cut by shard scheme 1") as exc:
        check_resumable(old, Shard(3, 8))
    assert "new file" in str(exc.value) and "\n" not in str(exc.value)
    check_resumable(old, None)  # a whole run into the store: nothing to resume
    check_resumable([{"config": {"extra": {"shard": "3/8", "shard_scheme": 2}}}], Shard(3, 8))
    check_resumable([{"config": {"extra": {}}}], Shard(3, 8))


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


@given(
    st.lists(
        st.tuples(st.sampled_from(["c1", "c2", "c3", "é", ""]), st.text(max_size=3), st.integers()),
        max_size=40,
    )
)
def test_the_row_is_a_stable_sort_of_the_cells_by_their_claims_key(cells) -> None:
    """``ordered`` groups by claim (each claim's hash made once): the same row as sorting every
    cell by its claim's key, a claim's cells in the order given."""
    assert ordered(cells) == sorted(cells, key=lambda c: claim_key(c[0]))
