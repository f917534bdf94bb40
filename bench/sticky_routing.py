"""Claim-sticky routing over a model's endpoints: the share of requests that reach the replica
already holding their claim's prefix.

Three local servers stand for three serving-engine replicas (vLLM, SGLang), each with its own
concurrency limit; a paper-shaped workload (claims x 15 templates x samples, claims outer, as a
run orders its cells) is sent through one multi-endpoint model, once routed by claim (what a run
does) and once without keys (the previous least-loaded choice). A request "hits" when the
replica it reached had already served a request of the same claim: its prefix is cached there.
Counted at the servers, not by the router. Also printed: wall time, so stickiness is seen not to
cost throughput.

    .venv/bin/python bench/sticky_routing.py [--claims 16] [--samples 5] [--limit 8] [--run]

This measures the router alone. ``--run`` benches it as a run instead (bench/sticky_run.py:
``deflectbench run`` with a model and a judge on three local replicas, one killed mid-run).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from deflectbench.models.base import GenerationParams, Message  # noqa: E402
from deflectbench.models.endpoints import MultiEndpointModel, routed  # noqa: E402
from deflectbench.models.providers import build_api_model  # noqa: E402
from support.servers import FakeLLMServer  # noqa: E402

TEMPLATES = 15


def hit_share(servers: list[FakeLLMServer]) -> tuple[float, float]:
    """(share of requests that reached the replica holding their claim's prefix: the one that
    served the claim's first request; share of requests whose very prompt that replica had
    served before: the 5 samples of one claim and template are one prompt)."""
    received = sorted(
        (r.received_at, i, r.prompt) for i, s in enumerate(servers) for r in s.requests
    )
    holder: dict[str, int] = {}
    seen: set[tuple[int, str]] = set()
    on_holder = same_prompt = 0
    for _, i, prompt in received:
        claim = prompt.split("|", 1)[0]
        on_holder += holder.setdefault(claim, i) == i
        same_prompt += (i, prompt.rsplit("|", 1)[0]) in seen
        seen.add((i, prompt.rsplit("|", 1)[0]))
    n = max(len(received), 1)
    return on_holder / n, same_prompt / n


async def workload(model: MultiEndpointModel, claims: int, samples: int, sticky: bool) -> None:
    gate = asyncio.Semaphore(model.limits.max_concurrency or 1)  # the engine's limit

    async def one(claim: int, template: int, sample: int) -> None:
        async with gate:
            with routed(f"claim {claim}" if sticky else None):
                prompt = f"C{claim}|T{template}|S{sample}"
                await model.complete([Message("user", prompt)], GenerationParams(seed=sample))

    jobs = []
    for c in range(claims):  # claims outer, as a run's cells are
        for t in range(TEMPLATES):
            for s in range(samples):
                jobs.append(asyncio.ensure_future(one(c, t, s)))
                await asyncio.sleep(0)
    await asyncio.gather(*jobs)
    await model.aclose()


def measure(claims: int, samples: int, limit: int, sticky: bool) -> tuple[float, float, float]:
    servers = [FakeLLMServer(latency=0.02, record=True).start() for _ in range(3)]
    try:
        section = {
            "endpoints": [
                {"base_url": s.openai_base_url, "max_concurrency": limit} for s in servers
            ]
        }
        model = build_api_model("cluster/bench-model", section, {})
        assert isinstance(model, MultiEndpointModel)
        start = time.perf_counter()
        asyncio.run(workload(model, claims, samples, sticky))
        wall = time.perf_counter() - start
        share, same = hit_share(servers)
        return share, same, wall
    finally:
        for s in servers:
            s.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=16)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--limit", type=int, default=8, help="concurrency per replica")
    ap.add_argument("--run", action="store_true", help="bench a real run (bench/sticky_run.py)")
    args = ap.parse_args()
    if args.run:
        sys.path.insert(0, str(Path(__file__).parent))
        import sticky_run

        sys.argv = [
            sys.argv[0],
            *(f"--{k}={getattr(args, k)}" for k in ("claims", "samples", "limit")),
        ]
        sticky_run.main()
        return
    n = args.claims * TEMPLATES * args.samples
    print(
        f"3 replicas x {args.limit} in flight, {args.claims} claims x 15 templates x "
        f"{args.samples} samples = {n} requests"
    )
    for sticky in (False, True):
        share, same, wall = measure(args.claims, args.samples, args.limit, sticky)
        name = "claim-sticky" if sticky else "least-loaded"
        print(
            f"{name:>13}: {share:6.1%} of requests on the replica holding their claim's "
            f"prefix; {same:6.1%} on a replica that had served the same prompt; {wall:.2f} s"
        )


if __name__ == "__main__":
    main()
