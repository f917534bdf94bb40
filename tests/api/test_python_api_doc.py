"""docs/python-api.md runs as written: its Python blocks, in order, in one namespace, in a fresh
folder, against a local server that speaks the OpenAI wire format (what the page's
``openai-compatible/my-model`` reaches through ``OPENAI_COMPATIBLE_BASE_URL``). A walkthrough
that stops working fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import deflectbench
from support.replies import unique_reply
from support.servers import FakeLLMServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)


def python_blocks() -> list[str]:
    return FENCE.findall(DOC.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_walkthrough_runs_as_written(tmp_path, monkeypatch):
    blocks = python_blocks()
    assert len(blocks) >= 4, "the walkthrough lost its code"
    monkeypatch.chdir(tmp_path)
    with FakeLLMServer(reply=unique_reply) as server:
        monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", server.openai_base_url)
        namespace: dict[str, object] = {"__name__": "walkthrough"}
        for number, block in enumerate(blocks, 1):
            code = compile(block, f"{DOC.name} block {number}", "exec")
            exec(code, namespace)  # the page's own code, as a reader runs it
    assert (tmp_path / "first.db").exists() and (tmp_path / "second.db").exists()
    assert namespace["gate"].exit_code in (0, 6)


def test_every_function_the_page_lists_is_public():
    listed = set(re.findall(r"^\| `(\w+)\(", DOC.read_text(encoding="utf-8"), re.MULTILINE))
    listed |= set(re.findall(r", `(\w+)\(", DOC.read_text(encoding="utf-8")))
    assert listed, "the page's table lost its functions"
    assert listed <= set(deflectbench.__all__), listed - set(deflectbench.__all__)
    for name in deflectbench.__all__:
        assert getattr(deflectbench, name) is not None, name
