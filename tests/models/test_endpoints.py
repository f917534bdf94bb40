"""A model served by several endpoints used together, each with its own limit (a cluster of
vLLM / SGLang / llama.cpp replicas): real servers on 127.0.0.1, driven through the CLI."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from deflectbench.errors import ConfigError
from deflectbench.models.endpoints import MultiEndpointModel
from deflectbench.models.providers import build_api_model
from support.in_process import run_cli
from support.servers import FakeLLMServer

CLAIMS = "L1_US_01,L2_US_01,L3_US_01,L4_US_01"


def section(*servers: tuple[str, int]) -> dict:
    return {"endpoints": [{"base_url": url, "max_concurrency": n} for url, n in servers]}


def test_endpoints_build_one_model_whose_limit_is_their_sum() -> None:
    model = build_api_model(
        "cluster/llama-3-8b",
        section(("http://127.0.0.1:9/v1", 2), ("http://127.0.0.1:10/v1", 6)),
        {},
    )
    assert isinstance(model, MultiEndpointModel)
    assert model.limits.max_concurrency == 8
    assert [e.limit for e in model.endpoints] == [2, 6]
    assert "127.0.0.1:10" in repr(model)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"base_url": "http://127.0.0.1:9/v1"}, "either base_url or endpoints"),
        ({"max_concurrency": 4}, "set max_concurrency on each endpoint"),
    ],
)
def test_endpoints_conflicting_settings_are_one_clear_error(extra: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_api_model("cluster/m", {**section(("http://127.0.0.1:9/v1", 2)), **extra}, {})


def _run(tmp_path: Path, urls: list[tuple[str, int]], db: Path) -> subprocess.CompletedProcess:
    lines = ", ".join(f'{{ base_url = "{u}", max_concurrency = {n} }}' for u, n in urls)
    config = tmp_path / "run.toml"
    config.write_text(
        "[run]\n"
        'models = ["cluster/llama-3-8b"]\n'
        'judges = ["lexical"]\n'
        "runs = 2\n\n"
        "[providers.cluster]\n"
        f"endpoints = [{lines}]\n"
        "max_retries = 4\n"
    )
    return run_cli(
        "run",
        "--config",
        str(config),
        "--claims",
        CLAIMS,
        "--db",
        str(db),
        "--no-report",
        "--no-progress",
    )


def test_endpoints_share_the_work_within_their_own_limits(tmp_path: Path) -> None:
    with (
        FakeLLMServer(latency=0.05, concurrency_cap=2, cap_mode="reject") as small,
        FakeLLMServer(latency=0.05, concurrency_cap=6, cap_mode="reject") as large,
    ):
        db = tmp_path / "r.db"
        done = _run(tmp_path, [(small.openai_base_url, 2), (large.openai_base_url, 6)], db)
        assert done.returncode == 0, done.stdout + done.stderr
        # 4 claims x 15 templates x 2 samples, every one stored once
        n = sqlite3.connect(db).execute("SELECT count(*) FROM generations").fetchone()[0]
        assert n == 120
        assert small.stats.requests + large.stats.requests == 120
        # neither endpoint was ever pushed past its own limit (a push would be a 429)
        assert small.stats.rejected_cap == large.stats.rejected_cap == 0
        assert small.stats.max_active <= 2 and large.stats.max_active <= 6
        # both served, the larger one more
        assert 0 < small.stats.requests < large.stats.requests


def test_an_endpoint_that_goes_away_is_passed_over(tmp_path: Path) -> None:
    with FakeLLMServer(latency=0.01) as alive:
        dead = FakeLLMServer().start()
        dead_url = dead.openai_base_url
        dead.stop()  # nothing listens there any more: connection refused
        db = tmp_path / "r.db"
        done = _run(tmp_path, [(dead_url, 4), (alive.openai_base_url, 4)], db)
        assert done.returncode == 0, done.stdout + done.stderr
        con = sqlite3.connect(db)
        assert con.execute("SELECT count(*) FROM generations WHERE error IS NULL").fetchone() == (
            120,
        )
        assert alive.stats.requests == 120


def test_an_empty_endpoint_list_and_a_bad_endpoint_key_are_named(tmp_path: Path) -> None:
    """`endpoints = []` was reported as an unknown provider; a misspelt key of an endpoint
    listed the section's keys instead of the endpoint's."""
    with pytest.raises(ConfigError, match="endpoints is empty"):
        build_api_model("cluster/m", {"endpoints": []}, {})
    from deflectbench.config.file import load_run_file

    config = tmp_path / "run.toml"
    config.write_text(
        '[run]\nmodels = ["cluster/m"]\n\n[providers.cluster]\n'
        'endpoints = [{ base_url = "http://127.0.0.1:9/v1", colour = 1 }]\n'
    )
    with pytest.raises(ConfigError) as info:
        load_run_file(config)
    assert "unknown key 'providers.cluster.endpoints.0.colour'" in str(info.value)
    assert str(info.value).endswith("allowed: base_url, max_concurrency")


def test_credentials_in_an_endpoint_url_never_reach_the_store(tmp_path: Path) -> None:
    """docs/open-models.md: base URLs are stored without user:password@."""
    with FakeLLMServer(latency=0.01) as server:
        url = server.openai_base_url.replace("http://", "http://qa-user:s3cret-pw@")
        db = tmp_path / "r.db"
        done = _run(tmp_path, [(url, 4)], db)
        assert done.returncode == 0, done.stdout + done.stderr
        assert sqlite3.connect(db).execute("SELECT count(*) FROM generations").fetchone()[0]
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("r.db*"))
    assert b"s3cret-pw" not in stored and b"qa-user" not in stored
    assert b"s3cret-pw" not in (done.stdout + done.stderr).encode()
