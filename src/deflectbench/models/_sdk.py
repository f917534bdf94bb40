"""What the two SDK-backed providers (OpenAI-compatible, Anthropic) do alike.

Both official SDKs raise parallel exception trees and hand back pydantic replies. The
providers differ in how a request is built and where a reply keeps its text, not in how a
failed call becomes a :class:`ModelError`, nor in how a reply becomes a :class:`Completion`:
that is written once here, so the two wires cannot drift apart.
"""

from __future__ import annotations

import abc
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

from deflectbench.models._http import (
    TemperatureMode,
    check_base_url,
    connection_error,
    redact,
    transient_error,
)
from deflectbench.models.base import Completion, Limits, Model, ModelError, Usage, finish_reason
from deflectbench.models.sdk_loader import aload, load, sent
from deflectbench.models.shared_tls import http_client
from deflectbench.models.wire_log import WireLog
from deflectbench.secrets import Untrusted, register_credentials, scrub, scrub_json


class Reply(NamedTuple):
    """What a provider reads from its SDK's reply, in its own wire's terms."""

    text: str
    #: The wire's finish reason, before :func:`finish_reason` normalises it.
    reason: str | None
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class SDKErrors:
    """One SDK's exception classes, in the order they are caught (the most specific first)."""

    status: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]
    validation: type[Exception]
    #: The SDK's root class: anything else it raises.
    root: type[Exception]

    @classmethod
    def of(cls, sdk: ModuleType, root: type[Exception]) -> SDKErrors:
        """An SDK's classes by the names both official SDKs give them (one generator wrote both)."""
        return cls(
            status=sdk.APIStatusError,
            timeout=sdk.APITimeoutError,
            connection=sdk.APIConnectionError,
            validation=sdk.APIResponseValidationError,
            root=root,
        )


#: The SDK's async client type (``openai.AsyncOpenAI``, ``anthropic.AsyncAnthropic``).
ClientT = TypeVar("ClientT")


