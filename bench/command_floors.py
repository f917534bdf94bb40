"""Each command beside its floor: the plainest program that does the same work, in one run.

A command is fast enough when it costs at most twice what the work itself costs. The floors are
written here, plainly, so anyone can read what they count:

- import: ``json.loads`` every line of the release files and insert every record with its whole
  line into two SQLite tables with unique keys, in one transaction.
- analyze: read the columns the analysis needs (model, claim, template, judge, the 8 fields) from
  the store, and the claim-block bootstrap of the signature (each model's 8 field rates; per-claim
  sums times a 1,000 x claims resample-count matrix).
- compare: read the same columns from both stores, and the paired claim-block bootstrap of all
  its rows (per model, field and scope: overall, each framing, each template), vectorised.
- report: analyze's floor plus writing its files (a CSV and an HTML page of the rates).
- ``deflectbench --version``: ``python -c pass``.

Each command and its floor run as child processes, interleaved, at 1x and 10x the paper
(10x: 40 models, as bench/scale_memory.py), and the CPU time (user + sys of the children,
``resource.getrusage``) is measured, with the wall time beside it. Printed: per scale and
command the command's CPU, the floor's CPU and the ratio (target: at most 2), then the 10x/1x
CPU ratio per command (target: at most 11), and the load average before and after. The package's
bytecode is compiled first and the children may read it (as an installed package's are), whatever
PYTHONDONTWRITEBYTECODE says in the calling shell.

The fixtures and stores are kept in ``--work`` (default ``/tmp/deflectbench-floors``) and
reused: the first run writes them (several minutes at 10x, not timed).

``--against OTHER/src`` runs each command of another checkout too (``git worktree add OTHER
COMMIT``: the code before a change), between the command and its floor, and prints its CPU and
ratio beside: before and after measured at the same moments, which is what this machine's
noise allows (the same floor program varies by a third from one hour to the next).

    .venv/bin/python bench/command_floors.py [--scales 1,10] [--repeat 1] [--work DIR]
        [--against OTHER/src]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "bench")]

from deflectbench.vocab import FIELDS  # noqa: E402  (the rubric's eight fields, one definition)

RESAMPLES = 1000
MAX_FLOOR_RATIO = 2.0
MAX_GROWTH = 11.0


# ---- the floors ---------------------------------------------------------------------------


def remove_store(db: Path) -> None:
    """A SQLite file and its write-ahead log and index beside it: a log left behind by an
    earlier run would be replayed into the next store of that name."""
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        path.unlink(missing_ok=True)


def floor_import(release: Path, db: Path) -> None:
    """json.loads every line; insert every record with its whole line; one transaction."""
    remove_store(db)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE generations (gen_id TEXT PRIMARY KEY, line TEXT NOT NULL)")
    con.execute("CREATE TABLE evals (eval_id TEXT PRIMARY KEY, line TEXT NOT NULL)")
    with con:
        for table, key in (("generations", "gen_id"), ("evals", "eval_id")):
            for path in sorted((release / "data" / table).glob("*.jsonl")):
                with path.open(encoding="utf-8") as f:
                    for line in f:
                        record = json.loads(line)
                        con.execute(f"INSERT INTO {table} VALUES (?, ?)", (record[key], line))
    con.close()


def read_columns(db: Path) -> tuple[list[str], list[str], list[str], NDArray[np.float64]]:
    """(model, claim, template per judgment; the 8 fields as a float matrix, NaN for none)."""
    import numpy as np

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT g.model, g.claim_id, g.prompt_id, "
        + ", ".join(f"j.{f}" for f in FIELDS)
        + " FROM judgments j JOIN generations g USING (gen_id) WHERE j.parse_error = 0"
    ).fetchall()
    con.close()
    models, claims, templates = (list(c) for c in zip(*(r[:3] for r in rows), strict=True))
    values = np.array([r[3:] for r in rows], dtype=float)
    return models, claims, templates, values


def claim_sums(
    keys: list[tuple[str, ...]], claims: list[str], values: NDArray[np.float64]
) -> tuple[list[tuple[str, ...]], NDArray[np.float64], NDArray[np.float64]]:
    """(row keys in order, per row x claim x field sums, per row x claim counts)."""
    import numpy as np

    row_of: dict[tuple[str, ...], int] = {}
    claim_of = {c: i for i, c in enumerate(sorted(set(claims)))}
    r = np.array([row_of.setdefault(k, len(row_of)) for k in keys])
    c = np.array([claim_of[x] for x in claims])
    sums = np.zeros((len(row_of), len(claim_of), values.shape[1]))
    counts = np.zeros((len(row_of), len(claim_of), 1))
    np.add.at(sums, (r, c), values)
    np.add.at(counts, (r, c), 1.0)
    return list(row_of), sums, counts


def resample_counts(n_claims: int, seed: int = 0) -> NDArray[np.float64]:
    """RESAMPLES x claims: how often each claim is drawn in each resample."""
    import numpy as np

    p = np.full(n_claims, 1 / n_claims)
    return np.random.default_rng(seed).multinomial(n_claims, p, size=RESAMPLES).astype(float)


def boot_rates(
    draws: NDArray[np.float64], sums: NDArray[np.float64], counts: NDArray[np.float64]
) -> NDArray[np.float64]:
    """rows x RESAMPLES x fields: each resample's rate (per-claim sums times the draws)."""
    import numpy as np

    return np.einsum("bc,rcf->rbf", draws, sums) / np.einsum("bc,rcf->rbf", draws, counts)


