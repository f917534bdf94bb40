"""Bounds a hostile run file or flag meets (issue 22): a provider concurrency of 1e9 is refused
in one line (it would open a billion request slots); ``analyze --seed -1`` and ``--resamples``
beyond memory are one-line errors, the latter naming the largest that fits."""

from __future__ import annotations

import pytest

from deflectbench.config.file import load_run_file
from deflectbench.config.plan import MAX_CONCURRENCY, check_resamples, check_seed
from deflectbench.errors import ConfigError
from support.in_process import run_cli
from support.report_store import make_store


@pytest.mark.parametrize(
    "section",
    [
        "max_concurrency = 1e9",
        "max_concurrency = 1000000000",
        "max_concurrency = 2.5",
        "max_concurrency = true",
        'model_max_concurrency = { "gpt-5.5" = 1e9 }',
        'endpoints = [{ base_url = "http://127.0.0.1:9/v1", max_concurrency = 100000 }]',
    ],
)
def test_a_provider_concurrency_out_of_range_is_one_line(tmp_path, section):
    path = tmp_path / "run.toml"
    path.write_text(f"[providers.openai]\n{section}\n")
    with pytest.raises((ConfigError, ValueError)) as exc:
        load_run_file(path)
    assert "concurrency" in str(exc.value) and "\n" not in str(exc.value)


def test_a_concurrency_within_range_is_kept(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(f"[providers.openai]\nmax_concurrency = {MAX_CONCURRENCY}\n")
    assert load_run_file(path).providers["openai"]["max_concurrency"] == MAX_CONCURRENCY


def test_seed_and_resamples_bounds():
    with pytest.raises(ConfigError, match="--seed must be from 0"):
        check_seed(-1)
    assert check_seed(0) == 0
    with pytest.raises(ConfigError, match="the largest that fits is 1,0") as exc:
        check_resamples(10**8, claims=80, available=2 * 1_000 * (32 * 80 + 64) + 1)
    assert "GiB" in str(exc.value)
    assert check_resamples(1000, claims=80, available=8 * 1024**3) == 1000


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from deflectbench.benchmark import default_benchmark

    return make_store(tmp_path_factory.mktemp("bounds") / "s.db", default_benchmark())


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--seed", "-1"], "--seed must be from 0"),
        (["--resamples", "100000000000"], "the largest that fits is"),
    ],
)
def test_analyze_refuses_out_of_range_flags_in_one_line(db, flags, words):
    p = run_cli("analyze", "--db", db, *flags)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert words in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
