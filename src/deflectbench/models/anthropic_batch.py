"""Anthropic's Message Batches, through the official SDK: one request creates the batch with
every item's params; results are a JSONL stream at the batch's results URL. What
:meth:`AnthropicModel.batch_api <deflectbench.models.anthropic_api.AnthropicModel.batch_api>`
offers for the ``anthropic`` provider section.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic

from deflectbench.models._sdk_batch import SDKBatches
from deflectbench.models.anthropic_api import AnthropicModel
from deflectbench.models.base import GenerationParams, Message
from deflectbench.models.batch_api import (
    ANTHROPIC_LIMITS,
    CANCELED,
    ERRORED,
    EXPIRED,
    SUCCEEDED,
    Lines,
    Outcome,
    Remote,
    epoch,
)
from deflectbench.secrets import scrub


class AnthropicBatches(SDKBatches[AnthropicModel]):
    """Anthropic: one request creates the batch with every item's params; results are a JSONL
    stream at the batch's results URL."""

    wire = "anthropic"
    sdk_error = anthropic.AnthropicError
    refused = anthropic.APIStatusError
    default_limits = ANTHROPIC_LIMITS

    @property
    def _batches(self) -> Any:
        return self.sdk.messages.batches

    def encode(
        self, custom_id: str, messages: Sequence[Message], params: GenerationParams
    ) -> bytes:
        body = self._encoded(messages, params)
        return f'{{"custom_id": {json.dumps(custom_id)}, "params": {body}}}'.encode()

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
        with self._calling():
            batch = await self.sdk.post(
                "/v1/messages/batches",
                cast_to=anthropic.types.messages.MessageBatch,
                content=content(),
                options={
                    "headers": {"Content-Type": "application/json", "Content-Length": str(length)}
                },
            )
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
            created_at=epoch(batch.created_at),
            refs=(batch.results_url,),
            # Message batches carry no tag: the count here, the results' custom ids at collection
            requests=c.processing + c.succeeded + c.errored + c.canceled + c.expired,
        )

    async def find(self, tag: str, since: float, items: int, known: set[str]) -> Remote | None:
        """Message batches carry no metadata: the one created since ``since`` with as many
        requests that no stored batch knows."""
        with self._calling():
            async for batch in self._batches.list(limit=100):
                remote = self._remote(batch)
                if remote.created_at < since - 60:
                    return None
                if remote.id not in known and sum(remote.counts.values()) == items:
                    return remote
        return None

    async def results(self, remote: Remote) -> tuple[list[Outcome], int]:
        with self._calling():
            async with self._batches.with_streaming_response.results(remote.id) as response:
                data = await response.read()
        out: list[Outcome] = []
        return out, self._read(data, out)

    def _outcome(self, raw: bytes) -> Outcome | None:
        try:
            line = json.loads(raw)
            custom_id = line["custom_id"]
            result = line["result"]
            kind = result["type"]
            if not isinstance(custom_id, str):
                return None
        except (ValueError, KeyError, TypeError, RecursionError):
            return None  # garbled (a line nested past any depth too: untrusted input)
        if kind == SUCCEEDED:
            return self._answered(custom_id, result.get("message") or {})
        if kind == ERRORED:
            error = (result.get("error") or {}).get("error") or {}
            return Outcome(
                custom_id,
                ERRORED,
                error=scrub(f"{error.get('type', 'error')}: {error.get('message', '')}"[:300]),
            )
        if kind in (EXPIRED, CANCELED):
            return Outcome(custom_id, kind, error=kind)
        return None
