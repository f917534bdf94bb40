"""Helpers shared by the HTTP API providers: option types and error classification.

Both SDKs raise their own exception trees; the engine only needs to know: may I retry, was
it a rate limit, and how long did the server ask me to wait. The SDKs' retries are switched
off (``max_retries=0``) so that these decisions are made once, in the engine.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

from deflectbench.errors import ConfigError
from deflectbench.models.base import ModelError

#: What the output-length cap is called on the wire (newer OpenAI models want the second).
MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]
#: ``always``: send the temperature; ``non_default``: only when it is not the API default
#: (1.0), since newer reasoning models reject any explicit value; ``never``: do not send it.
TemperatureMode = Literal["always", "non_default", "never"]

#: Statuses where trying again later can succeed (besides 429 and 5xx).
RETRYABLE_STATUSES = frozenset({408, 409, 425})
#: 429 error codes that mean "out of money/quota", not "slow down": retrying cannot help.
QUOTA_CODES = frozenset(
    {"insufficient_quota", "billing_hard_limit_reached", "enforced_spend_limit_reached"}
)
_MAX_MESSAGE = 300


def redact(text: str, secret: str | None) -> str:
    """Remove a credential (and its common prefix/suffix fragments) from text."""
    if secret and len(secret) >= 8:
        text = text.replace(secret, "[REDACTED]")
        if len(secret) >= 16:
            # Some servers echo a key partially ("sk-abc...wxyz"); catch long fragments too.
            for fragment in (secret[:12], secret[-12:]):
                text = text.replace(fragment, "[REDACTED]")
    return text


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or HTTP date)."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


def status_error(
    provider: str,
    status: int,
    message: str | None,
    *,
    headers: Mapping[str, str] | None = None,
    code: str | None = None,
    secret: str | None = None,
) -> ModelError:
    """Map an HTTP error status to a :class:`ModelError` the engine can act on."""
    detail = redact((message or "").strip(), secret)[:_MAX_MESSAGE]
    text = f"{provider}: HTTP {status}" + (f" - {detail}" if detail else "")
    retry_after = parse_retry_after(headers)
    if status == 429:
        if code in QUOTA_CODES:
            return ModelError(text + " (quota exhausted)", retryable=False, status=status)
        return ModelError(
            text, retryable=True, status=status, retry_after=retry_after, rate_limited=True
        )
    if status >= 500 or status in RETRYABLE_STATUSES:
        return ModelError(text, retryable=True, status=status, retry_after=retry_after)
    return ModelError(text, retryable=False, status=status)


def transient_error(
    provider: str, what: str, secret: str | None = None, *, cause: str = "error"
) -> ModelError:
    """A retryable failure without an HTTP status (timeout, dropped connection, bad body)."""
    return ModelError(
        f"{provider}: {redact(what, secret)[:_MAX_MESSAGE]}", retryable=True, cause=cause
    )


def connection_error(
    provider: str, exc: BaseException, secret: str | None = None, url: str | None = None
) -> ModelError:
    """A request that reached no server: says which way it failed (refused, DNS, reset) and
    the URL it tried (a wrong base_url or OPENAI_BASE_URL is then plain to see)."""
    cause = exc.__cause__
    detail = f"{type(cause).__name__}: {cause}" if cause else "unknown"
    refused = "refused" in detail.lower() or "all connection attempts failed" in detail.lower()
    where = f" to {url}" if url else ""
    return transient_error(
        provider,
        f"connection error{where} ({detail})",
        secret,
        cause="connection refused" if refused else "connection error",
    )


def check_base_url(provider: str, base_url: str) -> str:
    """Refuse, before any request, a base_url that no HTTP client can use (no scheme or host)."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"provider {provider!r}: base_url {base_url!r} needs http:// or https:// and a host, "
            "e.g. http://localhost:8000/v1"
        )
    return base_url
