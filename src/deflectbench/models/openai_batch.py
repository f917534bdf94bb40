"""OpenAI's batch API, through the official SDK: upload a JSONL file (purpose batch), create a
batch over it; results in the output file, failures in the error file. What
:meth:`OpenAICompatModel.batch_api <deflectbench.models.openai_compat.OpenAICompatModel.batch_api>`
offers for the ``openai`` provider section (whatever its base_url: a proxy or a local emulator
stands in for the provider).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import openai

from deflectbench.models._sdk_batch import SDKBatches
from deflectbench.models.base import GenerationParams, Message
from deflectbench.models.batch_api import (
    CANCELED,
    ERRORED,
    EXPIRED,
    OPENAI_LIMITS,
    Lines,
    Outcome,
    Remote,
    epoch,
)
from deflectbench.models.openai_compat import OpenAICompatModel
from deflectbench.secrets import scrub

#: The metadata key an OpenAI batch carries its store key under (found again after a crash).
TAG_KEY = "deflectbench_batch"
#: The endpoint every line of a batch posts to.
ENDPOINT: Final = "/v1/chat/completions"


class OpenAIBatches(SDKBatches[OpenAICompatModel]):
    """OpenAI: upload a JSONL file (purpose batch), create a batch over it; results in the
    output file, failures in the error file."""

    wire = "openai"
    endpoint = ENDPOINT
    sdk_error = openai.OpenAIError
    refused = openai.APIStatusError
    default_limits = OPENAI_LIMITS

    @property
    def _batches(self) -> Any:
        return self.sdk.batches

    def encode(
        self, custom_id: str, messages: Sequence[Message], params: GenerationParams
    ) -> bytes:
        head = json.dumps(custom_id)
        encoded = self._encoded(messages, params)
        line = f'{{"custom_id": {head}, "method": "POST", "url": "/v1/chat/completions", '
        return f'{line}"body": {encoded}}}\n'.encode()

    def lines(self) -> Lines:
        return Lines()

    async def submit(self, lines: Lines, tag: str) -> tuple[Remote, str | None]:
        lines.file.seek(0)
        with self._calling():
            file = await self.sdk.files.create(
                file=(f"{tag}.jsonl", lines.file, "application/jsonl"), purpose="batch"
            )
            batch = await self.sdk.batches.create(
                input_file_id=file.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={TAG_KEY: tag},
            )
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
            created_at=epoch(batch.created_at),
            refs=(batch.output_file_id, batch.error_file_id),
            error="; ".join(scrub(str(e.message)) for e in errors[:3]) or None,
            # no metadata at all: a provider that keeps none (tag None); any other: it must be ours
            tag=str((batch.metadata or {}).get(TAG_KEY) or "") if batch.metadata else None,
            input_file_id=getattr(batch, "input_file_id", None),
            endpoint=getattr(batch, "endpoint", None),
            requests=None if counts is None else counts.total,
        )

    async def find(self, tag: str, since: float, items: int, known: set[str]) -> Remote | None:
        with self._calling():
            async for batch in self._batches.list(limit=100):
                if (batch.metadata or {}).get(TAG_KEY) == tag:
                    return self._remote(batch)
                if epoch(batch.created_at) < since - 3600:
                    return None
        return None

    async def results(self, remote: Remote) -> tuple[list[Outcome], int]:
        out: list[Outcome] = []
        garbled = 0
        for file_id in remote.refs:
            if not file_id:
                continue
            with self._calling():
                content = await self.sdk.files.content(file_id)
            garbled += self._read(content.content, out)
        return out, garbled

    def _outcome(self, raw: bytes) -> Outcome | None:
        try:
            line = json.loads(raw)
            custom_id = line["custom_id"]
            response = line.get("response") or {}
            error = line.get("error")
            if not isinstance(custom_id, str):
                return None
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # garbled (a line nested past any depth too: untrusted input)
        if error:
            code = str(error.get("code") or "")
            kind = {"batch_expired": EXPIRED, "batch_cancelled": CANCELED}.get(code, ERRORED)
            return Outcome(custom_id, kind, error=scrub(f"{code}: {error.get('message')}"[:300]))
        status = response.get("status_code")
        body = response.get("body") or {}
        if status != 200:
            message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
            return Outcome(custom_id, ERRORED, error=scrub(f"HTTP {status}: {message}"[:300]))
        return self._answered(custom_id, body)
