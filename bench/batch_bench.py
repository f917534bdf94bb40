"""Batch mode at the paper's scale: 24,000 generations and 48,000 judgments, submitted and
collected through the official SDKs against the batch emulators (in their own process, so the
harness's CPU time is its own).

Four models (two on OpenAI's Batch API, two on Anthropic's Message Batches), the full preset
(80 claims x 15 templates x 5 samples = 6,000 cells each), two batch judges (one per API)
judging every answer. Printed: the harness's CPU time per item (target: under 0.2 ms), its
peak memory (target: under 300 MB), wall time, and the number of batches against the fewest
the APIs' limits allow (one per model, then one per judge for all 24,000 answers).

Run: ``PYTHONPATH=src .venv/bin/python bench/batch_bench.py [--cells N]`` (``--cells`` per model,
default 6000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from deflectbench.benchmark import default_benchmark  # noqa: E402
from deflectbench.models.providers import build_api_model  # noqa: E402
from deflectbench.pipeline.batches import (  # noqa: E402
    ANTHROPIC_LIMITS,
    OPENAI_LIMITS,
    BatchMode,
)
from deflectbench.pipeline.context import RunContext  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from support.batch_servers import BatchServer  # noqa: E402
from support.fakes import VERDICT, is_judge_request  # noqa: E402
from support.servers import RecordedRequest  # noqa: E402

MODELS = [
    "openai/gpt-5-mini",
    "openai/gpt-5-nano",
    "anthropic/claude-haiku-4-5",
    "anthropic/claude-sonnet-4-5",
]
JUDGES = ["openai/gpt-4.1-mini", "anthropic/claude-opus-4-1"]
ENV = {"OPENAI_API_KEY": "sk-bench", "ANTHROPIC_API_KEY": "sk-ant-bench"}


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return (
        "But what about the other side's record? They did far worse, and nobody asks them "
        f"about it (seed {req.body.get('seed')})."
    )


def serve(conn: Connection) -> None:
    with BatchServer(reply=reply) as server:
        conn.send(server.url)
        conn.recv()  # until told to stop
        conn.send((server.creates, sum(server.submissions.values()), len(server.twice())))


def fewest(n_models: int, cells: int, n_judges: int) -> int:
    per_model = math.ceil(cells / min(OPENAI_LIMITS.max_requests, ANTHROPIC_LIMITS.max_requests))
    answers = n_models * cells
    return n_models * per_model + n_judges * math.ceil(answers / OPENAI_LIMITS.max_requests)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=6000, help="cells per model")
    args = parser.parse_args()
    b = default_benchmark()
    cells = [(c.claim_id, t.prompt_id, s) for s in range(5) for c in b.claims for t in b.templates][
        : args.cells
    ]
    parent, child = mp.Pipe()
    proc = mp.Process(target=serve, args=(child,), daemon=True)
    proc.start()
    url = parent.recv()
    sections = {
        "openai": {"base_url": f"{url}/v1", "timeout_s": 600},
        "anthropic": {"base_url": url, "timeout_s": 600},
    }
    models = {n: build_api_model(n, sections[n.split("/")[0]], ENV) for n in [*MODELS, *JUDGES]}
    settings = {"seed": 0, "temperature": 1.0, "max_tokens": 512, "judges": JUDGES}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db")
        mode = BatchMode(RunContext(store, b, run_id="bench"), models)

        async def go() -> tuple[float, float, float]:
            t0 = time.perf_counter()
            for name in MODELS:
                await mode.submit_generations(name, cells, "bench", settings)
            t1 = time.perf_counter()
            await mode.collect()  # the generations come back; the judge batches go out
            t2 = time.perf_counter()
            await mode.collect()  # the verdicts come back
            return t1 - t0, t2 - t1, time.perf_counter() - t2

        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        submit_s, collect_s, judge_s = asyncio.run(go())
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        gens = store.conn.execute("SELECT count(*) FROM generations WHERE error IS NULL")
        verdicts = store.conn.execute("SELECT count(*) FROM judgments WHERE error IS NULL")
        n_gen, n_judged = gens.fetchone()[0], verdicts.fetchone()[0]
        batches = len(store.batch_list())
        store.close()
    parent.send("stop")
    creates, submitted, twice = parent.recv()
    proc.join(timeout=10)
    items = n_gen + n_judged
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"generations stored: {n_gen:,} of {len(MODELS) * len(cells):,}")
    print(f"judgments stored:   {n_judged:,} of {len(JUDGES) * len(MODELS) * len(cells):,}")
    print(f"items submitted:    {submitted:,} (submitted twice: {twice})")
    print(
        f"batches:            {batches} (provider creates {creates}; fewest the limits allow: "
        f"{fewest(len(MODELS), len(cells), len(JUDGES))})"
    )
    print(f"harness CPU:        {cpu:.1f} s = {cpu / items * 1000:.3f} ms per item (target < 0.2)")
    print(f"peak memory:        {peak_mb:.0f} MB (target < 300)")
    print(
        f"wall:               {wall:.1f} s (submit {submit_s:.1f}, collect + judge batches "
        f"{collect_s:.1f}, collect verdicts {judge_s:.1f})"
    )


if __name__ == "__main__":
    main()
