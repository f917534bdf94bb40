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

``--split --db PATH`` instead splits the CPU of ``deflectbench analyze --json`` (child processes,
best of ``--repeat``, interleaved) into Python's start, the CLI's libraries, numpy, pandas,
analyze's own modules and reading its columns (the SQL alone), each step doing
the one before and one thing more, beside the command and its floor (bench/command_floors.py):
what is left for the command's own work, and how far the imports alone are from twice the floor.
``--pycache DIR`` runs the children with compiled bytecode (as installed) instead of as the shell
does (``PYTHONDONTWRITEBYTECODE=1`` recompiles every module changed since its .pyc).
``--read --db PATH`` times the reading layer alone: each table's frame (as every command that
reads the store builds it) beside the SQL that fetches the same columns as plain rows.
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


# ---- --split: where ``deflectbench analyze``'s CPU goes, beside its floor ------------------

#: What ``deflectbench analyze`` imports before it reads a row: the CLI, the analysis, the views.
ANALYZE_MODULES = (
    "deflectbench.cli.app",
    "deflectbench.api.results",
    "deflectbench.analysis.summary.build",
    *(f"deflectbench.views.terminal.{m}" for m in ("labels", "packs", "tables", "turns")),
    "deflectbench.views.terminal.validity_checks",
)
#: The columns analyze reads (generations and judgments, as ``analysis.frames.load``).
READ_SQL = (
    "SELECT gen_id, benchmark, model, claim_id, prompt_id, sample, error, input_tokens, "
    "output_tokens, condition, finish_reason FROM generations ORDER BY gen_id",
    "SELECT gen_id, judge, parse_error, error, consistency_flag, input_tokens, output_tokens, "
    "said_json FROM judgments ORDER BY judgment_id",
)


