"""What comes back: typed non-answers, keys echoed in replies, and a store that cannot write.

Through the official SDKs against local servers speaking both wires: non-answers are stored
as typed generations, counted and never judged; a reply echoing the API key leaks it neither
into the store nor onto stdout; a store failure stops the run and is never an error row."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from typing import ClassVar

import pytest

from deflectbench.execute import RunOptions
from deflectbench.models.base import GenerationParams, Message
from deflectbench.models.cache import CachedModel, request_key
from deflectbench.pipeline import RunContext, generate
from deflectbench.store import Store, StoreError
from support.fakes import (
    JUDGE,
    OPENAI_KEY,
    SUBJECT,
    build,
    is_judge_request,
    plan_for,
    reply,
    run_once,
    sections,
)
from support.servers import REFUSAL_TEXT, FakeLLMServer, RecordedRequest

CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_01"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH"]
KINDS = ["content_filter", "refusal", "null", "blank"]


def non_answers_for(b, kinds: list[str]):
    """A server behaviour: the first cells' prompts get the given non-answers."""
    prompts = [b.render(c, t) for c in CLAIMS for t in TEMPLATES]
    chosen = dict(zip(prompts, kinds, strict=False))

    def behaviour(req: RecordedRequest):
        return None if is_judge_request(req) else chosen.get(req.prompt)

    return behaviour


def test_openai_non_answers_are_typed_stored_counted_and_never_judged(tmp_path, benchmark):
    with FakeLLMServer(reply=reply, non_answer=non_answers_for(benchmark, KINDS)) as server:
        plan = plan_for(
            benchmark, judges=["lexical", JUDGE], claims=CLAIMS, templates=TEMPLATES, max_tokens=6
        )
        report = run_once(tmp_path / "r.db", benchmark, plan, sections(server))
        judge_requests = [r for r in server.requests if is_judge_request(r)]
    gen = report.generation[SUBJECT]
    assert gen.non_answers == {"content_filter": 1, "refusal": 1, "empty": 2}
    assert gen.ok == 2 and gen.errors == 0
    # The two answers ran into the 6-token cap: truncated answers are answers, and judged.
    assert gen.truncated == 2
    assert len(judge_requests) == 2
    assert report.judging[JUDGE].ok == report.judging["lexical"].ok == 2
    assert report.complete, report.account()
    assert "no answer: empty x2" in report.account()
    with Store.open(tmp_path / "r.db") as store:
        rows = store.generation_rows(columns=["response", "finish_reason", "error"])
        status = store.status()["models"][SUBJECT]
    by_reason = {}
    for r in rows:
        assert r["error"] is None
        by_reason.setdefault(r["finish_reason"], []).append(r["response"])
    assert by_reason["content_filter"] == [""]
    assert by_reason["refusal"] == [REFUSAL_TEXT]
    assert sorted(by_reason["empty"]) == ["", "   \n"]
    assert len(by_reason["length"]) == 2
    assert status["non_answers"] == {"content_filter": 1, "refusal": 1, "empty": 2}
    assert status["ok"] == 2 and status["truncated"] == 2


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("refusal", "refusal"), ("content_filter", "refusal"), ("null", "empty"), ("blank", "empty")],
)
def test_anthropic_non_answers_are_typed(kind, expected):
    from deflectbench.models.anthropic_api import AnthropicModel
    from deflectbench.models.base import Limits

    with FakeLLMServer(non_answer=lambda req: kind) as server:
        model = AnthropicModel(
            "anthropic/claude-test",
            "claude-test",
            api_key=OPENAI_KEY,
            base_url=server.anthropic_base_url,
            limits=Limits(timeout_s=5),
        )

        async def go():
            try:
                return await model.complete([Message("user", "hi")], GenerationParams())
            finally:
                await model.aclose()

        completion = asyncio.run(go())
    assert completion.finish_reason == expected


def test_a_key_echoed_in_replies_reaches_neither_store_nor_stdout(
    tmp_path, benchmark, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)  # the judge's
    monkeypatch.setenv("VLLM_API_KEY", OPENAI_KEY)  # the subject's ([providers.vllm])
    db = tmp_path / "r.db"
    with FakeLLMServer(reply=reply, echo_key=True) as server:
        plan = plan_for(benchmark, judges=["lexical", JUDGE], max_tokens=64)
        report = run_once(db, benchmark, plan, sections(server), env=os.environ)
        replies = [r for r in server.requests if r.headers.get("authorization")]
    assert report.complete, report.account()
    assert all(r.headers["authorization"] == f"Bearer {OPENAI_KEY}" for r in replies)
    print(report.account(), report.generation, report.judging)
    with Store.open(db) as store:
        responses = [r["response"] for r in store.generation_rows()]
        raws = [r["raw"] for r in store.judgment_rows() if r["judge"] == JUDGE]
        cached = [r[0] for r in store.conn.execute("SELECT text FROM request_cache")]
    assert all("you sent me [redacted]" in t or "[REDACTED]" in t for t in responses)
    assert len(raws) == 4 and all(r and "sent me [REDACTED]" in r for r in raws)
    assert report.judging[JUDGE].parse_errors == 0  # the verdict still parses
    assert len(cached) == 8
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert OPENAI_KEY.encode() not in blob and OPENAI_KEY[:16].encode() not in blob
    out = capsys.readouterr()
    assert OPENAI_KEY not in out.out + out.err


