"""Test doubles that implement DeflectBench's own Model interface (no SDK is involved)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
    Usage,
)


class EchoModel(Model):
    """Answers deterministically from the prompt and seed; can crash after ``crash_after`` calls
    (raising ``crash_with``, e.g. KeyboardInterrupt) or fail chosen prompts."""

    limits = Limits(max_concurrency=4)
    default_max_tokens = 64

    def __init__(
        self,
        name: str = "test/echo",
        *,
        crash_after: int | None = None,
        crash_with: type[BaseException] = KeyboardInterrupt,
        fail_if: str | None = None,
    ) -> None:
        self.name = name
        self.calls: list[list[Message]] = []
        self.crash_after = crash_after
        self.crash_with = crash_with
        self.fail_if = fail_if

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise self.crash_with()
        self.calls.append(list(messages))
        text = messages[-1].content
        if self.fail_if and self.fail_if in text:
            raise ModelError("400 bad request: refused by test", status=400)
        tag = hashlib.sha256(f"{text}|{params.seed}".encode()).hexdigest()[:8]
        reply = f"But what about the other side? ({tag})"
        return Completion(reply, Usage(len(text.split()), len(reply.split())), "stop", 0.001)
