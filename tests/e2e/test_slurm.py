"""The Slurm recipe of docs/scale.md on a real single-node Slurm on 127.0.0.1 (munged, slurmctld
and slurmd as child processes, their configuration and state under the test's folder): the
recipe's files (docs/recipes/slurm/, shown verbatim in the page) submitted as written, one
array task cancelled mid-run and requeued (`scontrol requeue`), the merge job fired by
`afterany`: every cell and verdict exactly once, and the merge job's `analyze --json` the
single unsharded run's.

Skips with one line where Slurm or munge is not installed or does not start (`.ci/run`
installs Debian's slurmctld, slurmd, slurm-client and munge)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from deflectbench.benchmark import default_benchmark
from support.cli_runs import DEFLECTBENCH, count, query, write_toml
from support.fakes import VERDICT, is_judge_request
from support.servers import FakeLLMServer, RecordedRequest

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "docs" / "recipes" / "slurm"
PARTS = 8  # the recipe's N, as written
TEMPLATES = ["explicit_direct_WA", "implicit_neutral"]
SAMPLES = 2
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "scancel")
GEN_KEY = "SELECT model, condition, claim_id, prompt_id, sample, response FROM generations"
VERDICTS = (
    "SELECT g.model, g.condition, g.claim_id, g.prompt_id, g.sample, j.judge, j.raw "
    "FROM judgments j JOIN generations g USING (gen_id)"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, ok: Callable[[], bool], timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ok():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


class Slurm:
    """A one-node cluster on loopback; ``env`` points its commands at it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.procs: list[subprocess.Popen[bytes]] = []
        for d in ("munge", "state", "spool", "log"):
            (home / d).mkdir(parents=True)
        (home / "munge").chmod(0o700)
        key = home / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.socket = home / "munge" / "munge.socket"
        self.conf = home / "slurm.conf"
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=deflectbench-test",
                    "SlurmctldHost=localhost(127.0.0.1)",
                    f"SlurmctldPort={free_port()}",
                    f"SlurmdPort={free_port()}",
                    "AuthType=auth/munge",
                    # a requeued task waits cred_expire (120 s by default) before it starts
                    # again, and a pending one waits for the next scheduling pass (60 s):
                    # both shortened, so the test waits on the recipe, not on Slurm's clocks
                    f"AuthInfo=socket={self.socket},cred_expire=30",
                    "SchedulerParameters=sched_interval=2,bf_interval=2",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    # 16 CPUs declared on a smaller machine: the 8 tasks of --cpus-per-task=2 at once
                    "SlurmdParameters=config_overrides",
                    "NodeName=localhost NodeAddr=127.0.0.1 CPUs=16 State=UNKNOWN",
                    "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_CPU",
                    "SchedulerType=sched/backfill",
                    "MpiDefault=none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "ReturnToService=2",
                    "MinJobAge=600",
                    f"StateSaveLocation={home / 'state'}",
                    f"SlurmdSpoolDir={home / 'spool'}",
                    f"SlurmctldPidFile={home / 'slurmctld.pid'}",
                    f"SlurmdPidFile={home / 'slurmd.pid'}",
                    f"SlurmctldLogFile={home / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={home / 'log' / 'slurmd.log'}",
                    "",
                ]
            )
        )
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self.env.pop("DEFLECTBENCH_SHARD", None)
        # the jobs find this checkout's deflectbench first (sbatch passes the environment on)
        self.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{self.env['PATH']}"
        self.munge_args = [
            "munged",
            "--foreground",
            "--force",
            f"--socket={self.socket}",
            f"--key-file={key}",
            f"--log-file={home / 'munge' / 'munged.log'}",
            f"--pid-file={home / 'munge' / 'munged.pid'}",
            f"--seed-file={home / 'munge' / 'munged.seed'}",
        ]

    def start(self) -> str | None:
        """Start the daemons; None when the node is idle, else why not (one line)."""
        self._spawn(self.munge_args)
        try:
            wait_for("munged's socket", self.socket.exists, 15)
        except AssertionError:
            return "munged did not start"
        self._spawn(["slurmctld", "-D", "-f", str(self.conf)])
        self._spawn(["slurmd", "-D", "-N", "localhost", "-f", str(self.conf)])
        try:
            wait_for("the node to be idle", lambda: self.sinfo() == "idle", 45)
        except AssertionError:
            return f"the node did not come up (sinfo: {self.sinfo() or 'no answer'})"
        return None

    def _spawn(self, args: list[str]) -> None:
        log = (self.home / "log" / f"{Path(args[0]).name}.out").open("wb")
        self.procs.append(
            subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        )

    def sinfo(self) -> str:
        p = self.run("sinfo", "--noheader", "--format=%T", check=False)
        return p.stdout.strip()

    def run(self, *args: str, cwd: Path | None = None, check: bool = True) -> Any:
        p = subprocess.run(args, env=self.env, cwd=cwd, capture_output=True, text=True, timeout=60)
        if check:
            assert p.returncode == 0, f"{' '.join(args)}: {p.stdout}{p.stderr}"
        return p

    def state(self, job: str) -> str:
        """A job's (or array task's) state: PENDING, RUNNING, COMPLETED, CANCELLED, ..."""
        p = self.run("scontrol", "show", "job", job, check=False)
        m = re.search(r"JobState=(\w+)", p.stdout)
        return m.group(1) if m else "UNKNOWN"

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def slurm(tmp_path: Path) -> Iterator[Slurm]:
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    if missing:
        pytest.skip(f"slurm: {', '.join(missing)} not installed (.ci/run installs them)")
    cluster = Slurm(tmp_path / "slurm")
    try:
        why = cluster.start()
        if why is not None:
            pytest.skip(f"slurm: {why}")
        yield cluster
    finally:
        cluster.stop()


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return f"But what about the other side's record? ({len(req.prompt)}, {req.body.get('seed')})"


