"""Limits shared across parts: under ``--shard I/N`` a provider's concurrency and per-minute
limits are divided by N (at least 1 in flight, said when N exceeds the limit) unless
``shard_limits = "each"``; the dry run and the run's first lines say so; a real part against a
local server keeps to its share."""

from __future__ import annotations

from pathlib import Path

import pytest

from deflectbench.config import RunConfig, resolve_run
from deflectbench.config.shard import Shard
from deflectbench.config.shard_limits import check_mode, share_limits
from deflectbench.errors import ConfigError
from deflectbench.models.base import Limits
from deflectbench.models.endpoints import MultiEndpointModel
from deflectbench.models.registry import get_model
from support.in_process import run_cli
from support.replies import unique_reply
from support.servers import FakeLLMServer

SECTION = {"base_url": "http://127.0.0.1:9/v1", "max_concurrency": 64}


def _model(**section: object):
    return get_model("srv/m", {"srv": {**SECTION, **section}})


def test_a_part_takes_its_share_of_every_limit() -> None:
    m = _model(requests_per_minute=500, tokens_per_minute=200_000)
    said = share_limits({"srv/m": m}, Shard(2, 8), "split")
    # independent arithmetic: 64 // 8, 500 / 8, 200000 / 8
    assert m.limits.max_concurrency == 8
    assert m.limits.requests_per_minute == pytest.approx(62.5)
    assert m.limits.tokens_per_minute == pytest.approx(25_000)
    assert said[0].startswith("part 2/8: the providers' limits are split across the 8 parts")
    assert said[1] == (
        "srv/m: max_concurrency 64 -> 8, requests_per_minute 500 -> 62.5, "
        "tokens_per_minute 200,000 -> 25,000"
    )


def test_each_part_keeps_the_whole_limits_when_told() -> None:
    m = _model(requests_per_minute=500)
    said = share_limits({"srv/m": m}, Shard(2, 8), "each")
    assert m.limits.max_concurrency == 64 and m.limits.requests_per_minute == 500
    assert said == (
        'part 2/8: each part uses the providers\' whole limits (shard_limits = "each"; 8 parts '
        "together may send 8x them)",
    )


def test_more_parts_than_the_limit_keep_one_in_flight_and_say_so() -> None:
    m = _model(max_concurrency=4)
    said = share_limits({"srv/m": m}, Shard(1, 10), "split")
    assert m.limits.max_concurrency == 1
    assert "at least 1 in flight: 10 parts over a limit of 4, together up to 10 at once" in said[1]


def test_unsharded_runs_and_in_process_models_are_untouched() -> None:
    m = _model()
    assert share_limits({"srv/m": m}, None, "split") == ()
    assert m.limits.max_concurrency == 64
    assert share_limits({"srv/m": m}, Shard(1, 1), "split") == ()
    local = get_model("local/smollm2", {})
    assert share_limits({"local/smollm2": local}, Shard(1, 4), "split") == ()
    assert local.limits == Limits(max_concurrency=1, timeout_s=local.limits.timeout_s)


def test_each_endpoint_of_a_pool_takes_its_share() -> None:
    section = {
        "endpoints": [
            {"base_url": f"http://127.0.0.1:{p}/v1", "max_concurrency": 8} for p in (9, 10)
        ]
    }
    m = get_model("pool/m", {"pool": section})
    share_limits({"pool/m": m}, Shard(1, 4), "split")
    assert isinstance(m, MultiEndpointModel)
    assert [e.limit for e in m.endpoints] == [2, 2]
    assert m.limits.max_concurrency == 4  # 16 // 4


def test_a_model_and_judge_of_one_name_are_divided_once() -> None:
    m = _model()
    share_limits({"srv/m": m, "srv/m ": m}, Shard(1, 2), "split")
    assert m.limits.max_concurrency == 32


def test_the_setting_is_checked_and_defaults_to_split(benchmark) -> None:
    assert check_mode(None) == "split"
    with pytest.raises(ConfigError, match="give 'split'"):
        check_mode("both")
    r = resolve_run(benchmark, RunConfig.of(shard="1/2"), env={})
    assert r.config.shard_limits == "split"
    assert resolve_run(benchmark, RunConfig(), env={}).config.shard_limits is None
    assert "Default: split." in RunConfig.model_fields["shard_limits"].description


def _config(tmp_path: Path, url: str, limit: int) -> Path:
    config = tmp_path / "run.toml"
    config.write_text(
        '[run]\nmodels = ["srv/m"]\njudges = ["lexical"]\nsamples = 2\n\n'
        f'[providers.srv]\nbase_url = "{url}"\nmax_concurrency = {limit}\n'
        "requests_per_minute = 6000\n"
    )
    return config


def test_the_dry_run_shows_the_share_and_the_opt_out(tmp_path: Path) -> None:
    config = _config(tmp_path, "http://127.0.0.1:9/v1", 8)
    db = tmp_path / "r.db"
    split = run_cli("run", "--config", config, "--shard", "1/4", "--dry-run", "--db", db)
    assert split.returncode == 0, split.stderr
    out = " ".join(split.stdout.split())
    assert "part 1/4: the providers' limits are split across the 4 parts" in out
    assert "srv/m: max_concurrency 8 -> 2, requests_per_minute 6,000 -> 1,500" in out
    each = run_cli(
        "run",
        "--config",
        config,
        "--shard",
        "1/4",
        "--shard-limits",
        "each",
        "--dry-run",
        "--db",
        db,
    )
    assert "each part uses the providers' whole limits" in " ".join(each.stdout.split())
    assert "-> 2" not in each.stdout
    whole = run_cli("run", "--config", config, "--dry-run", "--db", db)
    assert "split across" not in whole.stdout and "whole limits" not in whole.stdout


def test_a_real_part_keeps_to_its_share_and_says_so_first(tmp_path: Path) -> None:
    server = FakeLLMServer(reply=unique_reply, latency=0.05).start()
    try:
        config = _config(tmp_path, server.openai_base_url, 4)
        done = run_cli(
            "run",
            "--config",
            config,
            "--shard",
            "1/2",
            "--claims",
            "L1_US_01,L1_INT_01",
            "--db",
            tmp_path / "r.db",
            "--no-report",
            "--no-progress",
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stderr.splitlines()[:2]
    assert first[0].startswith("part 1/2: the providers' limits are split across the 2 parts")
    assert first[1] == "srv/m: max_concurrency 4 -> 2, requests_per_minute 6,000 -> 3,000"
    assert server.stats.requests > 10
    assert server.stats.max_active <= 2  # its share of 4, never the whole


def test_judging_a_part_takes_its_share_and_says_so(tmp_path: Path) -> None:
    server = FakeLLMServer(reply=unique_reply, latency=0.02).start()
    try:
        config = _config(tmp_path, server.openai_base_url, 4)
        db = tmp_path / "r.db"
        made = run_cli(
            "run",
            "--config",
            config,
            "--claims",
            "L1_US_01",
            "--db",
            db,
            "--no-report",
            "--no-progress",
        )
        assert made.returncode == 0, made.stderr
        text = config.read_text().replace('judges = ["lexical"]', 'judges = ["srv/judge"]')
        config.write_text(text)
        judged = run_cli("judge", "--config", config, "--shard", "1/2", "--db", db, "--no-progress")
    finally:
        server.stop()
    assert judged.returncode == 0, judged.stdout + judged.stderr
    lines = judged.stderr.splitlines()
    assert lines[0].startswith("part 1/2: the providers' limits are split across the 2 parts")
    assert lines[1] == "srv/judge: max_concurrency 4 -> 2, requests_per_minute 6,000 -> 3,000"
