"""What ``deflectbench run`` does after its last reply stays short (issue 37, point 1): the
summary's imports (pandas, the analysis with scipy: seconds of CPU) are made while the
requests run, once the first reply is in, by the live board's warm-up; and the list it warms
covers what the command imports after the run (checked in a child process against a local
OpenAI-wire server). The time itself is measured by bench/cli_run.py, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from deflectbench.cli.live import RUN_SUMMARY_MODULES, LiveBoard
from support.servers import FakeLLMServer

#: A module nothing here imports before the test.
UNUSED = "xdrlib" if sys.version_info < (3, 13) else "wave"


def board(done: int = 0, provider: str = "openai") -> SimpleNamespace:
    return SimpleNamespace(rows=[SimpleNamespace(done=done, provider=provider, finished=False)])


def wait_for(check, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.01)
    return False


def test_the_warm_up_waits_for_the_first_reply_then_imports():
    b = board()
    with LiveBoard(False, warm=["json", "colorsys"]) as live:
        live.attach(b)
        time.sleep(0.2)
        assert live.warmed == []  # the first requests and their SDKs go first
        b.rows[0].done = 1
        assert wait_for(lambda: live.warmed == ["json", "colorsys"]), live.warmed


def test_no_warm_up_while_a_model_runs_in_this_process():
    """llama.cpp's threads spin on the cores: an import beside them stalls the bundled model."""
    b = board(done=1, provider="local")
    with LiveBoard(False, warm=["json"]) as live:
        live.attach(b)
        time.sleep(0.2)
        assert live.warmed == []
        b.rows[0].finished = True
        assert wait_for(lambda: live.warmed == ["json"]), live.warmed


def test_a_run_that_ends_first_leaves_the_imports_to_the_command():
    b = board()
    live = LiveBoard(False, warm=[UNUSED])
    live.attach(b)
    live.close()
    b.rows[0].done = 1
    time.sleep(0.2)
    assert live.warmed == []


def test_a_module_that_fails_to_import_is_passed_over_quietly():
    b = board(done=1)
    with LiveBoard(False, warm=["deflectbench.no_such_module", "json"]) as live:
        live.attach(b)
        assert live._warmer is not None
        live._warmer.join(5)
        assert live.warmed == ["json"]


#: In the child: the warm list imported first, then the command; what the command imported
#: after that is written to the file PROBE names.
CHILD = """
import importlib, json, os, sys
from deflectbench.cli.live import RUN_SUMMARY_MODULES
from deflectbench.cli.console import console
for name in RUN_SUMMARY_MODULES:
    importlib.import_module(name)
import deflectbench.execute as ex
before = {}
run = ex.execute
async def execute(*a, **k):
    try:
        return await run(*a, **k)
    finally:
        before["modules"] = set(sys.modules)
ex.execute = execute
sys.argv = ["deflectbench", *json.loads(os.environ["ARGS"])]
from deflectbench.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
new = sorted(set(sys.modules) - before.get("modules", set(sys.modules)))
with open(os.environ["PROBE"], "w") as fh:
    json.dump({"code": code, "new": new}, fh)
"""


def test_the_warm_list_covers_what_the_run_imports_after_its_last_reply(tmp_path: Path):
    probe = tmp_path / "probe.json"
    with FakeLLMServer() as server:
        args = ["run", "-m", "openai-compatible/m", "-j", "lexical", "--claims", "L1_US_01"]
        args += ["--templates", "explicit_direct_WA,explicit_direct_RH", "--no-report"]
        args += ["--db", str(tmp_path / "r.db"), "--no-progress"]
        env = {
            **os.environ,
            "OPENAI_COMPATIBLE_BASE_URL": server.openai_base_url,
            "ARGS": json.dumps(args),
            "PROBE": str(probe),
        }
        src = str(Path(__file__).resolve().parents[2] / "src")
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                           text=True, timeout=300, cwd=tmp_path)  # fmt: skip
    assert probe.exists(), p.stderr[-3000:]
    out = json.loads(probe.read_text())
    assert out["code"] == 0, p.stdout[-2000:] + p.stderr[-2000:]
    heavy = [m for m in out["new"] if m.split(".")[0] in {"pandas", "numpy", "scipy", "pyarrow"}]
    analysis = [m for m in out["new"] if m.startswith("deflectbench.analysis")]
    # a stray small inner module of a library (pyarrow.vendored.version) may come late
    assert len(heavy) <= 2 and not analysis, (heavy[:10], analysis, RUN_SUMMARY_MODULES)
