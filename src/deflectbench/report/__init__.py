"""The report: the paper's figures and tables for any store, as one self-contained HTML page,
a Markdown page, CSV tables and PNG/SVG/PDF figures.

    from deflectbench.benchmark import default_benchmark
    from deflectbench.report import build_report
    from deflectbench.store import Store

    with Store.open("deflectbench.db", readonly=True) as store:
        paths = build_report(store, default_benchmark(), "report")
    print(paths.html)
"""

from deflectbench.report.build import (
    ReportError,
    ReportPaths,
    build_report,
    write_report_after_run,
)

__all__ = ["ReportError", "ReportPaths", "build_report", "write_report_after_run"]
