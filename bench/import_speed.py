"""Import speed at the paper's scale: 24,000 generations and 47,980 judge records.

Writes the paper-scale release fixture to a temporary folder, imports it into a fresh store and
prints the time against the 5 s target (wall clock, and CPU time, which a busy machine disturbs
less), then a second import of the same files (which must add nothing). ``--careful`` times,
beside each import, one into another fresh store with every chunk read the careful way (no
bulk writes: ``importer.BULK`` off), and prints the ratio. Bounded: one fixture, ``--repeat``
imports (default 1), then it stops; the temporary folder is removed.

    .venv/bin/python bench/import_speed.py [--repeat 3] [--careful]
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="fresh-store imports to time (1-10)")
    parser.add_argument("--careful", action="store_true", help="time the careful way beside")
    args = parser.parse_args()
    repeat = max(1, min(args.repeat, 10))
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