def analysis(db: Path, out: Path) -> dict:
    """`analyze --json` as the recipe's merge job runs it."""
    cmd = [*DEFLECTBENCH, "analyze", "--db", str(db), "--json", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(out.read_text())


def test_the_docs_recipe_as_written_on_a_real_slurm(slurm: Slurm, tmp_path: Path) -> None:
    page = (ROOT / "docs" / "scale.md").read_text()
    for name in ("submit.sh", "part.sbatch", "merge.sbatch"):
        assert (RECIPE / name).read_text() in page, f"docs/scale.md does not show {name}"
    work = tmp_path / "work"
    work.mkdir()
    for f in RECIPE.iterdir():
        shutil.copy2(f, work / f.name)
    claims = [c.claim_id for c in default_benchmark().claims[:4]]  # 16 cells: 2 a part

    with FakeLLMServer(reply=reply, latency=0.8) as server:
        write_toml(
            work / "run.toml",
            {
                "run": {
                    "models": ["srva/m1"],
                    "judges": ["srva/j1", "lexical"],
                    "claims": claims,
                    "templates": TEMPLATES,
                    "runs": SAMPLES,
                },
                "providers.srva": {"base_url": server.openai_base_url, "max_concurrency": 1},
            },
        )
        single = tmp_path / "single.db"
        one = subprocess.run(
            [
                *DEFLECTBENCH,
                "run",
                "--config",
                str(work / "run.toml"),
                "--db",
                str(single),
                "--no-progress",
                "--no-report",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert one.returncode == 0, one.stderr

        started = time.monotonic()
        sub = slurm.run("./submit.sh", cwd=work)
        m = re.search(r"array (\d+), merge (\d+)", sub.stdout)
        assert m, sub.stdout
        array, merge = m.groups()
        assert (work / "logs").is_dir() and (work / "results").is_dir()

        # part 1 cancelled once it has stored an answer, then requeued as the docs say
        first, part_1 = f"{array}_1", work / "results" / "part-1.db"
        wait_for(
            "part 1 to store an answer",
            lambda: part_1.exists() and count(part_1, "SELECT count(*) FROM generations") >= 1,
            120,
        )
        slurm.run("scancel", first)
        wait_for("part 1 to be cancelled", lambda: slurm.state(first) == "CANCELLED", 60)
        cut = count(part_1, "SELECT count(*) FROM judgments")
        slurm.run("scontrol", "requeue", first)

        wait_for(
            "the merge job to end",
            lambda: slurm.state(merge) in {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"},
            300,
        )
        took = time.monotonic() - started
        log = (work / "logs" / "merge.out").read_text()
        assert slurm.state(merge) == "COMPLETED", log
        for i in range(1, PARTS + 1):
            assert slurm.state(f"{array}_{i}") == "COMPLETED", work / "logs" / f"part-{i}.out"

    n = len(claims) * len(TEMPLATES) * SAMPLES
    assert cut < 2 * (n // PARTS)  # the cancel left part 1 unfinished
    merged = work / "results" / "all.db"
    assert sorted(query(merged, GEN_KEY)) == sorted(query(single, GEN_KEY))
    assert len(query(merged, GEN_KEY)) == len(set(query(merged, GEN_KEY))) == n
    assert sorted(query(merged, VERDICTS)) == sorted(query(single, VERDICTS))
    assert len(query(merged, VERDICTS)) == 2 * n
    assert analysis(single, tmp_path / "single.json") == json.loads(
        (work / "results" / "analysis.json").read_text()
    )
    print(f"slurm: array of {PARTS} and its merge in {took:.0f}s")
