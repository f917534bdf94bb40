"""How close the engine gets to what a server allows, next to the release's batch scheme.

Three measurements, each against a local fake server running in its own process (so its CPU
and GIL do not distort the client's numbers), all through the real OpenAI SDK path:

1. Heavy-tailed latency (log-normal) and a server that serves at most C requests at once.
   The ceiling is C / mean service time. Two numbers per scheme: overall (requests /
   elapsed, including the drain at the end, which matters little over 24,000 requests) and
   steady (share of the server's C slots kept busy while work remained). The release's
   scheme (batches of 50 awaited with ``asyncio.gather`` behind ``asyncio.Semaphore(15)``)
   runs against an identical server in the same run.
2. A server enforcing a requests-per-minute limit (answering 429 beyond it): throughput as a
   fraction of the limit, and the share of 429s.
3. Harness CPU per request: with a zero-latency in-process fake ``call`` (engine only), and
   through the SDK for information.

Run: ``PYTHONPATH=src .venv/bin/python bench/engine_throughput.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from deflectbench.engine import EnginePolicy, Failure, run_items  # noqa: E402
from deflectbench.models.base import (  # noqa: E402
    Completion,
    GenerationParams,
    Message,
    ModelError,
)
from deflectbench.models.openai_compat import OpenAICompatModel  # noqa: E402
from support.servers import FakeLLMServer, lognormal  # noqa: E402

RELEASE_BATCH = 50
RELEASE_SEMAPHORE = 15
PARAMS = GenerationParams(max_tokens=64)


# -- a server in a child process --------------------------------------------------------------


def _serve(conn: Connection, kwargs: dict[str, Any]) -> None:
    server = FakeLLMServer(record=False, **kwargs).start()
    conn.send(server.url)
    conn.recv()  # wait for "stop"
    stats = server.stats
    conn.send(
        {
            "requests": stats.requests,
            "rejected_rpm": stats.rejected_rpm,
            "service_times": stats.service_times,
            "service_intervals": stats.service_intervals,
            "admitted_at": stats.admitted_at,
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


# -- the two schemes --------------------------------------------------------------------------


@dataclass
class Run:
    requests: int
    elapsed: float
    cpu_s: float
    first_dispatch: float
    last_dispatch: float
    ok: int
    rate_limited: int = 0


def model_for(url: str) -> OpenAICompatModel:
    return OpenAICompatModel("local/bench", "bench", base_url=f"{url}/v1", api_key="EMPTY")


async def run_engine(url: str, items: list[str], policy: EnginePolicy) -> Run:
    model = model_for(url)
    dispatched: list[float] = []
    ok = 0

    async def call(prompt: str) -> Completion:
        dispatched.append(time.monotonic())
        return await model.complete([Message("user", prompt)], PARAMS)

    def on_result(item: str, completion: Completion | None, failure: Failure | None) -> None:
        nonlocal ok
        ok += completion is not None

    cpu, started = time.process_time(), time.monotonic()
    stats = await run_items(items, call, on_result, policy)
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    await model.aclose()
    return Run(stats.requests, elapsed, cpu, dispatched[0], dispatched[-1], ok, stats.rate_limited)


async def run_release(url: str, items: list[str]) -> Run:
    """The public release's scheme: gather batches of 50 behind a Semaphore(15)."""
    model = model_for(url)
    semaphore = asyncio.Semaphore(RELEASE_SEMAPHORE)
    dispatched: list[float] = []
    ok = 0

    async def one(prompt: str) -> None:
        nonlocal ok
        async with semaphore:
            dispatched.append(time.monotonic())
            try:
                await model.complete([Message("user", prompt)], PARAMS)
                ok += 1
            except ModelError:
                pass

    cpu, started = time.process_time(), time.monotonic()
    for i in range(0, len(items), RELEASE_BATCH):
        await asyncio.gather(*(one(p) for p in items[i : i + RELEASE_BATCH]))
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    await model.aclose()
    return Run(len(dispatched), elapsed, cpu, dispatched[0], dispatched[-1], ok)


def busy_share(intervals: Iterable[tuple[float, float]], t0: float, t1: float, slots: int) -> float:
    """Share of ``slots`` server slots in service over [t0, t1]."""
    busy = sum(max(0.0, min(end, t1) - max(start, t0)) for start, end in intervals)
    return busy / (slots * (t1 - t0))


# -- the measurements -------------------------------------------------------------------------


