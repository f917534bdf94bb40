"""Build the report: figures (SVG; PNG and PDF when asked), CSV tables, one self-contained HTML
page, Markdown.

The report reads the store only through the analysis: one :func:`deflectbench.analysis.summarize`
gives every number, table, example and the run's metadata, and the report lays them out. The
HTML page works offline and alone: figures are embedded as ``data:`` URIs, the CSS is inline,
there is no script and no external URL, and a Content-Security-Policy forbids both, so the page
is safe to open even though it quotes model output. Reruns on the same store and options write
identical files.

Figures are SVG by default, written by the report's own writer (:mod:`.svg_charts`): no
matplotlib is imported. PNG and PDF files are drawn with matplotlib only when asked for
(``formats``; ``deflectbench report --figures``), each figure once per format.
"""

from __future__ import annotations

import base64
import csv
import io
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.load import StoreReader
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.analysis.summary.build import Summary, summarize
from deflectbench.analysis.validity.load import judge_validity
from deflectbench.benchmark import Benchmark
from deflectbench.escaping import csv_safe, neutralise
from deflectbench.views.records import records
from deflectbench.views.report import figures as fg
from deflectbench.views.report.breakdown_tables import breakdown_tables
from deflectbench.views.report.calibration_figures import corrected_chart
from deflectbench.views.report.calibration_tables import CORRECTED_FIGURES, corrected_report_tables
from deflectbench.views.report.cascade_tables import cascade_tables
from deflectbench.views.report.chart import DEFAULT_FORMATS, FORMATS
from deflectbench.views.report.count_tables import count_tables
from deflectbench.views.report.manifest_tables import manifest_tables
from deflectbench.views.report.pack_tables import PACK_FIGURES, language_chart, pack_tables
from deflectbench.views.report.page import render_pages
from deflectbench.views.report.tables import (
    Table,
    agreement_tables,
    appendix_tables,
    fallacy_tables,
    framing_tables,
    headline_tables,
    significance_tables,
)
from deflectbench.views.report.turn_tables import TURN_FIGURES, turn_chart, turn_tables
from deflectbench.views.report.validity_checks import (
    VALIDITY_CHECK_FIGURES,
    over_refusal_chart,
    validity_check_tables,
)
from deflectbench.views.report.validity_tables import validity_tables

__all__ = [
    "FIGURE_NAMES",
    "ReportError",
    "ReportPaths",
    "ReportResult",
    "build_report",
    "write_report_after_run",
]

#: Every figure file the report may write (stale ones are removed on rebuild).
FIGURE_NAMES = (
    "signatures",
    "refusal_by_framing",
    "fallacy_by_framing",
    "coach_labeling",
    "claims_by_level",
    "run_refusal_counts",
    "tokens_by_outcome",
    *PACK_FIGURES,
    *TURN_FIGURES,
    *CORRECTED_FIGURES,
    *VALIDITY_CHECK_FIGURES,
)
#: The table builders, in the order their CSVs are written and listed.
TABLES: tuple[Callable[[Summary], list[Table]], ...] = (
    headline_tables,
    framing_tables,
    fallacy_tables,
    agreement_tables,
    significance_tables,
    count_tables,
    appendix_tables,
    breakdown_tables,
    pack_tables,
    turn_tables,
    corrected_report_tables,
    validity_check_tables,
    cascade_tables,
)


class ReportError(Exception):
    """The report cannot be written (e.g. the output folder is not writable)."""


#: The page and its Markdown twin, each written once in the report's folder.
HTML_NAME, MARKDOWN_NAME = "report.html", "report.md"


@dataclass(frozen=True)
class ReportPaths:
    """What :func:`build_report` wrote: in ``out_dir``, the page (:attr:`html`), its Markdown
    twin (:attr:`markdown`), the tables and the figures."""

    out_dir: Path
    tables: tuple[Path, ...]
    figures: tuple[Path, ...]

    @property
    def html(self) -> Path:
        return self.out_dir / HTML_NAME

    @property
    def markdown(self) -> Path:
        return self.out_dir / MARKDOWN_NAME


#: What :func:`deflectbench.report` returns: the paths the report wrote.
ReportResult = ReportPaths


