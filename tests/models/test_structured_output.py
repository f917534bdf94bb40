"""Structured output degrades by itself: a server that rejects ``json_schema`` (as llama.cpp's
does, with HTTP 500 or 400) costs one request per rejected mode, not seven retries per judge
request stored as errors; the judge still judges, through the OpenAI SDK."""

from __future__ import annotations

import asyncio

import pytest

from deflectbench.models.base import GenerationParams, Message
from deflectbench.models.openai_compat import OpenAICompatModel
from support.fakes import is_judge_request, plan_for, reply, run_once, sections
from support.servers import FakeLLMServer

JUDGE = "llamacpp/judge"  # a [providers.llamacpp] section: an OpenAI-compatible server
CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral"]


def formats(requests) -> list[str | None]:
    return [(r.body.get("response_format") or {}).get("type") for r in requests]


@pytest.mark.parametrize(
    ("rejected", "wasted", "settled"),
    [
        (("json_schema",), ["json_schema"], "json_object"),
        (("json_schema", "json_object"), ["json_schema", "json_object"], None),
    ],
)
def test_a_judge_finds_the_format_its_server_takes(
    tmp_path, benchmark, rejected, wasted, settled
) -> None:
    with FakeLLMServer(reply=reply, reject_formats=rejected, latency=0.02) as server:
        plan = plan_for(benchmark, judges=[JUDGE], claims=CLAIMS, templates=TEMPLATES)
        # The engine would retry a 500 six times; rejections must not get that far.
        configs = sections(server)
        configs["llamacpp"]["max_retries"] = 6
        report = run_once(tmp_path / "r.db", benchmark, plan, configs)
        judge_requests = [r for r in server.requests if is_judge_request(r)]
    n = len(plan.cells)
    res = report.judging[JUDGE]
    assert res.ok == n and res.errors == 0 and res.parse_errors == 0
    assert report.complete, report.account()
    # One request per rejected mode, sent before any other (the first requests wait for the
    # mode to be found), then every request in the mode that works.
    assert len(judge_requests) == n + len(wasted)
    sent = formats(sorted(judge_requests, key=lambda r: r.index))
    assert sent[: len(wasted)] == wasted
    assert sent[len(wasted) :] == [settled] * n
    assert server.stats.faults["response_format"] == len(wasted)


def test_the_mode_is_remembered_per_model_object() -> None:
    with FakeLLMServer(reply=lambda r: '{"a": 1}', reject_formats=("json_schema",)) as server:
        model = OpenAICompatModel(
            "llamacpp/judge", "judge", base_url=server.openai_base_url, api_key="EMPTY"
        )
        params = GenerationParams(json_schema={"type": "object"})

        async def go():
            try:
                for _ in range(3):
                    await model.complete([Message("user", "json please")], params)
            finally:
                await model.aclose()

        asyncio.run(go())
        assert model.format_mode == "json_object"
        assert formats(server.requests) == [
            "json_schema",
            "json_object",
            "json_object",
            "json_object",
        ]


def test_a_500_that_is_not_about_the_format_is_an_ordinary_error() -> None:
    with FakeLLMServer(schedule=["500"]) as server:
        model = OpenAICompatModel(
            "llamacpp/judge", "judge", base_url=server.openai_base_url, api_key="EMPTY"
        )
        params = GenerationParams(json_schema={"type": "object"})

        async def go():
            try:
                with pytest.raises(Exception) as info:
                    await model.complete([Message("user", "json please")], params)
                return info.value
            finally:
                await model.aclose()

        exc = asyncio.run(go())
        assert getattr(exc, "retryable", False) and getattr(exc, "status", None) == 500
        assert model.format_mode == "json_schema"  # not degraded by an unrelated failure
        assert len(server.requests) == 1