class SDKModel(Model, Generic[ClientT]):
    """A model behind an official SDK client; subclasses say how to ask and where the text is.

    Building one imports no SDK (a dry run, a refused run never pay for it): a run starts the
    imports beside its set-up (:func:`~deflectbench.models.sdk_loader.preload_for`) and the
    client is made when the first request needs it, so one provider's requests start while
    another's SDK still loads."""

    #: The SDK package the model speaks through (``openai``, ``anthropic``).
    sdk_package: ClassVar[str]
    #: The SDK's exception classes (set with the client).
    errors: SDKErrors
    #: The SDK's reply type (a pydantic model), which a reply body is validated as (set with
    #: the client).
    reply_type: type[Any]
    _client: Any = None
    #: Where the provider's API is when no base_url is given ("": one must be given).
    default_base_url: ClassVar[str] = ""
    #: When a temperature goes on the wire unless the config says.
    default_temperature_mode: ClassVar[TemperatureMode] = "always"

    def __init__(
        self,
        name: str,
        api_model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        limits: Limits | None = None,
        structured_output: bool = True,
        temperature_mode: TemperatureMode | None = None,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.api_model = api_model
        self.base_url = check_base_url(name.split("/", 1)[0], base_url or self.default_base_url)
        self.limits = limits or Limits()
        self.structured_output = structured_output
        self.temperature_mode = temperature_mode or self.default_temperature_mode
        self.extra_body = dict(extra_body or {})
        self._provider = name.split("/", 1)[0]
        self._secret = api_key
        self._headers: dict[str, Any] = dict(headers or {})
        register_credentials(key=api_key, url=self.base_url, headers=headers)
        #: What this client sent and heard (the run's manifest reads it).
        self.wire = WireLog()

    @abc.abstractmethod
    def _bind(self, sdk: ModuleType) -> None:
        """Make the client from the loaded SDK and set :attr:`errors` and :attr:`reply_type`."""

    def _bound(self) -> Any:
        """The client, made now if it is not yet (waiting for the SDK: outside a request)."""
        if self._client is None:
            self._bind(load(self.sdk_package))
        return self._client

    @property
    def sdk(self) -> ClientT:
        """The SDK client, for batch mode (the provider's batch API, same key and limits)."""
        client: ClientT = self._bound()
        return client

    async def ready(self) -> None:
        """The client made, its SDK awaited without holding up the event loop."""
        if self._client is None:
            sdk = await aload(self.sdk_package)
            if self._client is None:
                self._bind(sdk)

    def _client_options(self, headers: Mapping[str, Any]) -> dict[str, Any]:
        """The SDK client's keyword arguments: this model's key, URL and timeout, and its
        connection pool on the process's one TLS context (:mod:`.shared_tls`)."""
        pool = http_client(sys.modules[self.sdk_package], timeout=self.limits.timeout_s)
        return {
            "api_key": self._secret,
            "base_url": self.base_url,
            "timeout": self.limits.timeout_s,
            "max_retries": 0,  # the engine owns retrying
            "default_headers": dict(headers),
            **({"http_client": pool} if pool is not None else {}),
        }

    def _sends_temperature(self, temperature: float) -> bool:
        """Whether ``temperature_mode`` lets this temperature go on the wire."""
        mode = self.temperature_mode
        return mode == "always" or (mode == "non_default" and temperature != 1.0)

    def completion_from_body(self, body: Mapping[str, Any], latency: float = 0.0) -> Completion:
        """A reply body read as :meth:`complete` reads it (a batch result's body or message)."""
        self._bound()
        try:
            response = self.reply_type.model_validate(body)
        except ValueError:  # pydantic's ValidationError: read it as leniently as the SDK does
            response = self.reply_type.construct(**body)
        return self._completion(response, latency)

    async def _call(
        self,
        request: Callable[[], Awaitable[Any]],
        on_status: Callable[[Any], ModelError],
    ) -> Completion:
        """Send one request; every SDK failure becomes a :class:`ModelError` the engine reads."""
        await self.ready()
        started = time.perf_counter()
        errors = self.errors
        try:
            response = await request()
        except errors.status as exc:
            raise on_status(exc) from None
        except errors.timeout:
            raise transient_error(
                self._provider, f"timed out after {self.limits.timeout_s:g}s", cause="timeout"
            ) from None
        except errors.connection as exc:
            raise connection_error(self._provider, exc, self._secret, self.base_url) from None
        except errors.validation:
            raise transient_error(
                self._provider, "response did not match the schema", cause="bad response"
            ) from None
        except ValueError as exc:  # JSONDecodeError, pydantic ValidationError
            what = f"malformed response body ({type(exc).__name__})"
            raise transient_error(self._provider, what, cause="bad response") from None
        except errors.root as exc:
            raise ModelError(f"{self._provider}: {redact(str(exc), self._secret)}") from None
        latency = time.perf_counter() - started
        sent()  # the SDKs after the first may load (said sooner by a pool of .shared_tls)
        return self._completion(response, latency)

    def _completion(self, response: Any, latency: float) -> Completion:
        if not isinstance(response, self.reply_type):
            # The SDK hands back the text when the body was not JSON (e.g. a proxy's HTML page).
            raise transient_error(self._provider, "non-JSON response body", cause="bad response")
        reply = self._read_reply(response)
        text = scrub(redact(reply.text, self._secret))
        return Completion(
            text=text,
            usage=Usage(input_tokens=reply.input_tokens, output_tokens=reply.output_tokens),
            finish_reason=finish_reason(reply.reason, text),
            latency_s=latency,
            raw=_raw(response.model_dump(exclude_unset=True)),
        )

    @abc.abstractmethod
    def _read_reply(self, response: Any) -> Reply:
        """The reply's text, finish reason and token counts (raising for a reply without any)."""

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


def _raw(body: dict[str, Any]) -> dict[str, Any]:
    """A reply body as a :class:`Completion` keeps it: every string scrubbed of credentials
    (its ``model`` is the served id the store keeps), bounded in depth and size; past the
    bounds, its top-level scalars only and a note saying why."""
    try:
        kept = scrub_json(body)
    except Untrusted as exc:
        flat = {k: v for k, v in body.items() if isinstance(v, str | int | float | bool)}
        kept = {**_as_dict(scrub_json(flat, max_depth=1)), "extra": str(exc)}
    return _as_dict(kept)


def _as_dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
