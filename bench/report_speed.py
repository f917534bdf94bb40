"""How long ``build_report`` takes on a paper-scale store, against the 20 s target (2 cores).

The store holds what the release does: 4 models x 80 claims x 15 templates x 5 samples = 24,000
generations (a few failed), each judged by 2 judges (a few parse errors). It is built from the
release-format fixture (``support.fixtures.write_release_fixture``) imported through
``deflectbench.interop.import_paths`` when those modules exist; otherwise (``--direct``, or if
they are missing) an equivalent store is written straight through the Store API with planted
rates and response texts of realistic length.

Timed: ``build_report(store, benchmark, out)`` with the defaults (the paper's definition, 1,000
bootstrap resamples, PNG + SVG + PDF for every figure, HTML with embedded figures, Markdown,
CSVs), from opening the SQLite file to the last file written; best and median of ``--repeat``
runs. The phases (reading and analysis, figures, pages) are timed once separately.

Run: ``.venv/bin/python bench/report_speed.py [--db PATH] [--repeat 3] [--direct]``.
Pin to 2 cores to match the target: ``taskset -c 0,1 .venv/bin/python bench/report_speed.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]


from paper_store import ensure_paper_store  # noqa: E402

from deflectbench.analysis import summarize  # noqa: E402
from deflectbench.benchmark import Benchmark, default_benchmark  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from deflectbench.views.report import build as report_build  # noqa: E402
from deflectbench.views.report import build_report  # noqa: E402
from deflectbench.views.report import figures as report_figures  # noqa: E402

TARGET_S = 20.0


def phases(path: Path, b: Benchmark, out: Path) -> dict[str, float]:
    """The report's stages timed one by one (one run)."""
    t: dict[str, float] = {}
    t0 = time.perf_counter()
    with Store.open(path, readonly=True) as store:
        s = summarize(store, b, detail=True)
    t["read store + analysis (1,000 resamples)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    charts = report_build.charts(s)
    t["draw 7 figures"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for chart in charts:
        report_figures.save_chart(chart, out / "figures")
    t["save figures (png, svg, pdf)"] = time.perf_counter() - t0
    return t


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--db", type=Path, help="reuse (or create) this store")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    b = default_benchmark()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "paper.db"
        ensure_paper_store(path, b, Path(tmp))

        times, cpu = [], []
        paths = None
        for i in range(max(1, args.repeat)):
            t0, c0 = time.perf_counter(), time.process_time()
            with Store.open(path, readonly=True) as store:
                paths = build_report(store, b, Path(tmp) / f"report{i}")
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        assert paths is not None
        size = paths.html.stat().st_size / 1e6
        print(
            f"wrote {paths.html.name} ({size:.1f} MB), {len(paths.figures)} figure files, "
            f"{len(paths.tables)} tables"
        )
        for name, secs in phases(path, b, Path(tmp) / "phases").items():
            print(f"  phase {name:<42} {secs:6.2f} s")
        best, med = min(times), statistics.median(times)
        print(
            f"build_report, {len(times)} runs: first {times[0]:.2f} s, best {best:.2f} s, "
            f"median {med:.2f} s wall; median {statistics.median(cpu):.2f} s CPU"
        )
        print(f"load average (1 min) after the runs: {os.getloadavg()[0]:.1f}")
        verdict = "OK" if med <= TARGET_S else "TOO SLOW"
        print(f"target {TARGET_S:.0f} s: median is {med / TARGET_S:.2f}x the target ({verdict})")


if __name__ == "__main__":
    main()