def floor_analyze(db: Path) -> tuple[list[tuple[str, ...]], NDArray[np.float64]]:
    """Read the columns; each model's 8 rates with their 95% claim-block bootstrap CI."""
    import numpy as np

    models, claims, _, values = read_columns(db)
    keys, sums, counts = claim_sums([(m,) for m in models], claims, values)
    boot = boot_rates(resample_counts(sums.shape[1]), sums, counts)
    rate = sums.sum(axis=1) / counts.sum(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=1)
    return keys, np.stack([rate, lo, hi])


def floor_compare(db_a: Path, db_b: Path) -> int:
    """Both stores' columns; the paired bootstrap (the same draws for both sides) of every row:
    model x scope (overall, each framing, each template) x field."""
    import numpy as np

    boots, rates, orders = [], [], []
    for db in (db_a, db_b):
        models, claims, templates, values = read_columns(db)
        framings = [t.split("_")[1] for t in templates]
        keys = (
            [(m, "all") for m in models]
            + [(m, f) for m, f in zip(models, framings, strict=True)]
            + [(m, t) for m, t in zip(models, templates, strict=True)]
        )
        order, sums, counts = claim_sums(keys, claims * 3, np.vstack([values] * 3))
        boots.append(boot_rates(resample_counts(sums.shape[1]), sums, counts))
        rates.append(sums.sum(axis=1) / counts.sum(axis=1))
        orders.append(order)
    assert orders[0] == orders[1], "the two stores hold different rows"
    diff = rates[1] - rates[0]
    lo, hi = np.percentile(boots[1] - boots[0], [2.5, 97.5], axis=1)
    return int(diff.size + lo.size + hi.size) // 3


def floor_report(db: Path, out: Path) -> None:
    """analyze's floor, then its files: the rates as CSV and as an HTML table."""
    keys, table = floor_analyze(db)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "rates.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", *FIELDS])
        for (model,), row in zip(keys, table[0], strict=True):
            w.writerow([model, *(f"{x:.4f}" for x in row)])
    cells = "".join(
        f"<tr><td>{m}</td>" + "".join(f"<td>{x:.1%}</td>" for x in row) + "</tr>"
        for (m,), row in zip(keys, table[0], strict=True)
    )
    (out / "report.html").write_text(f"<table>{cells}</table>", encoding="utf-8")


FLOORS = {
    "import": lambda a: floor_import(Path(a[0]), Path(a[1])),
    "analyze": lambda a: floor_analyze(Path(a[0])),
    "compare": lambda a: print(f"{floor_compare(Path(a[0]), Path(a[1]))} rows"),
    "report": lambda a: floor_report(Path(a[0]), Path(a[1])),
}


# ---- the driver ---------------------------------------------------------------------------


def models(scale: int) -> list[str]:
    """The paper's four at 1x; 4 x scale generic ones above (as bench/scale_memory.py)."""
    from support.fixtures import MODELS

    return list(MODELS) if scale == 1 else [f"model-{i:03d}" for i in range(4 * scale)]


def prepare(work: Path, scale: int) -> dict[str, Path]:
    """The fixtures A (seed 0) and B (seed 1) and store A, written unless already there."""
    from deflectbench.benchmark import default_benchmark
    from support.fixtures import write_release_fixture

    folder = work / f"x{scale}"
    paths = {
        "release_a": folder / "release",
        "release_b": folder / "release-b",
        "store_a": folder / "paper.db",
        "store_b": folder / "import-b.db",
        "store_b_against": folder / "import-b-against.db",
        "floor_db": folder / "floor-import.db",
        "out": folder / "out",
    }
    folder.mkdir(parents=True, exist_ok=True)
    paths["out"].mkdir(exist_ok=True)
    if scale == 1:
        from paper_store import ensure_paper_store

        ensure_paper_store(paths["store_a"], default_benchmark(), folder)
    elif not paths["store_a"].exists():
        t0 = time.perf_counter()
        write_release_fixture(paths["release_a"], models=models(scale))
        run_cli(["import", str(paths["release_a"]), "--db", str(paths["store_a"])])
        print(f"x{scale}: built {paths['store_a']} in {time.perf_counter() - t0:.0f} s")
    if not paths["release_b"].exists():
        write_release_fixture(paths["release_b"], models=models(scale), seed=1)
    return paths


