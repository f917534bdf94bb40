"""One pipeline for a whole run: limits belong to provider sections, judges go first, every
model and judge at once. Through ``run.execute`` and the OpenAI SDK against a local server
(counting requests in flight at the server), and the engine's lanes directly."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Sequence

import pytest
from rich.console import Console

from deflectbench.cli.live import LiveBoard, log_line, render
from deflectbench.engine import Engine, EnginePolicy, Failure
from deflectbench.execute import RunOptions, execute
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
    Usage,
)
from deflectbench.pipeline import Board, Requests
from deflectbench.store import Store
from support.fakes import build, is_judge_request, plan_for, reply, run_once
from support.servers import FakeLLMServer, RecordedRequest

CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral"]


def kind(req: RecordedRequest) -> str:
    return "judge" if is_judge_request(req) else "generation"


def one_section(server: FakeLLMServer, **section: object) -> dict[str, dict[str, object]]:
    """One provider section serving both the subject model and the judge."""
    return {"acct": {"base_url": server.openai_base_url, "max_retries": 0, **section}}


# -- limits belong to provider sections ------------------------------------------------------


def test_a_judge_and_a_model_on_one_section_never_exceed_its_limit_together(
    tmp_path, benchmark
) -> None:
    with FakeLLMServer(reply=reply, latency=0.03, kind=kind) as server:
        plan = plan_for(
            benchmark,
            models=["acct/subject"],
            judges=["acct/judge", "lexical"],
            claims=CLAIMS,
            templates=TEMPLATES,
            runs=2,
        )
        report = run_once(
            tmp_path / "r.db", benchmark, plan, one_section(server, max_concurrency=4)
        )
        stats = server.stats
        requests = list(server.requests)
    assert report.complete, report.account()
    assert report.judging["acct/judge"].ok == report.judging["lexical"].ok == 24
    assert stats.max_active == 4  # the section's limit, used in full and never passed
    assert stats.max_active_by_kind["generation"] >= 1 and stats.max_active_by_kind["judge"] >= 1
    # Judged as it lands: the first verdict was asked for long before the last generation.
    first_judge = min(r.index for r in requests if kind(r) == "judge")
    last_generation = max(r.index for r in requests if kind(r) == "generation")
    assert first_judge < last_generation / 2


def test_a_per_model_cap_within_the_section(tmp_path, benchmark) -> None:
    with FakeLLMServer(reply=reply, latency=0.03, kind=kind) as server:
        configs = one_section(server, max_concurrency=4, model_max_concurrency={"subject": 1})
        plan = plan_for(
            benchmark,
            models=["acct/subject"],
            judges=["acct/judge"],
            claims=CLAIMS,
            templates=TEMPLATES,
        )
        report = run_once(tmp_path / "r.db", benchmark, plan, configs)
        stats = server.stats
    assert report.complete, report.account()
    assert stats.max_active_by_kind["generation"] == 1
    assert stats.max_active <= 4


def test_two_sections_on_one_server_each_keep_their_own_limit(tmp_path, benchmark) -> None:
    """Limits are the section's: another section is another account with its own."""
    with FakeLLMServer(reply=reply, latency=0.03, kind=kind) as server:
        configs = {
            "gen": {"base_url": server.openai_base_url, "max_concurrency": 2, "max_retries": 0},
            "jdg": {"base_url": server.openai_base_url, "max_concurrency": 3, "max_retries": 0},
        }
        plan = plan_for(
            benchmark,
            models=["gen/a", "gen/b"],
            judges=["jdg/j"],
            claims=CLAIMS,
            templates=TEMPLATES,
        )
        report = run_once(tmp_path / "r.db", benchmark, plan, configs)
        stats = server.stats
    assert report.complete, report.account()
    assert stats.max_active_by_kind["generation"] == 2  # two models, one limit of 2
    assert stats.max_active_by_kind["judge"] <= 3
    assert stats.max_active <= 5


# -- judges first ----------------------------------------------------------------------------


def test_judging_goes_before_new_generations_on_a_shared_section(tmp_path, benchmark) -> None:
    with FakeLLMServer(reply=reply, latency=0.01) as server:
        plan = plan_for(
            benchmark, models=["acct/subject"], judges=["acct/judge"], claims=CLAIMS[:2]
        )
        report = run_once(
            tmp_path / "r.db", benchmark, plan, one_section(server, max_concurrency=1)
        )
        kinds = [kind(r) for r in sorted(server.requests, key=lambda r: r.index)]
    assert report.complete, report.account()
    # One slot: each answer is judged before the next generation starts.
    assert kinds == ["generation", "judge"] * 4


