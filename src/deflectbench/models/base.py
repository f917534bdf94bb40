"""The one interface every model speaks: ``await model.complete(messages, params)``.

Models know nothing of claims, rubrics or the store; the engine knows nothing of what a
request means. Failures are raised as :class:`ModelError` with enough detail for the engine
to decide whether to retry.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from deflectbench.secrets import scrub
from deflectbench.vocab import NON_ANSWERS, TRUNCATED

if TYPE_CHECKING:
    from deflectbench.models.batch_api import BatchAPI

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
        """Every field by its name, in order (the schema itself, not a copy)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Limits:
    """How hard the engine may push a model, fixed when the model is built.

    API providers take them from their configuration section; ``None`` means no limit is
    known. The concurrency and per-minute limits are the provider's (an account's): every
    model and judge it serves shares them in a run. The engine turns them into an
    ``EnginePolicy`` (``EnginePolicy.for_model``).
    """

    #: Requests the provider can usefully run at once, for all its models together
    #: (in-process models: 1).
    max_concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    #: Retries after errors other than 429.
    max_retries: int = 6
    #: Seconds a request may take (the SDK's own timeout; the engine allows a little more).
    timeout_s: float = 120.0
    #: This model's own cap within ``max_concurrency`` (None: none but the provider's).
    model_max_concurrency: int | None = None


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


CONTENT_FILTER, REFUSAL, EMPTY = NON_ANSWERS
STOP = "stop"
#: The wires' finish reasons by what they mean here; any other value passes through as sent.
_FINISH: dict[str, str] = {
    "stop": STOP,
    "end_turn": STOP,
    "stop_sequence": STOP,
    "tool_use": STOP,  # the forced tool that carries a judge's structured verdict
    "length": TRUNCATED,
    "max_tokens": TRUNCATED,
    "model_context_window_exceeded": TRUNCATED,
    "content_filter": CONTENT_FILTER,
    "refusal": REFUSAL,
}


def finish_reason(raw: str | None, text: str) -> str | None:
    """One vocabulary for every wire: ``stop``, ``length``, or a non-answer (``content_filter``,
    ``refusal``, ``empty``); unknown values pass through. A reply with no visible text is
    ``empty`` unless the provider said why (filter, refusal): a judge cannot score nothing,
    and a reply cut at the cap before any text (reasoning models) is no answer either."""
    reason = _FINISH.get(raw, raw) if raw is not None else None
    if reason not in (CONTENT_FILTER, REFUSAL) and not text.strip():
        return EMPTY
    return reason


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    #: Normalised by :func:`finish_reason`.
    finish_reason: str | None = None
    #: Seconds from request to answer, as the model saw it (None: not measured, as for a
    #: provider batch's results).
    latency_s: float | None = 0.0
    #: The provider's response body (for debugging); never holds credentials.
    raw: dict[str, Any] | None = None
    #: Served from the request cache: no request was sent, nothing was paid.
    cached: bool = False
    #: What the request cost in USD, when its model has a price (set by the pipeline).
    cost_usd: float | None = None


class ModelError(Exception):
    """A request that did not produce a completion.

    ``retryable`` tells the engine whether trying again can help (429, 5xx, timeouts,
    dropped connections, garbage bodies); ``retry_after`` is the server's hint in seconds;
    ``cause`` a short name to count failures by (``HTTP 500``, ``timeout``, ...). The message
    is scrubbed of every credential here, once for every provider (servers echo what they were
    sent in their error messages).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        rate_limited: bool = False,
        cause: str | None = None,
    ) -> None:
        super().__init__(scrub(message))
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        self.cause = cause or (f"HTTP {status}" if status is not None else "error")


class Model(abc.ABC):
    """A model addressed as ``provider/name``."""

    #: Full name, e.g. ``local/smollm2`` or ``openai/gpt-5.5``.
    name: str
    #: Default maximum output tokens for generations when the user sets none.
    default_max_tokens: int = 2048
    #: Pacing hints for the engine; subclasses set them at construction (or per class).
    limits: Limits = Limits()
    #: Whether the per-cell seed reaches the model (part of a condition's settings).
    send_seed: bool = True
    #: Extra request fields sent verbatim (part of a condition's settings and cache keys).
    extra_body: Mapping[str, Any] = MappingProxyType({})

    def request_identity(self) -> dict[str, Any]:
        """What, besides the messages and the parameters, makes this model's requests what they
        are (for the request cache; empty for most models, which keeps existing keys)."""
        return {"extra": dict(self.extra_body)} if self.extra_body else {}

    def serve_as(self, model: Model) -> None:
        """Shape requests as ``model`` does (its default output cap, its seed rule, its extra
        fields): for a model that stands for another (several endpoints, a batch file)."""
        self.default_max_tokens = model.default_max_tokens
        self.send_seed = model.send_seed
        self.extra_body = model.extra_body

    @property
    def provider(self) -> str:
        """The account whose limits the model shares: its name's first segment, the
        configuration section it was built from (``openai/gpt-5.5`` -> ``openai``)."""
        return self.name.partition("/")[0]

    @property
    def max_concurrency(self) -> int:
        """Requests the model can usefully run at once."""
        return self.limits.max_concurrency

    @abc.abstractmethod
    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Return one completion, or raise :class:`ModelError`."""

    def status(self) -> str:
        """A short note for the progress line (an in-process model's threads and why); empty
        for most models."""
        return ""

    def batch_api(self) -> BatchAPI | None:
        """The provider batch API this model's requests can go through (batch mode: half the
        price, up to 24 hours), or None: the normal path serves it. A plugin model batches by
        returning a :class:`~deflectbench.models.batch_api.BatchAPI` here."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections or memory."""
