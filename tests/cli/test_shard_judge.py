"""``judge --shard I/N``: each part judges its claims' answers; together, every answer once."""

from __future__ import annotations

import os
from pathlib import Path

from deflectbench.benchmark import default_benchmark
from deflectbench.conditions import Settings
from deflectbench.config.shard import Shard
from deflectbench.records import GenerationRecord
from deflectbench.store import Store
from support.in_process import run_cli


def test_two_parts_judge_every_answer_once(tmp_path: Path) -> None:
    b = default_benchmark()
    claims = [c.claim_id for c in b.claims[:8]]
    db = tmp_path / "r.db"
    with Store.open(db) as store:
        settings = Settings(temperature=1, max_tokens=256, seed=0, benchmark_sha256=b.sha256)
        store.register_condition("m", settings, "c1")
        for claim in claims:
            store.add_generation(
                GenerationRecord(
                    b.key, "m", claim, "p", 1, "q", "But what about them?", condition="c1"
                )
            )
    env = dict(os.environ)
    env.pop("DEFLECTBENCH_SHARD", None)
    judged: list[set[str]] = []
    for part in ("1/2", "2/2"):
        p = run_cli(
            "judge", "--judge", "lexical", "--shard", part, "--db", db, "--no-progress", env=env
        )
        assert p.returncode == 0, p.stdout + p.stderr
        assert "complete: judge lexical: done" in p.stdout
        with Store.open(db, readonly=True) as store:
            judged.append(
                {
                    r[0]
                    for r in store.conn.execute(
                        "SELECT g.claim_id FROM judgments j JOIN generations g USING (gen_id)"
                    )
                }
            )
    first = set(Shard(1, 2).claims(claims))
    assert judged[0] == first and 0 < len(first) < len(claims)
    assert judged[1] == set(claims)
    with Store.open(db, readonly=True) as store:
        assert store.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == len(claims)


def test_a_part_with_batch_is_one_line(tmp_path: Path) -> None:
    p = run_cli("judge", "--shard", "1/2", "--batch", "--db", tmp_path / "x.db")
    assert p.returncode == 2
    assert "judge --shard with --batch" in p.stderr
    p = run_cli("run", "--shard", "3/2", "--dry-run", "--db", tmp_path / "x.db")
    assert p.returncode == 2 and "I must be from 1 to N (2)" in p.stderr