def test_a_judge_item_takes_the_slot_after_a_pacer_wait() -> None:
    """With a requests-per-minute pacer, the slot goes to a judge item that arrived during the
    wait (queued, or held by another worker pacing it), not to the generation picked before:
    no generation is sent while a judge item waits."""
    log: list[tuple[str, int]] = []
    waiting: set[int] = set()

    async def main() -> None:
        engine = Engine()
        judge_lane = None

        async def gen_call(item: int) -> Completion:
            log.append(("gen", len(waiting)))
            await asyncio.sleep(0.03)
            return Completion(text=str(item))

        async def judge_call(item: int) -> Completion:
            waiting.discard(item)
            log.append(("judge", len(waiting)))
            await asyncio.sleep(0.03)
            return Completion(text=str(item))

        def gen_done(item: int, completion: Completion | None, failure: Failure | None) -> None:
            assert judge_lane is not None
            waiting.add(item)
            judge_lane.add(item)

        policy = EnginePolicy(max_concurrency=3, requests_per_minute=1500, rate_headroom=1.0)
        gen = engine.lane(
            "gen", gen_call, gen_done, policy, account="shared", priority=0, items=range(12)
        )
        judge_lane = engine.lane(
            "judge", judge_call, lambda *a: None, policy, account="shared", priority=1, feeds=1
        )
        gen.on_finished.append(judge_lane.close_feed)
        await engine.run()
        assert gen.stats.ok == judge_lane.stats.ok == 12

    asyncio.run(main())
    assert [w for k, w in log if k == "gen"] == [0] * 12
    assert sum(k == "judge" for k, _ in log) == 12


def test_lanes_on_one_account_share_its_pacer_and_its_adaptive_limit() -> None:
    sent: list[float] = []
    seen = {"n": 0}

    async def main() -> tuple[Engine, list]:
        engine = Engine()

        async def call(item: int) -> Completion:
            seen["n"] += 1
            sent.append(time.monotonic())
            if seen["n"] == 1:
                raise ModelError("429", retryable=True, status=429, rate_limited=True)
            return Completion(text="ok")

        policy = EnginePolicy(
            max_concurrency=8, requests_per_minute=1200, rate_headroom=1.0, backoff_base_s=0.001
        )
        lanes = [
            engine.lane(n, call, lambda *a: None, policy, account="acct", items=range(20))
            for n in ("a", "b")
        ]
        await engine.run()
        return engine, lanes

    engine, lanes = asyncio.run(main())
    # One pacer for both lanes: 41 requests at 20 a second take two seconds, not one.
    assert 40 / (sent[-1] - sent[0]) <= 20.5
    # One 429 halves the account's limit: both lanes saw it.
    assert all(lane.stats.lowest_concurrency == 4 for lane in lanes)
    assert engine.accounts["acct"].max_in_flight <= 8


def test_a_stopped_run_leaves_judged_cells_not_many_unjudged(tmp_path, benchmark) -> None:
    with FakeLLMServer(reply=reply, latency=0.02) as server:
        plan = plan_for(
            benchmark,
            models=["acct/subject"],
            judges=["acct/judge"],
            claims=CLAIMS,
            templates=TEMPLATES,
            runs=3,
        )
        models = build([*plan.models, *plan.judges], one_section(server, max_concurrency=2))
        with Store.open(tmp_path / "r.db") as store:
            report = asyncio.run(
                execute(
                    store,
                    benchmark,
                    plan,
                    models,
                    RunOptions(),
                    should_stop=lambda: len(server.requests) >= 20,
                )
            )
            answers = len(store.generation_rows())
            judged = len(store.judgment_rows())
    assert report.stop_reason == "interrupted" and not report.complete
    assert 8 <= answers < 36
    # The judge's items went first: what is unjudged is at most what was in flight.
    assert answers - judged <= 2 * 2


# -- the local model and the lexical judge in the same run ------------------------------------


class SlowLocal(Model):
    """An in-process model: one request at a time (its provider's limit is 1)."""

    limits = Limits(max_concurrency=1)
    default_max_tokens = 32

    def __init__(self, name: str, store_path) -> None:
        self.name = name
        self.active = 0
        self.most = 0
        self.lexical_seen: list[int] = []
        self.store_path = store_path

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        self.active += 1
        self.most = max(self.most, self.active)
        with Store.open(self.store_path) as store:
            self.lexical_seen.append(store.status()["judges"].get("lexical", {}).get("judged", 0))
        try:
            await asyncio.sleep(0.01)
        finally:
            self.active -= 1
        text = f"But what about the others? ({params.seed})"
        return Completion(text, Usage(10, 6), "stop", 0.01)


