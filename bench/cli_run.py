"""The whole ``deflectbench run`` command, timed as a user times it, against the busiest server's floor.

The streaming bench (``bench/streaming_run.py``) times ``run.execute`` inside one process; a user
times the command: interpreter start-up, imports, the run file, building the models, opening the
store, the run itself and the accounting at the end. This script measures both in one run, side
by side, on the streaming bench's shape: two local wire-format servers in their own processes
(one OpenAI wire, one Anthropic wire), log-normal latency (median 0.2 s, sigma 0.5), 8 requests
in flight each, two subject models and two judges (one of each per server), the quick preset
with 2 samples (240 generations per model, 480 judgments per judge), no cache, ``--no-report``.

The floor is the busiest server's requests x its mean measured service time / 8. Printed per
repeat: the command's wall time and its ratio to the floor, the in-process run's (both SDKs
imported before the first repeat, so every repeat times the run alone), and their difference
(start-up and set-up); and the command's three parts (issue 37), read from the
servers' own clocks (the system's monotonic clock, shared with this process): from the start
to the first request reaching a server, the requests (the first one's arrival to the last
reply), and from the last reply to the exit (accounting, the manifest, the summary table).
Targets: the command within 1.15 x the floor; the first request within 1.5 s; the tail at
most 0.5 s.

Each line also says the CPU seconds the client used and per request sent (a busy machine's wall
time follows them), and when each server got its first request (a provider's lane starts once
its own SDK is loaded: the Anthropic wire's is the slow one). ``--against OTHER/src`` runs that
tree's command in place of the in-process run, alternating: before and after side by side on
the same load.

Beside them, two references for what no run of ours can beat on this machine at this load:

* ``bare SDK``: the same requests per server (each server's models' generations and its judges'
  judgments, with the bodies our models build), sent by the official SDK clients alone, 8 in
  flight per server, with both SDKs imported and the clients made before the clock starts: no
  store, no judging, no set-up, no dependency between a generation and its judgments. Its
  ratio is the floor's overhead this machine adds now (loopback HTTP, the servers' own Python,
  the last requests' long tail, the load).
* each SDK's import, timed once in a fresh interpreter (wall and CPU): what a command must
  spend before that provider's first request. Under the GIL the imports run one after the
  other, so the last lane cannot start before about their sum.

The command's ratio less the bare SDK client's is what start-up and our code add.

Run: ``.venv/bin/python bench/cli_run.py [--repeat 2] [--samples 2] [--against /tmp/before/src]
[--no-sdk]``.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "bench")]

import multiprocessing as mp  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from multiprocessing.connection import Connection  # noqa: E402
from typing import Any  # noqa: E402

from streaming_run import (  # noqa: E402
    TWO,
    Server,
    ServerProcess,
    lognormal_median,
    reply,
    sections,
)

from deflectbench.benchmark import default_benchmark  # noqa: E402
from deflectbench.config import build_models, resolve_plan  # noqa: E402
from deflectbench.execute import RunOptions, execute  # noqa: E402
from deflectbench.models import sdk_loader  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from support.servers import FakeLLMServer  # noqa: E402

#: The targets: the whole command against the floor, its first request, its tail.
TARGET_RATIO, TARGET_FIRST_S, TARGET_TAIL_S = 1.15, 1.5, 0.5


def _serve_timed(conn: Connection, kwargs: dict[str, Any]) -> None:
    """streaming_run's server, also handing back when each request was served."""
    server = FakeLLMServer(record=False, reply=reply, **kwargs).start()
    conn.send(server.url)
    conn.recv()  # "stop"
    stats = server.stats
    conn.send({"service_times": stats.service_times, "intervals": stats.service_intervals})
    server.stop()


class TimedServer(ServerProcess):
    """A server in a forked process whose stats say when each request was served."""

    def __enter__(self) -> TimedServer:
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve_timed, args=(child, self.kwargs), daemon=True)
        self.process.start()
        self.url = self.conn.recv()
        return self


@dataclass(frozen=True)
class Timing:
    """One run: its wall time, its floor, and the three parts (monotonic seconds)."""

    wall: float
    floor: float
    first_request: float
    requests: float
    tail: float
    complete: bool
    #: CPU seconds the client used (the command's process, or this one's in process) and the
    #: requests it sent: what a busy machine's wall time depends on.
    cpu: float = float("nan")
    sent: int = 0
    #: Each server's first request, seconds after the start.
    lanes: tuple[tuple[str, float], ...] = ()

    def parts(self) -> str:
        return (
            f"start to first request {self.first_request:4.2f}s, requests {self.requests:5.1f}s "
            f"({self.requests / self.floor:.2f} x the floor), last reply to exit {self.tail:4.2f}s"
            f"; CPU {self.cpu:4.1f}s ({1000 * self.cpu / max(self.sent, 1):.1f} ms a request)"
            + "; first request per server: "
            + ", ".join(f"{name} {at:4.2f}s" for name, at in self.lanes)
        )


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return str(v)


