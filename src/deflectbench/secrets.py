"""Keep credentials out of everything DeflectBench writes or prints.

Each provider already redacts its own key from its errors; this is the second wall: any text
about to be stored or shown (errors, which servers sometimes fill with the key they were sent,
and model replies, which can echo it too) is scrubbed of the values of every credential-like
environment variable and of every variable a configuration names as holding a key, whole or
in part (a server that echoes ``sk-abc...`` truncated still leaks most of the key).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

_CREDENTIAL_NAME = re.compile(r"(API_KEY|_KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
#: Shorter values would scrub ordinary words; real keys are far longer.
_MIN_SECRET_LENGTH = 8
#: A run of this many characters of a key, found anywhere, is scrubbed as a partial echo.
_PARTIAL = 8
REDACTED = "[redacted]"

#: Environment variables a configuration names as holding keys (``api_key_env``), whatever
#: their names look like.
_WATCHED: set[str] = set()


def watch_env(names: Iterable[str]) -> None:
    """Treat these environment variables as credentials from now on (``api_key_env``)."""
    _WATCHED.update(n for n in names if n)


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    values = {
        v
        for k, v in env.items()
        if (_CREDENTIAL_NAME.search(k) or k in _WATCHED) and len(v) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def _partial_spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Spans of ``text`` made of runs of at least ``_PARTIAL`` consecutive characters of
    ``secret`` (a truncated or partly masked echo)."""
    grams = {secret[i : i + _PARTIAL] for i in range(len(secret) - _PARTIAL + 1)}
    spans: list[tuple[int, int]] = []
    i = 0
    while i <= len(text) - _PARTIAL:
        if text[i : i + _PARTIAL] in grams:
            end = i + _PARTIAL
            while end < len(text) and text[end - _PARTIAL + 1 : end + 1] in grams:
                end += 1
            spans.append((i, end))
            i = end
        else:
            i += 1
    return spans


def scrub(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with every credential from the environment replaced by ``[redacted]``, whole or
    as any echoed run of 8 or more of its characters."""
    for value in secret_values(env):
        if value in text:
            text = text.replace(value, REDACTED)
        spans = _partial_spans(text, value)
        for start, end in reversed(spans):
            text = text[:start] + REDACTED + text[end:]
    return text
