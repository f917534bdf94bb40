"""Issue 37, point 1: each provider's SDK is loaded beside the run's set-up, and a provider's
requests start while another's SDK is still loading; building a model (a dry run does) imports
no SDK at all.

Real SDKs against local servers on 127.0.0.1, in a child process (what it has imported is the
point). The Anthropic SDK's import is made slow on purpose (its package's code waits 4 s before
it runs): the OpenAI-wire model's first request must reach its server before that
import has even ended. Ordering, not timing, is checked: how fast the first request leaves is
measured by bench/first_request.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from support.cli_runs import write_toml
from support.replies import unique_reply
from support.servers import FakeLLMServer

SLOW_ANTHROPIC = """
import importlib.abc, importlib.util, json, sys, time

class SlowLoader(importlib.abc.Loader):
    # waits in exec_module, under the package's own lock (as a slow import does), not in
    # find_spec, which runs under the interpreter's global import lock
    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        time.sleep(4.0)
        print(json.dumps({"anthropic_loading_until": time.monotonic()}), flush=True)
        self.real.exec_module(module)

class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "anthropic":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("anthropic")
        spec.loader = SlowLoader(spec.loader)
        return spec

sys.meta_path.insert(0, Slow())
"""


def _child(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )


def _two_wires(tmp_path: Path, oai: FakeLLMServer, ant: FakeLLMServer) -> Path:
    """A run file of one subject model on each wire (one cell each), judged lexically."""
    return write_toml(
        tmp_path / "run.toml",
        {
            "run": {
                "models": ["oai/subject", "ant/subject"],
                "judges": ["lexical"],
                "claims": ["L1_US_01"],
                "templates": ["explicit_direct_WA"],
                "cache": False,
            },
            "providers.oai": {"base_url": oai.openai_base_url},
            "providers.ant": {"wire": "anthropic", "base_url": ant.anthropic_base_url},
        },
    )


def test_building_models_imports_no_sdk(tmp_path: Path) -> None:
    done = _child(
        """
        import json, sys
        from deflectbench.models.providers import build_api_model

        a = build_api_model("mine/m", {"base_url": "http://127.0.0.1:9/v1"}, {})
        b = build_api_model(
            "ant/m", {"wire": "anthropic", "base_url": "http://127.0.0.1:9"}, {}
        )
        print(json.dumps([n for n in ("openai", "anthropic") if n in sys.modules]))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_one_wires_requests_start_while_the_other_sdk_loads(tmp_path: Path) -> None:
    with FakeLLMServer(reply=unique_reply) as oai, FakeLLMServer(reply=unique_reply) as ant:
        config = _two_wires(tmp_path, oai, ant)
        done = _child(
            SLOW_ANTHROPIC
            + textwrap.dedent(
                f"""
                import deflectbench
                result = deflectbench.run({str(config)!r}, db={str(tmp_path / "r.db")!r})
                print(json.dumps({{"exit": result.exit_code}}), flush=True)
                """
            ),
            tmp_path,
        )
        first_oai = min(r.received_at for r in oai.requests)
        first_ant = min(r.received_at for r in ant.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    said = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    loading_until = next(
        s["anthropic_loading_until"] for s in said if "anthropic_loading_until" in s
    )
    assert {"exit": 0} in said
    # the OpenAI wire's request went out while the Anthropic SDK was still loading
    assert first_oai < loading_until < first_ant


def _packages(tmp_path: Path, *names: str) -> Path:
    """Empty packages ``names`` in a folder of their own (what the loader imports)."""
    root = tmp_path / "pkgs"
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("LOADED = True\n")
    return root


def test_a_later_sdk_waits_for_a_request_and_its_waiters_need_no_thread_pool(
    tmp_path: Path,
) -> None:
    """The first SDK is imported alone; the next only once a request has gone out (issue 37:
    the two would share the core the first request's set-up runs on). A coroutine awaiting an
    SDK is woken by the loader, not by a thread of the loop's pool: with the pool's only
    thread taken, it still wakes."""
    root = _packages(tmp_path, "pkg_first", "pkg_second", "pkg_third")
    done = _child(
        f"""
        import asyncio, json, sys, threading, time
        from concurrent.futures import ThreadPoolExecutor
        sys.path.insert(0, {str(root)!r})
        from deflectbench.models import sdk_loader

        def wait_for(name):
            deadline = time.monotonic() + 60
            while not sdk_loader.ready(name) and time.monotonic() < deadline:
                time.sleep(0.01)
            return sdk_loader.ready(name)

        sdk_loader.preload("pkg_first", "pkg_second")
        first = wait_for("pkg_first")
        time.sleep(0.3)  # idle: no CPU used, no request sent
        second_before = "pkg_second" in sys.modules
        sdk_loader.sent()
        second_after = wait_for("pkg_second")

        async def main():
            loop = asyncio.get_running_loop()
            loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
            block = threading.Event()
            taken = loop.run_in_executor(None, block.wait)  # the pool's one thread
            module = await asyncio.wait_for(sdk_loader.aload("pkg_third"), 30)
            block.set()
            await taken
            return module.LOADED

        third = asyncio.run(main())
        print(json.dumps([first, second_before, second_after, third, sdk_loader.went_out()]))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, False, True, True, True]


def test_a_request_awaiting_the_next_sdk_in_an_idle_process_loads_it(tmp_path: Path) -> None:
    """A resumed run whose first model is done and whose judges wait for the other model's
    answers sends nothing on the first SDK's wire: the process sits idle while a request
    awaits the second SDK. The loader then loads it (it waited for a request or for CPU that
    an idle process never uses: such a run stood still for 5 to 45 s)."""
    root = _packages(tmp_path, "pkg_first", "pkg_second")
    done = _child(
        f"""
        import asyncio, json, sys, time
        sys.path.insert(0, {str(root)!r})
        from deflectbench.models import sdk_loader

        sdk_loader.preload("pkg_first", "pkg_second")

        async def main():
            await sdk_loader.aload("pkg_first")
            started = time.monotonic()
            try:
                module = await asyncio.wait_for(sdk_loader.aload("pkg_second"), 5)
            except TimeoutError:
                return None, time.monotonic() - started
            return module.LOADED, time.monotonic() - started

        loaded, waited = asyncio.run(main())
        print(json.dumps([loaded, waited, sdk_loader.went_out()]))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    loaded, waited, went_out = json.loads(done.stdout)
    assert loaded is True, f"still waiting after {waited:.1f}s"
    assert waited < 2.0
    assert went_out is False  # no request was sent: the idle wait let it load


def test_the_collector_held_during_start_up_comes_back(tmp_path: Path) -> None:
    """``hold_gc`` (the run command) turns the collector off while the SDKs load; the loader
    turns it back on once its queue is empty, with what start-up made frozen; with nothing to
    load it is on again at once."""
    root = _packages(tmp_path, "pkg_gc")
    done = _child(
        f"""
        import gc, json, sys, time
        sys.path.insert(0, {str(root)!r})
        from deflectbench.models import sdk_loader

        sdk_loader.hold_gc()
        held = not gc.isenabled()
        sdk_loader.preload()  # nothing to load
        back_at_once = gc.isenabled()
        sdk_loader.hold_gc()
        sdk_loader.preload("pkg_gc")
        deadline = time.monotonic() + 60
        while not gc.isenabled() and time.monotonic() < deadline:
            time.sleep(0.01)
        print(json.dumps([held, back_at_once, gc.isenabled(), gc.get_freeze_count() > 0]))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, True, True, True]


#: Run as ``python -m deflectbench``, with an audit hook writing down, at the first connection
#: to the OpenAI-wire server, which packages are loaded (top-level names).
LOADED_AT_FIRST_REQUEST = """
import json, runpy, sys

PORT, OUT = int(sys.argv[1]), sys.argv[2]
seen = []

def hook(event, args):
    if event == "socket.connect" and not seen and isinstance(args[1], tuple) and args[1][1:2] == (PORT,):
        seen.append(True)
        with open(OUT, "w") as f:
            json.dump(sorted({m.split(".")[0] for m in list(sys.modules)}), f)

sys.addaudithook(hook)
sys.argv = ["deflectbench", *sys.argv[3:]]
runpy.run_module("deflectbench", run_name="__main__")
"""


def test_the_first_request_loads_nothing_it_does_not_need(tmp_path: Path) -> None:
    """Issue 37, point 1: when the first request leaves, the process holds its own SDK and
    not the other provider's, nor the analysis' numpy, pandas or scipy (the summary's: they
    load beside the requests, after the first)."""
    with FakeLLMServer(reply=unique_reply) as oai, FakeLLMServer(reply=unique_reply) as ant:
        config = _two_wires(tmp_path, oai, ant)
        script = tmp_path / "first.py"
        script.write_text(LOADED_AT_FIRST_REQUEST)
        out = tmp_path / "loaded.json"
        port = int(oai.openai_base_url.rsplit(":", 1)[1].split("/")[0])
        run = ["run", "--config", str(config), "--db", str(tmp_path / "r.db")]
        done = subprocess.run(
            [sys.executable, str(script), str(port), str(out), *run, "--no-report"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    loaded = set(json.loads(out.read_text()))
    assert "openai" in loaded
    assert not loaded & {"anthropic", "numpy", "pandas", "scipy", "pyarrow", "matplotlib"}
