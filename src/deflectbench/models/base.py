"""The one interface every model speaks: ``await model.complete(messages, params)``.

Models know nothing of claims, rubrics or the store; the engine knows nothing of what a
request means. Failures are raised as :class:`ModelError` with enough detail for the engine
to decide whether to retry.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters. ``seed`` makes local models reproducible; APIs may ignore it."""

    temperature: float = 1.0
    max_tokens: int = 2048
    seed: int | None = None
    #: JSON schema for structured output (judges); providers without it ignore it.
    json_schema: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "json_schema": self.json_schema,
        }


@dataclass(frozen=True)
class Limits:
    """How hard the engine may push a model, fixed when the model is built.

    API providers take them from their configuration section; ``None`` means no limit is
    known. The engine turns them into an ``EnginePolicy`` (``EnginePolicy.for_model``).
    """

    #: Requests the model can usefully run at once (in-process models: 1).
    max_concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    #: Retries after errors other than 429.
    max_retries: int = 6
    #: Seconds a request may take (the SDK's own timeout; the engine allows a little more).
    timeout_s: float = 120.0


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    #: Seconds from request to answer, as the model saw it.
    latency_s: float = 0.0
    #: The provider's response body (for debugging); never holds credentials.
    raw: dict[str, Any] | None = None
    #: Served from the request cache: no request was sent, nothing was paid.
    cached: bool = False


class ModelError(Exception):
    """A request that did not produce a completion.

    ``retryable`` tells the engine whether trying again can help (429, 5xx, timeouts,
    dropped connections, garbage bodies); ``retry_after`` is the server's hint in seconds.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        rate_limited: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.rate_limited = rate_limited


class Model(abc.ABC):
    """A model addressed as ``provider/name``."""

    #: Full name, e.g. ``local/smollm2`` or ``openai/gpt-5.5``.
    name: str
    #: Default maximum output tokens for generations when the user sets none.
    default_max_tokens: int = 2048
    #: Pacing hints for the engine; subclasses set them at construction (or per class).
    limits: Limits = Limits()

    @property
    def max_concurrency(self) -> int:
        """Requests the model can usefully run at once."""
        return self.limits.max_concurrency

    @abc.abstractmethod
    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Return one completion, or raise :class:`ModelError`."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections or memory."""
