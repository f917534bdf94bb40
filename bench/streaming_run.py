"""A whole run at the speed of its busiest provider: the streaming run next to today's order.

Two measurements, each run twice side by side against local wire-format servers, each server
in its own process (so its threads do not share the client's GIL), all through the official
SDKs and ``run.execute`` (what ``deflectbench run`` calls):

1. Two servers (one speaking the OpenAI wire, one the Anthropic wire), log-normal latency
   (median 0.2 s, sigma 0.5), each provider section allowing 8 requests in flight: two subject
   models and two judges, one of each on each server, the quick preset with 2 samples (240
   generations per model, 480 judgments per judge). The floor is the busiest server's
   requests x its mean latency / 8. The sequential order is the one runs had before: model 1,
   then model 2, then judge 1 over everything, then judge 2 (the same stage functions, one at
   a time). Printed: wall time, its ratio to the floor, and the most requests in flight counted
   at each server.
2. The paper's shape scaled down: 4 models and 2 judges on 4 servers with different latencies
   and limits (the judges share their servers with two of the models, as in the paper); the
   ratio of each order to the floor.

Run: ``PYTHONPATH=src .venv/bin/python bench/streaming_run.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing as mp
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from deflectbench.benchmark import Benchmark, default_benchmark  # noqa: E402
from deflectbench.config import RunPlan, build_models, resolve_plan  # noqa: E402
from deflectbench.execute import RunOptions, execute  # noqa: E402
from deflectbench.judging.judges import ModelJudge  # noqa: E402
from deflectbench.pipeline import (  # noqa: E402
    RunContext,
    generate,
    judge_with_model,
    pending_for_judge,
)
from deflectbench.store import Store  # noqa: E402
from support.fakes import VERDICT, is_judge_request  # noqa: E402
from support.servers import FakeLLMServer, RecordedRequest  # noqa: E402


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return "But what about the other side's record? They did far worse, and nobody asks them."


def kind(req: RecordedRequest) -> str:
    return "judge" if is_judge_request(req) else "generation"


def lognormal_median(median_s: float, sigma: float) -> Callable[[Any], float]:
    mu = math.log(median_s)
    return lambda rng: rng.lognormvariate(mu, sigma)


# -- servers in child processes ---------------------------------------------------------------


def _serve(conn: Connection, kwargs: dict[str, Any]) -> None:
    server = FakeLLMServer(record=False, reply=reply, kind=kind, **kwargs).start()
    conn.send(server.url)
    conn.recv()  # "stop"
    stats = server.stats
    conn.send(
        {
            "requests": stats.requests,
            "max_active": stats.max_active,
            "max_active_by_kind": dict(stats.max_active_by_kind),
            "service_times": stats.service_times,
        }
    )
    server.stop()


class ServerProcess:
    """A :class:`FakeLLMServer` in a forked process; ``stats`` is filled in on exit."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.stats: dict[str, Any] = {}

    def __enter__(self) -> ServerProcess:
        ctx = mp.get_context("fork")  # fork: the latency sampler need not be picklable
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, self.kwargs), daemon=True)
        self.process.start()
        self.url: str = self.conn.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.send("stop")
        self.stats = self.conn.recv()
        self.process.join(timeout=10)


# -- one shape, run both ways -----------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """A provider: its wire, latency, limit, and the models and judges it serves."""

    name: str
    wire: str
    median_s: float
    sigma: float
    limit: int
    models: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()


@dataclass
class Outcome:
    order: str
    wall_s: float
    floor_s: float
    max_in_flight: dict[str, int]
    requests: dict[str, int]
    complete: bool

    @property
    def ratio(self) -> float:
        return self.wall_s / self.floor_s


def sections(servers: list[Server], urls: dict[str, str]) -> dict[str, dict[str, Any]]:
    out = {}
    for s in servers:
        base = urls[s.name] + ("/v1" if s.wire == "openai" else "")
        out[s.name] = {
            "wire": s.wire,
            "base_url": base,
            "max_concurrency": s.limit,
            "timeout_s": 60.0,
        }
    return out


def plan_for(b: Benchmark, servers: list[Server], samples: int) -> RunPlan:
    models = [m for s in servers for m in s.models]
    judges = [j for s in servers for j in s.judges]
    return resolve_plan(b, models=models, judges=judges, preset="quick", runs=samples)


async def streaming(store: Store, b: Benchmark, plan: RunPlan, built: dict[str, Any]) -> bool:
    report = await execute(store, b, plan, built, RunOptions(use_cache=False))
    return report.complete


