"""A DataFrame's rows as dicts, as ``DataFrame.to_dict(orient="records")`` gives them, at a
fraction of its cost on the small frames the views read (pandas builds its rows through
``iloc`` per column and boxes every cell of an extension column)."""

from __future__ import annotations

from typing import Any

__all__ = ["records"]


def records(frame: Any) -> list[dict[Any, Any]]:
    """``frame.to_dict(orient="records")``: the same dicts, the same Python values.

    Columns of numpy numbers and booleans, and pandas' default string columns (missing as
    NaN), are read directly: each column iterated as ``itertuples`` iterates it, its values
    already Python ones, so the boxing ``to_dict`` applies changes nothing. A frame with any
    other column (``object``; a string column with ``pd.NA``, which ``to_dict`` turns into
    None), with a repeated column name (``to_dict`` warns) or with no columns, is left to
    ``to_dict`` itself."""
    import numpy as np  # lazily: both are loaded wherever there is a frame
    from pandas import StringDtype

    dtypes = list(frame.dtypes)
    if (
        not dtypes
        or not frame.columns.is_unique
        or not all(
            (isinstance(d, StringDtype) and isinstance(d.na_value, float))  # NaN, not pd.NA
            or (isinstance(d, np.dtype) and d.kind in "biuf")
            for d in dtypes
        )
    ):
        return frame.to_dict(orient="records")
    columns = frame.columns.tolist()
    values = [list(col) for _, col in frame.items()]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]
