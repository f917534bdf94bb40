"""Batch mode end to end, through the entry point and the official SDKs, against local
emulators of OpenAI's Files + Batches API and Anthropic's Message Batches API.

A mixed run (two batch providers, one without a batch API, a batch judge and the lexical
judge): submitted, collected, judged as answers come back; every cell exactly once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.batch_servers import BatchServer, Faults
from support.cli_runs import (
    QUIET_RUN,
    Cli,
    generations,
    judgments,
    query,
    signal_when,
    write_toml,
)
from support.replies import unique_reply as reply
from support.servers import FakeLLMServer

OPENAI_KEY = "sk-batchtest-0123456789abcdefSECRET"
ANTHROPIC_KEY = "sk-ant-batchtest-0123456789SECRET"
CLAIMS = ["L1_US_01", "L2_INT_03"]
TEMPLATES = ["explicit_direct_WA", "implicit_neutral"]
SAMPLES = 2
CELLS = len(CLAIMS) * len(TEMPLATES) * SAMPLES
KEYS = {"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
cli = Cli(env={**KEYS, "DEFLECTBENCH_BATCH_POLL_S": "0.2"}, run_flags=QUIET_RUN)


def config(
    path: Path,
    batch: BatchServer,
    *,
    models: list[str],
    judges: list[str],
    engine: FakeLLMServer | None = None,
) -> Path:
    run: dict[str, object] = {"models": models, "judges": judges}
    run |= {"claims": CLAIMS, "templates": TEMPLATES, "runs": SAMPLES}
    tables = {
        "run": run,
        "providers.openai": {"base_url": batch.openai_base_url},
        "providers.anthropic": {"base_url": batch.anthropic_base_url},
    }
    if engine is not None:
        tables["providers.srv"] = {"base_url": engine.openai_base_url}
    return write_toml(path, tables)


def test_mixed_run_submits_collects_and_judges_every_cell_once(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    models = ["openai/gpt-5-mini", "anthropic/claude-haiku-4-5", "srv/m1"]
    judges = ["openai/judge-test", "lexical"]
    with BatchServer(reply=reply) as batch, FakeLLMServer(reply=reply) as engine:
        cfg = config(tmp_path / "run.toml", batch, models=models, judges=judges, engine=engine)
        first = cli("run", "--batch", "--config", str(cfg), "--db", str(db))
        assert first.returncode == 0, first.stderr
        assert "submitted 3 batches" in first.stderr  # 2 models + the judge over srv/m1
        # the model without a batch API went through the engine in the same run
        assert generations(db) == {"srv/m1": CELLS}
        assert judgments(db) == {"lexical": CELLS}
        states = query(db, "SELECT state, count(*) FROM batches GROUP BY 1")
        assert states == [("open", 3)]

        second = cli("status", "--db", str(db))
        assert second.returncode == 0, second.stderr
        assert generations(db) == {m: CELLS for m in models}
        # the answers that came back went to the judges at once: lexical here, a judge batch
        assert judgments(db)["lexical"] == 3 * CELLS
        assert "openai/judge-test" in second.stdout  # the table of batches

        third = cli("status", "--db", str(db), "--json")
        assert third.returncode == 0, third.stderr
        assert judgments(db) == {"lexical": 3 * CELLS, "openai/judge-test": 3 * CELLS}
        shown = json.loads(third.stdout)["batches"]
        assert {b["state"] for b in shown} == {"collected"}
        assert batch.twice() == []
        assert sum(batch.submissions.values()) == 2 * CELLS + 3 * CELLS
        # resumed run: nothing left to send
        again = cli("run", "--batch", "--config", str(cfg), "--db", str(db))
        assert again.returncode == 0, again.stderr
        assert "submitted" not in again.stderr
        assert sum(batch.submissions.values()) == 2 * CELLS + 3 * CELLS
    # half the table's price (0.25 / 2.0 USD per Mtok, batch discount 0.5)
    cost, tokens_in, tokens_out = query(
        db,
        "SELECT sum(cost_usd), sum(input_tokens), sum(output_tokens) FROM generations "
        "WHERE model = 'openai/gpt-5-mini'",
    )[0]
    assert tokens_in and tokens_out
    assert cost == pytest.approx((tokens_in * 0.25 + tokens_out * 2.0) / 2 / 1e6)
    assert OPENAI_KEY.encode() not in db.read_bytes()
    assert ANTHROPIC_KEY.encode() not in db.read_bytes()


@pytest.mark.parametrize(
    "models",
    [
        ["openai/gpt-5-mini", "anthropic/claude-haiku-4-5"],  # found by count and time
        ["anthropic/claude-haiku-4-5", "openai/gpt-5-mini"],  # found by its metadata tag
    ],
    ids=["lost-anthropic", "lost-openai"],
)
def test_killed_between_submit_and_collect_then_resumed_every_cell_once(
    tmp_path: Path, models: list[str]
) -> None:
    """The second batch create is made by the provider but its answer never comes; the
    process is killed there. The next `status` finds that batch (it is not sent again),
    collects both, judges the answers: every cell once, none submitted twice."""
    db = tmp_path / "r.db"
    judges = ["anthropic/judge-test"]
    with BatchServer(reply=reply, faults=Faults(hang_create=lambda i: i == 1)) as batch:
        cfg = config(tmp_path / "run.toml", batch, models=models, judges=judges)
        args = cli.command("run", "--batch", "--config", str(cfg), "--db", str(db))
        signal_when(
            args,
            lambda: batch.creates >= 2,
            wait_s=180,
            poll_s=0.05,
            pause=lambda: 0.3,  # the hung create is in flight
            env=cli.environ(),
        )
        assert batch.creates == 2
        states = query(db, "SELECT model, state FROM batches ORDER BY created_at")
        assert states == [(models[0], "open"), (models[1], "submitting")]
        assert generations(db) == {}

        batch.hang_create = None
        first = cli("status", "--db", str(db))
        assert first.returncode == 0, first.stderr
        assert generations(db) == {m: CELLS for m in models}
        second = cli("status", "--db", str(db), "--wait")
        assert second.returncode == 0, second.stderr
        assert judgments(db) == {"anthropic/judge-test": 2 * CELLS}
        assert batch.creates == 3  # two generation batches, one judge batch: none twice
        assert batch.twice() == []
        assert sum(batch.submissions.values()) == 2 * CELLS + 2 * CELLS
        assert query(db, "SELECT count(*) FROM generations")[0][0] == 2 * CELLS


def test_judge_batch_sends_a_batch_judges_requests_and_status_collects(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with BatchServer(reply=reply) as batch, FakeLLMServer(reply=reply) as engine:
        cfg = config(tmp_path / "run.toml", batch, models=["srv/m1"], judges=[], engine=engine)
        made = cli("run", "--config", str(cfg), "--db", str(db), "--judge", "lexical")
        assert made.returncode == 0, made.stderr
        judged = cli(
            "judge",
            "--batch",
            "-j",
            "anthropic/judge-test,lexical",
            "--config",
            str(cfg),
            "--db",
            str(db),
            "--no-progress",
        )
        assert judged.returncode == 0, judged.stderr
        assert f"{CELLS} in open batches" in judged.stdout + judged.stderr
        assert judgments(db) == {"lexical": CELLS}
        collected = cli("status", "--db", str(db))
        assert collected.returncode == 0, collected.stderr
        assert judgments(db) == {"lexical": CELLS, "anthropic/judge-test": CELLS}
        assert batch.twice() == []


def test_an_expired_batch_is_a_clear_line_and_exit_5_until_its_items_are_done(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    with BatchServer(
        reply=reply, faults=Faults(expire=lambda b: 0.5 if b.index == 0 else None)
    ) as batch:
        cfg = config(tmp_path / "run.toml", batch, models=["openai/gpt-5-mini"], judges=[])
        first = cli("run", "--batch", "--config", str(cfg), "--db", str(db), "--judge", "lexical")
        assert first.returncode == 0, first.stderr
        expired = cli("status", "--db", str(db))
        assert expired.returncode == 5, expired.stderr
        assert f"expired: {CELLS // 2} of {CELLS} done; {CELLS // 2} expired" in expired.stderr
        assert "were sent again; not done yet" in expired.stderr
        done = cli("status", "--db", str(db))
        assert done.returncode == 0, done.stderr
        assert generations(db) == {"openai/gpt-5-mini": CELLS}
        assert judgments(db) == {"lexical": CELLS}
