"""Anthropic's Messages API.

Differences from the OpenAI wire that matter here: the system prompt is a top-level
``system`` parameter, usage is ``input_tokens``/``output_tokens``, and structured output is
obtained by forcing a single tool whose input schema is the judgment schema (the tool's
input, serialized as JSON, becomes the completion text, so judges parse it like any other
JSON reply).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from deflectbench.models._http import public_url, status_error, transient_error
from deflectbench.models._sdk import Reply, SDKErrors, SDKModel
from deflectbench.models.base import Completion, GenerationParams, Message, ModelError

if TYPE_CHECKING:
    from types import ModuleType

    import anthropic

    from deflectbench.models.anthropic_batch import AnthropicBatches

#: Name of the forced tool that carries structured output.
TOOL_NAME = "record_judgment"


class AnthropicModel(SDKModel["anthropic.AsyncAnthropic"]):
    """A Claude model through ``anthropic.AsyncAnthropic().messages.create``."""

    #: The Messages API takes no seed.
    send_seed = False
    sdk_package = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_temperature_mode = "non_default"

    def _bind(self, sdk: ModuleType) -> None:
        self.errors = SDKErrors.of(sdk, root=sdk.AnthropicError)
        self.reply_type = sdk.types.Message
        self._client = sdk.AsyncAnthropic(**self._client_options(self._headers))

    def __repr__(self) -> str:
        return f"AnthropicModel(name={self.name!r}, base_url={public_url(self.base_url)!r})"

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
        if self._sends_temperature(params.temperature):
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

    def wire_body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        """The JSON body :meth:`complete` sends, extra fields merged in (a batch's params)."""
        body = self.request_body(messages, params)
        extra = body.pop("extra_body", {})
        return {**body, **extra}

    def batch_api(self) -> AnthropicBatches | None:
        """Anthropic's Message Batches, for the ``anthropic`` section only."""
        if self.provider != "anthropic":
            return None
        from deflectbench.models.anthropic_batch import AnthropicBatches

        return AnthropicBatches(self)

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        await self.ready()  # the SDK, loaded beside the set-up: awaited before the clock starts
        body = self.request_body(messages, params)
        call = self._call(lambda: self._client.messages.create(**body), self._status_error)
        return await self.wire.watch(body, None, call)

    def _status_error(self, exc: anthropic.APIStatusError) -> ModelError:
        return status_error(
            self._provider,
            exc.status_code,
            exc.api_message if exc.api_message else _text_body(exc.body),
            headers=exc.response.headers,
            code=exc.error_code,
            secret=self._secret,
        )

    def _read_reply(self, response: Any) -> Reply:
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
        usage = getattr(response, "usage", None)
        # Cached prompt tokens are reported apart from input_tokens; all of them were read.
        input_tokens = sum(
            getattr(usage, f, 0) or 0
            for f in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        output_tokens = getattr(usage, "output_tokens", 0) or 0
        return Reply(text, getattr(response, "stop_reason", None), input_tokens, output_tokens)


def _text_body(body: object) -> str | None:
    return body if isinstance(body, str) else None
