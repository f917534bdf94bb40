"""What a new user meets at the edges of `run` (issue 23, item 12): every missing key named at
once, a provider typo answered with "did you mean", a one-cell run whose only request failed
exits 4 (a model failed every request), and a dry run with nothing priced says unpriced."""

from __future__ import annotations

import os
from pathlib import Path

from support.cli_runs import write_toml
from support.in_process import run_cli
from support.servers import FakeLLMServer

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL")


def cli(*args: str | Path, **extra: str):
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "80"
    return run_cli(*args, env=env | extra)


def test_every_missing_key_is_named_at_once(tmp_path):
    p = cli("run", "-m", "openai/gpt-5.5", "-j", "anthropic/claude-haiku-4-5-20251001",
            "--claims", "L1_US_01", "--db", tmp_path / "x.db")  # fmt: skip
    assert p.returncode == 2, (p.stdout, p.stderr)
    line = p.stderr.strip()
    assert "Traceback" not in line
    assert "OPENAI_API_KEY" in line and "ANTHROPIC_API_KEY" in line, line
    assert "2 API keys missing" in " ".join(line.split())
    print(" ".join(line.split()))


def test_a_provider_typo_gets_did_you_mean(tmp_path):
    p = cli("run", "-m", "opnai/gpt-5.5", "-j", "lexical", "--db", tmp_path / "x.db")
    assert p.returncode == 2, (p.stdout, p.stderr)
    text = " ".join(p.stderr.split())
    assert "did you mean 'openai/gpt-5.5'?" in text, text
    print(text)


def test_a_one_cell_run_whose_only_request_failed_exits_4(tmp_path):
    with FakeLLMServer(reply=lambda req: "x", fault_rate=1.0, fault_kinds=("500",)) as server:
        cfg = write_toml(
            tmp_path / "run.toml",
            {
                "run": {
                    "models": ["vllm/m"],
                    "judges": ["lexical"],
                    "claims": ["L1_US_01"],
                    "templates": ["explicit_direct_WA"],
                    "runs": 1,
                },
                "providers.vllm": {"base_url": server.openai_base_url, "max_retries": 0},
            },
        )
        p = cli("run", "--config", cfg, "--db", tmp_path / "x.db", "--no-progress")
    assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
    print("exit", p.returncode)


def test_a_dry_run_with_nothing_priced_says_unpriced(tmp_path):
    cfg = write_toml(
        tmp_path / "run.toml",
        {
            "run": {"models": ["mine/m"], "judges": ["lexical"], "claims": ["L1_US_01"]},
            "providers.mine": {"base_url": "http://127.0.0.1:9/v1"},
        },
    )
    p = cli("run", "--config", cfg, "--dry-run", "--db", tmp_path / "x.db")
    assert p.returncode == 0, (p.stdout, p.stderr)
    text = " ".join(p.stdout.split())
    assert "0.00 USD expected" not in text and "unpriced, not free" in text, text
    print(text[text.index("estimated cost") :][:160])


def test_run_help_and_the_light_install_name_ones_own_server():
    """Item 11: without the local extra, the first command the help suggests fails; the help
    and that failure both name the way to use one's own server."""
    from deflectbench.models.llama_local import NEEDS_LOCAL_EXTRA

    p = cli("run", "--help")
    text = " ".join(p.stdout.split())
    assert p.returncode == 0
    assert "openai-compatible/NAME" in text and "OPENAI_COMPATIBLE_BASE_URL" in text, text
    for part in (
        "-m openai-compatible/NAME",
        "OPENAI_COMPATIBLE_BASE_URL",
        "[providers.x] base_url",
    ):
        assert part in NEEDS_LOCAL_EXTRA


def test_a_store_given_as_an_argument_gets_the_db_line_to_type(tmp_path):
    """`deflectbench analyze results.db` (the store where only compare and merge take it):
    the usage error, then the line to type instead; a path that is no file gets no hint."""
    store = tmp_path / "my results.db"
    store.write_bytes(b"")
    for command in ("analyze", "report", "status"):
        p = cli(command, store)
        assert p.returncode == 2, (p.stdout, p.stderr)
        text = " ".join(p.stderr.split())
        assert "unexpected extra argument" in text, text
        want = f"hint: {command} reads its store from --db: deflectbench {command} --db '{store}'"
        assert want in text, text
    p = cli("analyze", tmp_path / "missing.db")
    assert p.returncode == 2 and "hint:" not in p.stderr, p.stderr
