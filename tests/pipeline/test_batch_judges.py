"""Batch mode's judges without a batch API, end to end through the entry point: a run names a
batch judge (``openai/``, against the batch emulators) and a model judge on an
OpenAI-compatible server (``srv/``, a FakeLLMServer). ``status`` judges every answer the
batches bring with both, once each; a ``srv`` judge it cannot reach is one clear line and
exit 5, nothing is lost, and the next ``status`` that reaches it completes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from support.batch_servers import BatchServer
from support.cli_runs import QUIET_RUN, Cli, judgments, query, write_toml
from support.fakes import is_judge_request
from support.replies import unique_reply as reply
from support.servers import FakeLLMServer, RecordedRequest

CLAIMS = ["L1_US_01", "L2_INT_03"]
TEMPLATES = ["explicit_direct_WA", "implicit_neutral"]
SAMPLES = 2
CELLS = len(CLAIMS) * len(TEMPLATES) * SAMPLES
MODEL = "openai/gpt-5-mini"
BATCH_JUDGE = "openai/judge-test"
SRV_JUDGE = "srv/judge"
KEYS = {
    "OPENAI_API_KEY": "sk-batchjudges-0123456789abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-batchjudges-0123456789",
}
cli = Cli(env={**KEYS, "DEFLECTBENCH_BATCH_POLL_S": "0.2"}, run_flags=QUIET_RUN)


def config(
    path: Path,
    batch: BatchServer,
    srv: FakeLLMServer,
    srv_options: Mapping[str, object],
    **run_extra: object,
) -> Path:
    run: dict[str, object] = {"models": [MODEL], "judges": [BATCH_JUDGE, SRV_JUDGE]}
    run |= {"claims": CLAIMS, "templates": TEMPLATES, "runs": SAMPLES, **run_extra}
    tables = {
        "run": run,
        "providers.openai": {"base_url": batch.openai_base_url},
        "providers.srv": {"base_url": srv.openai_base_url, **srv_options},
        'prices."srv/judge"': {"input_per_mtok": 10000.0, "output_per_mtok": 10000.0},
    }
    return write_toml(path, tables)


def judge_requests(srv: FakeLLMServer) -> int:
    return sum(1 for r in srv.requests if is_judge_request(r))


def submitted(
    tmp_path: Path,
    batch: BatchServer,
    srv: FakeLLMServer,
    srv_options: Mapping[str, object] | None = None,
    **run_extra: object,
) -> Path:
    """``run --batch``: the model's cells go in a batch; no answer to judge yet."""
    db = tmp_path / "r.db"
    cfg = config(tmp_path / "run.toml", batch, srv, srv_options or {}, **run_extra)
    run = cli("run", "--batch", "--config", cfg, "--db", db)
    assert run.returncode == 0, run.stderr
    assert judgments(db) == {}
    return db


def test_status_wait_judges_every_answer_once_with_the_batch_and_the_srv_judge(
    tmp_path: Path,
) -> None:
    with BatchServer(reply=reply) as batch, FakeLLMServer(reply=reply) as srv:
        db = submitted(tmp_path, batch, srv)
        done = cli("status", "--wait", "--db", db)
        assert done.returncode == 0, done.stderr
        assert judgments(db) == {BATCH_JUDGE: CELLS, SRV_JUDGE: CELLS}
        assert f"{SRV_JUDGE}: {CELLS} answers judged now" in done.stderr
        per_answer = query(db, "SELECT gen_id, judge, count(*) FROM judgments GROUP BY 1, 2")
        assert len(per_answer) == 2 * CELLS and {n for *_, n in per_answer} == {1}
        assert judge_requests(srv) == CELLS  # each answer sent to the srv judge once
        assert batch.twice() == []
        again = cli("status", "--db", db)  # nothing left: nothing sent, nothing said
        assert again.returncode == 0, again.stderr
        assert SRV_JUDGE not in again.stderr
        assert judge_requests(srv) == CELLS


def test_a_srv_judge_with_headers_needs_the_config_then_the_next_status_completes(
    tmp_path: Path,
) -> None:
    with BatchServer(reply=reply) as batch, FakeLLMServer(reply=reply) as srv:
        db = submitted(tmp_path, batch, srv, {"headers": {"X-Team": "measure"}})
        blocked = cli("status", "--wait", "--db", db)
        assert blocked.returncode == 5, blocked.stderr
        line = [x for x in blocked.stderr.splitlines() if x.startswith(f"{SRV_JUDGE}:")]
        assert line == [
            f"{SRV_JUDGE}: {CELLS} answers await it: [providers.srv] sets headers, which the "
            "store keeps by name only: pass --config with the run configuration the batches "
            "were submitted with"
        ]
        assert "Traceback" not in blocked.stderr
        # the batches went on: every answer stored and judged by the batch judge
        assert query(db, "SELECT count(*) FROM generations WHERE error IS NULL") == [(CELLS,)]
        assert judgments(db) == {BATCH_JUDGE: CELLS}
        assert judge_requests(srv) == 0
        done = cli("status", "--config", tmp_path / "run.toml", "--db", db)
        assert done.returncode == 0, done.stderr
        assert judgments(db) == {BATCH_JUDGE: CELLS, SRV_JUDGE: CELLS}
        assert judge_requests(srv) == CELLS
        assert {r.headers.get("x-team") for r in srv.requests} == {"measure"}


