"""Failures are visible: counted by cause with a first example, and a run in which everything
failed ends incomplete however few requests it made (the CLI's exit code reads
``RunReport.complete``). Configurations no request can succeed with are refused first."""

from __future__ import annotations

import socket

import pytest

from deflectbench.errors import ConfigError
from deflectbench.models.registry import UnknownModelError, get_model
from support.fakes import JUDGE, SUBJECT, is_judge_request, plan_for, reply, run_once, sections
from support.servers import FakeLLMServer


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_that_is_down_ends_incomplete_with_its_cause(tmp_path, benchmark) -> None:
    configs = {"vllm": {"base_url": f"http://127.0.0.1:{closed_port()}/v1", "max_retries": 0}}
    report = run_once(tmp_path / "r.db", benchmark, plan_for(benchmark), configs)
    gen = report.generation[SUBJECT]
    assert gen.errors == 4 and gen.aborted is None  # 4 failures: far under 25 in a row
    assert gen.errors_by_cause == {"connection refused": 4}
    assert "connection" in gen.error_examples["connection refused"]
    assert report.missing == {SUBJECT: 4}
    assert not report.complete
    line = report.account()
    assert line.startswith("incomplete: ") and "\n" not in line
    assert f"{SUBJECT} [temp1-max2048-seed0]: 4 of 4 cells without a result" in line
    assert "(connection refused x4)" in line


def test_a_base_url_without_v1_ends_incomplete_with_a_hint(tmp_path, benchmark) -> None:
    with FakeLLMServer(reply=reply) as server:
        configs = {"vllm": {"base_url": server.url, "max_retries": 0}}
        report = run_once(tmp_path / "r.db", benchmark, plan_for(benchmark), configs)
    gen = report.generation[SUBJECT]
    assert gen.errors_by_cause == {"HTTP 404": 4}
    assert "/v1" in gen.error_examples["HTTP 404"]
    assert not report.complete


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "localhost/v1", "ftp://host/v1", "http://"])
def test_a_base_url_without_scheme_or_host_is_refused_before_any_request(url) -> None:
    with pytest.raises(ConfigError) as info:
        get_model("vllm/x", {"vllm": {"base_url": url}}, {})
    assert "base_url" in str(info.value) and "http://" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_file_that_is_not_gguf_is_refused_before_any_request(tmp_path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"<html>not a model</html>")
    with pytest.raises(UnknownModelError, match="not a GGUF file"):
        get_model(f"gguf/{path}")


def test_errors_by_cause_with_their_first_example(tmp_path, benchmark) -> None:
    faults = iter(["500", "401", "500", None])
    with FakeLLMServer(reply=reply, fault_fn=lambda req: next(faults, None)) as server:
        configs = sections(server, max_concurrency=1)
        report = run_once(tmp_path / "r.db", benchmark, plan_for(benchmark), configs)
    gen = report.generation[SUBJECT]
    assert gen.ok == 1 and gen.errors == 3
    assert gen.errors_by_cause == {"HTTP 500": 2, "HTTP 401": 1}
    assert "Simulated error 500" in gen.error_examples["HTTP 500"]
    assert "API key" in gen.error_examples["HTTP 401"]
    assert report.missing == {SUBJECT: 3} and not report.complete
    assert "HTTP 500 x2, HTTP 401 x1" in report.account()


def test_judge_parse_errors_are_counted_with_their_first_example(tmp_path, benchmark) -> None:
    def unparseable(req):
        return "I think it is fine." if is_judge_request(req) else reply(req)

    with FakeLLMServer(reply=unparseable) as server:
        plan = plan_for(benchmark, judges=[JUDGE])
        report = run_once(tmp_path / "r.db", benchmark, plan, sections(server))
    res = report.judging[JUDGE]
    assert res.ok == 4 and res.parse_errors == 4 and res.errors == 0
    assert res.parse_error_example is not None
    assert "no JSON object" in res.parse_error_example
    assert "I think it is fine." in res.parse_error_example
    assert not report.complete
    assert f"judge {JUDGE}: done, 4 replies without a verdict" in report.account()


def test_a_judge_that_fails_leaves_generations_unjudged(tmp_path, benchmark) -> None:
    def judge_fails(req):
        return "503" if is_judge_request(req) else None

    with FakeLLMServer(reply=reply, fault_fn=judge_fails) as server:
        plan = plan_for(benchmark, judges=["lexical", JUDGE])
        report = run_once(tmp_path / "r.db", benchmark, plan, sections(server))
    assert report.generation[SUBJECT].ok == 4
    assert report.judging[JUDGE].errors_by_cause == {"HTTP 503": 4}
    assert report.unjudged == {"lexical": 0, JUDGE: 4}
    assert not report.complete
    assert f"judge {JUDGE}: 4 not judged (HTTP 503 x4)" in report.account()
