"""What every public function shares: opening the results file, choosing the benchmark pack,
the analysis options from plain values. The CLI's options parse into these arguments."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypedDict, TypeVar

if TYPE_CHECKING:
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.benchmark import Benchmark
    from deflectbench.store import Store

#: Where results go unless told otherwise (``--db``, ``DEFLECTBENCH_DB``, ``db=``).
DEFAULT_DB = Path("deflectbench.db")

#: A path to a results file, as the public functions take it.
DbPath = str | os.PathLike[str]

#: Called with a one-line message while another process holds the store's write lock.
OnBusy = Callable[[str], None]

_P = ParamSpec("_P")
_T = TypeVar("_T")

#: The files SQLite keeps beside a database while it is open (WAL, shared memory, rollback).
SIDECARS = ("-wal", "-shm", "-journal")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def pick_benchmark(value: str | None) -> Benchmark:
    """A pack by name or file for functions that make results (default: the paper's pack)."""
    from deflectbench.benchmark import resolve_benchmark

    return resolve_benchmark(value)


def run_file_benchmark(value: str | None, config: Path | None) -> str | None:
    """The run file's ``benchmark``: a pack name, or a path relative to the run file."""
    if value is None or config is None or ("/" not in value and not value.endswith(".json")):
        return value
    path = Path(value)
    return str(path if path.is_absolute() else config.parent / path)


def stored_benchmark(store: Store, value: str | None, *, resamples: int | None = None) -> Benchmark:
    """The pack for functions that read results: the pack given, else the one pack the store
    holds; a store holding several packs is an error naming them (never mixed). Given
    ``resamples``, they are checked to fit the pack (:func:`fit_resamples`)."""
    from deflectbench.analysis.summary.packs import pack_of_store
    from deflectbench.benchmark import resolve_benchmark

    pack = pack_of_store(store, resolve_benchmark(value) if value else None)
    if resamples is not None:
        fit_resamples(resamples, pack)
    return pack


def split(values: Sequence[str] | str | None) -> list[str]:
    """Accept both repeated values and comma-separated lists (a single string too)."""
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


class AnalysisSettings(TypedDict, total=False):
    """The keywords :func:`deflectbench.analyze` and :func:`deflectbench.report` share; one left
    out takes :class:`~deflectbench.analysis.options.AnalysisOptions`' default."""

    consensus: str
    judges: Sequence[str] | str | None
    judge_values: str
    compat: str
    correction: str
    pool_models: bool
    resamples: int
    seed: int
    allow_pack_change: bool


def analysis_options(
    consensus: str,
    judges: Sequence[str] | None,
    values: str,
    resamples: int,
    seed: int,
    *,
    fitted_later: bool = False,
) -> AnalysisOptions:
    """The shared analysis settings (consensus, judges, judge values, resamples, seed), checked.
    ``fitted_later``: the caller sizes ``resamples`` for its pack (:func:`fit_resamples`) once
    it knows it; here only for one claim (else for the paper's 80)."""
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.config.plan import RESAMPLE_CLAIMS, check_resamples, check_seed

    check_seed(seed)
    check_resamples(resamples, claims=1 if fitted_later else RESAMPLE_CLAIMS)
    return AnalysisOptions.of(
        consensus=consensus,
        judges=split(judges) or None,
        values=values,
        n_resamples=resamples,
        seed=seed,
    )


def fit_resamples(resamples: int, pack: Benchmark) -> int:
    """``resamples`` sized for ``pack``'s claims (the bootstrap holds resamples x claims at
    once): refused in one line naming the largest that fits when they do not."""
    from deflectbench.config.plan import check_resamples

    return check_resamples(resamples, claims=len(pack.claims))


def open_store(db: DbPath, *, must_exist: bool = False, on_busy: OnBusy | None = None) -> Store:
    """Open (and migrate) a results file; functions that only read need it to exist, so a
    mistyped path is an error, never a new empty store. A wait for another process's write
    lock is said through ``on_busy`` (stderr by default)."""
    from deflectbench.store import Store, StoreError
    from deflectbench.store.files import check_file

    path = Path(db)
    check_file(path)  # a path that could hold no store is said as such, before "no results"
    if must_exist and not path.exists():
        raise StoreError(f"no results at --db {path}: run `deflectbench run` (or `import`) first")
    store = Store.open(path)
    store.on_busy = on_busy or _stderr
    return store


@contextmanager
def store_or_nothing(db: DbPath, on_busy: OnBusy | None = None) -> Iterator[Store]:
    """:func:`open_store`, closed on exit; if ``db`` did not exist and the block raises, the
    file (and any SQLite sidecar it created) is deleted. An interrupt keeps it: what finished
    is stored, and the same command resumes."""
    path = Path(db)
    files = [path, *(path.with_name(path.name + suffix) for suffix in SIDECARS)]
    created = [f for f in files if not f.exists()]
    store = open_store(path, on_busy=on_busy)
    failed = False
    try:
        yield store
    except Exception:
        failed = True
        raise
    finally:
        store.close()
        if failed and path in created:
            for f in created:
                with suppress(OSError):
                    f.unlink(missing_ok=True)


def blocking(function: Callable[_P, Coroutine[Any, Any, _T]], name: str) -> Callable[_P, _T]:
    """The synchronous twin of an async public function: the same parameters and docstring,
    the coroutine run to its end in a new event loop (``asyncio.run``)."""
    import asyncio
    import functools

    @functools.wraps(function)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        return asyncio.run(function(*args, **kwargs))

    run.__name__ = run.__qualname__ = name
    return run
