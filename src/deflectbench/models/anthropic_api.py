"""Anthropic's Messages API.

Differences from the OpenAI wire that matter here: the system prompt is a top-level
``system`` parameter, usage is ``input_tokens``/``output_tokens``, and structured output is
obtained by forcing a single tool whose input schema is the judgment schema (the tool's
input, serialized as JSON, becomes the completion text, so judges parse it like any other
JSON reply).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anthropic

from deflectbench.models._http import (
    TemperatureMode,
    check_base_url,
    connection_error,
    redact,
    status_error,
    transient_error,
)
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
    Usage,
    finish_reason,
)

#: Name of the forced tool that carries structured output.
TOOL_NAME = "record_judgment"


class AnthropicModel(Model):
    """A Claude model through ``anthropic.AsyncAnthropic().messages.create``."""

    #: The Messages API takes no seed.
    send_seed = False

    def __init__(
        self,
        name: str,
        api_model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        limits: Limits | None = None,
        structured_output: bool = True,
        temperature_mode: TemperatureMode = "non_default",
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.api_model = api_model
        self.base_url = check_base_url(
            name.split("/", 1)[0], base_url or "https://api.anthropic.com"
        )
        self.limits = limits or Limits()
        self.structured_output = structured_output
        self.temperature_mode = temperature_mode
        self.extra_body = dict(extra_body or {})
        self._provider = name.split("/", 1)[0]
        self._secret = api_key
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self.base_url,
            timeout=self.limits.timeout_s,
            max_retries=0,  # the engine owns retrying
            default_headers=dict(headers or {}),
        )

    def __repr__(self) -> str:
        return f"AnthropicModel(name={self.name!r}, base_url={self.base_url!r})"

    def request_body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` (no credentials)."""
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.api_model,
            "max_tokens": params.max_tokens,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
        }
        if system:
            body["system"] = system
        extra = dict(self.extra_body)
        if self.temperature_mode == "always" or (
            self.temperature_mode == "non_default" and params.temperature != 1.0
        ):
            # Recent SDKs no longer list `temperature`; the API still takes it for most models.
            extra["temperature"] = params.temperature
        if params.json_schema is not None and self.structured_output:
            body["tools"] = [
                {
                    "name": TOOL_NAME,
                    "description": "Record the judgment in the required structure.",
                    "input_schema": params.json_schema,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        if extra:
            body["extra_body"] = extra
        return body

    @property
    def sdk(self) -> anthropic.AsyncAnthropic:
        """The SDK client, for batch mode (Message Batches, same key and limits)."""
        return self._client

    def wire_body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        """The JSON body :meth:`complete` sends, extra fields merged in (a batch's params)."""
        body = self.request_body(messages, params)
        extra = body.pop("extra_body", {})
        return {**body, **extra}

    def completion_from_body(self, body: Mapping[str, Any], latency: float = 0.0) -> Completion:
        """A reply body read as :meth:`complete` reads it (a batch result's message)."""
        try:
            response = anthropic.types.Message.model_validate(body)
        except ValueError:  # pydantic's ValidationError: read it as leniently as the SDK does
            response = anthropic.types.Message.construct(**body)
        return self._completion(response, latency)

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        body = self.request_body(messages, params)
        started = time.perf_counter()
        try:
            response = await self._client.messages.create(**body)
        except anthropic.APIStatusError as exc:
            raise status_error(
                self._provider,
                exc.status_code,
                exc.api_message if exc.api_message else _text_body(exc.body),
                headers=exc.response.headers,
                code=exc.error_code,
                secret=self._secret,
            ) from None
        except anthropic.APITimeoutError:
            raise transient_error(
                self._provider, f"timed out after {self.limits.timeout_s:g}s", cause="timeout"
            ) from None
        except anthropic.APIConnectionError as exc:
            raise connection_error(self._provider, exc, self._secret) from None
        except anthropic.APIResponseValidationError:
            raise transient_error(
                self._provider, "response did not match the schema", cause="bad response"
            ) from None
        except ValueError as exc:  # JSONDecodeError, pydantic ValidationError
            what = f"malformed response body ({type(exc).__name__})"
            raise transient_error(self._provider, what, cause="bad response") from None
        except anthropic.AnthropicError as exc:
            raise ModelError(f"{self._provider}: {redact(str(exc), self._secret)}") from None
        latency = time.perf_counter() - started
        return self._completion(response, latency)

    def _completion(self, response: Any, latency: float) -> Completion:
        if not isinstance(response, anthropic.types.Message):
            raise transient_error(self._provider, "non-JSON response body", cause="bad response")
        content = getattr(response, "content", None)
        if content is None:
            raise transient_error(self._provider, "response had no content", cause="bad response")
        text = ""
        for block in content:
            if getattr(block, "type", None) == "tool_use" and block.name == TOOL_NAME:
                text = json.dumps(block.input, ensure_ascii=False)
                break
        else:
            text = "".join(
                block.text for block in content if getattr(block, "type", None) == "text"
            )
        text = redact(text, self._secret)
        usage = getattr(response, "usage", None)
        # Cached prompt tokens are reported apart from input_tokens; all of them were read.
        input_tokens = sum(
            getattr(usage, f, 0) or 0
            for f in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        return Completion(
            text=text,
            usage=Usage(
                input_tokens=input_tokens,
                output_tokens=getattr(usage, "output_tokens", 0) or 0,
            ),
            finish_reason=finish_reason(getattr(response, "stop_reason", None), text),
            latency_s=latency,
            raw=response.model_dump(exclude_unset=True),
        )

    async def aclose(self) -> None:
        await self._client.close()


def _text_body(body: object) -> str | None:
    return body if isinstance(body, str) else None
