"""How fast an Inspect log of the ``deflectbench/deflectbench`` task imports, per sample epoch.

Runs the task through ``inspect_ai.eval`` against the local wire-format server
(``tests/support/inspect_runs.py``: subject and two judges behind Inspect's ``openai-api``
provider on 127.0.0.1), then times ``import_logs`` into a fresh store and a second import of
the same log (which adds nothing). Prints the eval time, the log's size, the import time and
its rate per sample epoch, and the time one model's paper-size log (6,000 sample epochs) would
take at that rate. Reading the log's samples (Inspect's own reader, streamed) is most of the time.

Run: ``.venv/bin/python bench/inspect_import.py [--claims 8] [--epochs 2]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]  # the package itself: installed (its entry point)

import pytest  # noqa: E402

from deflectbench.benchmark import default_benchmark  # noqa: E402
from deflectbench.interop.inspect_logs import import_logs  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from support import inspect_runs as ir  # noqa: E402

PAPER_EPOCHS = 80 * 15 * 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=8, help="claims (all 15 templates each)")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    claims = [c.claim_id for c in default_benchmark().claims][:: 80 // args.claims][: args.claims]
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        root = Path(tmp)
        ir.point_inspect_at(mp, ir.server())
        t = time.perf_counter()
        log = ir.run_inspect(root / "logs", epochs=args.epochs, claims=claims, templates=None)
        eval_s = time.perf_counter() - t
        n = len(log.samples)
        size = Path(log.location).stat().st_size
        print(f"inspect eval: {n} sample epochs in {eval_s:.1f} s; log {size / 1e6:.2f} MB")
        import_logs(Store.open(root / "warm.db"), [log.location])  # imports inspect_ai.log
        with Store.open(root / "i.db") as store:
            t = time.perf_counter()
            report = import_logs(store, [log.location])
            first = time.perf_counter() - t
            t = time.perf_counter()
            again = import_logs(store, [log.location])
            second = time.perf_counter() - t
        per = first / n
        print(f"import: {first:.2f} s ({per * 1e3:.1f} ms per sample epoch): {report.summary()}")
        print(f"re-import: {second:.2f} s: {again.summary()}")
        print(
            f"one model at paper size (80 x 15 x 5 = {PAPER_EPOCHS:,} sample epochs) at this rate: {per * PAPER_EPOCHS / 60:.1f} min"
        )


if __name__ == "__main__":
    main()
