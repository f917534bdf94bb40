"""The two batch APIs, through the official SDKs: OpenAI's Files + Batches, Anthropic's
Message Batches. One small interface (:class:`BatchAPI`): submit lines, find a batch by its
tag, retrieve its state, read its results, cancel it.

A batch line carries the very body the normal path sends (the model's ``wire_body``), and a
result's body is read by the model's own reader (``completion_from_body``), so a batch answer
is the same :class:`Completion` (typed non-answers included) a direct request would give.
Results are read line by line: a garbled line loses that item only (it is sent again).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import anthropic
import openai

from deflectbench.models.anthropic_api import AnthropicModel
from deflectbench.models.base import Completion, Model, ModelError
from deflectbench.models.openai_compat import OpenAICompatModel
from deflectbench.secrets import scrub

#: What a result is: an answer, or why there is none.
SUCCEEDED, ERRORED, EXPIRED, CANCELED = "succeeded", "errored", "expired", "canceled"
#: The metadata key an OpenAI batch carries its store key under (found again after a crash).
TAG_KEY = "deflectbench_batch"


@dataclass(frozen=True)
class Limits:
    """What one batch may carry (the provider's documented limits)."""

    max_requests: int
    max_bytes: int


OPENAI_LIMITS = Limits(50_000, 200 * 1024 * 1024)
ANTHROPIC_LIMITS = Limits(100_000, 256 * 1024 * 1024)


class BodyEncoder:
    """JSON of request bodies that share everything but their messages (a judge's schema and
    rubric, a model's parameters): the shared part is encoded once, not once a line."""

    def __init__(self) -> None:
        self._rest: dict[str, Any] | None = None
        self._head = ""

    def __call__(self, body: Mapping[str, Any]) -> str:
        rest = {k: v for k, v in body.items() if k != "messages"}
        if rest != self._rest:
            self._rest = rest
            self._head = json.dumps(rest, ensure_ascii=False)[:-1] + (", " if rest else "")
        messages = json.dumps(body["messages"], ensure_ascii=False)
        return f'{self._head}"messages": {messages}}}'


class Lines:
    """A batch's encoded requests, kept in a temporary file (a batch may be hundreds of MB:
    never held in memory twice, streamed to the provider)."""

    def __init__(self, separator: bytes = b"") -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.separator = separator
        self.count = 0
        self.size = 0

    def cost(self, line: bytes) -> int:
        """Bytes ``line`` adds."""
        return len(line) + (len(self.separator) if self.count else 0)

    def add(self, line: bytes) -> None:
        self.size += self.cost(line)
        if self.count:
            self.file.write(self.separator)
        self.file.write(line)
        self.count += 1

    def chunks(self, size: int = 1 << 20) -> Iterator[bytes]:
        self.file.seek(0)
        while chunk := self.file.read(size):
            yield chunk

    def close(self) -> None:
        self.file.close()


@dataclass(frozen=True)
class Remote:
    """A batch as its provider reports it."""

    id: str
    status: str
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)
    created_at: float = 0.0
    #: OpenAI: the output and error files; Anthropic: the results URL.
    refs: tuple[str | None, ...] = ()
    #: Why a batch failed as a whole (OpenAI validation errors).
    error: str | None = None


@dataclass(frozen=True)
class Outcome:
    """One item's result: ``kind`` is succeeded, errored, expired or canceled."""

    custom_id: str
    kind: str
    completion: Completion | None = None
    error: str | None = None


class BatchAPI(Protocol):
    wire: str
    limits: Limits

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes: ...

    def lines(self) -> Lines: ...

    async def submit(self, lines: Lines, tag: str) -> tuple[Remote, str | None]: ...

    async def find(self, tag: str, since: float, items: int, known: set[str]) -> Remote | None: ...

    async def retrieve(self, remote_id: str) -> Remote: ...

    async def results(self, remote: Remote) -> tuple[list[Outcome], int]: ...

    async def cancel(self, remote_id: str) -> Remote: ...


def batch_api(model: Model, limits: Mapping[str, Limits] | None = None) -> BatchAPI | None:
    """The batch API a model's provider offers, or None (the normal path serves it).

    The ``openai`` and ``anthropic`` provider sections have one (whatever their base_url: a
    proxy or a local emulator stands in for the provider); other sections do not."""
    limits = limits or {}
    if isinstance(model, OpenAICompatModel) and model.provider == "openai":
        return OpenAIBatches(model, limits.get("openai", OPENAI_LIMITS))
    if isinstance(model, AnthropicModel) and model.provider == "anthropic":
        return AnthropicBatches(model, limits.get("anthropic", ANTHROPIC_LIMITS))
    return None


