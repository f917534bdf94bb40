"""Values computed once per frame within one analysis (:func:`shared_codes`): the tables of a
summary each group the one scored table by its model, framing, template, ..., and factorising
its string columns again for each cost more than their sums.

Kept in a module of its own at the bottom of the package (numpy alone), so the frames and the
tables can share without importing one another.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np

__all__ = ["SORTED_CODES", "seed", "shared", "shared_codes"]

#: What :func:`shared` keeps a frame's column's sorted codes as: ``(SORTED_CODES, column)`` ->
#: ``pd.factorize(df[column], sort=True)`` (``tables.grouping.sorted_codes``).
SORTED_CODES = "sorted_codes"

_T = TypeVar("_T")
#: Within :func:`shared_codes`: (id of a frame, what) -> (the frame, weakly, the value).
_SHARED: ContextVar[dict[tuple[int, Any], tuple[weakref.ref[Any], Any]] | None] = ContextVar(
    "deflectbench_shared_codes", default=None
)


@contextmanager
def shared_codes() -> Iterator[None]:
    """Within it, what :func:`shared` computes of a frame (its group codes and each key
    column's sorted codes, its outcome indicators: ``tables.grouping``; a pack's rows of the
    generations: ``frames.scored.in_benchmark``) is computed once per frame object and shared
    by every caller given that same frame. The frames must not change within it (the tables
    and the scored table's steps never change theirs); the arrays shared are read-only."""
    token = _SHARED.set(_SHARED.get() if _SHARED.get() is not None else {})
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared(df: Any, what: Any, compute: Callable[[], _T]) -> _T:
    """``compute()``, once per frame object and ``what`` within :func:`shared_codes` (else
    each time); the arrays in what it returns are then read-only."""
    memo = _SHARED.get()
    if memo is None:
        return compute()
    hit = memo.get((id(df), what))
    if hit is not None and hit[0]() is df:  # a dead frame's id may be another's now
        return hit[1]
    value = compute()
    _freeze(value)  # shared, so never changed
    memo[(id(df), what)] = (weakref.ref(df), value)
    return value


def seed(df: Any, what: Any, compute: Callable[[], Any]) -> None:
    """Within :func:`shared_codes`, what :func:`shared` would compute of ``df`` for ``what``,
    from what its maker already knows (``compute()``, equal to it); outside, nothing is
    computed."""
    if _SHARED.get() is not None:
        shared(df, what, compute)


def _freeze(value: Any) -> None:
    """Make the arrays in ``value`` (and in its tuples and dicts) read-only."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, tuple | list):
        for v in value:
            _freeze(v)
    elif isinstance(value, dict):
        for v in value.values():
            _freeze(v)
