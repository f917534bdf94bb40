"""The store's results as flat tables (JSON Lines, CSV, Parquet), and writing files whole.

Flat tables are the store's own columns, one row per generation and per judgment (judgments
carry their generation's model, claim, template and sample), for tools that do not read the
release's format.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deflectbench.escaping import csv_safe
from deflectbench.interop.release import InteropError
from deflectbench.store import Store
from deflectbench.vocab import FIELDS

#: Columns that hold integers (nullable), so CSV and Parquet keep them integral.
_INT_COLUMNS = (
    "gen_id",
    "judgment_id",
    "sample",
    "input_tokens",
    "output_tokens",
    "parse_error",
    "consistency_flag",
    *FIELDS,
)


def write_whole(path: Path, write: Callable[[Path], object]) -> None:
    """Write whole or not at all: ``write`` fills a hidden temporary file that then replaces
    ``path``, so a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise InteropError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_text(path: Path, text: str) -> None:
    """UTF-8 text with ``\\n`` line ends, written whole."""
    write_whole(path, lambda tmp: tmp.write_text(text, encoding="utf-8", newline="\n"))


def write_flat(store: Store, out: Path, fmt: str) -> list[Path]:
    """``generations.<fmt>`` and ``judgments.<fmt>`` in ``out`` (``jsonl``, ``csv``, ``parquet``)."""
    gens = store.generation_rows()
    if not gens:
        raise InteropError(f"--db {store.path} holds no generations: nothing to export")
    keys = {r["gen_id"]: r for r in gens}
    judgments = []
    for j in store.judgment_rows():
        g = keys.get(j["gen_id"], {})
        row = {}
        for k, v in j.items():
            row[k] = v
            if k == "gen_id":
                for gk in ("benchmark", "model", "claim_id", "prompt_id", "sample"):
                    row[gk] = g.get(gk)
        judgments.append(row)
    written = []
    for name, rows in (("generations", gens), ("judgments", judgments)):
        path = out / f"{name}.{fmt}"
        if fmt == "jsonl":
            write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        else:
            _write_table(path, rows, fmt)
        written.append(path)
    return written


def _write_table(path: Path, rows: list[dict[str, Any]], fmt: str) -> None:
    import pandas as pd

    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InteropError(
                "Parquet export needs pyarrow: pip install 'deflectbench[parquet]' "
                "(or use --format csv / jsonl)"
            ) from None
    df = pd.DataFrame(rows)
    for c in _INT_COLUMNS:
        if c in df.columns:
            df[c] = df[c].astype("Int64")
    if fmt == "csv":
        safe = csv_safe(df)
        write_whole(path, lambda tmp: safe.to_csv(tmp, index=False))
    else:
        write_whole(path, lambda tmp: df.to_parquet(tmp, index=False, engine="pyarrow"))
