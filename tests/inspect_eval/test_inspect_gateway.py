"""Inspect's ``openai/`` models behind a gateway that speaks only chat completions (issue 33,
point 7): the README's command sends GPT-5 models through the Responses API, which such a
gateway answers 404, and Inspect exits 0 all the same; the fix docs/inspect.md gives
(``responses_api=false`` for the model and for a judge role) runs the task through chat
completions. The "gateway" is the local test server, which serves ``/v1/chat/completions``
and ``/v1/messages`` only; the command is read from the doc, so the doc cannot drift."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from support import inspect_runs as ir
from support.servers import FakeLLMServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gateway():
    srv = FakeLLMServer(reply=ir.reply).start()
    yield srv
    srv.stop()


def doc_command() -> list[str]:
    """The fixed command of docs/inspect.md, its backslash continuations joined."""
    text = (ROOT / "docs" / "inspect.md").read_text(encoding="utf-8")
    block = next(
        b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "responses_api=false" in b
    )
    return shlex.split(block.replace("\\\n", " "))


def inspect_eval(args: list[str], gateway: FakeLLMServer, tmp: Path):
    assert args[:2] == ["inspect", "eval"]
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env |= {
        "OPENAI_BASE_URL": gateway.openai_base_url,
        "OPENAI_API_KEY": ir.KEY,
        "ANTHROPIC_BASE_URL": gateway.anthropic_base_url,
        "ANTHROPIC_API_KEY": ir.KEY,
        "COLUMNS": "200",
    }
    one_cell = ["-T", "claims=L1_US_01", "-T", "templates=explicit_direct_WA", "--epochs", "1"]
    inspect = str(Path(sys.executable).with_name("inspect"))
    return subprocess.run(
        [inspect, *args[1:], *one_cell, "--log-dir", str(tmp / "logs")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        timeout=600,
    )


def test_the_readmes_command_fails_on_the_responses_api_and_exits_0(gateway, tmp_path):
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    found = re.search(r"`(inspect eval deflectbench/deflectbench [^`]*)`", readme)
    assert found, "the README's Inspect command"
    before = len(gateway.requests)
    p = inspect_eval(shlex.split(found.group(1)), gateway, tmp_path)
    paths = {r.path for r in gateway.requests[before:]}
    assert "/v1/responses" in paths and "/v1/chat/completions" not in paths
    said = p.stdout + p.stderr
    assert "404" in said and "/v1/responses" in said
    assert p.returncode == 0  # as docs/inspect.md warns: Inspect's exit code does not say it


def test_the_documented_fix_goes_through_chat_completions(gateway, tmp_path):
    before = len(gateway.requests)
    p = inspect_eval(doc_command(), gateway, tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    sent = gateway.requests[before:]
    paths = {r.path for r in sent}
    assert "/v1/responses" not in paths and "/v1/chat/completions" in paths
    models = {r.body.get("model") for r in sent if isinstance(r.body, dict)}
    assert {"gpt-5.5", "gpt-5.4-mini"} <= models  # the subject and judge_a, both as chat
    assert "Traceback" not in p.stdout + p.stderr
    assert list((tmp_path / "logs").glob("*.eval"))
