"""OpenAI chat completions, and every server that speaks the same wire format.

One class covers OpenAI itself, DeepSeek, xAI, Gemini's compatibility endpoint, OpenRouter
and local servers (vLLM, SGLang, Ollama, llama.cpp). They differ in small ways that are
options here rather than subclasses: whether ``response_format: json_schema`` is accepted,
whether the output cap is called ``max_tokens`` or ``max_completion_tokens``, and whether a
``temperature`` may be sent at all.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletion

from deflectbench.models._http import (
    MaxTokensParam,
    TemperatureMode,
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
)

#: Name of the schema sent with structured-output requests.
SCHEMA_NAME = "judgment"


class OpenAICompatModel(Model):
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

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
        self.name = name
        self.api_model = api_model
        self.base_url = base_url
        self.limits = limits or Limits()
        self.structured_output = structured_output
        self.max_tokens_param = max_tokens_param
        self.temperature_mode = temperature_mode
        self.send_seed = send_seed
        self.extra_body = dict(extra_body or {})
        self._provider = name.split("/", 1)[0]
        self._secret = api_key
        default_headers: dict[str, Any] = dict(headers or {})
        if urlsplit(base_url).hostname != "api.openai.com":
            # The SDK adds OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment to every
            # request; third-party servers have no business seeing them.
            default_headers.setdefault("OpenAI-Organization", openai.omit)
            default_headers.setdefault("OpenAI-Project", openai.omit)
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=self.limits.timeout_s,
            max_retries=0,  # the engine owns retrying
            default_headers=default_headers,
        )

    def __repr__(self) -> str:
        return f"OpenAICompatModel(name={self.name!r}, base_url={self.base_url!r})"

    def request_body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create`` (no credentials)."""
        body: dict[str, Any] = {
            "model": self.api_model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            self.max_tokens_param: params.max_tokens,
        }
        if self.temperature_mode == "always" or (
            self.temperature_mode == "non_default" and params.temperature != 1.0
        ):
            body["temperature"] = params.temperature
        if params.seed is not None and self.send_seed:
            body["seed"] = params.seed
        if params.json_schema is not None and self.structured_output:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": params.json_schema, "strict": True},
            }
        return body

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        body = self.request_body(messages, params)
        started = time.perf_counter()
        try:
            response = await self._client.chat.completions.create(
                **body, extra_body=self.extra_body or None
            )
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from None
        except openai.APITimeoutError:
            raise transient_error(
                self._provider, f"timed out after {self.limits.timeout_s:g}s"
            ) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__
            what = f"connection error ({type(cause).__name__ if cause else 'unknown'})"
            raise transient_error(self._provider, what) from None
        except openai.APIResponseValidationError:
            raise transient_error(self._provider, "response did not match the schema") from None
        except ValueError as exc:  # JSONDecodeError, pydantic ValidationError
            what = f"malformed response body ({type(exc).__name__})"
            raise transient_error(self._provider, what) from None
        except openai.OpenAIError as exc:
            raise ModelError(f"{self._provider}: {redact(str(exc), self._secret)}") from None
        latency = time.perf_counter() - started
        return self._completion(response, latency)

    def _completion(self, response: Any, latency: float) -> Completion:
        if not isinstance(response, ChatCompletion):
            # The SDK hands back the text when the body was not JSON (e.g. a proxy's HTML page).
            raise transient_error(self._provider, "non-JSON response body")
        choices = getattr(response, "choices", None)
        if not choices:
            raise transient_error(self._provider, "response had no choices")
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        if text is None:
            # A structured-output refusal arrives in `refusal`, not `content`.
            text = getattr(message, "refusal", None) or ""
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            usage=Usage(
                input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                output_tokens=getattr(usage, "completion_tokens", 0) or 0,
            ),
            finish_reason=getattr(choice, "finish_reason", None),
            latency_s=latency,
            raw=response.model_dump(exclude_unset=True),
        )

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
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
        return status_error(
            self._provider,
            exc.status_code,
            message,
            headers=exc.response.headers,
            code=code,
            secret=self._secret,
        )

    async def aclose(self) -> None:
        await self._client.close()
