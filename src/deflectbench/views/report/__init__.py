"""The report: the paper's figures and tables for any store, as one self-contained HTML page,
a Markdown page, CSV tables and SVG figures (PNG and PDF when asked for).

    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.benchmark import default_benchmark
    from deflectbench.views.report import build_report
    from deflectbench.store import Store

    with Store.open("deflectbench.db", readonly=True) as store:
        paths = build_report(store, default_benchmark(), "report", AnalysisOptions(seed=1))
    print(paths.html)

The report reads the store only through :func:`deflectbench.analysis.summarize` and lays out
what it returns: ``build`` (orchestration, files), ``tables`` and ``count_tables`` (the tables),
``figures`` and ``figures_appendix`` (their arrays, drawn as SVG by ``svg_charts`` with the
``svg`` writer, or with matplotlib through ``chart`` for PNG and PDF), ``page`` (the templates),
``format`` (how a number is written).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.views.report.build import (
        ReportError,
        ReportPaths,
        ReportResult,
        build_report,
        write_report_after_run,
    )

__all__ = ["ReportError", "ReportPaths", "ReportResult", "build_report", "write_report_after_run"]


def __getattr__(name: str) -> Any:
    """The names above, from ``build`` on first use: it loads pandas, the analysis and jinja2,
    which a module of the report imported for one constant (a short field name) does not need."""
    if name in __all__:
        from deflectbench.views.report import build

        return getattr(build, name)
    raise AttributeError(f"module 'deflectbench.views.report' has no attribute {name!r}")
