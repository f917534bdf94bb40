"""The run's metadata: which benchmark, store, runs, dates and seeds produced the numbers, and
warnings a reader should see first (e.g. runs that used a different benchmark file)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

import deflectbench
from deflectbench.benchmark import Benchmark
from deflectbench.gate import served_line

__all__ = ["RunInfo", "RunMetadata", "run_metadata"]


@dataclass(frozen=True)
class RunInfo:
    """One ``deflectbench run`` recorded in the store."""

    run_id: str
    created_at: str
    command: str
    benchmark: str
    benchmark_sha256: str
    seed: int | None
    models: str
    judges: str


@dataclass(frozen=True)
class RunMetadata:
    """Where the numbers come from; dates are the stored ISO strings (None when absent)."""

    package_version: str
    benchmark_name: str
    benchmark_version: str
    benchmark_key: str
    benchmark_sha256: str
    store: str
    schema_version: int | None
    first_generation: str | None
    last_generation: str | None
    first_judgment: str | None
    last_judgment: str | None
    sources: str
    runs: tuple[RunInfo, ...]
    run_seeds: tuple[int, ...]
    ci_level: float
    #: Per model whose replies say another model served them (a proxy or replica serving
    #: another checkpoint): which model, how many replies, which served ids (raw text).
    served_by: tuple[str, ...] = ()


def served_lines(attempted: pd.DataFrame) -> tuple[str, ...]:
    """:func:`deflectbench.gate.served_line` for each model of ``attempted`` (needs
    ``served_model``; a model shown as ``model [condition]`` is compared by its own name)."""
    if attempted.empty or "served_model" not in attempted.columns:
        return ()
    served_ids = attempted["served_model"].notna().to_numpy()
    if "error" in attempted:
        served_ids = served_ids & attempted["error"].isna().to_numpy()
    if not served_ids.any():  # no reply names a served model (imported results): no line
        return ()
    replies = attempted[attempted["error"].isna()] if "error" in attempted else attempted
    out: list[str] = []
    for shown, rows in replies.groupby("model", sort=True):
        name = str(shown)
        if "condition" in rows and len(rows):
            suffix = f" [{rows['condition'].iloc[0]}]"
            name = name.removesuffix(suffix)
        served = rows["served_model"].dropna().astype(str).value_counts().to_dict()
        if line := served_line(name, served, len(rows)):
            out.append(line if name == shown else line.replace(name, str(shown), 1))
    return tuple(out)


def run_metadata(
    benchmark: Benchmark,
    attempted: pd.DataFrame,
    judg: pd.DataFrame,
    runs: Sequence[Mapping[str, Any]],
    *,
    store: str,
    schema_version: int | None,
    ci_level: float,
) -> tuple[RunMetadata, tuple[str, ...]]:
    """The metadata and the notes (warnings) for the generations ``attempted`` of ``benchmark``.

    ``attempted`` needs ``created_at`` and ``source``, ``judg`` ``created_at``; ``runs`` are the
    store's runs (``Store.runs()``).
    """
    notes: list[str] = []
    infos = []
    for r in runs:
        config = r.get("config") or {}
        infos.append(
            RunInfo(
                run_id=r["run_id"],
                created_at=r["created_at"],
                command=r["command"],
                benchmark=r["benchmark"],
                benchmark_sha256=r["benchmark_sha256"],
                seed=config.get("seed"),
                models=", ".join(config.get("models") or []),
                judges=", ".join(config.get("judges") or []),
            )
        )
    b = benchmark
    other = sorted({r.benchmark_sha256 for r in infos if r.benchmark == b.key} - {b.sha256})
    if other:
        notes.append(
            f"The store's runs used benchmark file(s) with sha256 {', '.join(x[:12] for x in other)}"
            f", not this report's ({b.sha256[:12]}): check that the claims and templates match."
        )
    times = attempted["created_at"].dropna().astype(str) if len(attempted) else pd.Series([])
    on_bench = judg[judg["gen_id"].isin(attempted["gen_id"])] if len(judg) else judg
    jtimes = on_bench["created_at"].dropna().astype(str) if len(on_bench) else pd.Series([])
    sources = sorted(attempted["source"].dropna().unique().tolist()) if len(attempted) else []
    meta = RunMetadata(
        package_version=deflectbench.__version__,  # read when shown (analyze never asks)
        benchmark_name=b.name,
        benchmark_version=b.version,
        benchmark_key=b.key,
        benchmark_sha256=b.sha256,
        store=store,
        schema_version=schema_version,
        first_generation=times.min() if len(times) else None,
        last_generation=times.max() if len(times) else None,
        first_judgment=jtimes.min() if len(jtimes) else None,
        last_judgment=jtimes.max() if len(jtimes) else None,
        sources=", ".join(sources),
        runs=tuple(infos),
        run_seeds=tuple(sorted({r.seed for r in infos if r.seed is not None})),
        ci_level=ci_level,
        served_by=served_lines(attempted),
    )
    return meta, tuple(notes)
