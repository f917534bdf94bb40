"""What the two SDK-backed batch APIs (OpenAI's Batches, Anthropic's Message Batches) do alike.

Both hold the model whose body a line carries, its SDK client and the provider's limits; both
encode a body's shared part once; both read a batch back by retrieving or cancelling it by id,
and turn any SDK failure into one scrubbed :class:`ModelError` the same way
(:func:`~deflectbench.models.batch_api.failure`). That is written once here, so the two cannot
drift apart; a subclass says where its SDK keeps the batches and how a batch reads as a
:class:`~deflectbench.models.batch_api.Remote`.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from deflectbench.models.base import Completion, GenerationParams, Message, ModelError
from deflectbench.models.batch_api import (
    ERRORED,
    SUCCEEDED,
    BodyEncoder,
    Limits,
    Outcome,
    Remote,
    failure,
    read_outcomes,
)
from deflectbench.secrets import scrub


class BatchingModel(Protocol):
    """The model a batch API sends for: its name, SDK client, body and reply reader."""

    name: str

    @property
    def sdk(self) -> Any: ...

    def wire_body(
        self, messages: Sequence[Message], params: GenerationParams
    ) -> dict[str, Any]: ...

    def completion_from_body(self, body: Mapping[str, Any], latency: float = 0.0) -> Completion: ...


M = TypeVar("M", bound=BatchingModel)


class SDKBatches(abc.ABC, Generic[M]):
    """A provider's batch API through its official SDK, for one model."""

    wire: str
    #: The SDK's root exception class, and its status error (a refusal: nothing was sent).
    sdk_error: ClassVar[type[Exception]]
    refused: ClassVar[type[Exception]]
    #: What one batch may carry unless told otherwise (the provider's documented limits).
    default_limits: ClassVar[Limits]

    def __init__(self, model: M, limits: Limits | None = None) -> None:
        self.model = model
        self.limits = self.default_limits if limits is None else limits
        self.sdk = model.sdk
        self._body = BodyEncoder()

    def body(self, messages: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        """The body a request carries (what the run's manifest reads the sent parameters of)."""
        return self.model.wire_body(messages, params)

    def _encoded(self, messages: Sequence[Message], params: GenerationParams) -> str:
        """:meth:`body` as JSON, its shared part encoded once."""
        return self._body(self.model.wire_body(messages, params))

    @contextmanager
    def _calling(self) -> Iterator[None]:
        """SDK calls inside: any failure raised as one scrubbed :class:`ModelError`."""
        try:
            yield
        except self.sdk_error as exc:
            raise failure(self.model.name, exc, self.refused) from None

    @abc.abstractmethod
    def _outcome(self, raw: bytes) -> Outcome | None:
        """One result line's outcome, or None: garbled."""

    def _read(self, data: bytes, out: list[Outcome]) -> int:
        """Each result line's outcome onto ``out``; the count of garbled lines."""
        return read_outcomes(data, self._outcome, out)

    def _answered(self, custom_id: str, body: Mapping[str, Any]) -> Outcome:
        """A result that carries a reply body, read as the model reads its own replies."""
        try:
            completion = self.model.completion_from_body(body)
        except (ModelError, TypeError, AttributeError, ValueError, RecursionError) as exc:
            return Outcome(custom_id, ERRORED, error=scrub(f"bad response: {exc}"[:300]))
        return Outcome(custom_id, SUCCEEDED, completion)

    @property
    @abc.abstractmethod
    def _batches(self) -> Any:
        """The SDK's batches resource (retrieve, cancel, list)."""

    @abc.abstractmethod
    def _remote(self, batch: Any) -> Remote:
        """A batch the SDK returned, as a :class:`Remote`."""

    async def retrieve(self, remote_id: str) -> Remote:
        with self._calling():
            batch = await self._batches.retrieve(remote_id)
        return self._remote(batch)

    async def cancel(self, remote_id: str) -> Remote:
        with self._calling():
            batch = await self._batches.cancel(remote_id)
        return self._remote(batch)
