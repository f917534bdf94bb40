"""Helpers shared by the HTTP API providers: option types and error classification.

Both SDKs raise their own exception trees; the engine only needs to know: may I retry, was
it a rate limit, and how long did the server ask me to wait. The SDKs' retries are switched
off (``max_retries=0``) so that these decisions are made once, in the engine.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from typing import Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from deflectbench.errors import ConfigError
from deflectbench.models.base import ModelError
from deflectbench.secrets import url_credentials

#: A credential in a base URL needs as many characters as a key to be scrubbed reliably.
MIN_URL_SECRET = 8

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
    where = f" to {public_url(url)}" if url else ""
    return transient_error(
        provider,
        f"connection error{where} ({detail})",
        secret,
        cause="connection refused" if refused else "connection error",
    )


def public_url(url: str) -> str:
    """The URL as it may be stored and shown: no credentials (``user:pass@``), no query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def check_base_url(provider: str, base_url: str) -> str:
    """Refuse, before any request, a base_url that no HTTP client can use (no scheme or host),
    or whose credentials (``user:password@``) are too short to be scrubbed from what servers
    send back (the key's rule: at least 8 characters)."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        shown = re.sub(r"^([a-z]+://)?[^/@]*@", r"\1[redacted]@", base_url)
        raise ConfigError(
            f"provider {provider!r}: base_url {shown!r} needs http:// or https:// and a host, "
            "e.g. http://localhost:8000/v1"
        )
    found = url_credentials(base_url)
    if found is not None:
        user, password = found
        secret = unquote(user if password is None else password)
        if len(secret) < MIN_URL_SECRET:
            what = "user name (a token)" if password is None else "password"
            raise ConfigError(
                f"provider {provider!r}: the {what} in base_url is shorter than "
                f"{MIN_URL_SECRET} characters, too short to be scrubbed from what servers send "
                "back; use a longer one, or a key in api_key_env"
            )
    return base_url
