"""The report: the paper's figures and tables for any store, as one self-contained HTML page,
a Markdown page, CSV tables and PNG/SVG/PDF figures.

    from deflectbench.analysis import AnalysisOptions
    from deflectbench.benchmark import default_benchmark
    from deflectbench.report import build_report
    from deflectbench.store import Store

    with Store.open("deflectbench.db", readonly=True) as store:
        paths = build_report(store, default_benchmark(), "report", AnalysisOptions(seed=1))
    print(paths.html)

The report reads the store only through :func:`deflectbench.analysis.summarize` and lays out
what it returns: ``build`` (orchestration, files), ``tables`` and ``count_tables`` (the tables),
``figures`` and ``figures_appendix`` (drawn with ``chart``), ``page`` (the templates), ``format``
(how a number is written).
"""

from deflectbench.report.build import (
    ReportError,
    ReportPaths,
    build_report,
    write_report_after_run,
)

__all__ = ["ReportError", "ReportPaths", "build_report", "write_report_after_run"]
