"""What a self-hosted OpenAI-compatible server says it is serving, asked once per run: its
``GET /version`` (vLLM, SGLang, llama.cpp's server answer it at the server's root) and
``GET /v1/models`` (each model's id, owner, context length and the checkpoint it is a name
for: vLLM's ``max_model_len`` and ``root``). A server that does not answer within a short
timeout, or answers something else, is recorded as "not available": never a reason to stop a
run. Hosted APIs (a built-in provider at its own URL) are not asked.

Both go through the model's own official SDK client, with its key, timeout and proxy settings:
the server asked is the one every request of the run goes to.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from deflectbench.models._http import public_url
from deflectbench.models.shared_tls import http_client
from deflectbench.secrets import Untrusted, scrub_json

__all__ = ["NOT_AVAILABLE", "PROBE_TIMEOUT_S", "probe", "public_url", "self_hosted"]

NOT_AVAILABLE = "not available"
#: Seconds each probe may take: the run waits for it before its first request.
PROBE_TIMEOUT_S = 3.0
#: Model fields ``/v1/models`` entries may carry that say what is served.
MODEL_FIELDS = ("id", "owned_by", "max_model_len", "root", "parent", "created")


def self_hosted(model: Any) -> bool:
    """An OpenAI-compatible model whose base URL is configured (not its built-in provider's
    own API URL): a server of one's own, or a gateway, that may say what it serves."""
    from deflectbench.models.openai_compat import OpenAICompatModel
    from deflectbench.models.providers import PROVIDERS

    if not isinstance(model, OpenAICompatModel):
        return False
    builtin = PROVIDERS.get(model.provider)
    default = builtin.base_url if builtin is not None else None
    return not default or model.base_url.rstrip("/") != default.rstrip("/")


def _root(base_url: str) -> str:
    """The server's root: the public base URL without its ``/v1`` (and anything after)."""
    url = public_url(base_url)
    path = urlsplit(url).path
    cut = path.find("/v1")
    root = url[: len(url) - len(path)] + (path[:cut] if cut >= 0 else path)
    return root.rstrip("/")


async def _version(client: Any, base_url: str) -> Any:
    body = await client.get(_root(base_url) + "/version", cast_to=object)
    return body if isinstance(body, dict | str) else NOT_AVAILABLE


async def _models(client: Any, base_url: str) -> Any:
    page = await client.models.list()
    found = []
    for entry in page.data[:32]:
        data = entry.model_dump()
        found.append({k: data[k] for k in MODEL_FIELDS if data.get(k) is not None})
    return found


async def _ask(what: Any, client: Any, base_url: str) -> Any:
    """One probe's answer as it may be kept: scrubbed of every credential, bounded in depth
    and size (past them, "not available (too deep)" or "(too large)")."""
    try:
        answer = await asyncio.wait_for(what(client, base_url), PROBE_TIMEOUT_S + 1)
    except Exception:  # any failure is "not available", never the run's
        return NOT_AVAILABLE
    try:
        return scrub_json(answer)
    except Untrusted as exc:
        return str(exc)


async def probe(model: Any) -> dict[str, Any]:
    """The server's answers (see the module's docstring): ``{"version": ..., "models": ...}``,
    each "not available" when the server gave none. A client of its own (the model's settings,
    its own connection pool, closed after), so the probe may run in an event loop other than
    the one the model's requests go through."""
    await model.ready()  # its SDK, loaded beside the set-up
    import openai

    pool = http_client(openai, timeout=PROBE_TIMEOUT_S) or openai.DefaultAsyncHttpxClient(
        timeout=PROBE_TIMEOUT_S
    )
    client = model.sdk.copy(timeout=PROBE_TIMEOUT_S, max_retries=0, http_client=pool)
    try:
        version, models = await asyncio.gather(
            _ask(_version, client, model.base_url), _ask(_models, client, model.base_url)
        )
    finally:
        await client.close()
    return {"version": version, "models": models}