def run_cli(
    args: list[str], ok_codes: frozenset[int] = frozenset({0}), src: Path | None = None
) -> tuple[float, float, str]:
    """(CPU s of the child: user + sys, wall s, "" or why it failed) of ``deflectbench ARGS``;
    with ``src``, the package of that source folder (``python -m deflectbench``, PYTHONPATH)."""
    if src is None:
        return timed([str(Path(sys.executable).with_name("deflectbench")), *args], ok_codes)
    env = {**CHILD_ENV, "PYTHONPATH": str(src)}
    return timed([sys.executable, "-m", "deflectbench", *args], ok_codes, env)


def run_floor(name: str, args: list[str]) -> tuple[float, float, str]:
    return timed([sys.executable, __file__, "--floor", name, *args])


#: The children run as an installed package runs: with its compiled bytecode. A shell that sets
#: PYTHONDONTWRITEBYTECODE (this machine's does) would make every command recompile each module
#: changed since its .pyc was written, on every run (about 0.1-0.5 s of CPU a command).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

#: The exit codes of a run that did its work: import's 1 says it skipped the fixture's planted
#: bad lines (README, exit codes); any other command's 1 is an internal error.
OK_CODES = {"import": frozenset({0, 1})}


def compile_package(*others: Path) -> None:
    """Write the package's .pyc files once (and those of ``--against``'s tree), before anything
    is timed (not timed itself)."""
    import compileall

    for src in (ROOT / "src", *others):
        compileall.compile_dir(str(src / "deflectbench"), quiet=1)


