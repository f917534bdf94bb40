"""The bundled model in ``deflectbench run`` against bare llama.cpp on the same prompts, idle and busy.

Issue 37: the run's threads follow the cores other processes leave free (re-checked between
generations); bare llama.cpp (llama-cpp-python called directly, nothing of DeflectBench in the
loop) runs the same prompts with the best thread count for the moment, found by trying every
count on the first prompts. Two conditions, each measured side by side (the command, then bare
llama.cpp, right after each other):

1. idle: nothing of ours besides the measurement (other users of the machine may still run:
   the other processes' load is printed, read from /proc over 2 s before the condition);
2. busy: one other CPU-bound process (``python -c "while True: pass"``) for the whole condition.

The command: ``deflectbench run -m local/smollm2 -j lexical --claims C --templates T...
--no-cache --no-report`` on a fresh results file (one claim x N templates). Its tokens per
second: the output tokens of its generations over the time from the first generation's start to
the last one's end (read from the store's latency and storage times), so the interpreter's
start-up and the model's load are left out, as they are for bare llama.cpp, whose figure is its
tokens over the wall time of the same prompts in a loop. Printed per condition: both figures,
the threads each used, and the ratio (target >= 0.85 in both). ``--bare-threads 2`` holds bare
llama.cpp at 2 threads in both conditions (the issue's reference: bare llama.cpp with 2
threads) instead of its best count.

Run: ``.venv/bin/python bench/local_threads.py [--templates 15] [--max-tokens 256]
[--bare-threads 2]`` on a quiet machine (it prints the other processes' load first).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]

from deflectbench.benchmark import default_benchmark  # noqa: E402
from deflectbench.config import resolve_plan  # noqa: E402
from deflectbench.models.free_cores import read_proc, usable_cores  # noqa: E402
from deflectbench.models.llama_local import smollm2_path  # noqa: E402

TARGET = 0.85
#: ``deflectbench`` with its plain progress log every 5 s instead of every minute (to read the
#: threads it says it uses).
COMMAND = (
    "import sys; from deflectbench.cli.live import LiveBoard; "
    "LiveBoard.__init__.__kwdefaults__['log_every_s'] = 5.0; "
    "from deflectbench.cli import main; sys.argv[0] = 'deflectbench'; main()"
)


@dataclass
class Prompt:
    text: str
    seed: int
    temperature: float
    max_tokens: int


def other_load(seconds: float = 2.0) -> float:
    """Cores the other processes keep busy over ``seconds`` (this one is idle meanwhile)."""
    before = read_proc()
    time.sleep(seconds)
    after = read_proc()
    if before is None or after is None:
        return float("nan")
    ticks_per_core = (after.total - before.total) / len(usable_cores())
    return ((after.busy - before.busy) - (after.own - before.own)) / ticks_per_core


def the_command(
    claim: str, templates: list[str], max_tokens: int
) -> tuple[float, float, list[Prompt], str]:
    """(tokens/s over the generations' span, tokens/s over their own latencies, the prompts it
    sent, the threads it said it used) of ``deflectbench run``."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        cmd = [sys.executable, "-c", COMMAND, "run", "-m", "local/smollm2"]
        cmd += ["-j", "lexical", "--claims", claim, "--templates", ",".join(templates)]
        cmd += ["--max-tokens", str(max_tokens), "--no-cache", "--no-report", "--db", str(db)]
        env = {k: v for k, v in os.environ.items() if k != "DEFLECTBENCH_THREADS"}
        env.update(COLUMNS="200")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
        if p.returncode != 0:
            sys.exit(f"deflectbench run failed ({p.returncode}): {p.stderr[-2000:]}")
        with sqlite3.connect(db) as con:
            rows = con.execute(
                "SELECT prompt, params_json, output_tokens, latency_s, created_at "
                "FROM generations WHERE error IS NULL ORDER BY created_at"
            ).fetchall()
    prompts = []
    for prompt, params_json, *_ in rows:
        params = json.loads(params_json)
        prompts.append(
            Prompt(
                prompt,
                int(params.get("seed") or 0),
                float(params.get("temperature", 1.0)),
                int(params.get("max_tokens") or max_tokens),
            )
        )
    tokens = sum(r[2] for r in rows)
    stored = [datetime.fromisoformat(r[4]).timestamp() for r in rows]
    start = min(t - lat for t, lat in zip(stored, (r[3] for r in rows), strict=True))
    said = re.findall(r"\d+ threads? \([^)]*\)", p.stderr)
    note = ", then ".join(dict.fromkeys(said)) if said else "(no progress line)"
    latency = sum(r[3] for r in rows)
    return tokens / (max(stored) - start), tokens / latency, prompts, note


