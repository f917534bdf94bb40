"""How soon ``deflectbench run`` sends its first request to each wire (issue 37, point 1).

Two local wire-format servers in this process (one OpenAI wire, one Anthropic wire, each
serving one subject model and one judge, as in ``bench/cli_run.py``); the command is started
as a user starts it, and the seconds from its start to the first request reaching each server
are read from the servers' own records (the system's monotonic clock, shared with this
process). The command is stopped once both servers have a request: only its start is timed.
With ``--against SRC`` the same is measured, alternating, for another source tree (e.g. a
``git worktree`` of the commit before), so both stand side by side on the same machine load.

Target: the first request within 1.5 s of the command's start.

Run: ``.venv/bin/python bench/first_request.py [--repeat 3] [--against /tmp/before/src]``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from support.cli_runs import write_toml  # noqa: E402
from support.servers import FakeLLMServer  # noqa: E402

TARGET_S = 1.5
OPENAI_SUBJECT, OPENAI_JUDGE = "oai/subject", "oai/judge"
ANT_SUBJECT, ANT_JUDGE = "ant/subject", "ant/judge"


def cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) the process has used so far, from /proc (None: unknown)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one(src: Path, wait_s: float = 120.0) -> tuple[float | None, float | None, float | None]:
    """Seconds from the command's start to the first request at the OpenAI-wire server and
    at the Anthropic-wire one (None: none came within ``wait_s``), and the CPU seconds the
    command had used when its first request arrived (what an idle machine's wall time would
    be, near enough: the set-up is one thread under the GIL)."""
    with (
        FakeLLMServer(latency=0.2) as oai,
        FakeLLMServer(latency=0.2) as ant,
        tempfile.TemporaryDirectory() as tmp,
    ):
        config = write_toml(
            Path(tmp) / "run.toml",
            {
                "run": {
                    "models": [OPENAI_SUBJECT, ANT_SUBJECT],
                    "judges": [OPENAI_JUDGE, ANT_JUDGE],
                    "preset": "quick",
                    "samples": 2,
                    "cache": False,
                },
                "providers.oai": {"base_url": oai.openai_base_url, "max_concurrency": 8},
                "providers.ant": {
                    "wire": "anthropic",
                    "base_url": ant.anthropic_base_url,
                    "max_concurrency": 8,
                },
            },
        )
        compileall.compile_dir(str(src / "deflectbench"), quiet=1)  # as installed: compiled
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "PYTHONPATH": str(src),
            "COLUMNS": "120",
        }
        cmd = [sys.executable, "-m", "deflectbench", "run", "--config", str(config)]
        cmd += ["--db", str(Path(tmp) / "b.db"), "--no-report", "--no-progress"]
        started = time.monotonic()
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        deadline = started + wait_s
        cpu_at_first: float | None = None
        while time.monotonic() < deadline and proc.poll() is None:
            if cpu_at_first is None and (oai.requests or ant.requests):
                cpu_at_first = cpu_s(proc.pid)
            if oai.requests and ant.requests:
                break
            time.sleep(0.005)
        proc.kill()
        _, err = proc.communicate()
        if not (oai.requests and ant.requests):
            print(err[-1500:], file=sys.stderr)
        at = [
            min(r.received_at for r in s.requests) - started if s.requests else None
            for s in (oai, ant)
        ]
    return at[0], at[1], cpu_at_first


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another tree's src/ to time alongside")
    args = parser.parse_args(argv)
    trees = {"this tree": ROOT / "src"}
    if args.against:
        trees["against"] = args.against
    print(
        f"first request of `deflectbench run` (quick x 2, 2 wires); load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; target {TARGET_S} s"
    )
    got: dict[str, list[tuple[float | None, float | None]]] = {t: [] for t in trees}
    cpu: dict[str, list[float]] = {t: [] for t in trees}
    for i in range(args.repeat):
        for name, src in trees.items():
            oai, ant, used = one(src)
            got[name].append((oai, ant))
            if used is not None:
                cpu[name].append(used)
            print(
                f"  repeat {i + 1} {name:9s}: openai wire {_s(oai)}, anthropic wire {_s(ant)}; "
                f"CPU used by the first request {_s(used)}"
            )
    for name, rows in got.items():
        first = [min(x for x in r if x is not None) for r in rows if any(x is not None for x in r)]
        ant = [r[1] for r in rows if r[1] is not None]
        print(
            f"median {name:9s}: first request {_s(_median(first))}, "
            f"anthropic wire's first {_s(_median(ant))}, CPU by the first {_s(_median(cpu[name]))}"
        )
    if args.against:
        mine = [min(x for x in r if x is not None) for r in got["this tree"]]
        other = [min(x for x in r if x is not None) for r in got["against"]]
        print(f"ratio this tree / against (first request): {_median(mine) / _median(other):.2f}")


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _s(x: float | None) -> str:
    return "none" if x is None else f"{x:5.2f} s"


if __name__ == "__main__":
    main()
