"""How long ``analyze`` takes on a paper-scale store, against the 3 s target.

The store holds what the release does: 4 models x 80 claims x 15 templates x 5 samples = 24,000
generations (a few failed), each judged by 2 judges (a few parse errors). It is built from the
release-format fixture (``support.fixtures.write_release_fixture``) imported through
``deflectbench.interop.import_paths`` when those modules exist; otherwise (``--direct``, or if
they are missing) an equivalent store is written straight through the Store API, with
response and prompt texts of realistic length so SQLite reads as much as it would.

Timed: ``analyze(store, benchmark)`` with the defaults (the paper's definition: the judges' said
values) and everything on (1,000 bootstrap resamples for every CI), from opening the SQLite file
to the finished dict, best and median of ``--repeat`` runs in this process (the first run
includes pandas/scipy warm-up and is reported too). The phases (loading frames, scored table,
bootstrap CIs, the rest) are timed separately once, and so are ``--compat release`` and the
audit (five scored tables: the paper's, each quirk alone, all three).

Run: ``.venv/bin/python bench/analyze_speed.py [--db PATH] [--repeat 5] [--direct]``.
Pin to 2 cores to match the target: ``taskset -c 0,1 .venv/bin/python bench/analyze_speed.py``.
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

from deflectbench.analysis import AnalysisOptions, analyze, audit, tables  # noqa: E402
from deflectbench.analysis.frames.scored import (  # noqa: E402
    generation_frame,
    judgment_frame,
    scored_from_frames,
    verdicts_from_frames,
)
from deflectbench.benchmark import Benchmark, default_benchmark  # noqa: E402
from deflectbench.store import Store  # noqa: E402

TARGET_S = 3.0


def phases(path: Path, b: Benchmark) -> dict[str, float]:
    t: dict[str, float] = {}
    t0 = time.perf_counter()
    with Store.open(path, readonly=True) as store:
        gens, judg = generation_frame(store), judgment_frame(store)
    t["load frames"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    scored = scored_from_frames(gens, judg, b)
    verdicts = verdicts_from_frames(gens, judg, b)
    t["scored + verdict tables"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tables.rates_with_ci(scored, n_resamples=1000)
    t["bootstrap CIs (13 columns x models)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tables.agreement_table(verdicts)
    tables.agreement_table(verdicts, by="model")
    t["agreement overall + per model"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with Store.open(path, readonly=True) as store:
        analyze(store, b, AnalysisOptions(n_resamples=1000, seed=0, compat="release"))
    t["analyze --compat release (whole)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with Store.open(path, readonly=True) as store:
        audit(store, b)
    t["audit (whole)"] = time.perf_counter() - t0
    return t


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--db", type=Path, help="reuse (or create) this store instead of a temporary one"
    )
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    b = default_benchmark()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "paper.db"
        ensure_paper_store(path, b, Path(tmp))

        times, cpu = [], []
        summary = None
        for _ in range(max(1, args.repeat)):
            t0, c0 = time.perf_counter(), time.process_time()
            with Store.open(path, readonly=True) as store:
                summary = analyze(store, b, AnalysisOptions(n_resamples=1000, seed=0))
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        assert summary is not None
        c = summary["counts"]
        print(
            f"counts: attempted {c['attempted']:,}, valid {c['valid_generations']:,}, "
            f"scored {c['scored']:,}; models {len(c['models'])}, judges {len(c['judges'])}"
        )
        for name, secs in phases(path, b).items():
            print(f"  phase {name:<40} {secs:6.3f} s")
        best, med = min(times), statistics.median(times)
        print(
            f"analyze (open store .. dict), 1,000 resamples, {len(times)} runs: first "
            f"{times[0]:.3f} s, best {best:.3f} s, median {med:.3f} s wall; "
            f"median {statistics.median(cpu):.3f} s CPU"
        )
        print(f"load average (1 min) after the runs: {os.getloadavg()[0]:.1f}")
        verdict = "OK" if med <= TARGET_S else "TOO SLOW"
        print(f"target {TARGET_S:.1f} s: median is {med / TARGET_S:.2f}x the target ({verdict})")


if __name__ == "__main__":
    main()
