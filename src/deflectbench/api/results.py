"""The results commands as Python functions: analyze, report, audit, import_, export, merge and
spec, each returning a typed result (the command's ``--json`` is its ``to_json()``).

    import deflectbench as db

    summary = db.analyze("paper.db")        # analysis.summary Summary: DataFrames as fields
    summary.rates                           # per model, 8 fields + 5 outcomes with 95% CIs
    summary.to_json()                       # exactly `deflectbench analyze --json`
    db.report("paper.db", "paper-report").html

Heavy modules (pandas, the analysis, the report) are imported inside the functions, so the
command line, which imports this module to call them, starts as fast as before.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from deflectbench.api._common import (
    DEFAULT_DB,
    AnalysisSettings,
    DbPath,
    OnBusy,
    analysis_options,
    open_store,
    pick_benchmark,
    split,
    store_or_nothing,
    stored_benchmark,
)

if TYPE_CHECKING:
    from deflectbench.analysis.compat.audit import Audit
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.analysis.summary.build import Summary
    from deflectbench.interop.results import ExportResult, ImportResult, MergeResult
    from deflectbench.results.spec import Mutated, Packs, Spec
    from deflectbench.views.report.build import ReportResult

__all__ = [
    "AnalysisSettings",
    "analyze",
    "audit",
    "export",
    "import_",
    "merge",
    "mutate",
    "packs",
    "report",
    "spec",
]


def _options(settings: AnalysisSettings) -> AnalysisOptions:
    """The analysis settings, checked; a keyword :class:`AnalysisSettings` lacks is a
    TypeError, as for any function."""
    from deflectbench.analysis.compat.quirks import check_compat
    from deflectbench.analysis.options import AnalysisOptions

    unknown = sorted(set(settings) - set(AnalysisSettings.__annotations__))
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    d = AnalysisOptions()
    options = analysis_options(
        settings.get("consensus", d.consensus),
        split(settings.get("judges")),
        settings.get("judge_values", d.values),
        settings.get("resamples", d.n_resamples),
        settings.get("seed", d.seed),
        fitted_later=True,
    )
    return replace(
        options,
        compat=check_compat(settings.get("compat", d.compat)),
        correction=settings.get("correction", d.correction),
        pool_models=settings.get("pool_models", d.pool_models),
        allow_pack_change=settings.get("allow_pack_change", d.allow_pack_change),
    )


def analyze(
    db: DbPath = DEFAULT_DB,
    *,
    benchmark: str | None = None,
    on_busy: OnBusy | None = None,
    **settings: Unpack[AnalysisSettings],
) -> Summary:
    """The paper's analysis of the results file ``db`` (``deflectbench analyze``).

    ``consensus``: mean (the paper's rule), all or judge:NAME; ``judges``: only these (default
    every judge in the file); ``judge_values``: said (the paper's) or rules; ``compat``: paper or
    release (the release script's numbers); ``correction``: ppi, rogan-gladen or none (rates
    corrected with the store's human labels, when it holds some); ``pool_models``: one
    calibration for every model; ``resamples`` (1000) and ``seed`` (0): the bootstrap of the 95%
    CIs; ``benchmark``: the pack, when the store holds several. ``allow_pack_change``: analyse
    answers made with other content of the same pack id, flagged (``Summary.pack_change``).
    Returns the typed summary; ``.to_json()`` is ``analyze --json``. A store with nothing
    scored gives a summary whose ``n_scored`` is 0.
    """
    from deflectbench.analysis.summary.build import summarize

    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        options = _options(settings)
        pack = stored_benchmark(store, benchmark, resamples=options.n_resamples)
        return summarize(store, pack, options)


def report(
    db: DbPath = DEFAULT_DB,
    out: DbPath = "deflectbench-report",
    *,
    benchmark: str | None = None,
    figures: str = "svg",
    on_busy: OnBusy | None = None,
    **settings: Unpack[AnalysisSettings],
) -> ReportResult:
    """The paper's figures and tables for ``db`` written under ``out`` (``deflectbench
    report``): report.html, report.md, tables/*.csv, figures/*; returns the paths written.
    ``figures``: svg (default: drawn by the report itself, embedded in report.html), png or
    pdf (also written, drawn with matplotlib) or all. The settings are :func:`analyze`'s;
    ``seed`` also picks the example responses. Raises ConfigError for another ``figures``."""
    from deflectbench.errors import ConfigError
    from deflectbench.views.report import build_report
    from deflectbench.views.report.chart import figure_formats

    try:
        formats = figure_formats(figures)
    except ValueError:
        raise ConfigError(f"unknown --figures {figures!r}: use svg, png, pdf or all") from None
    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        options = _options(settings)
        pack = stored_benchmark(store, benchmark, resamples=options.n_resamples)
        return build_report(store, pack, Path(out), options, formats=formats)


def audit(
    db: DbPath = DEFAULT_DB,
    *,
    benchmark: str | None = None,
    judges: Sequence[str] | str | None = None,
    on_busy: OnBusy | None = None,
) -> Audit:
    """How far each quirk of the release's analysis script moves the headline numbers of
    ``db`` (``deflectbench audit``); ``.to_json()`` is ``audit --json``, ``.empty`` when no
    generation is scored either way."""
    from deflectbench.analysis.compat.audit import audit as run_audit

    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        return run_audit(store, stored_benchmark(store, benchmark), split(judges) or None)


def import_(
    paths: Sequence[DbPath] | DbPath,
    *,
    db: DbPath = DEFAULT_DB,
    benchmark: str | None = None,
    on_busy: OnBusy | None = None,
) -> ImportResult:
    """Import release files, Inspect logs or exported Hugging Face folders into ``db``
    (``deflectbench import``; created if missing, removed again if the import fails and
    created it). Bad lines are skipped and listed in ``problems`` (``exit_code`` 1)."""
    from deflectbench.interop.results import ImportResult
    from deflectbench.interop.sources import find_sources, import_sources

    b = pick_benchmark(benchmark)
    given = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    sources = find_sources([Path(p) for p in given], b)  # refused before the store is opened
    with store_or_nothing(db, on_busy=on_busy) as store:
        report = import_sources(store, sources, b)
    return ImportResult(Path(db), report)


def export(
    db: DbPath,
    out: DbPath,
    *,
    format: str = "release",
    what: str = "results",
    benchmark: str | None = None,
    on_busy: OnBusy | None = None,
) -> ExportResult:
    """Write ``db``'s results under ``out`` (``deflectbench export``): ``format`` release,
    jsonl, csv, parquet or hf; ``what="benchmark"`` (with hf) writes the pack itself and needs
    no store. Returns the files written."""
    from deflectbench.interop import export as export_files
    from deflectbench.interop.hf import export_benchmark
    from deflectbench.interop.results import ExportResult

    target = Path(out)
    if what != "results":  # the benchmark itself: no store
        return ExportResult(
            target, tuple(export_benchmark(target, format, what, pick_benchmark(benchmark)))
        )
    with open_store(db, must_exist=True, on_busy=on_busy) as store:
        written = export_files(store, target, format, stored_benchmark(store, benchmark))
    return ExportResult(target, tuple(written))


def merge(
    parts: Sequence[DbPath],
    *,
    db: DbPath,
    on_busy: OnBusy | None = None,
    allow_missing_parts: bool = False,
) -> MergeResult:
    """Merge the results files ``parts`` (e.g. those of ``run --shard I/N``) into ``db``
    (``deflectbench merge``): every cell and verdict once; records refused are listed in
    ``problems`` (``exit_code`` 1). A part of an array missing or incomplete (by the ``k/N``
    its runs record) raises InteropError naming it, nothing written; with
    ``allow_missing_parts`` it is only listed in ``notes``."""
    from deflectbench.interop.merge import merge_stores
    from deflectbench.interop.release import InteropError
    from deflectbench.interop.results import MergeResult

    stores = [Path(p) for p in parts]
    missing = [p for p in stores if not p.is_file()]
    if missing:
        raise InteropError(f"{missing[0]}: no such results file")
    with store_or_nothing(db, on_busy=on_busy) as store:
        report = merge_stores(store, stores, allow_missing_parts=allow_missing_parts)
    return MergeResult(Path(db), report)


def spec(*, benchmark: str | None = None) -> Spec:
    """A benchmark pack (``deflectbench spec``; default the paper's): its overview
    (``.to_json()`` is ``spec --json``), its listings and every rendered prompt. A pack file
    with problems raises BenchmarkError listing each (``.problems``)."""
    from deflectbench.benchmark.overview import benchmark_summary
    from deflectbench.results.spec import Spec

    b = pick_benchmark(benchmark)
    return Spec(b, benchmark_summary(b))


def packs() -> Packs:
    """The shipped benchmark packs (``deflectbench spec --list``)."""
    from deflectbench.benchmark import pack_infos
    from deflectbench.results.spec import Packs

    return Packs(tuple(pack_infos()))


def mutate(
    pack: str,
    *,
    kinds: Sequence[str] | str = "paraphrase,register,persona,translate,encode",
    seed: int = 0,
    out: DbPath | None = None,
) -> Mutated:
    """Write a pack whose templates are variants of ``pack``'s, each keeping its origin
    (``deflectbench mutate``); ``out`` defaults to ``<new pack id>.json`` here. The same pack,
    kinds and seed always give the same file. Raises ConfigError for an unknown kind or pack."""
    import json

    from deflectbench.benchmark.mutate import MutationError, parse_kinds
    from deflectbench.benchmark.mutate import mutate as make
    from deflectbench.errors import ConfigError
    from deflectbench.results.spec import Mutated

    try:
        body = make(pack, parse_kinds(kinds if isinstance(kinds, str) else ",".join(kinds)), seed)
    except MutationError as exc:
        raise ConfigError(str(exc)) from None
    data = json.loads(body)
    path = Path(out) if out is not None else Path(f"{data['pack']}.json")
    path.write_bytes(body)
    return Mutated(path, str(data["pack"]), len(data["templates"]))
