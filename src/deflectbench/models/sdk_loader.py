"""The providers' SDKs loaded beside the run's set-up, not before it (issue 37).

Importing ``openai`` costs about 1.2 s of CPU and ``anthropic`` about 2.4 s: a run that imports
both before anything else sends its first request seconds late. Instead each model asks for its
SDK once it is built and the run is about to send (:func:`preload_for`; a dry run never
does); one background thread imports them in the order asked
(the subject models' before the judges', one at a time: under the GIL two imports at once
finish both late, one after the other finishes the first early), while the main thread goes on
with the store and the run's set-up. A model's client is made when its first request
needs it (:func:`aload` waits for its own SDK only, without holding up the event loop), so one
provider's requests go out while another's SDK is still loading.
"""

from __future__ import annotations

import asyncio
import importlib
import queue
import sys
import threading
from collections.abc import Iterable
from types import ModuleType

__all__ = ["aload", "load", "preload", "preload_for", "ready"]

#: SDK package -> set once its import has ended (well or not).
_done: dict[str, threading.Event] = {}
#: Why an SDK's background import failed (the import is then tried again where it is needed,
#: so the error is raised where the SDK is used, as a plain import would raise it).
_failed: dict[str, BaseException] = {}
_lock = threading.Lock()
_todo: queue.SimpleQueue[str] = queue.SimpleQueue()
_worker: threading.Thread | None = None


def _work() -> None:
    while True:
        name = _todo.get()
        try:
            importlib.import_module(name)
        except BaseException as exc:
            _failed[name] = exc
        finally:
            _done[name].set()


def preload(*names: str) -> None:
    """Start importing these SDK packages in the background, in this order after any asked
    before (a package asked for before is skipped)."""
    global _worker
    with _lock:
        for name in names:
            if name in _done:
                continue
            _done[name] = threading.Event()
            _todo.put(name)  # already imported: the loader's import_module returns at once
        if _worker is None and not _todo.empty():
            _worker = threading.Thread(target=_work, name="sdk-loader", daemon=True)
            _worker.start()


def preload_for(models: Iterable[object]) -> None:
    """:func:`preload` the SDKs these models speak through, in the models' order (a run's
    subject models come before its judges); a model of several endpoints by its members'."""
    names: list[str] = []
    for model in models:
        members = [getattr(e, "model", None) for e in getattr(model, "endpoints", None) or []]
        for member in [m for m in members if m is not None] or [model]:
            package = getattr(member, "sdk_package", None)
            if isinstance(package, str):
                names.append(package)
    preload(*dict.fromkeys(names))


def ready(name: str) -> bool:
    """Whether ``name`` is imported, whole, and usable now (no wait). A package merely in
    ``sys.modules`` may be half imported by the loader: only the loader's word counts."""
    event = _done.get(name)
    return event is not None and event.is_set() and name not in _failed


def load(name: str) -> ModuleType:
    """The SDK package, imported by the loader (asked now if it was not yet) and waited for
    (blocking: for code outside the event loop; a request uses :func:`aload`)."""
    preload(name)
    _done[name].wait()
    return importlib.import_module(name)  # a failed background import raises here, as usual


async def aload(name: str) -> ModuleType:
    """:func:`load` for a coroutine: the wait happens in a worker thread, so the event loop
    goes on serving the requests of the providers whose SDKs are loaded."""
    if ready(name):
        return sys.modules[name]
    preload(name)
    await asyncio.to_thread(_done[name].wait)
    return importlib.import_module(name)
