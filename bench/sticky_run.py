"""Claim-sticky routing in a real run: ``deflectbench run`` against three local OpenAI-wire
replicas (``endpoints = [...]``), a model and a judge both served by them, once with all three
healthy and once with one killed mid-run; stickiness counted per claim at the servers.

A request is on its claim's replica when it reached the replica that served the claim's first
request, or, once that replica is killed, the one the claim's next request went to (the move
counts as one miss); also shown, the stricter share on the replica of the claim's first
request, dead or not. Generation requests are told to their claim by their prompt, a judge's by the answer
it judges (every answer is unique). The run's own lines about the killed replica are printed.

    .venv/bin/python bench/sticky_run.py [--claims 16] [--samples 5] [--limit 8]
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from deflectbench.benchmark.packs import load_pack  # noqa: E402
from support.fakes import is_judge_request  # noqa: E402
from support.replies import unique_reply  # noqa: E402
from support.servers import FakeLLMServer, RecordedRequest  # noqa: E402

ANSWER = re.compile(r"\(answer \d+\)")
COMMAND = (sys.executable, "-m", "deflectbench", "run")


def claims_of(db: Path, servers: list[FakeLLMServer]) -> list[tuple[float, int, str]]:
    """(arrival, replica, claim) of every request the replicas received, oldest first."""
    con = sqlite3.connect(db)
    by_prompt: dict[str, str] = {}
    by_answer: dict[str, str] = {}
    for prompt, response, claim in con.execute(
        "SELECT prompt, response, claim_id FROM generations"
    ):
        by_prompt[prompt] = claim
        found = ANSWER.search(response or "")
        if found:
            by_answer[found.group()] = claim
    out = []
    for i, server in enumerate(servers):
        for r in list(server.requests):
            claim = _claim(r, by_prompt, by_answer)
            if claim is not None:
                out.append((r.received_at, i, claim))
    return sorted(out)


def _claim(r: RecordedRequest, by_prompt: dict[str, str], by_answer: dict[str, str]) -> str | None:
    if not is_judge_request(r):
        return by_prompt.get(r.prompt)
    found = ANSWER.search(str(r.body))
    return by_answer.get(found.group()) if found else None


def sticky(
    received: list[tuple[float, int, str]], dead: int | None, killed_at: float | None
) -> tuple[float, float, int]:
    """(share on the claim's replica: the one that served its first request, or once that
    replica is dead, the one its next request went to, the move counted once as a miss; share
    on the replica of the claim's first request, dead or not; requests counted)."""
    first: dict[str, int] = {}
    holder: dict[str, int] = {}
    on_holder = on_first = 0
    for at, i, claim in received:
        on_first += first.setdefault(claim, i) == i
        held = holder.setdefault(claim, i)
        if held == dead and killed_at is not None and at >= killed_at and i != held:
            holder[claim] = i  # its replica died: the claim moved, one miss
        else:
            on_holder += held == i
    n = max(len(received), 1)
    return on_holder / n, on_first / n, len(received)


def run(claims: list[str], samples: int, limit: int, kill: bool) -> None:
    killed = threading.Event()
    victim = FakeLLMServer(
        reply=unique_reply,
        latency=0.02,
        fault_fn=lambda r: "drop" if killed.is_set() else None,
    )
    servers = [victim.start()]
    servers += [FakeLLMServer(reply=unique_reply, latency=0.02).start() for _ in range(2)]
    total = len(claims) * 15 * samples * 2  # a generation and a verdict per cell
    done = threading.Event()
    killed_at: list[float] = []

    def kill_at_a_third() -> None:
        while not done.is_set():
            if len(victim.requests) >= total // 9:  # a third of its own share
                killed_at.append(time.monotonic())
                killed.set()
                victim.stop()
                return
            done.wait(0.005)

    killer = threading.Thread(target=kill_at_a_third, daemon=True)
    if kill:
        killer.start()
    with tempfile.TemporaryDirectory() as tmp:
        db, config = Path(tmp) / "r.db", Path(tmp) / "run.toml"
        endpoints = ", ".join(
            f'{{ base_url = "{s.openai_base_url}", max_concurrency = {limit} }}' for s in servers
        )
        config.write_text(
            "[run]\n"
            'models = ["cluster/bench-model"]\n'
            'judges = ["cluster/bench-judge"]\n'
            f"samples = {samples}\n"
            'preset = "full"\n'
            f"claims = {claims!r}\n\n".replace("'", '"')
            + f"[providers.cluster]\nendpoints = [{endpoints}]\n"
        )
        start = time.perf_counter()
        proc = subprocess.run(
            [*COMMAND, "--config", str(config), "--db", str(db), "--no-report", "--no-progress"],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "HOME": tmp, "PYTHONPATH": str(ROOT / "src")},
        )
        wall = time.perf_counter() - start
        done.set()
        if kill:
            killer.join()
        received = claims_of(db, servers)
        con = sqlite3.connect(db)
        [(stored,)] = con.execute("SELECT count(*) FROM generations WHERE error IS NULL")
        [(verdicts,)] = con.execute("SELECT count(*) FROM judgments WHERE error IS NULL")
        con.close()
        for s in servers:
            s.stop()
    on_holder, on_first, n = sticky(received, 0, killed_at[0] if killed_at else None)
    name = "one replica killed" if kill else "all healthy"
    print(
        f"{name:>18}: exit {proc.returncode}, {n} requests; {on_holder:6.1%} on their claim's "
        f"replica (a move counts once), {on_first:6.1%} on the replica of its first request; "
        f"{wall:.1f} s; {stored} answers and {verdicts} verdicts stored of {total // 2}"
    )
    said = [ln for ln in proc.stderr.splitlines() if "endpoint" in ln]
    for line in said:
        print(f"{'':>20}run said: {line}")
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=16)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--limit", type=int, default=8, help="concurrency per replica")
    args = ap.parse_args()
    claims = [c.claim_id for c in load_pack("deflectbench-v1").claims][: args.claims]
    cells = len(claims) * 15 * args.samples
    print(
        f"deflectbench run: 3 replicas x {args.limit} in flight, model and judge on them; "
        f"{len(claims)} claims x 15 templates x {args.samples} samples = {cells} cells"
    )
    for kill in (False, True):
        run(claims, args.samples, args.limit, kill)


if __name__ == "__main__":
    main()