def charts(s: Summary) -> list[fg.Chart]:
    """The report's figures, drawn from the summary's tables (the packs' only when the store
    holds several packs)."""
    spread = records(s.claim_spread)
    overall = dict(zip(s.output_tokens["model"], s.output_tokens["all"], strict=True))
    return [
        fg.signature_chart(s.models, s.rates, s.model_n),
        fg.framing_heatmap(s.refusal_matrix, s.largest_swing),
        fg.fallacy_framing_chart(s.fallacy_matrix),
        fg.coach_chart(s.coach_fields, s.models),
        fg.claims_chart(s.claim_refusal, spread[0] if spread else None, s.claims_by_level),
        fg.sample_counts_chart(s.models, s.sample_refusal, s.samples_per_cell),
        fg.tokens_chart(s.tokens_by_outcome, s.models, overall),
        language_chart(s),
        turn_chart(s),
        corrected_chart(s.models, s.corrected),
        over_refusal_chart(s),
    ]


def _csv_text(frame: pd.DataFrame) -> str:
    """A table's CSV: ``csv_safe(frame).to_csv(index=False, lineterminator="\\n")``, the same
    text. A frame of ``float64``, integer, boolean and pandas' ``str`` columns (every table of
    the report but a few) is written here with the ``csv`` writer pandas uses and the values it
    gives that writer (a float as numpy writes it, a missing value as nothing, text made
    formula-safe as :func:`~deflectbench.escaping.csv_safe` makes it), without pandas'
    per-table set-up, which cost more than the rows; any other frame is left to pandas."""
    cells = _csv_cells(frame)
    if cells is None:
        return str(csv_safe(frame).to_csv(index=False, lineterminator="\n"))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(frame.columns.tolist())
    writer.writerows(cells.tolist())
    return out.getvalue()


def _csv_cells(frame: pd.DataFrame) -> np.ndarray | None:
    """The cells ``to_csv`` gives its writer after ``csv_safe``, or None for a frame with a
    column (or a column name) of another kind."""
    labels = frame.columns.tolist()
    if not labels or not all(type(c) is str or type(c) is int for c in labels):
        return None  # (pandas writes an int name as str(int) too)
    floats, texts = [], []
    for i, dtype in enumerate(frame.dtypes.tolist()):
        if isinstance(dtype, pd.StringDtype) and isinstance(dtype.na_value, float):
            texts.append(i)
        elif not isinstance(dtype, np.dtype) or dtype.kind not in "biuf":
            return None
        elif dtype.kind == "f":
            if dtype != np.float64:
                return None
            floats.append(i)
    cells = frame.to_numpy(dtype=object, copy=True)  # ints, booleans: Python's, as pandas
    if floats:  # as pandas writes a float column: numpy's str of each float, NaN as nothing
        values = cells[:, floats].astype(np.float64)
        shown = values.astype(str).astype(object)
        shown[np.isnan(values)] = ""
        cells[:, floats] = shown
    for i in texts:  # formula-safe text (csv_safe), a missing value as nothing
        cells[:, i] = [neutralise(v) if isinstance(v, str) else "" for v in cells[:, i].tolist()]
    return cells


def _write_text(path: Path, text: str) -> None:
    """Replace the file atomically, so a reader never sees half a report."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _data_uri(path: Path) -> str:
    kind = {"svg": "image/svg+xml", "png": "image/png"}[path.suffix[1:]]
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _prepare(out: Path) -> None:
    try:
        for sub in ("", "figures", "tables"):
            (out / sub).mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ReportError(f"cannot write the report to {out}: {exc.strerror or exc}") from None


def _remove_stale(folder: Path, names: Sequence[str], exts: Sequence[str], keep: set[Path]) -> None:
    """Drop this report's own files from an earlier build that this build did not rewrite."""
    for name in names:
        for ext in exts:
            p = folder / f"{name}.{ext}"
            if p not in keep and p.exists():
                p.unlink()


