"""OpenAI chat completions, and every server that speaks the same wire format.

One class covers OpenAI itself, DeepSeek, xAI, Gemini's compatibility endpoint, OpenRouter
and local servers (vLLM, SGLang, Ollama, llama.cpp). They differ in small ways that are
options here rather than subclasses: whether ``response_format: json_schema`` is accepted,
whether the output cap is called ``max_tokens`` or ``max_completion_tokens``, and whether a
``temperature`` may be sent at all.

Structured output degrades by itself: a server that rejects ``json_schema`` (llama.cpp's
answers HTTP 500 or 400 naming response_format, json_schema or grammar) is asked again at
once with ``json_object``, then with plain text (the judges' parser is tolerant), and the
model remembers the mode that worked. Until one has worked, structured requests go one at a
time, so each rejected mode costs one request, not one per request in flight.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from deflectbench.models._http import (
    MaxTokensParam,
    TemperatureMode,
    public_url,
    status_error,
    transient_error,
)
from deflectbench.models._sdk import Reply, SDKErrors, SDKModel
from deflectbench.models.base import Completion, GenerationParams, Limits, Message, ModelError

if TYPE_CHECKING:
    from types import ModuleType

    import openai

    from deflectbench.models.openai_batch import OpenAIBatches

#: Name of the schema sent with structured-output requests.
SCHEMA_NAME = "judgment"
FormatMode = Literal["json_schema", "json_object", "text"]
#: How structured output is asked for, best first; a server that rejects one gets the next.
FORMAT_MODES: tuple[FormatMode, ...] = ("json_schema", "json_object", "text")
#: What a server's rejection of ``response_format`` says (llama.cpp, vLLM, Ollama, proxies).
_FORMAT_REJECTED = re.compile(r"response_format|json_schema|json_object|grammar|structured", re.I)


class FormatRejected(ModelError):
    """The server refused the ``response_format`` it was sent (not the request itself)."""


class OpenAICompatModel(SDKModel["openai.AsyncOpenAI"]):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    sdk_package = "openai"

    def __init__(
        self,
        name: str,
        api_model: str,
        *,
        base_url: str,
        api_key: str,
        limits: Limits | None = None,
        structured_output: bool = True,
        max_tokens_param: MaxTokensParam = "max_tokens",
        temperature_mode: TemperatureMode = "always",
        send_seed: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            name,
            api_model,
            base_url=base_url,
            api_key=api_key,
            limits=limits,
            structured_output=structured_output,
            temperature_mode=temperature_mode,
            extra_body=extra_body,
            headers=headers,
        )
        #: How structured output is asked for now, and whether a reply has confirmed it.
        self.format_mode: FormatMode = "json_schema" if structured_output else "text"
        self._format_known = not structured_output
        self._probe: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self.max_tokens_param = max_tokens_param
        self.send_seed = send_seed

    def _bind(self, sdk: ModuleType) -> None:
        from openai.types.chat import ChatCompletion

        default_headers: dict[str, Any] = dict(self._headers)
        if urlsplit(self.base_url).hostname != "api.openai.com":
            # The SDK adds OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment to every
            # request; third-party servers have no business seeing them.
            default_headers.setdefault("OpenAI-Organization", sdk.omit)
            default_headers.setdefault("OpenAI-Project", sdk.omit)
        self.errors = SDKErrors.of(sdk, root=sdk.OpenAIError)
        self.reply_type = ChatCompletion
        self._client = sdk.AsyncOpenAI(**self._client_options(default_headers))

    def __repr__(self) -> str:
        return f"OpenAICompatModel(name={self.name!r}, base_url={public_url(self.base_url)!r})"

    def request_identity(self) -> dict[str, Any]:
        identity = super().request_identity()
        if not self.send_seed:
            identity["send_seed"] = False  # the same parameters, another request
        return identity

    def request_body(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        mode: FormatMode | None = None,
    ) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (no credentials)."""
        mode = mode or self.format_mode
        body: dict[str, Any] = {
            "model": self.api_model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            self.max_tokens_param: params.max_tokens,
        }
        if self._sends_temperature(params.temperature):
            body["temperature"] = params.temperature
        if params.seed is not None and self.send_seed:
            body["seed"] = params.seed
        if params.json_schema is not None and mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": params.json_schema, "strict": True},
            }
        elif params.json_schema is not None and mode == "json_object":
            # llama.cpp (both servers) turns "schema" into a grammar; others ignore the key
            body["response_format"] = {"type": "json_object", "schema": params.json_schema}
        return body

    def wire_body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        """The JSON body :meth:`complete` sends, extra fields merged in (a batch line's body)."""
        return {**self.request_body(messages, params), **self.extra_body}

    def batch_api(self) -> OpenAIBatches | None:
        """OpenAI's Files + Batches API, for the ``openai`` section only (whatever its
        base_url); other OpenAI-compatible servers have none."""
        if self.provider != "openai":
            return None
        from deflectbench.models.openai_batch import OpenAIBatches

        return OpenAIBatches(self)

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        await self.ready()  # the SDK, loaded beside the set-up: awaited before the clock starts
        if params.json_schema is None or self._format_known:
            return await self._send(messages, params, self.format_mode)
        async with self._probe_lock():
            if not self._format_known:
                return await self._find_format(messages, params)
        return await self._send(messages, params, self.format_mode)

    def _probe_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._probe is None or self._probe[0] is not loop:
            self._probe = (loop, asyncio.Lock())
        return self._probe[1]

    async def _find_format(
        self, messages: Sequence[Message], params: GenerationParams
    ) -> Completion:
        """Send with the current mode; on a rejection of the format, at once with the next."""
        while True:
            mode = self.format_mode
            try:
                completion = await self._send(messages, params, mode)
            except FormatRejected:
                self.format_mode = FORMAT_MODES[FORMAT_MODES.index(mode) + 1]
                continue
            self._format_known = True
            return completion

    async def _send(
        self, messages: Sequence[Message], params: GenerationParams, mode: FormatMode
    ) -> Completion:
        body = self.request_body(messages, params, mode)
        call = self._call(
            lambda: self._client.chat.completions.create(
                **body, extra_body=dict(self.extra_body) or None
            ),
            lambda exc: self._status_error(exc, "response_format" in body),
        )
        return await self.wire.watch(body, self.extra_body, call)

    def _read_reply(self, response: Any) -> Reply:
        choices = getattr(response, "choices", None)
        if not choices:
            raise transient_error(self._provider, "response had no choices", cause="bad response")
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        reason = getattr(choice, "finish_reason", None)
        refusal = getattr(message, "refusal", None)
        if refusal:
            # A refusal (structured output's or a safety system's) arrives in `refusal`.
            text, reason = text or refusal, "refusal"
        usage = getattr(response, "usage", None)
        return Reply(
            text or "",
            reason,
            input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        )

    def _status_error(self, exc: openai.APIStatusError, sent_format: bool = False) -> ModelError:
        body = exc.body
        message: str | None = None
        code: str | None = None
        if isinstance(body, Mapping):  # the SDK already unwrapped {"error": {...}}
            raw_message = body.get("message")
            message = raw_message if isinstance(raw_message, str) else None
            raw_code = body.get("code")
            code = str(raw_code) if raw_code is not None else None
        elif isinstance(body, str):
            message = body
        status = exc.status_code
        if (
            sent_format
            and status in (400, 422, 500, 501)
            and _FORMAT_REJECTED.search(message or "")
        ):
            return FormatRejected(
                f"{self._provider}: HTTP {status}: response_format rejected",
                status=status,
                cause="response_format rejected",
            )
        if status == 404 and not re.search(r"/v\d", urlsplit(self.base_url).path):
            message = (
                message or ""
            ) + " (is /v1 missing from the base_url? e.g. http://host:8000/v1)"
        return status_error(
            self._provider,
            status,
            message,
            headers=exc.response.headers,
            code=code,
            secret=self._secret,
        )
