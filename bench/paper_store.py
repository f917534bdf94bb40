"""The paper-scale store the benchmarks share: the release-format fixture (24,000 generations,
4 models, 2 judges, the paper's error and parse-error counts) imported through interop."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from deflectbench.benchmark import Benchmark  # noqa: E402
from deflectbench.interop import import_paths  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from support.fixtures import write_release_fixture  # noqa: E402


def ensure_paper_store(path: Path, b: Benchmark, work: Path) -> None:
    """Build the store at ``path`` unless it exists; print what it holds and the cores."""
    if not path.exists():
        t0 = time.perf_counter()
        out = work / "release"
        write_release_fixture(out)
        with Store.open(path) as store:
            import_paths(store, [out], b)
        print(f"built {path} from the release-format fixture in {time.perf_counter() - t0:.1f} s")
    Store.open(path).close()  # bring a reused store to the current schema
    with Store.open(path, readonly=True) as store:
        print(f"store: {path.stat().st_size / 1e6:.0f} MB, {store.counts()}")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cores available to this process: {cores}")
