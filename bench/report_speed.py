"""How long ``build_report`` takes on a paper-scale store, against the 20 s target (2 cores).

The store holds what the release does: 4 models x 80 claims x 15 templates x 5 samples = 24,000
generations (a few failed), each judged by 2 judges (a few parse errors). It is built from the
release-format fixture (``deflectbench.fixtures.write_release_fixture``) imported through
``deflectbench.interop.import_paths`` when those modules exist; otherwise (``--direct``, or if
they are missing) an equivalent store is written straight through the Store API with planted
rates and response texts of realistic length.

Timed: ``build_report(store, benchmark, out)`` with the defaults (1,000 bootstrap resamples,
PNG + SVG + PDF for every figure, HTML with embedded figures, Markdown, CSVs), from opening the
SQLite file to the last file written; best and median of ``--repeat`` runs. The phases (reading
and analysis, figures, pages) are timed once separately.

Run: ``.venv/bin/python bench/report_speed.py [--db PATH] [--repeat 3] [--direct]``.
Pin to 2 cores to match the target: ``taskset -c 0,1 .venv/bin/python bench/report_speed.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from deflectbench.benchmark import Benchmark, default_benchmark  # noqa: E402
from deflectbench.judging.fields import FIELDS, apply_rules  # noqa: E402
from deflectbench.report import build as report_build  # noqa: E402
from deflectbench.report import build_report  # noqa: E402
from deflectbench.report import figures as report_figures  # noqa: E402
from deflectbench.report.data import collect  # noqa: E402
from deflectbench.store import GenerationRecord, JudgmentRecord, Store  # noqa: E402

TARGET_S = 20.0
MODELS = ("claude-opus-4-7", "deepseek-v4-pro", "gpt-5.5", "grok-4.3")
JUDGES = ("claude-haiku-4-5-20251001", "gpt-5.4-mini")
MEAN_TOKENS = {"claude-opus-4-7": 493, "deepseek-v4-pro": 396, "gpt-5.5": 289, "grok-4.3": 65}
#: Planted P(field = 1) for the direct store: refusal, soft, WA, AH, RH, any, clean, labeled.
PLANTED = [0.25, 0.1, 0.5, 0.3, 0.3, 0.8, 0.1, 0.6]
WORDS = [
    "the",
    "senator",
    "said",
    "what",
    "about",
    "the",
    "other",
    "party",
    "and",
    "their",
    "record",
    "on",
    "this",
    "issue",
]


def build_direct(path: Path, b: Benchmark, seed: int = 0) -> None:
    """A paper-scale store written through the Store API (no fixture module needed)."""
    rng = np.random.default_rng(seed)
    prompts = {(c, p): text for c, p, text in b.prompts()}
    cells = [
        (c.claim_id, t.prompt_id, s) for c in b.claims for t in b.templates for s in range(1, 6)
    ]
    error_at = set(rng.choice(len(MODELS) * len(cells), size=10, replace=False).tolist())
    with Store.open(path) as store:
        gens = []
        for mi, model in enumerate(MODELS):
            for ci, (claim_id, prompt_id, sample) in enumerate(cells):
                failed = mi * len(cells) + ci in error_at
                n_tok = max(5, int(rng.normal(MEAN_TOKENS[model], MEAN_TOKENS[model] / 4)))
                gens.append(
                    GenerationRecord(
                        benchmark=b.key,
                        model=model,
                        claim_id=claim_id,
                        prompt_id=prompt_id,
                        sample=sample,
                        prompt=prompts[(claim_id, prompt_id)],
                        response=None if failed else " ".join(rng.choice(WORDS, size=n_tok)),
                        error="ERROR: 529 overloaded" if failed else None,
                        input_tokens=0 if failed else 120,
                        output_tokens=0 if failed else n_tok,
                        source="import",
                    )
                )
        store.add_generations(gens)
        ids = [r["gen_id"] for r in store.generation_rows(include_errors=False)]
        parse_error_at = set(rng.choice(len(ids), size=9, replace=False).tolist())
        judgments = []
        for k, gid in enumerate(ids):
            truth = (rng.random(len(FIELDS)) < PLANTED).astype(int)
            for ji, judge in enumerate(JUDGES):
                said = {
                    f: int(v if rng.random() > 0.05 else 1 - v)
                    for f, v in zip(FIELDS, truth, strict=True)
                }
                bad = ji == 0 and k in parse_error_at
                judgments.append(
                    JudgmentRecord(
                        gen_id=int(gid),
                        judge=judge,
                        raw="not json" if bad else json.dumps(said),
                        scores=None if bad else apply_rules(said),
                        said=None if bad else said,
                        reasoning=None if bad else "The response deflects.",
                        parse_error=bad,
                        source="import",
                    )
                )
        store.add_judgments(judgments)


def build_from_fixture(path: Path, b: Benchmark, work: Path) -> bool:
    """The release-format fixture imported through interop; False if the modules are missing."""
    try:
        from deflectbench.fixtures import write_release_fixture
        from deflectbench.interop import import_paths
    except ImportError:
        return False
    out = work / "release"
    write_release_fixture(out)
    with Store.open(path) as store:
        import_paths(store, [out], b)
    return True


def phases(path: Path, b: Benchmark, out: Path) -> dict[str, float]:
    """The report's stages timed one by one (one run)."""
    t: dict[str, float] = {}
    t0 = time.perf_counter()
    with Store.open(path, readonly=True) as store:
        d = collect(store, b)
    t["read store + analysis (1,000 resamples)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    charts = report_build._charts(d)
    t["draw 7 figures"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for chart in charts:
        report_figures.save_chart(chart, out / "figures")
    t["save figures (png, svg, pdf)"] = time.perf_counter() - t0
    return t


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--db", type=Path, help="reuse (or create) this store")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--direct", action="store_true", help="skip the fixture + import path")
    args = ap.parse_args()
    b = default_benchmark()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "paper.db"
        if not path.exists():
            t0 = time.perf_counter()
            how = "direct Store writes"
            if not args.direct and build_from_fixture(path, b, Path(tmp)):
                how = "fixtures.write_release_fixture + interop.import_paths"
            else:
                build_direct(path, b)
            print(f"built {path} via {how} in {time.perf_counter() - t0:.1f} s")
        Store.open(path).close()  # bring a reused store to the current schema
        with Store.open(path, readonly=True) as store:
            print(f"store: {path.stat().st_size / 1e6:.0f} MB, {store.counts()}")
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        print(f"cores available to this process: {cores}")

        times, cpu = [], []
        paths = None
        for i in range(max(1, args.repeat)):
            t0, c0 = time.perf_counter(), time.process_time()
            with Store.open(path, readonly=True) as store:
                paths = build_report(store, b, Path(tmp) / f"report{i}")
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        assert paths is not None
        size = paths.html.stat().st_size / 1e6
        print(
            f"wrote {paths.html.name} ({size:.1f} MB), {len(paths.figures)} figure files, "
            f"{len(paths.tables)} tables"
        )
        for name, secs in phases(path, b, Path(tmp) / "phases").items():
            print(f"  phase {name:<42} {secs:6.2f} s")
        best, med = min(times), statistics.median(times)
        print(
            f"build_report, {len(times)} runs: first {times[0]:.2f} s, best {best:.2f} s, "
            f"median {med:.2f} s wall; median {statistics.median(cpu):.2f} s CPU"
        )
        print(f"load average (1 min) after the runs: {os.getloadavg()[0]:.1f}")
        verdict = "OK" if med <= TARGET_S else "TOO SLOW"
        print(f"target {TARGET_S:.0f} s: median is {med / TARGET_S:.2f}x the target ({verdict})")


if __name__ == "__main__":
    main()
