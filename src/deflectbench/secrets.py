"""Keep credentials out of everything DeflectBench writes or prints.

Each provider already redacts its own key from its errors; this is the second wall: any text
about to be stored or shown (errors, which servers sometimes fill with the key they were sent,
and model replies, which can echo it too) is scrubbed of the values of every credential-like
environment variable and of every variable a configuration names as holding a key, whole or
in part (a server that echoes ``sk-abc...`` truncated still leaks most of the key).

Models register what their requests carry (:func:`register_credentials`: the key, a base URL's
``user:password@``, credential headers) when they are built, in every form a server can echo
it: as configured, percent-decoded and percent-encoded, and as the ``Authorization: Basic``
header's base64 of ``user:password`` (httpx sends a URL's userinfo so); :func:`scrub` then
removes every registered form, whatever variable or file the credential came from.
"""

from __future__ import annotations

import base64
import functools
import itertools
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote, urlsplit

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


#: Credentials the models of this process send (every form of each), see
#: :func:`register_credentials`.
_REGISTERED: set[str] = set()
#: Header names whose values are credentials (a configured ``headers`` table may carry one).
_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|passw|cookie|session", re.IGNORECASE)


def _forms(value: str) -> set[str]:
    """``value`` as configured, percent-decoded and percent-encoded (a URL holds either)."""
    plain = unquote(value)
    return {value, plain, quote(plain, safe=""), quote(plain, safe="/:@!$&'()*+,;=")}


def _basic(user: str, password: str) -> set[str]:
    """Every base64 an ``Authorization: Basic`` header of ``user:password`` can carry (standard
    and URL-safe alphabets, with and without padding; of the decoded and the encoded pair)."""
    out = set()
    for pair in {f"{unquote(user)}:{unquote(password)}", f"{user}:{password}"}:
        raw = pair.encode()
        for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
            text = encoded.decode()
            out |= {text, text.rstrip("=")}
    return out


