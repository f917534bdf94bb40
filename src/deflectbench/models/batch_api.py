"""What a batch API is to batch mode: one small interface a model may offer
(:meth:`~deflectbench.models.base.Model.batch_api`): encode a request as a line, submit lines,
find a batch by its tag, retrieve its state, read its results, cancel it.

It sits beside the models because a batch line carries the very body the model's normal path
sends, and a result's body is read by the model's own reader, so a batch answer is the same
:class:`~deflectbench.models.base.Completion` (typed non-answers included) a direct request
would give. A plugin model batches by returning an object of this shape; the built-in ones are
:mod:`~deflectbench.models.openai_batch` and :mod:`~deflectbench.models.anthropic_batch`.
Results are read line by line: a garbled line loses that item only (it is sent again).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from deflectbench.models.base import Completion, GenerationParams, Message, ModelError
from deflectbench.secrets import scrub

#: What a result is: an answer, or why there is none.
SUCCEEDED, ERRORED, EXPIRED, CANCELED = "succeeded", "errored", "expired", "canceled"


@dataclass(frozen=True)
class Limits:
    """What one batch may carry (the provider's documented limits)."""

    max_requests: int
    max_bytes: int


#: The providers' documented limits (OpenAI's Batch API, Anthropic's Message Batches).
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
    #: What the provider says the batch is, to tell it is the one this store sent: the tag it
    #: carries (OpenAI's metadata; None: the provider keeps none), its input file and endpoint
    #: (OpenAI), how many requests it holds (None: not said).
    tag: str | None = None
    input_file_id: str | None = None
    endpoint: str | None = None
    requests: int | None = None


@dataclass(frozen=True)
class Outcome:
    """One item's result: ``kind`` is succeeded, errored, expired or canceled."""

    custom_id: str
    kind: str
    completion: Completion | None = None
    error: str | None = None


class BatchAPI(Protocol):
    """A provider's batch API for one model. ``wire`` names its format (the store keeps it with
    each batch); ``limits`` is what one batch may carry (batch mode may set tighter ones)."""

    wire: str
    limits: Limits

    def encode(
        self, custom_id: str, messages: Sequence[Message], params: GenerationParams
    ) -> bytes:
        """One batch line: the body the model's normal path sends for this request."""
        ...

    def lines(self) -> Lines: ...

    async def submit(self, lines: Lines, tag: str) -> tuple[Remote, str | None]:
        """Send a batch tagged ``tag``; the batch and its input file's id, if it has one."""
        ...

    async def find(self, tag: str, since: float, items: int, known: set[str]) -> Remote | None:
        """The batch sent with ``tag`` (after a crash mid-submit), or None: never sent."""
        ...

    async def retrieve(self, remote_id: str) -> Remote: ...

    async def results(self, remote: Remote) -> tuple[list[Outcome], int]:
        """Each item's outcome, and the count of unreadable lines."""
        ...

    async def cancel(self, remote_id: str) -> Remote: ...


def not_ours(
    remote: Remote,
    tag: str,
    *,
    items: int | None = None,
    input_file_id: str | None = None,
    endpoint: str | None = None,
) -> str | None:
    """Why ``remote`` is not the batch this store sent under ``tag`` (with ``items`` requests,
    its input file ``input_file_id``, to ``endpoint``), in a few words, or None. A provider (or
    a proxy) answering with another batch's id, another store's or another model's, would
    otherwise have that batch's results stored as these answers. What the provider does not
    say is not held against it."""
    if remote.tag is not None and remote.tag != tag:
        return f"it carries the tag {_quoted(remote.tag)}, not this store's {tag}"
    if input_file_id and remote.input_file_id and remote.input_file_id != input_file_id:
        return (
            f"its input file is {_quoted(remote.input_file_id)}, not the one this store sent "
            f"({input_file_id})"
        )
    if endpoint and remote.endpoint and remote.endpoint != endpoint:
        return f"its endpoint is {_quoted(remote.endpoint)}, not {endpoint}"
    if items and remote.requests and remote.requests != items:
        return f"it holds {remote.requests:,} requests, this store sent {items:,}"
    return None


def foreign_ids(outcomes: Sequence[Outcome], sent: set[str]) -> str | None:
    """Why results whose custom ids are not the ones this store ``sent`` in the batch are
    not its results (Anthropic's batches carry no tag: their results' ids tell), or None."""
    other = sorted({o.custom_id for o in outcomes} - sent)
    if not other:
        return None
    shown = ", ".join(_quoted(x) for x in other[:3]) + (" ..." if len(other) > 3 else "")
    return f"{len(other):,} of its results have custom ids this store did not send ({shown})"


def _quoted(text: str, limit: int = 80) -> str:
    """Provider text in a message: quoted, bounded."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def epoch(value: Any) -> float:
    """A provider's timestamp (seconds or a datetime) as seconds since the epoch."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    return 0.0


def failure(provider: str, exc: Exception, refused: type[Exception]) -> ModelError:
    """An SDK error as one scrubbed line; a status error (``refused``) says it was refused:
    nothing was sent. Any other is retryable (the request may not have arrived)."""
    if isinstance(exc, refused):
        status = getattr(exc, "status_code", None)
        return ModelError(
            f"{provider}: batch API refused ({status}): {scrub(str(exc))[:300]}", status=status
        )
    return ModelError(f"{provider}: batch API unreachable: {scrub(str(exc))[:300]}", retryable=True)


def read_outcomes(
    data: bytes, outcome: Callable[[bytes], Outcome | None], out: list[Outcome]
) -> int:
    """Each line's outcome (the provider's own reader) onto ``out``; the count of garbled
    lines, each losing its item only (it is sent again)."""
    garbled = 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            read = outcome(raw)
        except (AttributeError, TypeError, ValueError, KeyError, OverflowError, RecursionError):
            read = None  # e.g. an ``error`` or ``response`` that is a string: that item's only
        if read is None:
            garbled += 1
        else:
            out.append(read)
    return garbled