def run_file(path: Path, servers: list[Server], urls: dict[str, str], samples: int) -> Path:
    """The run file a user would write for this shape."""
    models = [m for s in servers for m in s.models]
    judges = [j for s in servers for j in s.judges]
    lines = [
        "[run]",
        f"models = [{', '.join(f'{m!r}' for m in models)}]".replace("'", '"'),
        f"judges = [{', '.join(f'{j!r}' for j in judges)}]".replace("'", '"'),
        'preset = "quick"',
        f"runs = {samples}",
        "cache = false",
        "",
    ]
    for name, section in sections(servers, urls).items():
        lines.append(f"[providers.{name}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in section.items()]
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def floor_of(servers: list[Server], procs: dict[str, TimedServer]) -> float:
    floor = 0.0
    for s in servers:
        times = procs[s.name].stats["service_times"]
        if times:
            floor = max(floor, len(times) * (sum(times) / len(times)) / s.limit)
    return floor


def bare_sdk(
    servers: list[Server], urls: dict[str, str], samples: int
) -> tuple[float, float, float]:
    """The bare SDK clients' requests (see the module's docstring): when they started and
    ended (monotonic) and the CPU seconds they took, the SDKs and clients ready before."""
    from deflectbench.judging.rubric import JUDGMENT_SCHEMA
    from deflectbench.models.base import GenerationParams, Message

    plan = resolve_plan(
        default_benchmark(),
        models=[m for s in servers for m in s.models],
        judges=[j for s in servers for j in s.judges],
        preset="quick",
        runs=samples,
    )
    cells = len(plan.cells)
    built = build_models(plan.models, plan.judges, sections(servers, urls))
    answer = [Message("user", "Claim: the sea is rising. " * 20)]
    judging = [
        Message("system", "You judge the answer. " * 60),
        *answer,
        Message("user", "x" * 400),
    ]
    work = []
    for s in servers:  # one client per server; its share: the run's requests to that server
        model = built[(s.models or s.judges)[0]]
        generations = len(s.models) * cells
        judgments = len(s.judges) * len(plan.models) * cells
        gen = model.request_body(answer, GenerationParams(max_tokens=512, seed=1))
        judge = model.request_body(judging, GenerationParams(0.0, 512, 1, JUDGMENT_SCHEMA))
        work.append((model, [gen] * generations + [judge] * judgments, s.limit))

    async def server_share(model: Any, bodies: list[dict[str, Any]], limit: int) -> None:
        client = model._client
        create = (
            client.messages.create
            if model.sdk_package == "anthropic"
            else client.chat.completions.create
        )

        async def worker() -> None:
            while bodies:
                await create(**bodies.pop())

        await asyncio.gather(*(worker() for _ in range(limit)))

    async def run() -> tuple[float, float, float]:
        for model, _, _ in work:
            await model.ready()  # the SDK imported and the client made before the clock
        started, cpu = time.monotonic(), time.process_time()
        await asyncio.gather(*(server_share(*w) for w in work))
        ended, cpu = time.monotonic(), time.process_time() - cpu
        for model in built.values():
            await model.aclose()
        return started, ended, cpu

    return asyncio.run(run())


def sdk_imports() -> list[tuple[str, float, float]]:
    """Each SDK's import in a fresh interpreter (compiled bytecode): its package, wall and CPU
    seconds, over the interpreter's own start."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = []
    for package in ("", "openai", "anthropic"):
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", f"import {package or 'sys'}"], env=env, check=True)
        wall = time.monotonic() - started
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append((package, wall, now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime))
    _, base_wall, base_cpu = out.pop(0)
    return [(p, w - base_wall, c - base_cpu) for p, w, c in out]


def measure(how: str, servers: list[Server], samples: int, against: Path | None = None) -> Timing:
    """One run, by the command (``against``: another tree's ``src/``, e.g. the commit before),
    in this process, or by the bare SDK clients (``sdk``)."""
    procs = {
        s.name: TimedServer(latency=lognormal_median(s.median_s, s.sigma), seed=hash(s.name) % 97)
        for s in servers
    }
    for p in procs.values():
        p.__enter__()
    try:
        urls = {name: p.url for name, p in procs.items()}
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"
            if how in ("command", "against"):
                config = run_file(Path(tmp) / "run.toml", servers, urls, samples)
                cmd = [str(Path(sys.executable).parent / "deflectbench"), "run"]
                cmd += ["--config", str(config), "--db", str(db), "--no-report"]
                # As installed: the children read compiled bytecode, whatever the shell says.
                env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
                env["COLUMNS"] = "120"
                tree = against if how == "against" and against is not None else ROOT / "src"
                compileall.compile_dir(str(Path(tree) / "deflectbench"), quiet=1)
                if how == "against" and against is not None:
                    env["PYTHONPATH"] = str(against)
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.monotonic()
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
                ended = time.monotonic()
                now = resource.getrusage(resource.RUSAGE_CHILDREN)  # the servers still run
                cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
                complete = p.returncode == 0
                if not complete:
                    print(p.stdout[-2000:], p.stderr[-2000:], file=sys.stderr)
            elif how == "bare SDK":
                started, ended, cpu = bare_sdk(servers, urls, samples)
                complete = True
            else:
                b = default_benchmark()
                models = [m for s in servers for m in s.models]
                judges = [j for s in servers for j in s.judges]
                plan = resolve_plan(b, models=models, judges=judges, preset="quick", runs=samples)
                started, cpu_before = time.monotonic(), time.process_time()
                built = build_models(plan.models, plan.judges, sections(servers, urls))
                with Store.open(db) as store:
                    report = asyncio.run(execute(store, b, plan, built, RunOptions(cache=False)))
                ended, cpu = time.monotonic(), time.process_time() - cpu_before
                complete = report.complete
    finally:
        for p in procs.values():
            p.__exit__()
    intervals = [i for p in procs.values() for i in p.stats["intervals"]]
    lanes = tuple(
        (name, min((a for a, _ in p.stats["intervals"]), default=ended) - started)
        for name, p in procs.items()
    )
    first = min((a for a, _ in intervals), default=ended)
    last = max((b for _, b in intervals), default=ended)
    return Timing(
        ended - started,
        floor_of(servers, procs),
        first - started,
        last - first,
        ended - last,
        complete,
        cpu,
        len(intervals),
        lanes,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, alternating")
    parser.add_argument("--samples", type=int, default=2, help="samples per cell (quick preset)")
    parser.add_argument(
        "--against", type=Path, help="another tree's src/ whose command runs instead of in process"
    )
    parser.add_argument("--no-sdk", action="store_true", help="without the bare SDK client's run")
    args = parser.parse_args(argv)
    other = "against" if args.against else "in-process"
    print(
        f"two servers (openai + anthropic wire), limit 8 each, 2 models + 2 judges, quick x "
        f"{args.samples} samples; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    imports = sdk_imports()
    print(
        "each SDK's import in a fresh interpreter: "
        + ", ".join(f"{p} {w:.2f}s wall, {c:.2f}s CPU" for p, w, c in imports)
    )
    # The in-process run times the run alone: both SDKs loaded here first (before, the first
    # repeat's in-process run paid for their imports and the later ones did not).
    for package in ("openai", "anthropic"):
        sdk_loader.load(package)
    hows = ["command", other] + ([] if args.no_sdk else ["bare SDK"])
    timings: dict[str, list[Timing]] = {how: [] for how in hows}
    for i in range(args.repeat):
        for how in hows:
            t = measure(how, TWO, args.samples, args.against)
            timings[how].append(t)
            print(
                f"  repeat {i + 1} {how:>10}: wall {t.wall:5.1f}s floor {t.floor:5.1f}s = "
                f"{t.wall / t.floor:.2f} x; {t.parts()}" + ("" if t.complete else " INCOMPLETE")
            )

    left_out = {how: sum(not t.complete for t in ts) for how, ts in timings.items()}
    if any(left_out.values()):
        # A run that did not finish every cell says nothing about the speed of one that does.
        print(
            "left out of the medians (incomplete): "
            + ", ".join(f"{n} of {args.repeat} {how}" for how, n in left_out.items() if n)
        )
        timings = {how: [t for t in ts if t.complete] for how, ts in timings.items()}
        if not all(timings.values()):
            sys.exit("no complete run of " + ", ".join(h for h, ts in timings.items() if not ts))

    def median(how: str, of: str) -> float:
        return statistics.median(getattr(t, of) for t in timings[how])

    cmd = statistics.median(t.wall / t.floor for t in timings["command"])
    inproc = statistics.median(t.wall / t.floor for t in timings[other])
    first, tail = median("command", "first_request"), median("command", "tail")
    requests = statistics.median(t.requests / t.floor for t in timings["command"])
    cpu = {how: median(how, "cpu") for how in timings}

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    print(
        f"median: the command {cmd:.2f} x the floor (target <= {TARGET_RATIO}: "
        f"{verdict(cmd <= TARGET_RATIO)}), {other} {inproc:.2f} x; the difference "
        f"{cmd - inproc:.2f} x; CPU: the command {cpu['command']:.1f}s, {other} "
        f"{cpu[other]:.1f}s\n"
        f"the command's parts: start to first request {first:.2f}s (target <= {TARGET_FIRST_S}"
        f": {verdict(first <= TARGET_FIRST_S)}), requests {requests:.2f} x the floor, last "
        f"reply to exit {tail:.2f}s (target <= {TARGET_TAIL_S}: {verdict(tail <= TARGET_TAIL_S)})"
    )
    if "bare SDK" in timings:
        bare = statistics.median(t.wall / t.floor for t in timings["bare SDK"])
        imported = sum(c for _, _, c in imports)
        floor = statistics.median(t.floor for t in timings["command"])
        print(
            f"the bare SDK client {bare:.2f} x the floor (CPU {median('bare SDK', 'cpu'):.1f}s): "
            f"the command adds {cmd - bare:.2f} x; the SDKs' imports alone ({imported:.1f}s of "
            f"CPU, one after the other under the GIL) would add {imported / floor:.2f} x to it"
        )


if __name__ == "__main__":
    main()
