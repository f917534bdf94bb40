"""Import speed at the paper's scale: 24,000 generations and 47,980 judge records.

Writes the paper-scale release fixture to a temporary folder, imports it into a fresh store and
prints the time against the 5 s target (wall clock, and CPU time, which a busy machine disturbs
less), then a second import of the same files (which must add nothing). ``--careful`` times,
beside each import, one into another fresh store with every chunk read the careful way (no
bulk writes: ``importer.BULK`` off), and prints the ratio. Bounded: one fixture, ``--repeat``
imports (default 1), then it stops; the temporary folder is removed.

``--against OLD/src`` times instead the whole command, ``deflectbench import RELEASE --db NEW``
of this tree and of another (a checkout of the code before a change), each beside the floor of
bench/command_floors.py, interleaved, as child processes reading compiled bytecode (as an
installed package does), and prints the best CPU of ``--repeat`` runs of each, their ratios to
the floor and the load average; ``--release`` names the release folder (default: the 1x
fixture bench/command_floors.py writes).

    .venv/bin/python bench/import_speed.py [--repeat 3] [--careful]
    .venv/bin/python bench/import_speed.py --against /tmp/before/src [--repeat 3] [--release DIR]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from deflectbench.interop import import_paths, importer  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from support.fixtures import write_release_fixture  # noqa: E402

TARGET_S = 5.0
FLOORS = ROOT / "bench" / "command_floors.py"
RELEASE = Path("/tmp/deflectbench-floors/x1/release-b")


def _child_cpu(argv: list[str], src: Path | None = None) -> float:
    """User + system CPU seconds of one child process (``src`` first on its path)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv[:4])} ... exited {done.returncode}: {done.stderr[-400:]!r}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def against(other: Path, release: Path, repeat: int) -> None:
    """The whole command of both trees beside the floor, interleaved; best of ``repeat``."""
    trees = {"this tree": ROOT / "src", "against": other}
    for src in trees.values():
        compileall.compile_dir(str(src / "deflectbench"), quiet=1)  # as installed: compiled
    floor = [sys.executable, str(FLOORS), "--floor", "import", str(release)]
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="deflectbench-import-") as tmp:
        db = Path(tmp) / "new.db"
        cmd = [sys.executable, "-m", "deflectbench", "import", str(release), "--db", str(db)]
        for i in range(repeat):
            for name, src in trees.items():
                for leftover in Path(tmp).iterdir():
                    leftover.unlink()
                best[name] = min(best.get(name, float("inf")), _child_cpu(cmd, src))
                best["floor"] = min(best.get("floor", float("inf")), _child_cpu([*floor, str(db)]))
            done = ", ".join(f"{k} {v:.2f} s" for k, v in best.items())
            print(f"  after run {i + 1}, best: {done}; load {os.getloadavg()[0]:.1f}", flush=True)
    ratios = "; ".join(f"{k} {best[k]:.2f} s (x{best[k] / best['floor']:.2f})" for k in trees)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"best of {repeat}, CPU: {ratios}; the floor {best['floor']:.2f} s; load {load}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="fresh-store imports to time (1-10)")
    parser.add_argument("--careful", action="store_true", help="time the careful way beside")
    parser.add_argument("--against", type=Path, help="another tree's src/: the whole command")
    parser.add_argument("--release", type=Path, default=RELEASE, help="with --against")
    args = parser.parse_args()
    repeat = max(1, min(args.repeat, 10))
    if args.against:
        against(args.against, args.release, repeat)
        return
    with tempfile.TemporaryDirectory(prefix="deflectbench-import-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        truth = write_release_fixture(root / "release")
        print(
            f"fixture: {truth.attempted:,} generations, {truth.valid * len(truth.judges) - len(truth.parse_error_keys):,}"
            f"+{len(truth.parse_error_keys)} judge records written in {time.perf_counter() - t0:.2f} s"
        )
        best_wall = best_cpu = float("inf")
        for i in range(repeat):
            with Store.open(root / f"import-{i}.db") as store:
                w0, c0 = time.perf_counter(), time.process_time()
                report = import_paths(store, [root / "release"])
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                counts = store.counts()
            best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
            print(f"import {i + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU; {report.summary()}")
            assert report.ok, report.problems[:5]
            assert counts["generations"] == truth.attempted, counts
            if args.careful:
                importer.BULK = False
                with Store.open(root / f"careful-{i}.db") as store:
                    c0 = time.process_time()
                    import_paths(store, [root / "release"])
                    careful = time.process_time() - c0
                importer.BULK = True
                print(
                    f"  the careful way: {careful:.2f} s CPU (x{careful / cpu:.2f} the bulk import's)"
                )
        with Store.open(root / "import-0.db") as store:
            w0 = time.perf_counter()
            again = import_paths(store, [root / "release"])
            print(f"re-import: {time.perf_counter() - w0:.2f} s; {again.summary()}")
            assert (
                again.total("generations", "imported") == 0
                and again.total("evals", "imported") == 0
            )
        verdict = "OK" if best_wall <= TARGET_S else "SLOWER THAN TARGET"
        print(
            f"paper-scale import: {best_wall:.2f} s wall (best of {repeat}), {best_cpu:.2f} s CPU; "
            f"target {TARGET_S:.0f} s -> {best_wall / TARGET_S:.2f} of the budget: {verdict}"
        )


if __name__ == "__main__":
    main()
