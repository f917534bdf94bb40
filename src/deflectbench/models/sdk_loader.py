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

The first SDK is imported alone: the next waits until a request has been sent (:func:`sent`),
a blocking :func:`load` needs it, the process has used :data:`NEXT_AFTER_S` of CPU since
the first was imported, or it has sat idle for :data:`IDLE_S` while a request awaits the next
SDK (a run whose first provider has nothing to send: idle, it would never use that CPU).
Under the GIL two imports, or an import and the first request's set-up, share one core: the
first request would leave late.

:func:`hold_gc` (the ``run`` command, at its start) turns the cyclic garbage collector off
while the interpreter fills up with the SDKs' thousands of classes (its passes over them cost
about 0.2 s of CPU before the first request) and the loader, once its queue is empty, freezes
what was made so far (no later pass scans it again) and turns it back on.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import queue
import sys
import threading
import time
from collections.abc import Iterable
from types import ModuleType

__all__ = [
    "IDLE_S",
    "NEXT_AFTER_S",
    "aload",
    "hold_gc",
    "idle",
    "load",
    "preload",
    "preload_for",
    "ready",
    "release_gc",
    "sent",
    "went_out",
]

#: SDK package -> set once its import has ended (well or not).
_done: dict[str, threading.Event] = {}
#: Why an SDK's background import failed (the import is then tried again where it is needed,
#: so the error is raised where the SDK is used, as a plain import would raise it).
_failed: dict[str, BaseException] = {}
_lock = threading.Lock()
_todo: queue.SimpleQueue[str] = queue.SimpleQueue()
_worker: threading.Thread | None = None
#: SDK package -> the coroutines awaiting its import (:func:`aload`): their loop and future.
_waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
#: Set once a request has gone out (or a later SDK is needed now): the SDKs after the first
#: may load.
_go_on = threading.Event()
#: CPU seconds the process may use after the first SDK's import before the next starts
#: though no request has been sent (CPU, not wall: a busy machine slows both alike).
NEXT_AFTER_S = 0.5
#: Wall seconds the process may sit idle (using under :data:`IDLE_SHARE` of a core) with a
#: request awaiting a later SDK before that SDK loads though no request has been sent.
IDLE_S = 0.1
IDLE_SHARE = 0.2
#: Whether :func:`hold_gc` turned the collector off (the loader turns it back on).
_gc_held = False


def _work() -> None:
    imported = 0
    while True:
        if _todo.empty():
            release_gc()
        name = _todo.get()
        if imported and name not in sys.modules:
            _wait_for_a_request()
        try:
            importlib.import_module(name)
        except BaseException as exc:
            _failed[name] = exc
        finally:
            imported += 1
            _finished(name)


def _wait_for_a_request() -> None:
    """Until a request has been sent (:func:`sent`), :data:`NEXT_AFTER_S` of CPU used, or
    the process idle for :data:`IDLE_S` while a request awaits an SDK not yet loaded (the
    loaded SDK's providers have nothing to send now, e.g. a resumed run whose first model
    is done and whose judges wait for the other model's answers: waiting on for CPU that an
    idle process never uses would hold the run still)."""
    until = time.process_time() + NEXT_AFTER_S
    quiet_cpu, quiet_since = time.process_time(), time.monotonic()
    while not _go_on.wait(0.02):
        cpu, now = time.process_time(), time.monotonic()
        if cpu >= until:
            return
        if cpu - quiet_cpu > IDLE_S * IDLE_SHARE:  # busy: the quiet starts again
            quiet_cpu, quiet_since = cpu, now
        elif now - quiet_since >= IDLE_S and _awaited():
            return


def _awaited() -> bool:
    """Whether a coroutine awaits an SDK whose import has not ended (:func:`aload`)."""
    with _lock:
        return any(waiters for waiters in _waiters.values())


def _finished(name: str) -> None:
    """Mark ``name``'s import ended and wake the coroutines awaiting it, each in its loop."""
    with _lock:
        _done[name].set()
        waiters = _waiters.pop(name, [])
    for loop, future in waiters:
        with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: no one waits
            loop.call_soon_threadsafe(_wake, future)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():  # not cancelled meanwhile
        future.set_result(None)


def sent() -> None:
    """A request has been sent: the SDKs queued after the first may load now."""
    if not _go_on.is_set():
        _go_on.set()


def went_out() -> bool:
    """Whether a request has been sent (:func:`sent`) in this process (or an SDK after the
    first was needed at once)."""
    return _go_on.is_set()


def idle() -> bool:
    """Whether every SDK asked for is imported (or failed): nothing is loading or waiting."""
    with _lock:
        return all(event.is_set() for event in _done.values())


def hold_gc() -> None:
    """Turn the cyclic garbage collector off until the SDKs asked for are imported (see the
    module's docstring); :func:`preload` with nothing to load, or the loader once its queue
    is empty, turns it back on (the caller too, in a ``finally``: :func:`release_gc`). A
    collector already off is left as it is."""
    global _gc_held
    if gc.isenabled():
        gc.disable()
        _gc_held = True


def release_gc() -> None:
    """The collector back on after :func:`hold_gc` (what was made so far frozen); once."""
    global _gc_held
    if _gc_held:
        _gc_held = False
        gc.freeze()  # what start-up made (the SDKs' classes) is never scanned again
        gc.enable()


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
        elif _worker is None:
            release_gc()  # nothing to load (a local model, a dry run)


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
    if not _done[name].is_set():
        sent()  # waited for now: no later than the first request
    _done[name].wait()
    return importlib.import_module(name)  # a failed background import raises here, as usual


async def aload(name: str) -> ModuleType:
    """:func:`load` for a coroutine: the event loop goes on serving the requests of the
    providers whose SDKs are loaded, and the loader wakes this one when its SDK is in. (Not a
    wait in the loop's thread pool: its few threads, all blocked on a slow SDK, would hold up
    the waits of an SDK already loaded.)"""
    if ready(name):
        return sys.modules[name]
    preload(name)
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    with _lock:
        waiting = not _done[name].is_set()
        if waiting:
            _waiters.setdefault(name, []).append((loop, future))
    if waiting:
        await future
    return importlib.import_module(name)
