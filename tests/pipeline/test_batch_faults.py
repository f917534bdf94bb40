"""Batch mode's faults, in process, through the official SDKs against the batch emulators:
a batch that expires with part of its items done, items that error, a garbled result line,
the APIs' limits, the budget, cancelling; and a batch line is the normal path's request."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.config import ConfigError, RunConfig, build_models, load_run_file, resolve_run
from deflectbench.cost import CostMeter
from deflectbench.execute import RunOptions, estimate
from deflectbench.judging.judges import ModelJudge
from deflectbench.models.base import GenerationParams, Message
from deflectbench.models.providers import build_api_model
from deflectbench.pipeline.batches import MAX_ATTEMPTS, BatchMode, Limits, cell_id
from deflectbench.pipeline.context import RunContext
from deflectbench.store import Store
from support.batch_servers import BatchServer, Faults
from support.fakes import VERDICT, is_judge_request
from support.servers import FakeLLMServer, RecordedRequest

ENV = {"OPENAI_API_KEY": "sk-local-test", "ANTHROPIC_API_KEY": "sk-ant-local-test"}
NAMES = {"openai": "openai/gpt-5-mini", "anthropic": "anthropic/claude-haiku-4-5"}
B = default_benchmark()
CELLS = [
    (c.claim_id, t, s)
    for c in B.claims[:3]
    for t in [t.prompt_id for t in B.templates[:2]]
    for s in (0, 1)
]
SETTINGS = {"seed": 0, "temperature": 1.0, "max_tokens": 64, "judges": []}
SETTINGS_PARAMS = GenerationParams(temperature=0.7, max_tokens=64, seed=5)
_replies = itertools.count()


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return f"What about the other side? (answer {next(_replies)})"


def model(wire: str, server: BatchServer | FakeLLMServer, **section: Any) -> Any:
    url = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    return build_api_model(NAMES[wire], {"base_url": url, **section}, ENV)


def mode_for(
    tmp_path: Path, wire: str, server: BatchServer, budget_usd: float | None = None, **kwargs: Any
) -> tuple[Store, BatchMode]:
    store = Store.open(tmp_path / f"{wire}.db")
    m = model(wire, server)
    ctx = RunContext(store, B, meter=CostMeter(budget_usd))
    return store, BatchMode(ctx, {m.name: m}, **kwargs)


_LOOP: dict[int, asyncio.AbstractEventLoop] = {}


def run(mode: BatchMode, *steps: Callable[[], Any]) -> None:
    """Each step in turn, on the mode's own event loop (its SDK clients' connections live on
    it, as in one process collecting several times)."""
    loop = _LOOP.setdefault(id(mode), asyncio.new_event_loop())
    for step in steps:
        loop.run_until_complete(step())


def submit(mode: BatchMode, wire: str, cells: list = CELLS) -> Callable[[], Any]:
    return lambda: mode.submit_generations(NAMES[wire], cells, "c", SETTINGS)


def stored(store: Store, wire: str, *, ok: bool = True) -> int:
    where = "error IS NULL" if ok else "error IS NOT NULL"
    sql = f"SELECT count(*) FROM generations WHERE model = ? AND {where}"
    return int(store.conn.execute(sql, (NAMES[wire],)).fetchone()[0])


def submitted(server: BatchServer, wire: str, custom_id: str) -> int:
    return server.submissions[(wire, NAMES[wire].split("/", 1)[1], custom_id)]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_batch_that_expires_half_done_is_sent_again_and_failing_until_done(
    tmp_path: Path, wire: str
) -> None:
    with BatchServer(
        reply=reply, faults=Faults(expire=lambda b: 0.5 if b.index == 0 else None)
    ) as server:
        store, mode = mode_for(tmp_path, wire, server)
        run(mode, submit(mode, wire), mode.collect)
        half = len(CELLS) // 2
        assert stored(store, wire) == half
        assert mode.summary.resent == {NAMES[wire]: half}
        assert "expired" in mode.summary.problems[0] or "ended" in mode.summary.problems[0]
        assert f"{half} of {len(CELLS)} done" in mode.summary.problems[0]
        # visible until done: the resent items are open with attempt 2
        assert list(store.batch_failures()) == [(NAMES[wire], "generation", half)]
        run(mode, mode.collect)
        assert stored(store, wire) == len(CELLS)
        assert list(store.batch_failures()) == []
        counts = [submitted(server, wire, cell_id(c)) for c in CELLS]
        assert counts == [1] * half + [2] * half  # done ones were never sent again


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_items_that_always_error_are_given_up_as_error_rows(tmp_path: Path, wire: str) -> None:
    bad = {cell_id(c) for c in CELLS if c[2] == 0}
    with BatchServer(reply=reply, faults=Faults(error_item=lambda cid: cid in bad)) as server:
        store, mode = mode_for(tmp_path, wire, server)
        run(mode, submit(mode, wire), *[mode.collect] * MAX_ATTEMPTS)
        assert stored(store, wire) == len(CELLS) - len(bad)
        assert stored(store, wire, ok=False) == len(bad)
        assert mode.summary.given_up == {NAMES[wire]: len(bad)}
        assert {submitted(server, wire, cid) for cid in bad} == {MAX_ATTEMPTS}
        error = store.conn.execute("SELECT error FROM generations WHERE error IS NOT NULL")
        assert "batch errored" in error.fetchone()[0]
        assert list(store.batch_failures()) == []  # given up: no longer pending


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_garbled_result_line_loses_only_its_item(tmp_path: Path, wire: str) -> None:
    target = cell_id(CELLS[3])
    seen: set[str] = set()

    def garble(cid: str) -> bool:
        first = cid == target and cid not in seen
        seen.add(cid)
        return first

    with BatchServer(reply=reply, faults=Faults(garble=garble)) as server:
        store, mode = mode_for(tmp_path, wire, server)
        run(mode, submit(mode, wire), mode.collect)
        assert stored(store, wire) == len(CELLS) - 1
        assert mode.summary.garbled == 1
        assert "1 unreadable result lines" in mode.summary.problems[0]
        run(mode, mode.collect)
        assert stored(store, wire) == len(CELLS)
        assert submitted(server, wire, target) == 2


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_batches_are_split_by_the_apis_request_and_byte_limits(tmp_path: Path, wire: str) -> None:
    with BatchServer(reply=reply, faults=Faults(max_requests=5)) as server:
        _, mode = mode_for(tmp_path, wire, server, limits={wire: Limits(5, 10**9)})
        run(mode, submit(mode, wire))
        assert mode.summary.new_batches == 3  # 12 cells, at most 5 a batch
        assert sorted(len(b.requests) for b in server.batches.values()) == [2, 5, 5]
    with BatchServer(reply=reply) as server:
        (tmp_path / "x").mkdir()
        _, mode = mode_for(tmp_path / "x", wire, server, limits={wire: Limits(10**6, 4000)})
        run(mode, submit(mode, wire))
        sizes = [len(json.dumps([r for r in b.requests])) for b in server.batches.values()]
        assert len(sizes) > 1 and max(sizes) < 4000
        assert sum(len(b.requests) for b in server.batches.values()) == len(CELLS)


def test_the_budget_is_reserved_before_submitting(tmp_path: Path) -> None:
    with BatchServer(reply=reply) as server:
        store, mode = mode_for(tmp_path, "openai", server, budget_usd=0.0007)
        run(mode, submit(mode, "openai"))
        sent = sum(len(b.requests) for b in server.batches.values())
        assert 0 < sent < len(CELLS)
        assert mode.summary.withheld == {NAMES["openai"]: len(CELLS) - sent}
        assert 0 < store.batch_reserved_usd() <= 0.0007
        run(mode, mode.collect)
        assert store.batch_reserved_usd() == 0
        assert 0 < store.spent_usd() <= 0.0007


def test_cancelled_batches_leave_their_cells_missing_not_failed(tmp_path: Path) -> None:
    with BatchServer(reply=reply, faults=Faults(polls_to_end=99)) as server:
        store, mode = mode_for(tmp_path, "anthropic", server)
        run(mode, submit(mode, "anthropic"), mode.cancel, mode.collect)
        assert stored(store, "anthropic") == 0
        assert stored(store, "anthropic", ok=False) == 0  # no error rows: simply not done
        assert store.batch_list(open_only=True) == []
        assert mode.summary.resent == {}
        run(mode, submit(mode, "anthropic"))  # a later run sends them again
        assert len(server.batches) == 2


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_batch_line_is_the_request_the_normal_path_sends(wire: str) -> None:
    """Generation and judge requests, extra_body included: the same JSON body both ways."""
    with FakeLLMServer(reply=reply) as server:
        m = model(wire, server, extra_body={"metadata_tag": "x"})
        judge = ModelJudge(m, B.rubric)
        requests = [
            ([Message("user", B.render(*CELLS[0][:2]))], SETTINGS_PARAMS),
            (judge.messages("a claim", "a response"), judge.params()),
        ]

        async def send() -> None:
            for messages, params in requests:
                await m.complete(messages, params)
            await m.aclose()

        asyncio.run(send())
        for (messages, params), sent in zip(requests, server.requests, strict=True):
            assert m.wire_body(messages, params) == sent.body


def test_the_dry_run_applies_the_batch_discount(tmp_path: Path) -> None:
    flags = RunConfig(models=[NAMES["openai"]], judges=["lexical"], claims=["L1_US_01"])
    settings = resolve_run(B, flags)
    models = build_models(
        settings.plan.models, [], {"openai": {"base_url": "http://127.0.0.1:9/v1"}}, dry_run=True
    )
    with Store.open(tmp_path / "e.db") as store:
        normal = estimate(store, B, settings.plan, models)
        batch = estimate(store, B, settings.plan, models, RunOptions(batch=True))
    assert batch[0].cost_usd == pytest.approx(normal[0].cost_usd / 2)
    assert batch[0].cost_usd_max == pytest.approx(normal[0].cost_usd_max / 2)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_typed_non_answers_are_stored_as_such_and_never_judged(tmp_path: Path, wire: str) -> None:
    refused = {B.render(*CELLS[0][:2])}  # the prompt of the first two cells (both samples)
    llm = FakeLLMServer(
        reply=reply,
        record=False,
        non_answer=lambda req: "refusal" if req.prompt in refused else None,
    )
    with BatchServer(llm=llm) as server:
        store = Store.open(tmp_path / "n.db")
        m = model(wire, server)
        mode = BatchMode(RunContext(store, B), {m.name: m})
        settings = {**SETTINGS, "judges": ["lexical"]}
        run(mode, lambda: mode.submit_generations(m.name, CELLS, "c", settings), mode.collect)
        reasons = dict(
            store.conn.execute(
                "SELECT finish_reason, count(*) FROM generations GROUP BY 1"
            ).fetchall()
        )
        assert reasons.get("refusal") == 2
        judged = store.conn.execute("SELECT count(*) FROM judgments").fetchone()[0]
        assert judged == len(CELLS) - 2  # the lexical judge scored every answer, no refusal


@pytest.mark.parametrize(
    ("entry", "share"),
    [
        ("", 0.5),  # an openai/ model: its batch API's rate unless the entry says otherwise
        ("batch_discount = 0.25\n", 0.75),
        ("batch_discount = 0\n", 1.0),
    ],
)
def test_a_run_files_prices_carry_the_batch_discount(tmp_path: Path, entry: str, share: float):
    name = NAMES["openai"]
    toml = tmp_path / "run.toml"
    toml.write_text(
        f'[prices."{name}"]\ninput_per_mtok = 10.0\noutput_per_mtok = 40.0\n{entry}',
        encoding="utf-8",
    )
    file = load_run_file(toml)
    flags = RunConfig(models=[name], judges=["lexical"], claims=["L1_US_01"])
    settings = resolve_run(B, file.config().merged(flags))
    models = build_models(
        settings.plan.models, [], {"openai": {"base_url": "http://127.0.0.1:9/v1"}}, dry_run=True
    )
    with Store.open(tmp_path / "e.db") as store:
        normal = estimate(store, B, settings.plan, models, RunOptions(prices=settings.prices))
        batch = estimate(
            store, B, settings.plan, models, RunOptions(batch=True, prices=settings.prices)
        )
    assert normal[0].cost_usd > 0
    assert batch[0].cost_usd == pytest.approx(normal[0].cost_usd * share)


def test_a_batch_discount_of_one_or_more_is_refused(tmp_path: Path) -> None:
    toml = tmp_path / "run.toml"
    toml.write_text(
        '[prices."openai/x"]\ninput_per_mtok = 1\noutput_per_mtok = 1\nbatch_discount = 1\n'
    )
    with pytest.raises(ConfigError, match="batch_discount"):
        load_run_file(toml)
