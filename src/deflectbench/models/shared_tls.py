"""One TLS context for every official SDK client of the process (issue 37).

Each SDK client makes its own connection pool, and each pool its own TLS context, reading the
system's certificate store: about 50 ms of CPU a client, four clients (two models and the
server probe's) 0.2 s before a run's first request, plain-HTTP servers included. A TLS
context may be shared by any number of pools, so each client is given its own pool (closing
a model's client closes its pool only) on one context, made once by the SDK's own HTTP
library as its default would make it (the same trust store; ``SSL_CERT_FILE`` and
``SSL_CERT_DIR`` honoured). The pool is the SDK's public ``DefaultAsyncHttpxClient`` with its
own defaults (limits, timeouts, redirects, keep-alive); only ``verify`` is given, and a
request hook that tells :mod:`.sdk_loader` when the process's first request has been written
to its server (the HTTP library's ``trace`` extension; then the next SDK may load: before, it
would share the one core the first request's set-up runs on).

An SDK whose HTTP library has no public ``create_ssl_context`` gets no pool from here (None):
its client then makes its own, as before.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import Any

from deflectbench.models.sdk_loader import sent, went_out

__all__ = ["http_client"]

#: HTTP library's package name -> its default TLS context, made on first use.
_contexts: dict[str, Any] = {}
_lock = threading.Lock()


def _library(pool_type: type) -> ModuleType | None:
    """The package of the HTTP library the SDK's pool type is built on (httpx or its fork)."""
    for cls in pool_type.__mro__:
        if cls.__name__ == "AsyncClient":
            return sys.modules.get(cls.__module__.split(".")[0])
    return None


def http_client(sdk: ModuleType, **options: Any) -> Any | None:
    """A new connection pool for one client of ``sdk`` (``openai``, ``anthropic``) on the
    shared TLS context, with these pool options (e.g. ``timeout``); None: the SDK's client
    makes its own (see the module's docstring)."""
    pool_type: Any = getattr(sdk, "DefaultAsyncHttpxClient", None)
    library = _library(pool_type) if isinstance(pool_type, type) else None
    create = getattr(library, "create_ssl_context", None)
    if library is None or not callable(create):
        return None
    with _lock:
        context = _contexts.get(library.__name__)
        if context is None:
            context = _contexts[library.__name__] = create()
    return pool_type(verify=context, event_hooks={"request": [_watch_first]}, **options)


async def _watch_first(request: Any) -> None:
    """Trace the requests sent before the first one has been written (then none)."""
    if not went_out():
        request.extensions = {**request.extensions, "trace": _written}


async def _written(event: str, info: Any) -> None:
    if event.endswith("send_request_body.complete"):
        sent()