def throughput_vs_ceiling(
    n: int, cap: int, mean_s: float, sigma: float, schemes: tuple[str, ...]
) -> list[list[str]]:
    labels = {
        "engine": f"engine, max_concurrency C={cap}",
        "engine-2C": f"engine, max_concurrency 2C={2 * cap}",
        "release": f"release (gather {RELEASE_BATCH}, Sem {RELEASE_SEMAPHORE})",
    }
    rows = []
    runs: dict[str, Run] = {}
    for scheme in schemes:
        items = [f"{scheme} request {i}" for i in range(n)]
        # Same seed: every scheme meets the same sequence of service times.
        server = ServerProcess(
            latency=lognormal(mean_s, sigma), concurrency_cap=cap, cap_mode="queue", seed=1
        )
        with server:
            if scheme == "release":
                run = asyncio.run(run_release(server.url, items))
            else:
                concurrency = cap if scheme == "engine" else 2 * cap
                policy = EnginePolicy(max_concurrency=concurrency, timeout_s=60.0)
                run = asyncio.run(run_engine(server.url, items, policy))
        times = server.stats["service_times"]
        mean = sum(times) / len(times)
        ceiling = cap / mean
        throughput = run.ok / run.elapsed
        steady = busy_share(
            server.stats["service_intervals"], run.first_dispatch, run.last_dispatch, cap
        )
        runs[scheme] = run
        rows.append(
            [
                labels[scheme],
                f"{run.ok}",
                f"{run.elapsed:.1f}s",
                f"{throughput:.1f}/s",
                f"{ceiling:.1f}/s",
                f"{throughput / ceiling:.3f}",
                f"{steady:.3f}",
                f"{1e3 * run.cpu_s / run.requests:.2f}",
            ]
        )
    ratio = (runs["engine"].ok / runs["engine"].elapsed) / (
        runs["release"].ok / runs["release"].elapsed
    )
    rows.append(["engine (C) / release throughput", "", "", f"x{ratio:.2f}", "", "", "", ""])
    return rows


def rpm_limit(n: int, limit_rpm: float, window_s: float, paced: bool) -> list[str]:
    items = [f"rpm request {i}" for i in range(n)]
    with ServerProcess(
        latency=lognormal(0.2, 1.0), rpm_limit=limit_rpm, rpm_window_s=window_s, seed=2
    ) as server:
        policy = EnginePolicy(
            max_concurrency=16,
            timeout_s=60.0,
            requests_per_minute=limit_rpm if paced else None,
            max_rate_limit_retries=100,
        )
        run = asyncio.run(run_engine(server.url, items, policy))
    admitted = server.stats["admitted_at"]
    rate = (len(admitted) - 1) / (admitted[-1] - admitted[0])
    total = server.stats["requests"]
    rejected = server.stats["rejected_rpm"]
    label = "engine, RPM pacer on" if paced else "engine, no pacer (AIMD + Retry-After only)"
    return [
        label,
        f"{run.ok}",
        f"{run.elapsed:.1f}s",
        f"{rate * 60:.0f}/min",
        f"{limit_rpm:.0f}/min",
        f"{rate * 60 / limit_rpm:.3f}",
        f"{rejected}/{total} = {100 * rejected / total:.2f}%",
    ]


def cpu_per_request_fake(n: int) -> float:
    completion = Completion(text="ok")

    async def call(item: int) -> Completion:
        return completion

    def on_result(item: int, completion: Completion | None, failure: Failure | None) -> None:
        pass

    started = time.process_time()
    asyncio.run(run_items(range(n), call, on_result, EnginePolicy(max_concurrency=16)))
    return (time.process_time() - started) / n


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        cells = zip(row, widths, strict=True)
        return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(cells))

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs (about a minute)")
    parser.add_argument(
        "--requests",
        type=int,
        default=None,
        help="requests per scheme in part 1 (default 1500; more shrinks the end-of-run drain)",
    )
    args = parser.parse_args(argv)
    n = args.requests or (600 if args.quick else 1500)
    cap, mean_s, sigma = 15, 0.2, 1.0
    timer = time.monotonic()

    print(
        f"1. Throughput: server cap C={cap}, log-normal latency mean {mean_s}s sigma {sigma}, {n} requests each"
    )
    headers = [
        "scheme",
        "ok",
        "time",
        "throughput",
        "ceiling C/mean",
        "overall",
        "steady",
        "CPU ms/req",
    ]
    schemes = ("engine", "release") if args.quick else ("engine", "engine-2C", "release")
    rows: list[list[str]] = throughput_vs_ceiling(n, cap, mean_s, sigma, schemes)
    print(table(headers, rows))
    print(
        "overall = throughput / ceiling, including the drain at the end (the last slow replies"
        " of a heavy tail);\nsteady = share of the C server slots busy from first to last"
        " dispatch (what a 24,000-request run sees)."
    )

    limit, window = 1200.0, 5.0
    m = 300 if args.quick else 600
    print(
        f"\n2. Server-enforced limit {limit:.0f} requests/min (sliding {window:.0f}s window), latency mean 0.2s"
    )
    headers = ["scheme", "ok", "time", "admitted rate", "limit", "fraction", "429s"]
    rows2 = [rpm_limit(m, limit, window, paced=True)]
    if not args.quick:
        rows2.append(rpm_limit(m // 2, limit, window, paced=False))
    print(table(headers, rows2))
    if not args.quick:
        print(
            "(without the pacer a sliding window admits a whole window's quota at once, so a short"
            " run can exceed the per-minute rate;\n the pacer is what keeps a long run at the limit"
            " without 429s.)"
        )

    k = 50_000
    fake = cpu_per_request_fake(k)
    print("\n3. Harness CPU per request")
    rows3 = [
        ["engine only (zero-latency in-process call)", f"{1e3 * fake:.3f} ms"],
        ["engine + OpenAI SDK + HTTP (client process)", rows[0][-1] + " ms"],
    ]
    print(table(["path", "CPU/request"], rows3))
    print(f"\ntotal bench time {time.monotonic() - timer:.0f}s")


if __name__ == "__main__":
    main()