def _write_figures(
    s: Summary, out: Path, formats: Sequence[str], embed: str
) -> tuple[list[Path], list[dict[str, Any]]]:
    """Draw and save every figure; return the files and what the pages show of each."""
    figure_paths: list[Path] = []
    views: list[dict[str, Any]] = []
    for chart in charts(s):
        paths = fg.save_chart(chart, out / "figures", formats)
        figure_paths.extend(paths.values())
        views.append(
            {
                "name": chart.name,
                "title": chart.title,
                "caption": chart.caption,
                "alt": chart.alt,
                "missing": chart.missing,
                "src": _data_uri(paths[embed]) if paths else "",
                "files": {fmt: f"figures/{p.name}" for fmt, p in paths.items()},
            }
        )
    _remove_stale(out / "figures", FIGURE_NAMES, fg.FORMATS, set(figure_paths))
    return figure_paths, views


def build_report(
    store: StoreReader,
    benchmark: Benchmark,
    out_dir: str | Path,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen, so shared safely)
    *,
    formats: Sequence[str] = DEFAULT_FORMATS,
    embed: str = "svg",
) -> ReportPaths:
    """Write ``report.html`` (self-contained), ``report.md``, ``tables/*.csv`` and
    ``figures/*.<format>`` for each of ``formats`` (default SVG only; ``png`` and ``pdf`` are
    drawn with matplotlib) under ``out_dir``; return their paths.

    ``options`` are the analysis's (see :func:`deflectbench.analysis.summarize`); its seed also
    picks the example responses. An empty store gives a report that says so. ``embed`` is the
    figure format inlined in the HTML (``svg`` or ``png``; it is always written). Raises
    ReportError when ``out_dir`` is not writable, ConsensusError for an unknown rule or judge.
    """
    if embed not in ("svg", "png"):
        raise ValueError(f"embed must be 'svg' or 'png', got {embed!r}")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"figure formats are {', '.join(FORMATS)}, got {unknown[0]!r}")
    formats = tuple(dict.fromkeys([*formats, embed]))
    out = Path(out_dir)
    s = summarize(store, benchmark, options, detail=True)
    staging = _staging(out)
    try:
        _prepare(staging)
        figure_paths, views = _write_figures(s, staging, formats, embed)
        tables = {t.name: t for make in TABLES for t in make(s)}
        if not s.empty:  # judge validity: the judges against the human labels
            tables |= {
                t.name: t for t in validity_tables(judge_validity(store, benchmark, options))
            }
        tables |= {t.name: t for t in manifest_tables(store, benchmark)}  # what was run
        table_paths = []
        for t in tables.values():
            path = staging / "tables" / f"{t.name}.csv"
            _write_text(path, _csv_text(t.frame))
            table_paths.append(path)
        html, md = render_pages(s, views, tables)
        _write_text(staging / HTML_NAME, html)
        _write_text(staging / MARKDOWN_NAME, md)
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    moved = [out / p.relative_to(staging) for p in (*table_paths, *figure_paths)]
    n = len(table_paths)
    return ReportPaths(out, tuple(moved[:n]), tuple(moved[n:]))


def _staging(out: Path) -> Path:
    """A fresh folder beside ``out`` to build the whole report in; leftovers of a build that
    was killed are removed first."""
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for stale in parent.glob(f".{out.name}.building-*"):
            shutil.rmtree(stale, ignore_errors=True)
    except OSError as exc:
        raise ReportError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    return parent / f".{out.name}.building-{os.getpid()}"


def _swap_in(staging: Path, out: Path) -> None:
    """Put the finished report in place of the old one: a reader (or a kill) sees the old
    report or the new one, never a mix of both."""
    if out.exists() and not out.is_dir():
        raise ReportError(f"cannot write the report to {out}: it is a file, not a folder")
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    try:
        if out.exists():
            os.replace(out, old)
        os.replace(staging, out)
    except OSError as exc:
        if old.exists() and not out.exists():
            os.replace(old, out)
        raise ReportError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    shutil.rmtree(old, ignore_errors=True)


def write_report_after_run(store: StoreReader, benchmark: Benchmark, out_dir: str | Path) -> Path:
    """The report at the end of ``deflectbench run``, with the analysis defaults; its HTML path."""
    return build_report(store, benchmark, out_dir).html