def test_the_local_model_and_the_lexical_judge_stream_in_one_run(tmp_path, benchmark) -> None:
    db = tmp_path / "r.db"
    with FakeLLMServer(reply=reply, latency=0.01) as server:
        plan = plan_for(
            benchmark,
            models=["local/slow", "acct/subject"],
            judges=["lexical", "acct/judge"],
            claims=CLAIMS,
            templates=TEMPLATES,
        )
        models = build(["acct/subject", "acct/judge"], one_section(server, max_concurrency=4))
        local = SlowLocal("local/slow", db)
        models["local/slow"] = local
        with Store.open(db) as store:
            board: list[Board] = []
            report = asyncio.run(
                execute(store, benchmark, plan, models, RunOptions(), watch=board.append)
            )
    assert report.complete, report.account()
    assert report.generation["local/slow"].ok == report.generation["acct/subject"].ok == 12
    assert report.judging["lexical"].ok == report.judging["acct/judge"].ok == 24
    assert local.most == 1
    # The lexical judge scored answers while the local model was still generating.
    assert local.lexical_seen[-1] > 0
    (seen,) = board
    assert {p.name for p in seen.providers()} == {"local", "acct"}
    assert {(r.role, r.name) for r in seen.rows} == {
        ("model", "local/slow"),
        ("model", "acct/subject"),
        ("judge", "lexical"),
        ("judge", "acct/judge"),
    }


# -- token estimates -------------------------------------------------------------------------


def test_tokens_are_estimated_before_sending_and_learnt_from_replies() -> None:
    class Fixed(Model):
        name = "x/y"

        async def complete(self, messages, params):  # pragma: no cover - never sent
            raise AssertionError

    def request(text: str):
        return [Message("user", text)], GenerationParams(max_tokens=100), None

    estimate = Requests(Fixed(), None, None, request).estimator(50)
    first = estimate("word " * 40)  # 200 characters: about 50 tokens, plus 50 expected out
    assert 100 <= first <= 130
    estimate.observe(Completion("x", Usage(60, 10)))
    assert estimate("word " * 40) == first - 40
    estimate.observe(Completion("x", Usage(60, 500), cached=True))  # a cache hit teaches nothing
    assert estimate("word " * 40) == first - 40


# -- one live display -------------------------------------------------------------------------


@pytest.fixture
def finished_board(tmp_path, benchmark) -> Board:
    with FakeLLMServer(reply=reply) as server:
        plan = plan_for(benchmark, models=["acct/subject"], judges=["acct/judge", "lexical"])
        models = build([*plan.models, *plan.judges], one_section(server, max_concurrency=2))
        boards: list[Board] = []
        with Store.open(tmp_path / "r.db") as store:
            asyncio.run(execute(store, benchmark, plan, models, watch=boards.append))
    return boards[0]


def test_the_panel_has_a_row_per_model_and_judge_and_a_line_per_provider(finished_board) -> None:
    console = Console(file=io.StringIO(), width=140, record=True)
    console.print(render(finished_board))
    text = console.export_text()
    assert "acct/subject" in text and "judge acct/judge" in text and "judge lexical" in text
    assert "4 / 4" in text
    assert "acct: 0 / 2 in flight" in text
    line = log_line(finished_board)
    assert "\n" not in line and "acct/subject 4/4" in line and "judge lexical 4/4" in line


def test_live_panel_on_a_terminal_and_a_plain_log_elsewhere(finished_board) -> None:
    terminal = Console(file=io.StringIO(), force_terminal=True, width=140)
    with LiveBoard(True, console=terminal) as live:
        live.attach(finished_board)
        time.sleep(0.3)
    assert "acct/subject" in terminal.file.getvalue()
    plain = Console(file=io.StringIO(), force_terminal=False, width=400)
    with LiveBoard(True, console=plain, log_every_s=0.05) as live:
        live.attach(finished_board)
        time.sleep(0.2)
    lines = [x for x in plain.file.getvalue().splitlines() if x]
    assert len(lines) >= 2 and all("acct/subject 4/4" in x for x in lines)
    quiet = Console(file=io.StringIO(), force_terminal=True)
    with LiveBoard(False, console=quiet) as live:
        live.attach(finished_board)
    assert quiet.file.getvalue() == ""


def test_a_resumed_run_shows_nothing_to_do_not_a_0_of_0_bar(tmp_path, benchmark) -> None:
    with FakeLLMServer(reply=reply) as server:
        plan = plan_for(benchmark, models=["acct/subject"], judges=["lexical"])
        models = build([*plan.models, *plan.judges], one_section(server, max_concurrency=2))
        boards: list[Board] = []
        with Store.open(tmp_path / "r.db") as store:
            asyncio.run(execute(store, benchmark, plan, models, watch=boards.append))
            asyncio.run(execute(store, benchmark, plan, models, watch=boards.append))
    console = Console(file=io.StringIO(), width=140, record=True)
    console.print(render(boards[-1]))
    text = console.export_text()
    assert "0 / 0" not in text and "-:--:--" not in text
    assert "nothing to do" in text  # resumed: nothing left for either row
    assert "0/0" not in log_line(boards[-1])