def url_credentials(url: str | None) -> tuple[str, str | None] | None:
    """A URL's ``(user, password)`` as written in it (percent-encoded), None without any."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    netloc = parts.netloc
    if "@" not in netloc:
        return None
    userinfo = netloc.rpartition("@")[0]
    user, colon, password = userinfo.partition(":")
    return user, (password if colon else None)


def credential_forms(
    key: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> set[str]:
    """Every form of the credentials one client sends (see the module's docstring): long
    enough ones only (shorter values would scrub ordinary words)."""
    forms: set[str] = set()
    if key:
        forms |= _forms(key)
    found = url_credentials(url)
    if found is not None:
        user, password = found
        if password is None:  # a token as the user name (https://TOKEN@host)
            forms |= _forms(user) | _basic(user, "")
        else:
            forms |= _forms(password) | _forms(f"{user}:{password}") | _basic(user, password)
    for name, value in (headers or {}).items():
        if isinstance(value, str) and _CREDENTIAL_HEADER.search(name):
            forms |= _forms(value) | _forms(value.rpartition(" ")[2])  # "Bearer x" and x
    return {f for f in forms if len(f) >= _MIN_SECRET_LENGTH}


def register_credentials(
    key: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Scrub these credentials, in every form (:func:`credential_forms`), from now on: called
    by each model as it is built, with what its requests will carry."""
    _REGISTERED.update(credential_forms(key, url, headers))


#: What :func:`secret_values` last read from ``os.environ``: a copy of its raw mapping, the
#: sizes of the watched and registered sets then (both only grow), and the answer.
_last: tuple[object, tuple[int, int], tuple[str, ...]] | None = None


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Every credential to scrub: the environment's (by name) and every registered form.

    ``os.environ`` is read again only when it changed since the last call (compared with a
    copy of its raw mapping at C speed): decoding every variable on every scrub was a quarter
    of a run's client CPU (issue 37)."""
    global _last
    raw = getattr(os.environ, "_data", None) if env is None else None
    sizes = (len(_WATCHED), len(_REGISTERED))
    last = _last
    if raw is not None and last is not None and last[1] == sizes and last[0] == raw:
        return list(last[2])
    env = os.environ if env is None else env
    values = {
        v
        for k, v in env.items()
        if (_CREDENTIAL_NAME.search(k) or k in _WATCHED) and len(v) >= _MIN_SECRET_LENGTH
    }
    found = sorted(values | _REGISTERED, key=len, reverse=True)
    if isinstance(raw, dict):
        _last = (dict(raw), sizes, tuple(found))
    return found


@functools.lru_cache(maxsize=8)
def _grams(values: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Every run of ``_PARTIAL`` consecutive characters of any of ``values``, and the values'
    aligned blocks of half that length: a run of ``_PARTIAL`` characters of a value holds one
    of its blocks whole, so a text that holds no block (the common case) holds no run either,
    and is passed after a few substring searches at C speed."""
    grams = frozenset(v[i : i + _PARTIAL] for v in values for i in range(len(v) - _PARTIAL + 1))
    half = _PARTIAL // 2
    blocks = {v[i : i + half] for v in values for i in range(0, len(v) - half + 1, half)}
    return grams, tuple(sorted(blocks))


def _partial_spans(text: str, grams: frozenset[str]) -> list[tuple[int, int]]:
    """Spans of ``text`` made of runs of at least ``_PARTIAL`` consecutive characters of a
    secret (a truncated or partly masked echo)."""
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
    """``text`` with every credential (the environment's, every registered form) replaced by
    ``[redacted]``, whole or as any echoed run of 8 or more of its characters."""
    return _scrub_with(text, tuple(secret_values(env)))


def _scrub_with(text: str, values: tuple[str, ...]) -> str:
    if not values or len(text) < _PARTIAL:
        return text
    grams, blocks = _grams(values)
    if not any(block in text for block in blocks):
        return text
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    for start, end in reversed(_partial_spans(text, grams)):
        text = text[:start] + REDACTED + text[end:]
    return text


#: How deep and how large untrusted JSON (a server's ``/version``, ``/v1/models``, a reply's
#: extra fields, a batch line) may be to be kept: deeper or larger is "not available".
MAX_DEPTH = 32
MAX_NODES = 5_000
MAX_ITEMS = 256
MAX_TEXT = 4_096
TOO_DEEP = "not available (too deep)"
TOO_LARGE = "not available (too large)"


class Untrusted(ValueError):
    """Untrusted JSON past the bounds: its ``str`` is what to record instead."""


def scrub_json(
    value: object,
    *,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    max_items: int = MAX_ITEMS,
    max_text: int = MAX_TEXT,
) -> object:
    """Untrusted JSON as it may be stored or shown: every string (mapping keys too) scrubbed
    (:func:`scrub`) and cut at ``max_text`` characters, lists and mappings at ``max_items``
    entries; raises :class:`Untrusted` (``TOO_DEEP`` / ``TOO_LARGE``) past ``max_depth``
    levels or ``max_nodes`` values in all, without ever recursing deeper than that."""
    seen = 0
    values = tuple(secret_values())

    def clean(text: str) -> str:
        return _scrub_with(text[:max_text], values)

    def walk(v: object, depth: int) -> object:
        nonlocal seen
        seen += 1
        if seen > max_nodes:
            raise Untrusted(TOO_LARGE)
        if isinstance(v, str):
            return clean(v)
        if v is None or isinstance(v, bool | int | float):
            return v
        if depth >= max_depth:
            raise Untrusted(TOO_DEEP)
        if isinstance(v, Mapping):
            return {
                clean(str(k)): walk(x, depth + 1) for k, x in itertools.islice(v.items(), max_items)
            }
        if isinstance(v, list | tuple):
            return [walk(x, depth + 1) for x in itertools.islice(v, max_items)]
        return clean(str(v))

    return walk(value, 0)
