"""What the engine is told and what it tells back: the policy for one model (its provider's
shared limits and its own retries), a failed item, progress events, a lane's statistics, and
the two ways ``call`` can refuse an item."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from deflectbench.models.base import Model


class NotSent(Exception):
    """Raised by ``call`` before sending anything: the item is not reported, it is still to do.

    With ``wait``, the worker awaits ``wait()`` (e.g. until requests in flight settle a
    budget; outside the request's timeout) and tries the item again; without, the item is
    left alone for this run and counted in ``EngineStats.withheld``."""

    def __init__(self, reason: str, *, wait: Callable[[], Awaitable[object]] | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


class Fatal(Exception):
    """Raised by ``call``: not the item's failure but the run's (e.g. the store cannot write);
    it stops the run and propagates, and the item is never reported as failed."""


@dataclass
class EnginePolicy:
    """How hard to push one model endpoint, and how to react when it pushes back.

    The concurrency, pacing and pause fields are the provider's (its account's): every lane on
    one account shares one limit, one requests- and one tokens-per-minute pacer (the tightest
    any of its lanes states). The others (retries, timeouts, aborting, the per-model cap) are
    the lane's own.
    """

    #: Requests in flight at once on the account, every lane on it together.
    max_concurrency: int = 16
    min_concurrency: int = 1
    #: Allowed concurrency at start (default: ``max_concurrency``).
    initial_concurrency: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    #: Pace at this fraction of the stated per-minute limits, so clock skew and network
    #: jitter do not push a server-side sliding window over its limit.
    rate_headroom: float = 0.95
    #: Per-request deadline (the SDK has its own timeout too; this one bounds anything).
    timeout_s: float = 120.0
    #: Retries after errors other than 429 (so at most ``max_retries + 1`` such attempts).
    max_retries: int = 6
    #: Retries after 429s. Separate and larger: a 429 says "not now", not "this item is bad".
    max_rate_limit_retries: int = 20
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    #: A Retry-After pauses the whole pool for at most this long (the item waits it all).
    pool_pause_max_s: float = 5.0
    #: A Retry-After longer than this fails the item instead of parking it.
    retry_after_max_s: float = 300.0
    #: Stop dispatching after this many final failures in a row with no success between
    #: (a bad key or a wrong model name would otherwise fail every remaining item).
    abort_after_failures: int | None = 25
    #: This lane's own cap within its account's concurrency (None: only the account's).
    model_max_concurrency: int | None = None

    @classmethod
    def for_model(cls, model: Model, **overrides: Any) -> EnginePolicy:
        """The policy a model's own limits ask for, with ``overrides`` on top."""
        limits = model.limits
        settings: dict[str, Any] = {
            "max_concurrency": limits.max_concurrency,
            "requests_per_minute": limits.requests_per_minute,
            "tokens_per_minute": limits.tokens_per_minute,
            "max_retries": limits.max_retries,
            "model_max_concurrency": limits.model_max_concurrency,
            # A little longer than the SDK's own timeout, whose error message is clearer.
            "timeout_s": limits.timeout_s + 5.0,
        }
        settings.update(overrides)
        return cls(**settings)

    def __post_init__(self) -> None:
        if self.max_concurrency < 1 or not 1 <= self.min_concurrency <= self.max_concurrency:
            raise ValueError("need 1 <= min_concurrency <= max_concurrency")
        if self.model_max_concurrency is not None and self.model_max_concurrency < 1:
            raise ValueError("model_max_concurrency must be at least 1")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")


@dataclass(frozen=True)
class Failure:
    """Why an item produced no completion."""

    error: str
    status: int | None
    attempts: int
    #: True if the last error was retryable (retries ran out); False if retrying was futile.
    retryable: bool
    #: A short name to count failures by: ``HTTP 500``, ``timeout``, ``connection refused``.
    cause: str = "error"


EventKind = Literal["ok", "failed", "retry", "concurrency", "pause", "abort", "stop"]


@dataclass(frozen=True)
class EngineEvent:
    """Progress notice for display and logging; the engine never needs it back."""

    kind: EventKind
    item: object = None
    attempts: int = 0
    #: Allowed concurrency after the event, and requests in flight at it.
    concurrency: int = 0
    in_flight: int = 0
    delay_s: float = 0.0
    error: str | None = None
    status: int | None = None


@dataclass
class EngineStats:
    """What one lane (a model's or a judge's items) did; the concurrency figures are its
    account's, shared with the other lanes on it."""

    ok: int = 0
    failed: int = 0
    #: Attempts that were retried (each failed attempt that was tried again).
    retries: int = 0
    #: Responses that were 429s.
    rate_limited: int = 0
    #: Requests sent (all attempts).
    requests: int = 0
    elapsed: float = 0.0
    #: Items taken up but neither finished nor reported, because dispatching stopped.
    unfinished: int = 0
    #: Items ``call`` declined to send (:class:`NotSent`); not reported, still to do.
    withheld: int = 0
    #: ``should_stop`` said stop.
    stopped: bool = False
    #: Why the engine stopped on its own (too many failures in a row), if it did.
    aborted: str | None = None
    final_concurrency: int = 0
    lowest_concurrency: int = 0
    #: Every change of the allowed concurrency: (seconds since start, new limit).
    concurrency_trace: list[tuple[float, int]] = field(default_factory=list)
