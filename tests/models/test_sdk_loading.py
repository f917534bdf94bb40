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
        config = write_toml(
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