def test_a_key_kept_in_an_old_cache_entry_is_scrubbed_on_the_way_out(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "sk-old-cache-secret-0123456789")
    with FakeLLMServer() as server, Store.open(tmp_path / "r.db") as store:
        model = build(["vllm/x"], sections(server))["vllm/x"]
        messages, params = [Message("user", "hi")], GenerationParams(seed=1)
        key = request_key(model.name, messages, params, 1)
        store.cache_put(key, model.name, "leak: sk-old-cache-secret-0123456789", 1, 2, "stop")
        hit = CachedModel(model, store).lookup(messages, params, 1)
        assert hit is not None and hit.text == "leak: [redacted]"


class BusyStore(Store):
    """A store whose writes of results fail as a locked SQLite file does."""

    busy: ClassVar[set[str]] = set()

    def add_generation(self, rec):
        if "add_generation" in self.busy:
            raise sqlite3.OperationalError("database is locked")
        super().add_generation(rec)

    def cache_put(self, *args):
        if "cache_put" in self.busy:
            raise sqlite3.OperationalError("database is locked")
        super().cache_put(*args)


@pytest.mark.parametrize("where", ["add_generation", "cache_put"])
def test_a_busy_store_stops_the_run_and_stores_no_error_row(tmp_path, benchmark, where):
    cells = plan_for(benchmark).cells
    with FakeLLMServer(reply=reply, latency=0.02) as server:
        model = build([SUBJECT], sections(server))[SUBJECT]
        with BusyStore.open(tmp_path / "r.db") as store:
            BusyStore.busy = {where}

            async def go():
                try:
                    return await generate(RunContext(store, benchmark, "r"), model, cells)
                finally:
                    await model.aclose()

            with pytest.raises(StoreError, match=r"could not save a result.*database is locked"):
                asyncio.run(go())
            BusyStore.busy = set()
            rows = store.generation_rows()
            assert [r for r in rows if r["error"] is not None] == []
        assert server.requests  # the requests were answered: a store failure is no error row


def test_run_options_label_reaches_the_run_record(tmp_path, benchmark):
    with FakeLLMServer(reply=reply) as server:
        report = run_once(
            tmp_path / "r.db",
            benchmark,
            plan_for(benchmark, max_tokens=16),
            sections(server),
            RunOptions(label="baseline"),
        )
    with Store.open(tmp_path / "r.db") as store:
        (run,) = store.runs()
    assert run["config"]["conditions"] == {SUBJECT: "baseline"} == report.conditions


@pytest.mark.parametrize(
    ("raw", "text", "expected"),
    [
        ("stop", "hi", "stop"),
        ("end_turn", "hi", "stop"),
        ("tool_use", "{}", "stop"),
        ("length", "hi", "length"),
        ("max_tokens", "hi", "length"),
        ("content_filter", "", "content_filter"),
        ("content_filter", "half a repl", "content_filter"),
        ("refusal", "", "refusal"),
        ("stop", "", "empty"),
        ("stop", " \n\t", "empty"),
        (None, "", "empty"),
        ("length", "", "empty"),  # cut at the cap before any text: no answer to judge
        ("tool_calls", "x", "tool_calls"),  # anything else passes through as sent
        ("pause_turn", "x", "pause_turn"),
        (None, "x", None),
    ],
)
def test_finish_reasons_in_one_vocabulary(raw, text, expected) -> None:
    from deflectbench.models.base import finish_reason

    assert finish_reason(raw, text) == expected


def test_a_judge_reply_that_is_no_answer_is_a_parse_error_naming_why(tmp_path, benchmark):
    def filtered(req):
        return "content_filter" if is_judge_request(req) else None

    with FakeLLMServer(reply=reply, non_answer=filtered) as server:
        plan = plan_for(benchmark, judges=[JUDGE])
        report = run_once(tmp_path / "r.db", benchmark, plan, sections(server))
    res = report.judging[JUDGE]
    assert res.ok == 4 and res.parse_errors == 4 and res.non_answers == {"content_filter": 4}
    assert "content_filter" in (res.parse_error_example or "")
    assert not report.complete
