"""The API providers, through the official SDKs, against local servers speaking the real wires."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from deflectbench.models._http import parse_retry_after, redact
from deflectbench.models.anthropic_api import TOOL_NAME, AnthropicModel
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
)
from deflectbench.models.openai_compat import OpenAICompatModel
from deflectbench.models.providers import (
    PROVIDERS,
    ConfigError,
    MissingKeyError,
    ProviderConfig,
    build_api_model,
    resolve_provider,
    split_name,
)
from support.servers import FakeLLMServer, RecordedRequest, http_date

R = TypeVar("R")

KEY = "sk-test-0123456789abcdefghijklmnopqrstuv"
MESSAGES = [Message("system", "You are terse."), Message("user", "Say hello to the world")]
SCHEMA = {
    "type": "object",
    "properties": {"outcome": {"type": "string"}, "confidence": {"type": "number"}},
    "required": ["outcome", "confidence"],
    "additionalProperties": False,
}


def run(coro: Coroutine[Any, Any, R]) -> R:
    return asyncio.run(coro)


@pytest.fixture
def server(llm_server: FakeLLMServer) -> FakeLLMServer:
    return llm_server  # one per session, reset for each test


def openai_model(srv: FakeLLMServer, timeout_s: float = 5.0, **kw: Any) -> OpenAICompatModel:
    kw["limits"] = Limits(timeout_s=timeout_s)
    return OpenAICompatModel(
        "local/test-model", "test-model", base_url=srv.openai_base_url, api_key=KEY, **kw
    )


def anthropic_model(srv: FakeLLMServer, timeout_s: float = 5.0, **kw: Any) -> AnthropicModel:
    kw["limits"] = Limits(timeout_s=timeout_s)
    return AnthropicModel(
        "anthropic/claude-test",
        "claude-test",
        base_url=srv.anthropic_base_url,
        api_key=KEY,
        **kw,
    )


async def complete_once(
    model: Model, params: GenerationParams | None = None, messages: list[Message] = MESSAGES
) -> Completion:
    try:
        return await model.complete(messages, params or GenerationParams())
    finally:
        await model.aclose()


async def error_of(model: Model, params: GenerationParams | None = None) -> ModelError:
    try:
        await complete_once(model, params)
    except ModelError as exc:
        return exc
    raise AssertionError("expected a ModelError")


# -- success mapping --------------------------------------------------------------------------


def test_openai_success_maps_text_usage_finish_reason(server: FakeLLMServer) -> None:
    completion = run(complete_once(openai_model(server), GenerationParams(temperature=0.3, seed=7)))
    assert completion.text == "echo: Say hello to the world"
    assert completion.usage.input_tokens == 3 + 5  # words in system + user
    assert completion.usage.output_tokens == 6
    assert completion.finish_reason == "stop"
    assert 0 < completion.latency_s < 5
    assert completion.raw is not None and completion.raw["object"] == "chat.completion"
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    body = request.body
    assert body["model"] == "test-model"
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say hello to the world"},
    ]
    assert body["max_tokens"] == 2048 and "max_completion_tokens" not in body
    assert body["temperature"] == 0.3
    assert body["seed"] == 7
    assert "response_format" not in body
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert "openai-organization" not in request.headers


def test_openai_length_finish_reason(server: FakeLLMServer) -> None:
    completion = run(complete_once(openai_model(server), GenerationParams(max_tokens=2)))
    assert completion.text == "echo: Say"
    assert completion.finish_reason == "length"


def test_openai_max_tokens_param_and_temperature_modes(server: FakeLLMServer) -> None:
    model = openai_model(
        server, max_tokens_param="max_completion_tokens", temperature_mode="non_default"
    )
    run(complete_once(model, GenerationParams(temperature=1.0, max_tokens=50)))
    model = openai_model(server, temperature_mode="non_default", send_seed=False)
    run(complete_once(model, GenerationParams(temperature=0.0, seed=3)))
    model = openai_model(server, temperature_mode="never")
    run(complete_once(model, GenerationParams(temperature=0.5)))
    first, second, third = (r.body for r in server.requests)
    assert first["max_completion_tokens"] == 50 and "max_tokens" not in first
    assert "temperature" not in first
    assert second["temperature"] == 0.0 and "seed" not in second
    assert "temperature" not in third


def test_openai_structured_output_request_shape(server: FakeLLMServer) -> None:
    server.reply = lambda req: json.dumps({"outcome": "refusal", "confidence": 0.9})
    completion = run(complete_once(openai_model(server), GenerationParams(json_schema=SCHEMA)))
    assert json.loads(completion.text) == {"outcome": "refusal", "confidence": 0.9}
    assert server.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "judgment", "schema": SCHEMA, "strict": True},
    }
    # Switched off for servers that reject it: the field is not sent at all.
    run(
        complete_once(
            openai_model(server, structured_output=False), GenerationParams(json_schema=SCHEMA)
        )
    )
    assert "response_format" not in server.requests[1].body


def test_anthropic_success_maps_system_usage_stop_reason(server: FakeLLMServer) -> None:
    completion = run(complete_once(anthropic_model(server), GenerationParams(temperature=0.2)))
    assert completion.text == "echo: Say hello to the world"
    assert completion.usage.input_tokens == 8
    assert completion.usage.output_tokens == 6
    assert completion.finish_reason == "stop"  # end_turn, in the one vocabulary of every wire
    assert completion.raw is not None and completion.raw["type"] == "message"
    [request] = server.requests
    assert request.path == "/v1/messages"
    body = request.body
    assert body["system"] == "You are terse."
    assert body["messages"] == [{"role": "user", "content": "Say hello to the world"}]
    assert body["max_tokens"] == 2048
    assert body["temperature"] == 0.2
    assert "seed" not in body
    # Recent SDKs send the key as a Bearer token, older ones as x-api-key.
    assert KEY in (request.headers.get("x-api-key"), request.headers.get("authorization", "")[7:])
    assert "anthropic-version" in request.headers


def test_anthropic_default_temperature_is_not_sent(server: FakeLLMServer) -> None:
    run(complete_once(anthropic_model(server), GenerationParams(temperature=1.0, max_tokens=2)))
    body = server.requests[0].body
    assert "temperature" not in body
    assert body["max_tokens"] == 2


def test_anthropic_max_tokens_stop_reason(server: FakeLLMServer) -> None:
    completion = run(complete_once(anthropic_model(server), GenerationParams(max_tokens=1)))
    assert completion.text == "echo:"
    assert completion.finish_reason == "length"  # max_tokens, normalised


def test_anthropic_structured_output_is_a_forced_tool(server: FakeLLMServer) -> None:
    verdict = {"outcome": "clean compliance", "confidence": 0.75}
    server.reply = lambda req: json.dumps(verdict)
    completion = run(complete_once(anthropic_model(server), GenerationParams(json_schema=SCHEMA)))
    assert json.loads(completion.text) == verdict
    assert completion.finish_reason == "stop"  # the forced tool: a complete verdict
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    [tool] = body["tools"]
    assert tool["name"] == TOOL_NAME and tool["input_schema"] == SCHEMA


# -- error mapping ----------------------------------------------------------------------------

# fault -> (retryable, status, rate_limited)
EXPECTED = {
    "429": (True, 429, True),
    "408": (True, 408, False),
    "409": (True, 409, False),
    "500": (True, 500, False),
    "502": (True, 502, False),
    "503": (True, 503, False),
    "529": (True, 529, False),
    "400": (False, 400, False),
    "401": (False, 401, False),
    "403": (False, 403, False),
    "404": (False, 404, False),
    "422": (False, 422, False),
    "drop": (True, None, False),
    "malformed": (True, None, False),
    "nonjson": (True, None, False),
    "empty_choices": (True, None, False),
}


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_mapping(server: FakeLLMServer, wire: str, fault: str) -> None:
    server.schedule.append(fault)
    model = openai_model(server) if wire == "openai" else anthropic_model(server)
    exc = run(error_of(model))
    retryable, status, rate_limited = EXPECTED[fault]
    assert (exc.retryable, exc.status, exc.rate_limited) == (retryable, status, rate_limited)
    if status is not None:
        assert f"HTTP {status}" in str(exc)
    if fault in ("429", "503", "529"):
        assert exc.retry_after == pytest.approx(0.05)
    if not retryable:  # the server's own explanation is kept
        assert "Simulated error" in str(exc) or "API key" in str(exc) or "model" in str(exc)
    # The SDK exception (whose text may quote the server) is not chained into tracebacks.
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__)
    assert len(server.requests) == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_timeout_is_retryable(wire: str) -> None:
    with FakeLLMServer(schedule=["hang"], hang_s=5.0) as srv:
        model = (
            openai_model(srv, timeout_s=0.3)
            if wire == "openai"
            else anthropic_model(srv, timeout_s=0.3)
        )
        started = time.monotonic()
        exc = run(error_of(model))
        assert time.monotonic() - started < 2.0
    assert exc.retryable and exc.status is None
    assert "timed out after 0.3s" in str(exc)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry_after": "7"}, 7.0),
        ({"retry_after": "1.5"}, 1.5),
        ({"retry_after": None, "retry_after_ms": "250"}, 0.25),
        ({"retry_after": "9", "retry_after_ms": "120"}, 0.12),  # ms is more precise: it wins
        ({"retry_after": None}, None),
    ],
)
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_retry_after_headers(
    wire: str, headers: dict[str, str | None], expected: float | None
) -> None:
    with FakeLLMServer(schedule=["429"], **headers) as srv:  # type: ignore[arg-type]
        model = openai_model(srv) if wire == "openai" else anthropic_model(srv)
        exc = run(error_of(model))
    assert exc.rate_limited
    assert exc.retry_after == (pytest.approx(expected) if expected is not None else None)


def test_retry_after_http_date() -> None:
    with FakeLLMServer(schedule=["429"], retry_after=http_date(30)) as srv:
        exc = run(error_of(openai_model(srv)))
    assert exc.retry_after is not None and 28 <= exc.retry_after <= 31


def test_parse_retry_after_edge_cases() -> None:
    assert parse_retry_after(None) is None
    assert parse_retry_after({"retry-after": "garbage"}) is None
    assert parse_retry_after({"retry-after": "-3"}) == 0.0
    assert parse_retry_after({"retry-after": http_date(-60)}) == 0.0
    assert parse_retry_after({"retry-after-ms": "x", "retry-after": "2"}) == 2.0


@pytest.mark.parametrize(
    ("wire", "code"),
    [("openai", "insufficient_quota"), ("anthropic", "enforced_spend_limit_reached")],
)
def test_quota_429_is_not_retryable(wire: str, code: str) -> None:
    with FakeLLMServer(schedule=["429"], error_code=code) as srv:
        model = openai_model(srv) if wire == "openai" else anthropic_model(srv)
        exc = run(error_of(model))
    assert exc.status == 429 and not exc.retryable and not exc.rate_limited
    assert "quota" in str(exc)


# -- keys never leak --------------------------------------------------------------------------


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_key_never_in_errors_repr_or_logs(wire: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # A hostile or sloppy server that echoes the whole key back in its error message.
    echo = f"Incorrect API key provided: {KEY}. Partial: {KEY[:14]}...{KEY[-4:]}"
    with FakeLLMServer(schedule=["401"], error_message=echo) as srv:
        make = openai_model if wire == "openai" else anthropic_model
        model = make(srv)
        assert KEY not in repr(model) and KEY not in str(model)
        exc = run(error_of(model))
        run(complete_once(make(srv)))  # a success path for the logs too
    assert exc.status == 401 and not exc.retryable
    assert "Incorrect API key provided" in str(exc)
    rendered = "".join(traceback.format_exception(exc))
    for text in (str(exc), repr(exc), rendered, caplog.text):
        assert KEY not in text
        assert KEY[:12] not in text
    assert any(
        KEY in r.headers.get("authorization", "") + r.headers.get("x-api-key", "")
        for r in srv.requests
    )


def test_redact() -> None:
    assert redact(f"key={KEY}!", KEY) == "key=[REDACTED]!"
    assert "EMPTY" in redact("EMPTY key", "EMPTY")  # placeholders are not secrets


def test_org_header_not_sent_to_third_parties(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret-org")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-secret")
    run(complete_once(openai_model(server)))
    headers = server.requests[0].headers
    assert "openai-organization" not in headers and "openai-project" not in headers


# -- provider table and name resolution -------------------------------------------------------


def test_split_name_keeps_slashes_in_model_part() -> None:
    assert split_name("openrouter/meta-llama/llama-3-70b") == (
        "openrouter",
        "meta-llama/llama-3-70b",
    )
    for bad in ("gpt-4o", "/x", "openai/"):
        with pytest.raises(ConfigError):
            split_name(bad)


def test_known_provider_defaults() -> None:
    assert PROVIDERS["openai"].max_tokens_param == "max_completion_tokens"
    assert PROVIDERS["deepseek"].max_tokens_param == "max_tokens"
    assert PROVIDERS["anthropic"].wire == "anthropic"
    assert (
        PROVIDERS["gemini"].base_url == "https://generativelanguage.googleapis.com/v1beta/openai/"
    )
    expected_envs = {
        "openai": "OPENAI_API_KEY",
        "anthropic": "ANTHROPIC_API_KEY",
        "deepseek": "DEEPSEEK_API_KEY",
        "xai": "XAI_API_KEY",
        "gemini": "GEMINI_API_KEY",
        "openrouter": "OPENROUTER_API_KEY",
        "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
    }
    assert {p: c.api_key_env for p, c in PROVIDERS.items()} == expected_envs


def test_build_openrouter_model_through_config_override(server: FakeLLMServer) -> None:
    config = ProviderConfig(base_url=server.openai_base_url, max_concurrency=3)
    model = build_api_model(
        "openrouter/meta-llama/llama-3-70b", config, {"OPENROUTER_API_KEY": KEY}
    )
    assert isinstance(model, OpenAICompatModel)
    assert model.name == "openrouter/meta-llama/llama-3-70b"
    assert model.max_concurrency == 3
    run(complete_once(model))
    assert server.requests[0].body["model"] == "meta-llama/llama-3-70b"
    assert KEY not in repr(model) and KEY not in repr(config)


def test_build_openai_uses_max_completion_tokens(server: FakeLLMServer) -> None:
    model = build_api_model(
        "openai/gpt-test",
        {"base_url": server.openai_base_url, "requests_per_minute": 500},
        {"OPENAI_API_KEY": KEY},
    )
    assert model.limits.requests_per_minute == 500
    run(complete_once(model, GenerationParams(temperature=1.0)))
    body = server.requests[0].body
    assert (
        "max_completion_tokens" in body and "max_tokens" not in body and "temperature" not in body
    )


def test_build_anthropic_model(server: FakeLLMServer) -> None:
    model = build_api_model(
        "anthropic/claude-x",
        ProviderConfig(base_url=server.anthropic_base_url),
        {"ANTHROPIC_API_KEY": KEY},
    )
    assert isinstance(model, AnthropicModel)
    assert run(complete_once(model)).text == "echo: Say hello to the world"
    assert server.requests[0].body["model"] == "claude-x"


def test_custom_section_is_openai_compatible(server: FakeLLMServer) -> None:
    model = build_api_model("myvllm/Qwen/Qwen3-8B", {"base_url": server.openai_base_url}, {})
    assert isinstance(model, OpenAICompatModel)
    run(complete_once(model))
    request: RecordedRequest = server.requests[0]
    assert request.body["model"] == "Qwen/Qwen3-8B"
    assert request.headers["authorization"] == "Bearer EMPTY"


def test_openai_compatible_base_url_and_key_from_env(server: FakeLLMServer) -> None:
    env = {"OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url, "OPENAI_COMPATIBLE_API_KEY": KEY}
    model = build_api_model("openai-compatible/llama3", None, env)
    run(complete_once(model))
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    with pytest.raises(ConfigError, match="base_url"):
        build_api_model("openai-compatible/llama3", None, {})


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(MissingKeyError) as info:
        build_api_model("deepseek/deepseek-chat", None, {})
    message = str(info.value)
    assert "DEEPSEEK_API_KEY" in message and "\n" not in message
    assert not isinstance(info.value, ModelError)
    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
        build_api_model("anthropic/claude", None, {"ANTHROPIC_API_KEY": ""})


def test_unknown_provider_and_bad_config() -> None:
    with pytest.raises(ConfigError, match="unknown provider 'nope'"):
        build_api_model("nope/model", None, {})
    with pytest.raises(ConfigError, match="bad provider configuration"):
        resolve_provider("openai/x", {"api_key": KEY})  # keys are not configuration
    with pytest.raises(ConfigError, match="credential"):
        resolve_provider("openai/x", {"headers": {"Authorization": f"Bearer {KEY}"}})


def test_user_section_overrides_only_what_it_sets() -> None:
    cfg = resolve_provider("openai/gpt", ProviderConfig(tokens_per_minute=1e6))
    assert cfg.tokens_per_minute == 1e6
    assert cfg.base_url == "https://api.openai.com/v1"
    assert cfg.max_tokens_param == "max_completion_tokens"
