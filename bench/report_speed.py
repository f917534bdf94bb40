"""How long ``build_report`` takes on a paper-scale store, against the 20 s target (2 cores).

The store holds what the release does: 4 models x 80 claims x 15 templates x 5 samples = 24,000
generations (a few failed), each judged by 2 judges (a few parse errors). It is built from the
release-format fixture (``support.fixtures.write_release_fixture``) imported through
``deflectbench.interop.import_paths`` when those modules exist; otherwise (``--direct``, or if
they are missing) an equivalent store is written straight through the Store API with planted
rates and response texts of realistic length.

Timed: ``build_report(store, benchmark, out)`` with the defaults (the paper's definition, 1,000
bootstrap resamples, every figure as SVG by the report's own writer, HTML with embedded
figures, Markdown, CSVs), from opening the SQLite file to the last file written; best and
median of ``--repeat`` runs. The phases (reading and analysis, figures, pages) are timed once
separately, with the PNG and PDF files that ``--figures all`` adds (matplotlib) beside them.

Side by side (``--commands``, the default, issue 33 point 7 and issue 36): the whole
``deflectbench report`` command, timed as a user times it (a child process: start-up, imports,
reading, analysis, the figure files, pages; CPU = user + system of the child), on a
360-generation store (2 models x 12 claims x 15 templates x 1 sample, 2 judges) and on the
paper-scale store, each beside its FLOOR: the plainest program that does the same kind of work
(:data:`FLOOR`: import pandas, read the generations and judgments once with one SELECT each,
the judges' mean >= 0.5 per field, the outcome rates per model, 7 bar charts each written as
SVG text, one HTML page with the table). ``--src DIR`` times another checkout's ``src``
(``git archive COMMIT src | tar -x -C /tmp/old``: before and after in one session);
``--figures all`` passes that flag to the command (a checkout from before the flag wrote PNG,
SVG and PDF by default and knows no such flag: leave it out there).

Run: ``.venv/bin/python bench/report_speed.py [--db PATH] [--repeat 3] [--src DIR] [--phases]``.
Pin to 2 cores to match the target: ``taskset -c 0,1 .venv/bin/python bench/report_speed.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
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
    t["prepare the figures' arrays"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for chart in charts:
        report_figures.save_chart(chart, out / "figures", ("svg",))
    t["write SVG figures (the default)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for chart in charts:
        report_figures.save_chart(chart, out / "figures", ("png", "pdf"))
    t["draw PNG + PDF (--figures all adds)"] = time.perf_counter() - t0
    return t


#: The floor: the plainest program doing the report's kind of work (see the module's doc).
FLOOR = r"""
import sqlite3, sys
from pathlib import Path
import pandas as pd

db, out = sys.argv[1], Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
fields = ["refusal", "soft_refusal", "fallacy_labeled", "compliance_clean", "any_fallacy_present"]
con = sqlite3.connect(db)
gens = pd.read_sql("SELECT gen_id, model, claim_id, prompt_id, output_tokens FROM generations "
                   "WHERE error IS NULL", con)
verdicts = pd.read_sql(f"SELECT gen_id, {', '.join(fields)} FROM judgments WHERE error IS NULL "
                       "AND parse_error = 0", con)
consensus = (verdicts.groupby("gen_id")[fields].mean() >= 0.5).astype(int)
rates = gens.join(consensus, on="gen_id", how="inner").groupby("model")[fields].mean()
for i in range(7):
    bars = "".join(
        f'<rect x="{40 + 30 * k}" y="{300 - 280 * v:.2f}" width="20" height="{280 * v:.2f}"/>'
        for k, v in enumerate(rates.to_numpy().ravel())
    )
    (out / f"figure{i}.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{bars}</svg>')
(out / "report.html").write_text("<html><body>" + rates.to_html() + "</body></html>")
"""


def small_store(path: Path, b: Benchmark, work: Path) -> None:
    """360 generations: 2 models x 12 claims x 15 templates x 1 sample, judged by 2 judges."""
    if path.exists():
        return
    from deflectbench.interop import import_paths
    from support.fixtures import MODELS, write_release_fixture

    claims = [c.claim_id for c in b.claims][:12]
    write_release_fixture(work / "small-release", models=MODELS[:2], claims=claims, runs=1)
    with Store.open(path) as store:
        import_paths(store, [work / "small-release"], b)


def child_cpu(args: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one child process run to its end (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(
    stores: dict[str, Path], tmp: Path, repeat: int, src: Path, figures: str | None = None
) -> None:
    """``deflectbench report`` beside the floor on each store, median CPU of ``repeat`` runs."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    flag = ["--figures", figures] if figures else []
    report = [sys.executable, "-m", "deflectbench", "report", *flag, "--out"]
    floor = [sys.executable, "-c", FLOOR]
    print(
        f"deflectbench report {' '.join(flag)} from {src}; median CPU (user + system) of "
        f"{repeat} runs; load average (1 min) before: {os.getloadavg()[0]:.1f}"
    )
    print(f"{'store':<28} {'report':>9} {'floor':>8} {'ratio':>7}")
    for name, db in stores.items():
        rep, flo = [], []
        for i in range(repeat):  # alternately, so the machine's load falls on both alike
            rep.append(child_cpu([*report, str(tmp / f"r{i}"), "--db", str(db)], env))
            flo.append(child_cpu([*floor, str(db), str(tmp / f"f{i}")], env))
        r, f = statistics.median(rep), statistics.median(flo)
        print(f"{name:<28} {r:8.2f}s {f:7.2f}s {r / f:6.2f}x")
    print(f"load average (1 min) after the runs: {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--db", type=Path, help="reuse (or create) this paper-scale store")
    ap.add_argument("--small-db", type=Path, help="reuse (or create) this 360-generation store")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the src to time")
    ap.add_argument("--figures", help="pass --figures to the command (svg, png, pdf or all)")
    ap.add_argument(
        "--phases", action="store_true", help="also time build_report in process, by phase"
    )
    args = ap.parse_args()
    b = default_benchmark()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "paper.db"
        ensure_paper_store(path, b, Path(tmp))
        small = args.small_db or Path(tmp) / "small.db"
        small_store(small, b, Path(tmp))
        stores = {"360 generations": small, "paper scale (24,000)": path}
        commands(stores, Path(tmp), max(1, args.repeat), args.src.resolve(), args.figures)
        if args.phases:
            in_process(path, b, Path(tmp), args.repeat)


def in_process(path: Path, b: Benchmark, tmp: Path, repeat: int) -> None:
    """build_report in this process on the paper-scale store, and its phases."""
    times, cpu = [], []
    paths = None
    for i in range(max(1, repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        with Store.open(path, readonly=True) as store:
            paths = build_report(store, b, tmp / f"report{i}")
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    assert paths is not None
    size = paths.html.stat().st_size / 1e6
    print(
        f"wrote {paths.html.name} ({size:.1f} MB), {len(paths.figures)} figure files, "
        f"{len(paths.tables)} tables"
    )
    for name, secs in phases(path, b, tmp / "phases").items():
        print(f"  phase {name:<42} {secs:6.2f} s")
    best, med = min(times), statistics.median(times)
    print(
        f"build_report, {len(times)} runs: first {times[0]:.2f} s, best {best:.2f} s, "
        f"median {med:.2f} s wall; median {statistics.median(cpu):.2f} s CPU"
    )
    verdict = "OK" if med <= TARGET_S else "TOO SLOW"
    print(f"target {TARGET_S:.0f} s: median is {med / TARGET_S:.2f}x the target ({verdict})")


if __name__ == "__main__":
    main()
