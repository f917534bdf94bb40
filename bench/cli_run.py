"""The whole ``deflectbench run`` command, timed as a user times it, against the busiest server's floor.

The streaming bench (``bench/streaming_run.py``) times ``run.execute`` inside one process; a user
times the command: interpreter start-up, imports, the run file, building the models, opening the
store, the run itself and the accounting at the end. This script measures both in one run, side
by side, on the streaming bench's shape: two local wire-format servers in their own processes
(one OpenAI wire, one Anthropic wire), log-normal latency (median 0.2 s, sigma 0.5), 8 requests
in flight each, two subject models and two judges (one of each per server), the quick preset
with 2 samples (240 generations per model, 480 judgments per judge), no cache, ``--no-report``.

The floor is the busiest server's requests x its mean measured service time / 8. Printed per
repeat: the command's wall time and its ratio to the floor, the in-process run's, and their
difference (start-up and set-up). Target: the command within 1.25 x the floor.

Run: ``.venv/bin/python bench/cli_run.py [--repeat 2] [--samples 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "bench")]

from streaming_run import TWO, Server, ServerProcess, lognormal_median, sections  # noqa: E402

from deflectbench.benchmark import default_benchmark  # noqa: E402
from deflectbench.config import build_models, resolve_plan  # noqa: E402
from deflectbench.execute import RunOptions, execute  # noqa: E402
from deflectbench.store import Store  # noqa: E402


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


def floor_of(servers: list[Server], procs: dict[str, ServerProcess]) -> float:
    floor = 0.0
    for s in servers:
        times = procs[s.name].stats["service_times"]
        if times:
            floor = max(floor, len(times) * (sum(times) / len(times)) / s.limit)
    return floor


def measure(how: str, servers: list[Server], samples: int) -> tuple[float, float, bool]:
    """(wall, floor, complete) of one run, by the command or in this process."""
    procs = {
        s.name: ServerProcess(latency=lognormal_median(s.median_s, s.sigma), seed=hash(s.name) % 97)
        for s in servers
    }
    for p in procs.values():
        p.__enter__()
    try:
        urls = {name: p.url for name, p in procs.items()}
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"
            if how == "command":
                config = run_file(Path(tmp) / "run.toml", servers, urls, samples)
                cmd = [str(Path(sys.executable).parent / "deflectbench"), "run"]
                cmd += ["--config", str(config), "--db", str(db), "--no-report"]
                env = {**os.environ, "COLUMNS": "120"}
                started = time.monotonic()
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
                wall = time.monotonic() - started
                complete = p.returncode == 0
                if not complete:
                    print(p.stdout[-2000:], p.stderr[-2000:], file=sys.stderr)
            else:
                b = default_benchmark()
                models = [m for s in servers for m in s.models]
                judges = [j for s in servers for j in s.judges]
                plan = resolve_plan(b, models=models, judges=judges, preset="quick", runs=samples)
                started = time.monotonic()
                built = build_models(plan.models, plan.judges, sections(servers, urls))
                with Store.open(db) as store:
                    report = asyncio.run(
                        execute(store, b, plan, built, RunOptions(use_cache=False))
                    )
                wall = time.monotonic() - started
                complete = report.complete
    finally:
        for p in procs.values():
            p.__exit__()
    return wall, floor_of(servers, procs), complete


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, alternating")
    parser.add_argument("--samples", type=int, default=2, help="samples per cell (quick preset)")
    args = parser.parse_args(argv)
    print(
        f"two servers (openai + anthropic wire), limit 8 each, 2 models + 2 judges, quick x "
        f"{args.samples} samples; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    ratios: dict[str, list[float]] = {"command": [], "in-process": []}
    for i in range(args.repeat):
        row = []
        for how in ("command", "in-process"):
            wall, floor, complete = measure(how, TWO, args.samples)
            ratios[how].append(wall / floor)
            row.append(f"{how}: wall {wall:5.1f}s floor {floor:5.1f}s = {wall / floor:.2f} x")
            if not complete:
                row[-1] += " INCOMPLETE"
        print(f"  repeat {i + 1}: " + "; ".join(row))
    cmd, inproc = statistics.median(ratios["command"]), statistics.median(ratios["in-process"])
    verdict = "met" if cmd <= 1.25 else "NOT met"
    print(
        f"median: the command {cmd:.2f} x the floor (target <= 1.25: {verdict}), in process "
        f"{inproc:.2f} x; start-up and set-up add {cmd - inproc:.2f} x"
    )


if __name__ == "__main__":
    main()