def timed(
    argv: list[str], ok_codes: frozenset[int] = frozenset({0}), env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """(CPU s, wall s, failure): a child that exits with a code outside ``ok_codes`` did not do
    the work, so its time says nothing; the failure names the code and the end of its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env or CHILD_ENV
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    failure = ""
    if proc.returncode not in ok_codes:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        failure = f"{' '.join(argv[1:4])} ... exited {proc.returncode}: {tail[0][:200]}"
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, failure


COMMANDS = ("import", "analyze", "compare", "report")


def pairs(p: dict[str, Path]) -> dict[str, tuple[list[str], str, list[str]]]:
    """command -> (its CLI arguments, the floor's name, the floor's arguments)."""
    store_b = p["store_b"]
    return {
        "import": (
            ["import", str(p["release_b"]), "--db", str(store_b)],
            "import",
            [str(p["release_b"]), str(p["floor_db"])],
        ),
        "analyze": (
            ["analyze", "--db", str(p["store_a"]), "--json", str(p["out"] / "analyze.json")],
            "analyze",
            [str(p["store_a"])],
        ),
        "compare": (
            ["compare", str(p["store_a"]), str(store_b), "--json", str(p["out"] / "compare.json")],
            "compare",
            [str(p["store_a"]), str(store_b)],
        ),
        "report": (
            ["report", "--db", str(p["store_a"]), "--out", str(p["out"] / "report")],
            "report",
            [str(p["store_a"]), str(p["out"] / "floor-report")],
        ),
    }


#: command -> (CPU, wall, floor CPU, floor wall, ``--against``'s CPU or NaN), each the best.
Best = tuple[float, float, float, float, float]


def measure(p: dict[str, Path], repeat: int, against: Path | None = None) -> dict[str, Best]:
    """command -> (CPU, wall, floor CPU, floor wall, the other tree's CPU), the best of the
    ``repeat`` runs that did their work; a pair whose command or floor failed is printed and
    left out of the best, and a command with no such pair is left out of the result (reported
    as failed, never as a ratio). ``against``: the same command of another source folder (the
    code before a change) runs between the two, so before and after share the machine's
    moment; its import writes a store of its own."""
    best: dict[str, Best] = {}
    for _ in range(repeat):
        for name, (cli, floor, floor_args) in pairs(p).items():
            ok_codes = OK_CODES.get(name, frozenset({0}))
            if name == "import":
                remove_store(p["store_b"])
            c, w, failed = run_cli(cli, ok_codes)
            ac = math.nan
            if against is not None and not failed:
                other = [*cli]
                if name == "import":
                    other[other.index(str(p["store_b"]))] = str(p["store_b_against"])
                    remove_store(p["store_b_against"])
                ac, _, failed = run_cli(other, ok_codes, src=against)
            fc, fw, floor_failed = run_floor(floor, floor_args)
            if failed or floor_failed:
                print(f"  {name:<8} FAILED, not counted: {failed or floor_failed}", flush=True)
                continue
            before = "" if math.isnan(ac) else f"; --against {ac:.2f} s (x{ac / fc:.2f})"
            print(
                f"  {name:<8} {c:7.2f} s CPU beside its floor's {fc:.2f} s (x{c / fc:.2f})"
                f"{before}; load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            new: Best = (c, w, fc, fw, ac)  # ac: NaN in every run without --against
            old = best.get(name)
            best[name] = new if old is None else (
                min(old[0], c), min(old[1], w), min(old[2], fc), min(old[3], fw), min(old[4], ac)
            )  # fmt: skip
    return best


def measure_version(repeat: int) -> tuple[float, float, float, float]:
    runs = []
    for _ in range(max(repeat, 5)):
        c, w, failed = run_cli(["--version"])
        fc, fw, _ = timed([sys.executable, "-c", "pass"])
        if failed:
            sys.exit(f"--version failed: {failed}")
        runs.append((c, w, fc, fw))
    c, w, fc, fw = (sorted(col)[len(col) // 2] for col in zip(*runs, strict=True))
    return c, w, fc, fw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="1,10", help="comma-separated multiples of the paper")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each pair (best is kept)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/deflectbench-floors"))
    ap.add_argument("--prepare-only", action="store_true", help="write the fixtures, time nothing")
    ap.add_argument(
        "--against",
        type=Path,
        metavar="SRC",
        help="also run each command of another checkout's src/ folder (the code before a "
        "change), interleaved, and print its CPU and ratio beside",
    )
    ap.add_argument("--floor", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.floor:
        FLOORS[args.floor[0]](args.floor[1:])
        return
    scales = [int(s) for s in args.scales.split(",") if s.strip()]
    paths = {scale: prepare(args.work, scale) for scale in scales}
    if args.prepare_only:
        return
    if args.against is not None and not (args.against / "deflectbench").is_dir():
        sys.exit(f"--against {args.against}: no deflectbench package in it (give a src/ folder)")
    compile_package(*([args.against] if args.against is not None else []))
    load_before = os.getloadavg()
    print(f"load average before: {' '.join(f'{x:.1f}' for x in load_before)}", flush=True)
    version = measure_version(args.repeat)
    results = {}
    for scale in scales:
        print(f"x{scale}:", flush=True)
        results[scale] = measure(paths[scale], args.repeat, args.against)
        print(f"x{scale} done; load {os.getloadavg()[0]:.1f}", flush=True)
    load_after = os.getloadavg()
    print(
        f"\n{'scale':<5} {'command':<8} {'CPU s':>7} {'floor s':>7} {'ratio':>6}  "
        f"{'wall s':>7} {'floor s':>7}  target"
        + ("  | --against: CPU s, ratio" if args.against is not None else "")
    )
    c, w, fc, fw = version
    ok = "OK" if c - fc <= 0.2 else "OVER"
    print(
        f"{'-':<5} {'--version':<8} {c:7.2f} {fc:7.2f} {c / fc:6.1f}  {w:7.2f} {fw:7.2f}  "
        f"+{c - fc:.2f} s over python -c pass (<= 0.2: {ok})"
    )
    failed = [(scale, name) for scale in scales for name in COMMANDS if name not in results[scale]]
    for scale in scales:
        for name in COMMANDS:
            if name not in results[scale]:
                print(f"x{scale:<4} {name:<8} FAILED: no run did its work (see above)")
                continue
            c, w, fc, fw, ac = results[scale][name]
            ok = "OK" if c / fc <= MAX_FLOOR_RATIO else "OVER"
            before = "" if math.isnan(ac) else f"  | {ac:7.2f} {ac / fc:6.2f}"
            print(
                f"x{scale:<4} {name:<8} {c:7.2f} {fc:7.2f} {c / fc:6.2f}  {w:7.2f} {fw:7.2f}  "
                f"<= {MAX_FLOOR_RATIO:g}: {ok:<4}{before}"
            )
    if 1 in results and 10 in results:
        print("\n10x / 1x CPU:")
        for name in (n for n in results[1] if n in results[10]):
            grow, floor_grow = (results[10][name][i] / results[1][name][i] for i in (0, 2))
            ok = "OK" if grow <= MAX_GROWTH else "OVER"
            print(f"  {name:<8} x{grow:5.1f} (floor x{floor_grow:5.1f})  <= {MAX_GROWTH:g}: {ok}")
    print(f"load average after: {' '.join(f'{x:.1f}' for x in load_after)}")
    if failed:
        sys.exit(f"failed: {', '.join(f'x{s} {n}' for s, n in failed)}")


if __name__ == "__main__":
    main()
