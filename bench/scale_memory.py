"""Time and peak memory of ``import``, ``analyze`` and ``report`` at 1x and 10x the paper (and
100x on request), so the growth is seen, not guessed.

Each scale is the release-format fixture with 4 x SCALE models (the paper's 4 models, 80 claims,
15 templates and 5 samples: 6,000 generations and 12,000 judge records per model), written once
per scale into a work folder (not timed). Each command runs as a user runs it
(``python -m deflectbench``), in a child process of its own; its wall time, CPU time and peak
resident memory are the child's (``wait4``), so one command's memory never hides another's.

    .venv/bin/python bench/scale_memory.py                # 1x and 10x
    .venv/bin/python bench/scale_memory.py --scales 1     # the paper's scale only
    .venv/bin/python bench/scale_memory.py --scales 1,10,100 --work /big/disk
"""

from __future__ import annotations

import argparse
import os
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


def timed(args: list[str]) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak resident MB, exit code) of ``deflectbench ARGS`` in a child (its
    peak includes the address space it was forked from: this process is kept small)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
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


def scale_row(scale: int, work: Path) -> None:
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
    db.unlink(missing_ok=True)
    steps = {
        "import": ["import", str(release), "--db", str(db)],
        "analyze": ["analyze", "--db", str(db), "--json", str(folder / "summary.json")],
        "report": ["report", "--db", str(db), "--out", str(folder / "report")],
    }
    for name, args in steps.items():
        wall, cpu, peak, _ = timed(args)
        print(
            f"x{scale:<4} {name:<8} {wall:8.1f} s wall {cpu:8.1f} s CPU {peak:8.0f} MB peak",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="1,10", help="comma-separated multiples of the paper")
    ap.add_argument("--work", type=Path, help="where the fixtures and stores go (kept)")
    ap.add_argument("--write-fixture", nargs=2, metavar=("FOLDER", "SCALE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_fixture:
        folder, scale = args.write_fixture
        write_release_fixture(Path(folder), models=models(int(scale)))
        return
    scales = [int(s) for s in args.scales.split(",") if s.strip()]
    work = args.work or Path(tempfile.mkdtemp(prefix="deflectbench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work folder: {work}")
    for scale in scales:
        scale_row(scale, work)


if __name__ == "__main__":
    main()
