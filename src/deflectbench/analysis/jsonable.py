"""Plain JSON data from analysis values: one rule for every ``to_json`` of the analysis.

Kept in a module of its own at the bottom of the package, so the summary, the audit, the
validity and the calibration results can all serialise without importing one another.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["jsonable"]


def jsonable(value: Any) -> Any:
    """Plain JSON data: numpy scalars to Python, NaN/inf to None, tuples to lists, keys to str."""
    kind = type(value)  # the common exact types first (a summary holds ~10,000 values)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is pd.NA or value is pd.NaT:
        return None
    return value