def _epoch(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    return 0.0


def _failure(provider: str, exc: Exception) -> ModelError:
    """An SDK error as one scrubbed line; a status error says it was refused."""
    if isinstance(exc, openai.APIStatusError | anthropic.APIStatusError):
        return ModelError(
            f"{provider}: batch API refused ({exc.status_code}): {scrub(str(exc))[:300]}",
            status=exc.status_code,
        )
    return ModelError(f"{provider}: batch API unreachable: {scrub(str(exc))[:300]}", retryable=True)


def _read_outcomes(
    data: bytes, outcome: Callable[[bytes], Outcome | None], out: list[Outcome]
) -> int:
    """Each line's outcome (the provider's own reader) onto ``out``; the count of garbled
    lines, each losing its item only (it is sent again)."""
    garbled = 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        read = outcome(raw)
        if read is None:
            garbled += 1
        else:
            out.append(read)
    return garbled


class OpenAIBatches:
    """OpenAI: upload a JSONL file (purpose batch), create a batch over it; results in the
    output file, failures in the error file."""

    wire = "openai"

    def __init__(self, model: OpenAICompatModel, limits: Limits) -> None:
        self.model = model
        self.limits = limits
        self.sdk = model.sdk
        self._body = BodyEncoder()

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        head = json.dumps(custom_id)
        encoded = self._body(body)
        line = f'{{"custom_id": {head}, "method": "POST", "url": "/v1/chat/completions", '
        return f'{line}"body": {encoded}}}\n'.encode()

    def lines(self) -> Lines:
        return Lines()

    async def submit(self, lines: Lines, tag: str) -> tuple[Remote, str | None]:
        lines.file.seek(0)
        try:
            file = await self.sdk.files.create(
                file=(f"{tag}.jsonl", lines.file, "application/jsonl"), purpose="batch"
            )
            batch = await self.sdk.batches.create(
                input_file_id=file.id,
                endpoint="/v1/chat/completions",
                completion_window="24h",
                metadata={TAG_KEY: tag},
            )
        except openai.OpenAIError as exc:
            raise _failure(self.model.name, exc) from None
        return self._remote(batch), file.id

    def _remote(self, batch: Any) -> Remote:
        counts = batch.request_counts
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        return Remote(
            id=batch.id,
            status=batch.status,
            ended=batch.status in ("completed", "expired", "failed", "cancelled"),
            counts={}
            if counts is None
            else {"total": counts.total, "completed": counts.completed, "failed": counts.failed},
            created_at=_epoch(batch.created_at),
            refs=(batch.output_file_id, batch.error_file_id),
            error="; ".join(scrub(str(e.message)) for e in errors[:3]) or None,
        )

    async def find(self, tag: str, since: float, items: int, known: set[str]) -> Remote | None:
        try:
            async for batch in self.sdk.batches.list(limit=100):
                if (batch.metadata or {}).get(TAG_KEY) == tag:
                    return self._remote(batch)
                if _epoch(batch.created_at) < since - 3600:
                    return None
        except openai.OpenAIError as exc:
            raise _failure(self.model.name, exc) from None
        return None

    async def retrieve(self, remote_id: str) -> Remote:
        try:
            return self._remote(await self.sdk.batches.retrieve(remote_id))
        except openai.OpenAIError as exc:
            raise _failure(self.model.name, exc) from None

    async def cancel(self, remote_id: str) -> Remote:
        try:
            return self._remote(await self.sdk.batches.cancel(remote_id))
        except openai.OpenAIError as exc:
            raise _failure(self.model.name, exc) from None

    async def results(self, remote: Remote) -> tuple[list[Outcome], int]:
        out: list[Outcome] = []
        garbled = 0
        for file_id in remote.refs:
            if not file_id:
                continue
            try:
                content = await self.sdk.files.content(file_id)
            except openai.OpenAIError as exc:
                raise _failure(self.model.name, exc) from None
            garbled += _read_outcomes(content.content, self._outcome, out)
        return out, garbled

    def _outcome(self, raw: bytes) -> Outcome | None:
        try:
            line = json.loads(raw)
            custom_id = line["custom_id"]
            response = line.get("response") or {}
            error = line.get("error")
            if not isinstance(custom_id, str):
                return None
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        if error:
            code = str(error.get("code") or "")
            kind = {"batch_expired": EXPIRED, "batch_cancelled": CANCELED}.get(code, ERRORED)
            return Outcome(custom_id, kind, error=scrub(f"{code}: {error.get('message')}"))
        status = response.get("status_code")
        body = response.get("body") or {}
        if status != 200:
            message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
            return Outcome(custom_id, ERRORED, error=scrub(f"HTTP {status}: {message}"))
        try:
            completion = self.model.completion_from_body(body)
        except (ModelError, TypeError, AttributeError, ValueError) as exc:
            return Outcome(custom_id, ERRORED, error=scrub(f"bad response: {exc}"))
        return Outcome(custom_id, SUCCEEDED, completion)


class AnthropicBatches:
    """Anthropic: one request creates the batch with every item's params; results are a JSONL
    stream at the batch's results URL."""

    wire = "anthropic"

    def __init__(self, model: AnthropicModel, limits: Limits) -> None:
        self.model = model
        self.limits = limits
        self.sdk = model.sdk
        self._body = BodyEncoder()

    def encode(self, custom_id: str, body: dict[str, Any]) -> bytes:
        return f'{{"custom_id": {json.dumps(custom_id)}, "params": {self._body(body)}}}'.encode()

    def lines(self) -> Lines:
        return Lines(b",")

    async def submit(self, lines: Lines, tag: str) -> tuple[Remote, str | None]:
        # POST /v1/messages/batches through the SDK's client, its requests encoded once and
        # streamed from disk (messages.batches.create would copy and encode each again)
        head, tail = b'{"requests":[', b"]}"

        async def content() -> AsyncIterator[bytes]:
            yield head
            for chunk in lines.chunks():
                yield chunk
            yield tail

        length = len(head) + lines.size + len(tail)
        try:
            batch = await self.sdk.post(
                "/v1/messages/batches",
                cast_to=anthropic.types.messages.MessageBatch,
                content=content(),
                options={
                    "headers": {"Content-Type": "application/json", "Content-Length": str(length)}
                },
            )
        except anthropic.AnthropicError as exc:
            raise _failure(self.model.name, exc) from None
        return self._remote(batch), None

    def _remote(self, batch: Any) -> Remote:
        c = batch.request_counts
        return Remote(
            id=batch.id,
            status=batch.processing_status,
            ended=batch.processing_status == "ended",
            counts={
                "processing": c.processing,
                "succeeded": c.succeeded,
                "errored": c.errored,
                "canceled": c.canceled,
                "expired": c.expired,
            },
            created_at=_epoch(batch.created_at),
            refs=(batch.results_url,),
        )

    async def find(self, tag: str, since: float, items: int, known: set[str]) -> Remote | None:
        """Message batches carry no metadata: the one created since ``since`` with as many
        requests that no stored batch knows."""
        try:
            async for batch in self.sdk.messages.batches.list(limit=100):
                remote = self._remote(batch)
                if remote.created_at < since - 60:
                    return None
                if remote.id not in known and sum(remote.counts.values()) == items:
                    return remote
        except anthropic.AnthropicError as exc:
            raise _failure(self.model.name, exc) from None
        return None

    async def retrieve(self, remote_id: str) -> Remote:
        try:
            return self._remote(await self.sdk.messages.batches.retrieve(remote_id))
        except anthropic.AnthropicError as exc:
            raise _failure(self.model.name, exc) from None

    async def cancel(self, remote_id: str) -> Remote:
        try:
            return self._remote(await self.sdk.messages.batches.cancel(remote_id))
        except anthropic.AnthropicError as exc:
            raise _failure(self.model.name, exc) from None

    async def results(self, remote: Remote) -> tuple[list[Outcome], int]:
        try:
            async with self.sdk.messages.batches.with_streaming_response.results(
                remote.id
            ) as response:
                data = await response.read()
        except anthropic.AnthropicError as exc:
            raise _failure(self.model.name, exc) from None
        out: list[Outcome] = []
        return out, _read_outcomes(data, self._outcome, out)

    def _outcome(self, raw: bytes) -> Outcome | None:
        try:
            line = json.loads(raw)
            custom_id = line["custom_id"]
            result = line["result"]
            kind = result["type"]
            if not isinstance(custom_id, str):
                return None
        except (ValueError, KeyError, TypeError):
            return None
        if kind == SUCCEEDED:
            try:
                completion = self.model.completion_from_body(result.get("message") or {})
            except (ModelError, TypeError, AttributeError, ValueError) as exc:
                return Outcome(custom_id, ERRORED, error=scrub(f"bad response: {exc}"))
            return Outcome(custom_id, SUCCEEDED, completion)
        if kind == ERRORED:
            error = (result.get("error") or {}).get("error") or {}
            return Outcome(
                custom_id,
                ERRORED,
                error=scrub(f"{error.get('type', 'error')}: {error.get('message', '')}"),
            )
        if kind in (EXPIRED, CANCELED):
            return Outcome(custom_id, kind, error=kind)
        return None


def now() -> float:
    return time.time()