def split_steps(db: Path, out: Path) -> list[tuple[str, list[str]]]:
    """(name, argv): each step a child process that does the one before it and one thing more,
    so the differences say what each thing costs; then the command and its floor."""
    py = sys.executable
    libs = "import deflectbench.cli.app"
    uri = f"file:{db}?mode=ro"
    read = f"import sqlite3; c = sqlite3.connect({uri!r}, uri=True); " + "; ".join(
        f"c.execute({q!r}).fetchall()" for q in READ_SQL
    )
    every = "import " + ", ".join(ANALYZE_MODULES)
    return [
        ("python -c pass", [py, "-c", "pass"]),
        ("+ the CLI (typer, rich, pydantic)", [py, "-c", libs]),
        ("+ numpy", [py, "-c", f"{libs}, numpy"]),
        ("+ pandas", [py, "-c", f"{libs}, numpy, pandas"]),
        # no scipy step: analyze has not imported scipy since its three functions were ported
        # (deflectbench.analysis.stats.special)
        ("+ analyze's own modules", [py, "-c", f"{libs}, numpy, pandas; {every}"]),
        ("+ reading its columns (SQL only)", [py, "-c", f"{libs}, numpy, pandas; {every}; {read}"]),
        (
            "deflectbench analyze --json",
            [
                str(Path(py).with_name("deflectbench")),
                "analyze",
                "--db",
                str(db),
                "--json",
                str(out),
            ],
        ),
        (
            "its floor (bench/command_floors.py)",
            [py, str(ROOT / "bench" / "command_floors.py"), "--floor", "analyze", str(db)],
        ),
    ]


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU seconds of one child process."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def split(db: Path, repeat: int, pycache: Path | None) -> None:
    """Print the CPU of each step (best of ``repeat``, the steps interleaved) and what it adds.

    ``pycache``: children write and reuse compiled bytecode there (as an installed package
    does); else they run as this shell does (with PYTHONDONTWRITEBYTECODE set, every module
    changed since its .pyc was written is compiled from source on every run)."""
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    with tempfile.TemporaryDirectory() as tmp:
        steps = split_steps(db, Path(tmp) / "analyze.json")
        if pycache is not None:  # compile once, not timed
            for _, argv in steps:
                child_cpu(argv, env)
        print(
            f"load average before: {os.getloadavg()[0]:.1f}; bytecode: "
            + (
                f"compiled in {pycache}"
                if pycache
                else f"PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r}"
            )
        )
        best = {name: float("inf") for name, _ in steps}
        for _ in range(repeat):
            for name, argv in steps:
                best[name] = min(best[name], child_cpu(argv, env))
    floor = best[steps[-1][0]]
    previous = 0.0
    for i, (name, _) in enumerate(steps):
        cpu = best[name]
        if i < len(steps) - 2:
            print(f"  {name:<38} {cpu:6.2f} s CPU  (+{cpu - previous:5.2f})")
            previous = cpu
        else:
            print(f"  {name:<38} {cpu:6.2f} s CPU  (x{cpu / floor:.2f} the floor)")
    unavoidable = best[steps[-3][0]]
    print(
        f"the imports and the read alone: {unavoidable:.2f} s = x{unavoidable / floor:.2f} the "
        f"floor (target x2 = {2 * floor:.2f} s); the command's own work: "
        f"{best[steps[-2][0]] - unavoidable:.2f} s"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


# ---- --read: the reading layer beside the SQL alone ---------------------------------------


def read_layer(db: Path, repeat: int) -> None:
    """Per table, the CPU (in this process, best of ``repeat``) of the frame every command
    builds from the store (``generation_frame``/``judgment_frame``, with compare's extra
    columns), beside the SQL alone that fetches the same columns as plain rows (its floor:
    ``fetchall``): what the layer adds on top of SQLite handing Python the values."""
    import gc

    from deflectbench.analysis.frames.scored import CONDITION_COLUMNS, GEN_COLUMNS

    gen_extra = ("run_id", "served_model")
    judg_columns = "gen_id, judge, parse_error, error, consistency_flag, run_id, said_json"
    floors = {
        "generations": f"SELECT {', '.join([*GEN_COLUMNS, *CONDITION_COLUMNS, *gen_extra])} "
        "FROM generations ORDER BY gen_id",
        "judgments": f"SELECT {judg_columns} FROM judgments ORDER BY judgment_id",
    }
    with Store.open(db, readonly=True) as store:
        frames = {
            "generations": lambda: generation_frame(store, extra=gen_extra),
            "judgments": lambda: judgment_frame(store, extra=("run_id",)),
        }
        print(f"load average before: {os.getloadavg()[0]:.1f}; {store.counts()}")
        for table, sql in floors.items():
            best = [float("inf"), float("inf")]
            for _ in range(repeat):
                for i, work in enumerate((lambda q=sql: store.conn.execute(q).fetchall(),
                                          frames[table])):  # fmt: skip
                    gc.collect()
                    c0 = time.process_time()
                    work()
                    best[i] = min(best[i], time.process_time() - c0)
            print(
                f"  {table:<12} frame {best[1]:6.3f} s CPU beside the SQL alone {best[0]:6.3f} s "
                f"(x{best[1] / best[0]:.2f})"
            )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--db", type=Path, help="reuse (or create) this store instead of a temporary one"
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--split",
        action="store_true",
        help="the CLI's CPU split into start-up, imports, reading and work, beside its floor "
        "(needs --db of an existing store at the current schema; nothing is written to it)",
    )
    ap.add_argument(
        "--pycache", type=Path, help="with --split: children use compiled bytecode here"
    )
    ap.add_argument(
        "--read",
        action="store_true",
        help="the reading layer (the frames every command builds) beside the SQL alone "
        "(needs --db of an existing store)",
    )
    args = ap.parse_args()
    if args.read:
        if args.db is None or not args.db.exists():
            ap.error("--read needs --db PATH of an existing store")
        read_layer(args.db, args.repeat)
        return
    if args.split:
        if args.db is None or not args.db.exists():
            ap.error("--split needs --db PATH of an existing store")
        split(args.db, args.repeat, args.pycache)
        return
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
