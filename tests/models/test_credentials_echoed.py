"""Issue 33, point 5: a server that echoes every credential it was sent, in every field it can
(the reply's ``model``, its text, error messages, ``GET /version``, ``GET /v1/models``), leaves
no byte of any of them, in any form (the key, the URL's password plain and percent-encoded, the
Basic header's base64 of ``user:password``), in the store, its WAL (every frame every command
wrote: a reader held open from before the run keeps SQLite from checkpointing or restarting it,
and the files are copied while it is held), the terminal, ``status
--json``, ``analyze --json``, the report or an export; and untrusted JSON nested past any sane
depth is recorded as "not available (too deep)", never a crash.

Real SDKs (openai, anthropic) through a local server on 127.0.0.1; the test computes each
encoded form itself (base64 of ``user:password``, ``urllib.parse.quote``) and checks the server
really received the Basic form, so the forms grepped for are the ones that went on the wire.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from deflectbench.secrets import REDACTED, register_credentials, scrub
from support.cli_runs import Cli, write_toml
from support.replies import unique_reply
from support.servers import FakeLLMServer, RecordedRequest

#: The subject's key: in a variable whose name looks like no credential (only the
#: configuration's ``api_key_env`` says it is one).
KEY = "gw-7Qx2Lm9Pz4Rt8Kv1Nb6Hd3"
ANT_KEY = "sk-ant-api03-Zy8Wx7Vu6Ts5Rq4Po3Nm2"
USER, PASSWORD = "qa-user", "p@ss/w0rd!Long-9"
ENCODED = quote(PASSWORD, safe="")  # p%40ss%2Fw0rd%21Long-9: how it sits in the URL
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
FORMS = (KEY, ANT_KEY, PASSWORD, ENCODED, BASIC, f"{USER}:{PASSWORD}")
MODEL, JUDGE = "gateway/test-model", "anthropic/claude-haiku-4-5-20251001"
ECHO = " | ".join(FORMS)


def _headers(request: RecordedRequest) -> str:
    return " ".join(f"{k}={v}" for k, v in request.headers.items())


class EchoServer(FakeLLMServer):
    """Every credential the request carried, in the reply's ``model`` and text, in every error
    message, in ``/version`` and ``/v1/models`` (the leakiest proxy one can write)."""

    def success_body(self, request: RecordedRequest) -> dict:
        reply = super().success_body(request)
        seen = request.headers.get("authorization", "") or request.headers.get("x-api-key", "")
        reply["model"] = seen.split(" ")[-1]  # the bare credential: a printable id the gate keeps
        reply["echo"] = {"headers": _headers(request), "all": ECHO}
        if request.wire == "openai":
            reply["choices"][0]["message"]["content"] += f" (headers: {_headers(request)})"
        else:
            reply["content"].append({"type": "text", "text": f"(headers: {_headers(request)})"})
        return reply


def _server() -> EchoServer:
    return EchoServer(
        reply=unique_reply,
        schedule=["500", "429", None, "400"],  # errors whose message echoes every form
        error_message=f"bad credentials: {ECHO}",
        version={"version": "0.11.0", "seen": ECHO, KEY: BASIC, "nested": {"a": [ENCODED]}},
        models=[{"id": KEY, "object": "model", "owned_by": BASIC, "root": PASSWORD}],
    )


def _config(path: Path, server: EchoServer) -> Path:
    userinfo = server.openai_base_url.replace("http://", f"http://{USER}:{ENCODED}@")
    ant = server.anthropic_base_url.replace("http://", f"http://{USER}:{ENCODED}@")
    return write_toml(
        path,
        {
            "run": {
                "models": [MODEL],
                "judges": ["lexical", JUDGE],
                "claims": ["L1_US_01", "L2_INT_03"],
                "templates": ["explicit_direct_WA", "explicit_coach_AH"],
                "samples": 2,
            },
            "providers.gateway": {
                "base_url": userinfo,
                "api_key_env": "LLM_GATEWAY",
                "max_concurrency": 4,
                "max_retries": 4,
            },
            "providers.anthropic": {"base_url": ant, "max_concurrency": 4, "max_retries": 4},
        },
    )


def _leaks(blob: bytes) -> list[str]:
    return [f for f in FORMS if f.encode() in blob]


def _hold_the_wal(db: Path) -> sqlite3.Connection:
    """A reader whose open read transaction began before any command wrote: while it is open,
    SQLite can neither checkpoint a frame past its snapshot nor restart the WAL, nor delete it
    when a writer closes, so every byte every command writes stays in ``-wal`` to be grepped."""
    from deflectbench.store import Store

    with Store.open(db):  # the store's own schema and WAL mode, empty, as a run would make it
        pass
    held = sqlite3.connect(db, isolation_level=None)
    held.execute("BEGIN")
    assert held.execute("SELECT count(*) FROM generations").fetchone() == (0,)  # snapshot taken
    return held


def _store_files(db: Path, into: Path) -> dict[str, bytes]:
    """Every file of the store as it is now (the db, ``-wal``, ``-shm``, any ``-journal``),
    copied at this moment, by name."""
    into.mkdir()
    out = {}
    for p in sorted(db.parent.glob(f"{db.name}*")):
        copy = into / p.name
        copy.write_bytes(p.read_bytes())
        out[f"{into.name}/{p.name}"] = copy.read_bytes()
    return out


def test_no_form_of_any_credential_survives_anywhere(tmp_path: Path) -> None:
    cli = Cli(env={"LLM_GATEWAY": KEY, "ANTHROPIC_API_KEY": ANT_KEY, "COLUMNS": "200"})
    quick = Cli(env=cli.env, in_process=True)  # the same commands, without a child's start-up
    db = tmp_path / "r.db"
    held = _hold_the_wal(db)  # open across every command below: the WAL keeps every frame
    with _server() as server:
        cfg = _config(tmp_path / "run.toml", server)
        run = cli("run", "--config", cfg, "--db", db, "--no-progress")
        posts = [r for r in server.requests if r.method == "POST"]
    assert run.returncode == 5, run.stdout + run.stderr  # incomplete: the 400 cell
    # what went on the wire: the Basic form (httpx sends the URL's userinfo so), the key
    assert posts and all(r.headers["authorization"] == f"Basic {BASIC}" for r in posts)
    assert any(r.path.endswith("/messages") for r in posts)  # the Anthropic SDK's too
    for section in ("gateway", "anthropic"):  # said, once per section, in no secret's words
        assert f"providers.{section}'s base_url carries user:password@" in run.stderr
    conn = sqlite3.connect(db)
    served = {s for (s,) in conn.execute("SELECT served_model FROM generations") if s}
    errors = [
        e
        for table in ("generations", "judgments")
        for (e,) in conn.execute(f"SELECT error FROM {table} WHERE error IS NOT NULL")
    ]
    conn.close()
    assert served == {REDACTED}  # the echoed credential was the served id: kept, redacted
    echoed = [e for e in errors if "bad credentials" in e]  # the 400's row, whichever request
    assert echoed and all("bad credentials: [REDACTED] | [redacted]" in e for e in echoed)
    outputs: dict[str, bytes] = {"run": (run.stdout + run.stderr).encode()}
    for name, args in {
        "status": ("status",),
        "status --json": ("status", "--json"),
        "analyze --json": ("analyze", "--json", "-"),
        "report": ("report", "--out", tmp_path / "rep"),
        "export csv": ("export", "--format", "csv", "--out", tmp_path / "csv"),
        "export jsonl": ("export", "--format", "jsonl", "--out", tmp_path / "jsonl"),
    }.items():
        done = quick(*args, "--db", db)
        assert done.returncode == 0, (name, done.stdout + done.stderr)
        outputs[name] = (done.stdout + done.stderr).encode()
    assert json.loads(quick("status", "--json", "--db", db).stdout)["manifest"]
    # the store's files copied while the reader still holds the WAL: every frame written, none
    # checkpointed away, and the WAL really holds the run's rows (the scrubbed served id)
    snapshot = _store_files(db, tmp_path / "held")
    wal = snapshot["held/r.db-wal"]
    assert len(wal) > 100_000 and REDACTED.encode() in wal and MODEL.encode() in wal
    assert "held/r.db-shm" in snapshot
    held.execute("COMMIT")
    held.close()  # the last connection: SQLite checkpoints into the db (and drops the WAL)
    outputs |= snapshot
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "run.toml"]
    assert any(p.name == "r.db" for p in files)
    assert len([p for p in files if "rep" in p.parts]) > 1, "the report wrote its files"
    for p in files:
        outputs[str(p.relative_to(tmp_path))] = p.read_bytes()
    found = {name: _leaks(blob) for name, blob in outputs.items() if _leaks(blob)}
    assert found == {}


def test_untrusted_json_nested_too_deep_is_not_available_never_a_crash(tmp_path: Path) -> None:
    deep: dict[str, Any] = {"v": "bottom"}
    for _ in range(900):
        deep = {"v": deep}
    many = [{"id": f"m{i}", "object": "model", "root": "x" * 2000} for i in range(5000)]
    cli = Cli(env={"LLM_GATEWAY": KEY, "ANTHROPIC_API_KEY": ANT_KEY})
    db = tmp_path / "r.db"
    with FakeLLMServer(reply=unique_reply, version=deep, models=many) as server:
        cfg = _config(tmp_path / "run.toml", server)
        done = cli("run", "--config", cfg, "--db", db, "--no-progress", "--no-report")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "RecursionError" not in done.stdout + done.stderr
    conn = sqlite3.connect(db)
    rows = dict(conn.execute("SELECT name, manifest_json FROM manifests WHERE role = 'model'"))
    conn.close()
    server_said = json.loads(rows[MODEL])["server"]
    assert server_said["version"] == "not available (too deep)"
    assert len(json.dumps(server_said["models"])) < 70_000  # bounded: 32 entries, short fields


@pytest.mark.parametrize(
    "url",
    [
        f"http://{USER}:{ENCODED}@127.0.0.1:9/v1",
        f"https://{USER}:{PASSWORD.replace('/', '%2F')}@gw.example/v1",
    ],
)
def test_every_form_of_a_url_credential_is_scrubbed(url: str) -> None:
    register_credentials(url=url)
    for form in (PASSWORD, ENCODED, BASIC, BASIC.rstrip("="), f"{USER}:{PASSWORD}"):
        text = scrub(f"seen: {form}; Basic {form}", {})
        assert not any(f in text for f in FORMS[2:]), (form, text)
        assert REDACTED in text


def test_a_key_registered_for_a_model_is_scrubbed_whatever_its_variable() -> None:
    register_credentials(key="zz-a-key-in-a-plain-var-0042")
    assert scrub("Bearer zz-a-key-in-a-plain-var-0042", {}) == f"Bearer {REDACTED}"
    assert "plain-var" not in scrub("echo zz-a-key-in-a-plain-var", {})  # a partial echo too


def _deep_line(custom_id: str, depth: int = 100_000) -> bytes:
    return (
        f'{{"custom_id": "{custom_id}", "response": {{"status_code": 200, "body": '.encode()
        + b'{"x": ' * depth
        + b"1"
        + b"}" * depth
        + b"}}"
    )


def test_batch_result_lines_are_scrubbed_and_bounded() -> None:
    from deflectbench.models.anthropic_api import AnthropicModel
    from deflectbench.models.anthropic_batch import AnthropicBatches
    from deflectbench.models.openai_batch import OpenAIBatches
    from deflectbench.models.openai_compat import OpenAICompatModel

    url = f"http://{USER}:{ENCODED}@127.0.0.1:9/v1"
    # a run's models, both built: each registers what its requests carry
    oai = OpenAIBatches(OpenAICompatModel("openai/m", "m", base_url=url, api_key=KEY))
    ant = AnthropicBatches(AnthropicModel("anthropic/m", "m", api_key=ANT_KEY, base_url=url))
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": BASIC,  # the served id a leaky proxy fills with what it was sent
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ECHO}}
        ],
        "extra": {"nested": [ENCODED, {"k": PASSWORD}]},
    }
    lines = [
        json.dumps({"custom_id": "a", "response": {"status_code": 200, "body": body}}).encode(),
        json.dumps(
            {
                "custom_id": "b",
                "response": {"status_code": 401, "body": {"error": {"message": ECHO}}},
            }
        ).encode(),
        json.dumps({"custom_id": "c", "error": {"code": "x", "message": ECHO}}).encode(),
        _deep_line("d"),
    ]
    out: list = []
    garbled = oai._read(b"\n".join(lines), out)
    assert garbled == 1  # the line nested 100,000 deep: garbled, never a crash
    blob = json.dumps([[o.custom_id, o.error, o.completion and o.completion.raw] for o in out])
    assert _leaks(blob.encode()) == [] and REDACTED in blob
    assert out[0].completion is not None and out[0].completion.raw["model"] == REDACTED

    error = {"type": "errored", "error": {"error": {"type": "x", "message": ECHO}}}
    out = []
    garbled = ant._read(
        json.dumps({"custom_id": "e", "result": error}).encode() + b"\n" + _deep_line("f"), out
    )
    assert garbled == 1 and _leaks(json.dumps([o.error for o in out]).encode()) == []
