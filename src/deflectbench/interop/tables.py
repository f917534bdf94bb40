"""The store's results as tidy tables (JSON Lines, CSV, Parquet), and writing files whole.

``generations.<fmt>`` has one row per generation with everything a reader of the results needs
beside it: the claim (level, context, domain), the template (framing, explicitness, requested
fallacy), the condition, each judge's own 8 fields and parse status, the judges' consensus and
the outcome, exactly as ``deflectbench analyze`` computes them (the paper's definition), so
pandas, R or a spreadsheet can filter and count without joins. ``judgments.<fmt>`` keeps one
row per judge's verdict. The columns are documented in ``docs/exports.md``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.benchmark import Benchmark
from deflectbench.escaping import csv_safe
from deflectbench.interop.release import InteropError
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, LEVEL_NAMES

if TYPE_CHECKING:  # pandas and the analysis load when a table is made, not on import
    import pandas as pd

#: The claim's and the template's attributes each generation row carries (from the benchmark).
CLAIM_COLUMNS = ("level", "level_name", "context", "domain")
TEMPLATE_COLUMNS = ("prompt_num", "framing", "explicitness", "fallacy")
#: The columns that name a generation portably (the store's unique key).
KEY_COLUMNS: tuple[str, ...] = (
    "benchmark",
    "model",
    "condition",
    "claim_id",
    "prompt_id",
    "sample",
)
#: The attributes a generation row shows after a key column.
_AFTER_KEY = {"claim_id": CLAIM_COLUMNS, "prompt_id": TEMPLATE_COLUMNS}
#: The first columns of a generation row, in this order: gen_id, then the key, the claim's and
#: the template's attributes after their ids; the store's other columns follow.
LEAD_COLUMNS = (
    "gen_id",
    *(column for key in KEY_COLUMNS for column in (key, *_AFTER_KEY.get(key, ()))),
)
#: A judge's parse status of one generation, in its ``<judge>__status`` column.
STATUSES = ("parsed", "parse_error", "request_error")
#: The analysis' columns that close a generation row: did it enter the analysis, over how many
#: judges, the consensus of the 8 fields, and the outcome.
CONSENSUS_COLUMNS = ("scored", "n_judges", *FIELDS, "outcome")

#: Columns that hold integers (nullable), so CSV and Parquet keep them integral.
_INT_COLUMNS = (
    "gen_id",
    "judgment_id",
    "sample",
    "input_tokens",
    "output_tokens",
    "parse_error",
    "consistency_flag",
    "level",
    "prompt_num",
    "n_judges",
    *FIELDS,
)
_FLOAT_COLUMNS = ("latency_s", "cost_usd")


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


# -- the tidy tables -------------------------------------------------------------------------


def judge_prefix(judges: list[str]) -> dict[str, str]:
    """Each judge's column prefix: its name in lower case with every run of other characters
    as ``_`` (``openai/gpt-5.4-mini`` -> ``openai_gpt_5_4_mini``), numbered if two collide."""
    out: dict[str, str] = {}
    for judge in sorted(judges):
        base = re.sub(r"[^a-z0-9]+", "_", judge.lower()).strip("_") or "judge"
        name, n = base, 2
        while name in out.values():
            name, n = f"{base}_{n}", n + 1
        out[judge] = name
    return out


def _attributes(benchmark: Benchmark) -> tuple[pd.DataFrame, pd.DataFrame]:
    import pandas as pd

    claims = pd.DataFrame(
        [
            (c.claim_id, c.level, LEVEL_NAMES[c.level], c.context, c.domain)
            for c in benchmark.claims
        ],
        columns=["claim_id", *CLAIM_COLUMNS],
    )
    templates = pd.DataFrame(
        [
            (t.prompt_id, t.prompt_num, t.framing, t.explicitness, t.fallacy)
            for t in benchmark.templates
        ],
        columns=["prompt_id", *TEMPLATE_COLUMNS],
    )
    return claims, templates


def _per_judge(judg: pd.DataFrame, prefixes: dict[str, str]) -> pd.DataFrame:
    """One row per gen_id: per judge, its status and the 8 fields as it said them."""
    import numpy as np
    import pandas as pd

    blocks = []
    for judge, prefix in prefixes.items():
        mine = judg[judg["judge"] == judge].set_index("gen_id")
        status = np.where(
            mine["error"].notna(),
            "request_error",
            np.where(mine["parse_error"].fillna(1).to_numpy() != 0, "parse_error", "parsed"),
        )
        block = pd.DataFrame({f"{prefix}__status": status}, index=mine.index)
        for f in FIELDS:
            block[f"{prefix}__{f}"] = mine[f].astype("Float64").astype("Int64")
        blocks.append(block)
    return pd.concat(blocks, axis=1) if blocks else pd.DataFrame()


def tidy_generations(store: Store, benchmark: Benchmark) -> pd.DataFrame:
    """One row per stored generation, with its claim's and template's attributes, each
    judge's status and fields (as said), and the analysis' consensus and outcome.

    ``scored`` says whether the generation entered the analysis (a valid answer every judge
    parsed); the consensus fields, ``n_judges`` and ``outcome`` are empty where it did not.
    Generations of another benchmark keep their own columns with the attributes left empty.
    """
    import pandas as pd

    from deflectbench.analysis.frames.scored import (
        generation_frame,
        judgment_frame,
        scored_from_frames,
    )

    rows = store.generation_rows()
    if not rows:
        raise InteropError(f"--db {store.path} holds no generations: nothing to export")
    gens = pd.DataFrame.from_records(rows)
    claims, templates = _attributes(benchmark)
    in_pack = (gens["benchmark"] == benchmark.key).to_numpy()
    attrs = gens[["gen_id", "claim_id", "prompt_id"]][in_pack]
    attrs = attrs.merge(claims, on="claim_id", how="left").merge(
        templates, on="prompt_id", how="left"
    )
    table = gens.merge(attrs.drop(columns=["claim_id", "prompt_id"]), on="gen_id", how="left")

    judg = judgment_frame(store)
    judges = sorted(judg["judge"].dropna().unique().tolist())
    per_judge = _per_judge(judg, judge_prefix(judges))
    if not per_judge.empty:
        table = table.merge(per_judge, left_on="gen_id", right_index=True, how="left")

    scored = scored_from_frames(generation_frame(store), judg, benchmark)
    cons = scored.set_index("gen_id")[["n_judges", *FIELDS, "outcome"]]
    table = table.merge(cons, left_on="gen_id", right_index=True, how="left")
    table["scored"] = table["gen_id"].isin(cons.index)
    ordered = [c for c in LEAD_COLUMNS if c in table.columns]
    middle = [c for c in table.columns if c not in ordered and c not in CONSENSUS_COLUMNS]
    table = table[[*ordered, *middle, *CONSENSUS_COLUMNS]]
    return _typed(table.sort_values("gen_id", kind="stable").reset_index(drop=True))


def tidy_judgments(store: Store, generations: pd.DataFrame) -> pd.DataFrame:
    """One row per judgment (the store's columns), with its generation's identity and
    attributes after ``gen_id`` (model, condition, claim, template, sample)."""
    import pandas as pd

    rows = store.judgment_rows()
    keys = [c for c in LEAD_COLUMNS if c in generations.columns]
    if not rows:
        columns = ["judgment_id", *keys]
        return _typed(pd.DataFrame({c: pd.Series(dtype=object) for c in columns}))
    judg = pd.DataFrame.from_records(rows)
    merged = judg.merge(generations[keys], on="gen_id", how="left")
    own = list(judg.columns)
    at = own.index("gen_id") + 1
    columns = [*own[:at], *[k for k in keys if k != "gen_id"], *own[at:]]
    return _typed(merged[columns])


#: The columns of ``corrected.<fmt>`` (written when the store holds human labels of the pack).
CORRECTED_COLUMNS = (
    "model",
    "framing",
    "kind",
    "measure",
    *(f"{m}{s}" for m in ("judged", "labels_only", "corrected") for s in ("", "_lo", "_hi")),
    "n",
    "n_labels",
    "method",
    "pooled_models",
    "note",
)


def tidy_corrected(store: Store, benchmark: Benchmark) -> pd.DataFrame | None:
    """One row per model (framing empty) and per model x framing, and per outcome and field:
    the judged, labels-only and corrected rate with their 95% CIs (the analysis' defaults:
    PPI++, calibrated within each model); None when the store holds no labels of the pack."""
    import pandas as pd

    from deflectbench.analysis.calibration.corrected import corrected_rates
    from deflectbench.analysis.calibration.load import (
        MEASURES,
        has_labels,
        read_calibration_inputs,
    )

    if not has_labels(store):
        return None
    corr = corrected_rates(read_calibration_inputs(store, benchmark))
    if corr is None:
        return None
    rows = []
    cells = [(m, "", c) for m, c in corr.models.items()] + [
        (m, f, c) for m, frames in corr.by_framing.items() for f, c in frames.items()
    ]
    for model, framing, cell in cells:
        for kind, name in MEASURES:
            row: dict[str, Any] = {
                "model": model,
                "framing": framing,
                "kind": kind,
                "measure": name,
            }
            for label, which in (
                ("judged", "judged"),
                ("labels_only", "labels"),
                ("corrected", "corrected"),
            ):
                e = cell.get(which, kind, name)
                lo, hi = e.ci95 if e.ci95 is not None else (None, None)
                row |= {label: e.rate, f"{label}_lo": lo, f"{label}_hi": hi}
            e = cell.get("corrected", kind, name)
            row |= {
                "n": e.n,
                "n_labels": e.n_labels,
                "method": corr.method,
                "pooled_models": corr.pooled,
                "note": e.note or "",
            }
            rows.append(row)
    frame = pd.DataFrame(rows, columns=list(CORRECTED_COLUMNS))
    for c in frame.columns:
        if c.startswith(("judged", "labels_only", "corrected")):
            frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("float64")
    frame["n"] = frame["n"].astype("Int64")
    frame["n_labels"] = frame["n_labels"].astype("Int64")
    return frame


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """Integers as nullable integers, so CSV and Parquet keep them integral."""
    import pandas as pd

    for c in df.columns:
        if c in _INT_COLUMNS or c.rpartition("__")[2] in FIELDS:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
        elif c in _FLOAT_COLUMNS:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    return df


def feature_type(column: str, series: pd.Series) -> str:
    """The column's Hugging Face / Arrow type: ``int64``, ``float64``, ``bool`` or ``string``."""
    if str(series.dtype) == "Int64" or series.dtype.kind in "iu":
        return "int64"
    if series.dtype.kind == "f" or column in _FLOAT_COLUMNS:
        return "float64"
    if series.dtype.kind == "b":
        return "bool"
    return "string"


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Plain Python rows (None for a missing value), for JSON and Arrow."""
    out = df.astype(object).where(df.notna(), None)
    return out.to_dict(orient="records")


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


# -- writing -----------------------------------------------------------------------------------


def write_flat(store: Store, out: Path, fmt: str, benchmark: Benchmark) -> list[Path]:
    """``generations.<fmt>`` and ``judgments.<fmt>`` in ``out`` (``jsonl``, ``csv``, ``parquet``)."""
    if fmt == "parquet":
        require_pyarrow("Parquet export", "--format csv / jsonl")
    gens = tidy_generations(store, benchmark)
    judgments = tidy_judgments(store, gens)
    tables = [("generations", gens), ("judgments", judgments)]
    corrected = tidy_corrected(store, benchmark)
    if corrected is not None:  # only with human labels: a store without them exports as before
        tables.append(("corrected", corrected))
    written = []
    for name, df in tables:
        path = out / f"{name}.{fmt}"
        if fmt == "jsonl":
            lines = (json.dumps(r, ensure_ascii=False, default=_json_default) for r in records(df))
            write_text(path, "".join(line + "\n" for line in lines))
        elif fmt == "csv":
            safe = csv_safe(df)
            write_whole(path, partial(safe.to_csv, index=False))
        else:
            write_whole(path, partial(df.to_parquet, index=False, engine="pyarrow"))
        written.append(path)
    return written


def require_pyarrow(what: str, instead: str) -> None:
    """Refuse in one line when pyarrow (the ``parquet`` extra) is missing."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InteropError(
            f"{what} needs pyarrow: pip install 'deflectbench[parquet]' (or use {instead})"
        ) from None