def bare(prompts: list[Prompt], threads: int, llama: Any = None) -> tuple[float, Any]:
    """Tokens/s of llama-cpp-python on ``prompts`` with ``threads`` threads (as the run asks
    them: the cache reset before each, the same seed, temperature and cap)."""
    import llama_cpp

    if llama is None:
        llama = llama_cpp.Llama(model_path=str(smollm2_path()), n_ctx=2048, n_threads=threads,
                                n_threads_batch=threads, verbose=False)  # fmt: skip
    llama_cpp.llama_set_n_threads(llama.ctx, threads, threads)
    tokens, started = 0, time.perf_counter()
    for p in prompts:
        llama.reset()
        out = llama.create_chat_completion(
            messages=[{"role": "user", "content": p.text}],
            temperature=p.temperature,
            max_tokens=p.max_tokens,
            seed=p.seed,
        )
        tokens += int(out["usage"]["completion_tokens"])
    return tokens / (time.perf_counter() - started), llama


def best_bare(prompts: list[Prompt], probe: int = 2, threads: int = 0) -> tuple[float, int]:
    """Bare llama.cpp's tokens/s with ``threads`` threads, or (0) the best thread count (each
    count tried on the first ``probe`` prompts), on every prompt."""
    cores = len(usable_cores())
    llama, rates = None, {}
    for n in [threads] if threads else range(1, min(cores, 4) + 1):
        rates[n], llama = bare(prompts[:probe], n, llama)
    best = max(rates, key=lambda n: rates[n])
    rate, llama = bare(prompts, best, llama)
    llama.close()
    return rate, best


def condition(
    name: str, claim: str, templates: list[str], max_tokens: int, bare_threads: int = 0
) -> float:
    others = other_load()
    load = os.getloadavg()[0]
    ours, in_calls, prompts, note = the_command(claim, templates, max_tokens)
    theirs, best = best_bare(prompts, threads=bare_threads)
    ratio = ours / theirs
    print(
        f"  {name:>5} (other load {others:.2f} cores, load average {load:.2f}): "
        f"deflectbench run {ours:5.1f} tok/s ({in_calls:.1f} within its llama.cpp calls) "
        f"[{note}]; bare llama.cpp {theirs:5.1f} tok/s "
        f"({best} thread{'s' if best > 1 else ''}, {'as asked' if bare_threads else 'the best'}"
        f"); ratio {ratio:.2f} x"
    )
    return ratio


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--templates", type=int, default=15, help="templates of one claim")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument(
        "--bare-threads", type=int, default=0, help="bare llama.cpp's threads (0: its best)"
    )
    args = parser.parse_args(argv)
    plan = resolve_plan(default_benchmark(), models=["local/smollm2"], judges=["lexical"],
                        preset="quick")  # fmt: skip
    claim = plan.cells[0][0]
    templates = [t for c, t, _ in plan.cells if c == claim][: args.templates]
    print(
        f"local/smollm2: {len(templates)} generations ({claim}), max_tokens {args.max_tokens}, "
        f"{len(usable_cores())} cores"
    )
    ratios = {"idle": condition("idle", claim, templates, args.max_tokens, args.bare_threads)}
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.0)
        ratios["busy"] = condition("busy", claim, templates, args.max_tokens, args.bare_threads)
    finally:
        spinner.kill()
        spinner.wait()
    met = all(r >= TARGET for r in ratios.values())
    print(
        "ratios: "
        + ", ".join(f"{k} {v:.2f} x" for k, v in ratios.items())
        + f" (target >= {TARGET} in both: {'met' if met else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