def test_a_srv_judge_that_is_down_is_a_clear_line_and_the_next_status_completes(
    tmp_path: Path,
) -> None:
    down = True

    def dropped(req: RecordedRequest) -> str | None:
        return "drop" if down and is_judge_request(req) else None

    with BatchServer(reply=reply) as batch, FakeLLMServer(reply=reply, fault_fn=dropped) as srv:
        db = submitted(tmp_path, batch, srv, {"max_retries": 0})
        failed = cli("status", "--wait", "--db", db)
        assert failed.returncode == 5, failed.stderr
        line = [x for x in failed.stderr.splitlines() if x.startswith(f"{SRV_JUDGE}:")]
        assert len(line) == 1, failed.stderr
        assert line[0].startswith(f"{SRV_JUDGE}: {CELLS} answers await it: its requests failed (")
        assert line[0].endswith("the next `deflectbench status` sends them again")
        assert "Traceback" not in failed.stderr
        # nothing lost: every answer stored, the batch judge done, the srv failures on record
        assert query(db, "SELECT count(*) FROM generations WHERE error IS NULL") == [(CELLS,)]
        assert judgments(db) == {BATCH_JUDGE: CELLS}
        assert judgments(db, ok=False) == {SRV_JUDGE: CELLS}
        assert judge_requests(srv) == CELLS  # tried once each; not again every poll
        down = False
        done = cli("status", "--db", db)
        assert done.returncode == 0, done.stderr
        assert f"{SRV_JUDGE}: {CELLS} answers judged now" in done.stderr
        assert judgments(db) == {BATCH_JUDGE: CELLS, SRV_JUDGE: CELLS}
        assert judgments(db, ok=False) == {}
        assert judge_requests(srv) == 2 * CELLS


def test_the_srv_judge_keeps_to_the_runs_budget(tmp_path: Path) -> None:
    """The stored run's --max-cost bounds what status spends on it: a srv request's maximum
    cost (10,000 USD per Mtok) does not fit in 1 USD, so none is sent, and status says so."""
    with BatchServer(reply=reply) as batch, FakeLLMServer(reply=reply) as srv:
        db = submitted(tmp_path, batch, srv, max_cost=1.0, allow_unpriced=True)
        held = cli("status", "--wait", "--db", db)
        assert held.returncode == 5, held.stderr
        assert (
            f"{SRV_JUDGE}: {CELLS} answers await it: not sent: over the run's --max-cost "
            f"budget; `deflectbench judge -j {SRV_JUDGE} -c RUN.toml --max-cost USD` judges "
            "them with a larger one"
        ) in held.stderr
        assert judgments(db) == {BATCH_JUDGE: CELLS}
        assert judge_requests(srv) == 0


def test_ctrl_c_while_status_judges_stops_cleanly_and_the_next_status_completes(
    tmp_path: Path,
) -> None:
    """First Ctrl-C: no new request to the srv judge, the one in flight is stored, exit 130
    with a line; nothing is judged twice, and the next status judges the rest."""
    import signal

    from support.cli_runs import signal_when

    with (
        BatchServer(reply=reply) as batch,
        FakeLLMServer(reply=reply, latency=0.6) as srv,
    ):
        db = submitted(tmp_path, batch, srv, {"max_concurrency": 1, "max_retries": 0})
        rc, _, stderr = signal_when(
            cli.command("status", "--wait", "--db", db),
            lambda: judge_requests(srv) >= 1,
            sig=signal.SIGINT,
            wait_s=120,
            pause=lambda: 0.2,
            env=cli.environ(),
            capture=True,
        )
        assert rc == 130, stderr
        assert "stopped: what finished is stored" in stderr and "Traceback" not in stderr
        partial = judgments(db).get(SRV_JUDGE, 0)
        assert 1 <= partial < CELLS, (partial, stderr)
        assert judgments(db, ok=False) == {}  # stopping is no failure: nothing on record
        done = cli("status", "--wait", "--db", db)
        assert done.returncode == 0, done.stderr
        assert judgments(db) == {BATCH_JUDGE: CELLS, SRV_JUDGE: CELLS}
        per_answer = query(db, "SELECT gen_id, judge, count(*) FROM judgments GROUP BY 1, 2")
        assert {n for *_, n in per_answer} == {1}
        assert judge_requests(srv) == CELLS  # none sent twice
