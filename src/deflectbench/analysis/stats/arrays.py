"""Array helpers the statistics share: binary checks, pairing, factorising keys.

Public to the statistics (and to validity, which resamples claims the same way), so no
module imports a private name of another."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


def binary(x: ArrayLike, name: str) -> NDArray[np.int64]:
    """A 1-D array of 0/1 ints, or ValueError (NaN, -1 and 2 are all refused)."""
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if arr.size and not ((arr == 0) | (arr == 1)).all():  # as np.isin(arr, (0, 1)), faster
        raise ValueError(f"{name} must hold only 0 and 1")
    return arr.astype(np.int64)


def columns(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """An (n_rows x k) float matrix, a 1-D array being one column, or ValueError."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {arr.shape}")
    return arr


def pair(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    x, y = binary(a, "a"), binary(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"raters differ in length: {x.size} vs {y.size}")
    return x, y


def factorize(keys: Any) -> tuple[NDArray[np.intp], list[Hashable]]:
    """Integer codes 0..k-1 for row labels, numbered in sorted label order.

    ``keys`` is a 1-D array-like of hashable labels, a sequence of tuples, or a 2-D array
    (a DataFrame of key columns) whose rows are the labels. Labels that cannot be sorted
    are numbered in order of first appearance.
    """
    is_seq = isinstance(keys, Sequence) and not isinstance(keys, str)
    if is_seq and keys and isinstance(keys[0], tuple):
        return factorize_items(list(keys))
    arr = np.asarray(keys)
    if arr.ndim == 2:
        return factorize_items([tuple(row) for row in arr.tolist()])
    if arr.ndim != 1:
        raise ValueError(f"keys must be 1-D labels or 2-D key rows, got shape {arr.shape}")
    try:
        uniq, inv = np.unique(arr, return_inverse=True)
    except TypeError:
        return factorize_items(arr.tolist())
    return inv.reshape(-1).astype(np.intp, copy=False), uniq.tolist()


def factorize_items(items: list[Hashable]) -> tuple[NDArray[np.intp], list[Hashable]]:
    try:
        labels: list[Hashable] = sorted(set(items))  # type: ignore[type-var]
    except TypeError:
        labels = list(dict.fromkeys(items))
    index = {k: i for i, k in enumerate(labels)}
    codes = np.fromiter((index[k] for k in items), dtype=np.intp, count=len(items))
    return codes, labels
