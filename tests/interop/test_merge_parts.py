"""``merge`` knows the parts of a ``--shard I/N`` array: by the ``k/N`` each part's run records,
a part no input holds, or one with cells that have no result, is refused in one line naming it
(exit 2, nothing written), or only noted with ``--allow-missing-parts``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.conditions import Settings
from deflectbench.config import resolve_plan
from deflectbench.config.plan import RunPlan, shard_plan
from deflectbench.config.shard import Shard
from deflectbench.interop.merge import merge_stores
from deflectbench.interop.release import InteropError
from deflectbench.records import GenerationRecord
from deflectbench.store import Store
from support.in_process import run_cli

N = 8
PLAN = resolve_plan(
    default_benchmark(),
    models=["m"],
    judges=[],
    claims=[c.claim_id for c in default_benchmark().claims[:6]],
    templates=["explicit_direct_WA", "implicit_neutral"],
    runs=2,
)


def part(tmp: Path, i: int, *, drop: int = 0, plan: RunPlan = PLAN, n: int = N) -> Path:
    """Part i of n as `run --shard i/n` stores it: its run row and its cells (but the last
    ``drop``)."""
    p = shard_plan(plan, Shard(i, n))
    path = tmp / f"part-{i}.db"
    with Store.open(path) as store:
        store.register_condition(
            "m", Settings(temperature=1, max_tokens=256, seed=0, benchmark_sha256="x" * 64), "c1"
        )
        config = {**p.to_json(), "conditions": {"m": "c1"}}
        store.create_run(
            command="run",
            benchmark="b",
            benchmark_version="1",
            benchmark_sha256="x" * 64,
            config=config,
            versions={},
        )
        cells = p.cells[: len(p.cells) - drop]
        for claim, prompt, sample in cells:
            store.add_generation(
                GenerationRecord(
                    "b", "m", claim, prompt, sample, "q", "But what about them?", condition="c1"
                )
            )
    return path


def merged_rows(path: Path) -> int:
    with Store.open(path, readonly=True) as store:
        return int(store.conn.execute("SELECT count(*) FROM generations").fetchone()[0])


def test_seven_of_eight_parts_are_refused_naming_part_8(tmp_path: Path) -> None:
    parts = [part(tmp_path, i) for i in range(1, N + 1)]
    with Store.open(tmp_path / "all.db") as out, pytest.raises(InteropError) as exc:
        merge_stores(out, parts[:7])
    line = str(exc.value)
    assert line.startswith("part 8/8 missing:") and "\n" not in line
    assert "--allow-missing-parts" in line
    assert merged_rows(tmp_path / "all.db") == 0  # nothing written

    p = run_cli("merge", tmp_path / "cli.db", *parts[:7])
    assert p.returncode == 2
    assert "part 8/8 missing" in p.stderr and len(p.stderr.strip().splitlines()) == 1

    with Store.open(tmp_path / "all.db") as out:
        report = merge_stores(out, parts[:7], allow_missing_parts=True)
    assert report.ok and report.notes == ["merged without all parts: part 8/8 missing"]
    n = len(PLAN.cells)
    assert merged_rows(tmp_path / "all.db") == n - len(Shard(8, N).cells(PLAN.cells))

    # the last part into the store the seven went to: OUT's parts count, every cell once
    with Store.open(tmp_path / "all.db") as out:
        report = merge_stores(out, parts[7:])
    assert report.ok and not report.notes and merged_rows(tmp_path / "all.db") == n
    p = run_cli("merge", tmp_path / "cli.db", *parts)
    assert p.returncode == 0, p.stderr
    assert merged_rows(tmp_path / "cli.db") == n


def test_an_unfinished_part_is_named_with_what_it_lacks(tmp_path: Path) -> None:
    parts = [part(tmp_path, i, drop=2 if i == 3 else 0) for i in range(1, N + 1)]
    size = len(Shard(3, N).cells(PLAN.cells))
    with Store.open(tmp_path / "all.db") as out, pytest.raises(InteropError) as exc:
        merge_stores(out, parts)
    assert str(exc.value).startswith(
        f"part 3/8 incomplete ({parts[2]}: 2 of {size} cells of m have no result; "
    )
    several = [p for i, p in enumerate(parts) if i not in (1, 4)]
    with (
        Store.open(tmp_path / "x.db") as out,
        pytest.raises(InteropError, match="parts 2/8, 5/8 missing; part 3/8 incomplete"),
    ):
        merge_stores(out, several)


def test_stores_of_whole_runs_are_merged_as_before(tmp_path: Path) -> None:
    whole = tmp_path / "whole.db"
    with Store.open(whole) as store:
        store.add_generation(GenerationRecord("b", "m", "c", "p", 1, "q", "r"))
    with Store.open(tmp_path / "all.db") as out:
        report = merge_stores(out, [whole])
    assert report.ok and not report.notes


def test_status_over_a_glob_shows_every_part_and_the_one_missing(tmp_path: Path) -> None:
    from deflectbench.api.parts import status_parts

    parts = [part(tmp_path, i, drop=1 if i == 2 else 0) for i in range(1, N)]  # no 8/8
    st = status_parts([tmp_path / "part-*.db"])
    assert [r.parts for r in st.rows] == [(f"{i}/8",) for i in range(1, N)]
    sizes = [len(Shard(i, N).cells(PLAN.cells)) for i in range(1, N)]
    assert [r.planned for r in st.rows] == sizes
    assert [r.missing for r in st.rows] == [0, 1, 0, 0, 0, 0, 0]
    assert (st.total.planned, st.total.ok, st.total.missing) == (sum(sizes), sum(sizes) - 1, 1)
    assert st.missing_parts == ["8/8"] and st.exit_code == 5

    p = run_cli("status", "--db", str(tmp_path / "part-*.db"), "--json")
    assert p.returncode == 5, p.stderr
    got = json.loads(p.stdout)
    assert got["missing_parts"] == ["8/8"] and got["total"]["missing"] == 1
    assert len(got["parts"]) == 7 and parts[0].name in got["parts"][0]["path"]
    p = run_cli("status", "--db", str(tmp_path / "part-*.db"))
    assert p.returncode == 5 and "missing: part 8/8" in p.stdout and "total" in p.stdout
    p = run_cli("status", "--db", str(tmp_path / "nothing-*.db"))
    assert p.returncode == 2 and "no results file matches" in p.stderr
