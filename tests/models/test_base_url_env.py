"""OPENAI_BASE_URL, the SDK's own variable, is honoured for openai/ models (issue 23, item 9):
over the built-in URL, under a config's base_url; and a request that reaches no server names
the URL it tried."""

from __future__ import annotations

import asyncio
import socket

from deflectbench.models.base import GenerationParams, Message, ModelError
from deflectbench.models.providers import build_api_model

KEY = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_sdk_variable_is_honoured_and_a_config_base_url_wins():
    proxy = "http://127.0.0.1:4000/v1"
    m = build_api_model("openai/gpt-5.5", None, KEY | {"OPENAI_BASE_URL": proxy})
    assert m.base_url == proxy
    assert build_api_model("openai/gpt-5.5", None, KEY).base_url == "https://api.openai.com/v1"
    own = {"base_url": "http://127.0.0.1:5000/v1"}
    assert (
        build_api_model("openai/gpt-5.5", own, KEY | {"OPENAI_BASE_URL": proxy}).base_url
        == (own["base_url"])
    )
    # a section that sets only limits still takes the variable
    limits = {"max_concurrency": 2}
    assert build_api_model("openai/gpt-5.5", limits, KEY | {"OPENAI_BASE_URL": proxy}).base_url == (
        proxy
    )
    a = build_api_model("anthropic/claude-haiku-4-5-20251001", None,
                        KEY | {"ANTHROPIC_BASE_URL": "http://127.0.0.1:4001"})  # fmt: skip
    assert a.base_url == "http://127.0.0.1:4001"


def test_a_connection_error_names_the_url_it_tried():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model = build_api_model("openai/gpt-5.5", {"max_retries": 0}, KEY | {"OPENAI_BASE_URL": url})

    async def once() -> ModelError:
        try:
            await model.complete([Message("user", "hi")], GenerationParams())
        except ModelError as exc:
            return exc
        finally:
            await model.aclose()
        raise AssertionError("expected a ModelError")

    exc = asyncio.run(once())
    assert f"connection error to {url}" in str(exc), str(exc)
    print(exc)
