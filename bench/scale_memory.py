"""Time and peak memory of ``import``, ``analyze``, ``report`` and ``merge`` at 1x and 10x the
paper (and 100x on request), so the growth is seen, not guessed.

Each scale is the release-format fixture with 4 x SCALE models (the paper's 4 models, 80 claims,
15 templates and 5 samples: 6,000 generations and 12,000 judge records per model), written once
per scale into a work folder (not timed). Each command runs as a user runs it
(``python -m deflectbench``), in a child process of its own; its wall time, CPU time and peak
resident memory are the child's (``wait4``), so one command's memory never hides another's.

    .venv/bin/python bench/scale_memory.py                # 1x and 10x
    .venv/bin/python bench/scale_memory.py --scales 1     # the paper's scale only
    .venv/bin/python bench/scale_memory.py --scales 1,10,100 --work /big/disk

``merge`` is measured twice: the whole imported store merged into an empty OUT
(``merge``), and the store split into 8 parts by claim (written once, not timed) merged one
part at a time into one OUT: the first part (``merge-1st``) and the last, into an OUT already
holding the other 7 (``merge-8th``); merging in time linear in what it adds makes the two
alike. ``--src FOLDER`` runs the commands from another source tree (a checkout of an earlier
commit: the before and after of a change, on the same fixtures); ``--commands`` picks some.

Then, for each scale above 1x, the ratios to 1x; at 10x, the targets (issue 26, item 4), each
PASS or FAIL: ``analyze`` and ``report`` under 1 GB of peak memory (1,000 MB) and at most 10
times their 1x time (CPU time: the machine may be shared, and wall time then measures the
neighbours too; both ratios are printed), ``import``'s peak roughly flat (at most 1.5 times
its 1x peak), and ``merge`` under 300 MB of peak memory (issue 34, point 6).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from support.fixtures import MODELS, write_release_fixture  # noqa: E402

PAPER_MODELS = len(MODELS)


def models(scale: int) -> list[str]:
    """The paper's four at 1x; 4 x scale generic ones above (the fixture's generic rates)."""
    if scale == 1:
        return list(MODELS)
    return [f"model-{i:03d}" for i in range(PAPER_MODELS * scale)]


#: The source tree the commands run from (``--src``).
SRC = ROOT / "src"


def timed(args: list[str]) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak resident MB, exit code) of ``deflectbench ARGS`` in a child (its
    peak includes the address space it was forked from: this process is kept small)."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deflectbench", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    tail = ""
    if proc.stderr is not None:
        tail = proc.stderr.read().decode(errors="replace")[-400:]
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        print(f"  deflectbench {' '.join(args)} exited {code}: {tail}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


Measured = dict[str, tuple[float, float, float]]  # command -> (wall s, CPU s, peak MB)
COMMANDS = ("import", "analyze", "report", "merge", "merge-1st", "merge-8th")
#: The targets: peak memory at 10x, the time ratio to 1x, import's peak ratio to 1x.
MAX_PEAK_MB = 1000  # 1 GB, counted strictly
MAX_TIME_RATIO = 10.0
MAX_IMPORT_PEAK_RATIO = 1.5
MAX_MERGE_PEAK_MB = 300
#: Parts the store is split into for the merge of the first and the last part.
PARTS = 8


def part_paths(folder: Path) -> list[Path]:
    return [folder / f"part-{k + 1}-of-{PARTS}.db" for k in range(PARTS)]


def write_parts(db: Path, folder: Path) -> list[Path]:
    """The store at ``db`` split into :data:`PARTS` stores by claim (claim k of the sorted ids
    in part k mod PARTS), each with every run, condition and plan row: written once, kept."""
    parts = part_paths(folder)
    if all(p.exists() for p in parts):
        return parts
    src = sqlite3.connect(db)
    claims = [r[0] for r in src.execute("SELECT DISTINCT claim_id FROM generations ORDER BY 1")]
    src.close()
    for k, part in enumerate(parts):
        part.unlink(missing_ok=True)
        shutil.copyfile(db, part)  # the schema and the small tables as they are
        mine = claims[k::PARTS]
        conn = sqlite3.connect(part)
        marks = ", ".join("?" * len(mine))
        conn.execute(
            "DELETE FROM judgments WHERE gen_id IN (SELECT gen_id FROM generations "
            f"WHERE claim_id NOT IN ({marks}))",
            mine,
        )
        conn.execute(f"DELETE FROM generations WHERE claim_id NOT IN ({marks})", mine)
        conn.commit()
        conn.execute("VACUUM")
        conn.close()
    return parts


def scale_row(scale: int, work: Path, commands: set[str]) -> Measured:
    folder = work / f"x{scale}"
    release, db = folder / "release", folder / "store.db"
    if not release.exists():
        t0 = time.perf_counter()
        # in a child: a child's peak memory (wait4) counts the address space it was forked
        # from, so this process must stay small
        cmd = [sys.executable, __file__, "--write-fixture", str(release), str(scale)]
        subprocess.run(cmd, check=True)
        print(
            f"x{scale}: wrote the fixture ({len(models(scale))} models) in "
            f"{time.perf_counter() - t0:.0f} s"
        )
    if "import" in commands:
        db.unlink(missing_ok=True)
    elif not db.exists():  # the store the others read, imported untimed
        timed(["import", str(release), "--db", str(db)])
    merged = folder / "merged.db"
    steps = {
        "import": ["import", str(release), "--db", str(db)],
        "analyze": ["analyze", "--db", str(db), "--json", str(folder / "summary.json")],
        "report": ["report", "--db", str(db), "--out", str(folder / "report")],
        "merge": ["merge", str(merged), str(db)],
    }
    parts = part_paths(folder)
    by_parts = folder / "merged-parts.db"
    steps["merge-1st"] = ["merge", str(by_parts), str(parts[0])]
    steps["merge-8th"] = ["merge", str(by_parts), str(parts[-1])]
    measured: Measured = {}
    for name, args in steps.items():
        if name not in commands:
            continue
        if name == "merge":
            merged.unlink(missing_ok=True)
        if name in ("merge-1st", "merge-8th"):
            write_parts(db, folder)
        if name == "merge-1st":
            by_parts.unlink(missing_ok=True)
        if name == "merge-8th":  # the 2nd to the 7th, untimed: OUT then holds 7 parts
            for part in parts[1:-1]:
                timed(["merge", str(by_parts), str(part)])
        wall, cpu, peak, _ = timed(args)
        measured[name] = wall, cpu, peak
        print(
            f"x{scale:<4} {name:<8} {wall:8.1f} s wall {cpu:8.1f} s CPU {peak:8.0f} MB peak",
            flush=True,
        )
    return measured


def last_vs_first(scale: int, m: Measured) -> list[str]:
    """The 8th part's merge (into an OUT of 7 parts) against the 1st's (into an empty one)."""
    if "merge-1st" not in m or "merge-8th" not in m:
        return []
    (w1, c1, p1), (w8, c8, p8) = m["merge-1st"], m["merge-8th"]
    return [
        f"x{scale} merge of the last of {PARTS} parts / the first: wall x{w8 / w1:.2f}  "
        f"CPU x{c8 / c1:.2f}  peak x{p8 / p1:.2f} ({p1:,.0f} -> {p8:,.0f} MB)"
    ]


def verdicts(scale: int, base: Measured, big: Measured) -> list[str]:
    """The ratios of ``scale`` to 1x and, at 10x (the issue's scale for the targets), each
    target's PASS or FAIL; other scales show the ratios only."""
    lines = [f"x{scale} / x1:"]
    for name in COMMANDS:
        if name not in base or name not in big:
            continue
        (w1, c1, p1), (w, c, p) = base[name], big[name]
        lines.append(
            f"  {name:<8} wall x{w / w1:5.1f}  CPU x{c / c1:5.1f}  peak x{p / p1:5.2f} "
            f"({p1:,.0f} -> {p:,.0f} MB)"
        )
    if scale != 10:
        return lines
    checks = []
    for name in ("analyze", "report"):
        if name not in big or name not in base:
            continue
        ratio = big[name][1] / base[name][1]
        checks.append(
            (f"{name} CPU time x{ratio:.1f} <= x{MAX_TIME_RATIO:g}", ratio <= MAX_TIME_RATIO)
        )
        peak = big[name][2]
        checks.append((f"{name} peak {peak:,.0f} MB < {MAX_PEAK_MB:,} MB", peak < MAX_PEAK_MB))
    if "import" in big and "import" in base:
        ratio = big["import"][2] / base["import"][2]
        checks.append(
            (
                f"import peak x{ratio:.2f} of 1x <= x{MAX_IMPORT_PEAK_RATIO:g}",
                ratio <= MAX_IMPORT_PEAK_RATIO,
            )
        )
    for name in ("merge", "merge-1st", "merge-8th"):
        if name in big:
            peak = big[name][2]
            checks.append(
                (
                    f"{name} peak {peak:,.0f} MB <= {MAX_MERGE_PEAK_MB} MB",
                    peak <= MAX_MERGE_PEAK_MB,
                )
            )
    for text, ok in checks:
        lines.append(f"  {'PASS' if ok else 'FAIL'}  {text}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="1,10", help="comma-separated multiples of the paper")
    ap.add_argument("--work", type=Path, help="where the fixtures and stores go (kept)")
    ap.add_argument(
        "--commands", default=",".join(COMMANDS), help="comma-separated: " + ",".join(COMMANDS)
    )
    ap.add_argument("--src", type=Path, help="the source tree the commands run from")
    ap.add_argument("--write-fixture", nargs=2, metavar=("FOLDER", "SCALE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_fixture:
        folder, scale = args.write_fixture
        write_release_fixture(Path(folder), models=models(int(scale)))
        return
    global SRC
    if args.src:
        SRC = args.src.resolve()
    print(f"commands from: {SRC}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    commands = {c.strip() for c in args.commands.split(",") if c.strip()}
    if unknown := commands - set(COMMANDS):
        ap.error(f"unknown commands: {', '.join(sorted(unknown))}")
    scales = [int(s) for s in args.scales.split(",") if s.strip()]
    work = args.work or Path(tempfile.mkdtemp(prefix="deflectbench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work folder: {work}")
    measured = {scale: scale_row(scale, work, commands) for scale in scales}
    for scale in scales:
        print("\n".join(last_vs_first(scale, measured[scale])))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if 1 not in measured:
        return
    for scale in scales:
        if scale != 1:
            print("\n".join(verdicts(scale, measured[1], measured[scale])))


if __name__ == "__main__":
    main()