async def sequential(store: Store, b: Benchmark, plan: RunPlan, built: dict[str, Any]) -> bool:
    """Today's order before this change: each model in turn, then each judge over everything."""
    ctx = RunContext(store, b, use_cache=False)
    try:
        for name in plan.models:
            await generate(ctx, built[name], plan.cells, seed=plan.seed)
        for name in plan.judges:
            pending = pending_for_judge(store, name, b, plan.models)
            judge = ModelJudge(built[name], b.rubric)
            await judge_with_model(ctx, judge, pending)
    finally:
        for model in built.values():
            await model.aclose()
    missing = len(store.pending_judgments(plan.judges[0], benchmark=b.key, retry_errors=True))
    return missing == 0


def measure(order: str, servers: list[Server], samples: int) -> Outcome:
    b = default_benchmark()
    procs = {
        s.name: ServerProcess(latency=lognormal_median(s.median_s, s.sigma), seed=hash(s.name) % 97)
        for s in servers
    }
    for p in procs.values():
        p.__enter__()
    try:
        urls = {name: p.url for name, p in procs.items()}
        plan = plan_for(b, servers, samples)
        built = build_models(plan.models, plan.judges, sections(servers, urls))
        with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "bench.db") as store:
            run = streaming if order == "streaming" else sequential
            started = time.monotonic()
            complete = asyncio.run(run(store, b, plan, built))
            wall = time.monotonic() - started
    finally:
        for p in procs.values():
            p.__exit__()
    floor = 0.0
    for s in servers:
        times = procs[s.name].stats["service_times"]
        if times:
            floor = max(floor, len(times) * (sum(times) / len(times)) / s.limit)
    return Outcome(
        order,
        wall,
        floor,
        {name: p.stats["max_active"] for name, p in procs.items()},
        {name: p.stats["requests"] for name, p in procs.items()},
        complete,
    )


def report(title: str, servers: list[Server], outcomes: list[Outcome]) -> None:
    print(title)
    for s in servers:
        mean = s.median_s * math.exp(s.sigma**2 / 2)
        serves = ", ".join([*s.models, *(f"judge {j}" for j in s.judges)])
        print(
            f"  {s.name} ({s.wire} wire): median {s.median_s}s (mean {mean:.3f}s), "
            f"limit {s.limit}: {serves}"
        )
    width = max(len(o.order) for o in outcomes)
    for o in outcomes:
        flights = ", ".join(
            f"{name} {n}/{s.limit}"
            for (name, n), s in zip(o.max_in_flight.items(), servers, strict=True)
        )
        requests = ", ".join(f"{name} {n}" for name, n in o.requests.items())
        print(
            f"  {o.order:<{width}}  wall {o.wall_s:6.1f}s  floor {o.floor_s:5.1f}s  "
            f"{o.ratio:.2f} x floor  complete={o.complete}"
        )
        print(f"  {'':<{width}}  max in flight at the servers: {flights}; requests: {requests}")


TWO = [
    Server("srva", "openai", 0.2, 0.5, 8, models=("srva/subject-a",), judges=("srva/judge-a",)),
    Server("srvb", "anthropic", 0.2, 0.5, 8, models=("srvb/subject-b",), judges=("srvb/judge-b",)),
]
PAPER = [
    Server("pa", "openai", 0.25, 0.5, 8, models=("pa/model-1",), judges=("pa/judge-1",)),
    Server("pb", "anthropic", 0.2, 0.5, 10, models=("pb/model-2",), judges=("pb/judge-2",)),
    Server("pc", "openai", 0.3, 0.6, 6, models=("pc/model-3",)),
    Server("pd", "openai", 0.15, 0.4, 4, models=("pd/model-4",)),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 sample instead of 2 in part 1")
    args = parser.parse_args(argv)
    timer = time.monotonic()
    samples = 1 if args.quick else 2
    outcomes = [measure(order, TWO, samples) for order in ("streaming", "sequential")]
    report(
        f"1. Two servers, the quick preset x {samples} samples (floor: the busiest server's "
        "requests x its mean service time / its limit)",
        TWO,
        outcomes,
    )
    stream, seq = outcomes
    print(f"  streaming is {seq.wall_s / stream.wall_s:.2f} x faster than the sequential order\n")
    outcomes = [measure(order, PAPER, 1) for order in ("streaming", "sequential")]
    report(
        "2. The paper's shape scaled down: 4 models, 2 judges, 4 servers, the quick preset",
        PAPER,
        outcomes,
    )
    stream, seq = outcomes
    print(
        f"  ratio to the floor: streaming {stream.ratio:.2f}, sequential {seq.ratio:.2f} "
        f"({seq.wall_s / stream.wall_s:.2f} x faster)"
    )
    print(f"\ntotal bench time {time.monotonic() - timer:.0f}s")


if __name__ == "__main__":
    main()
