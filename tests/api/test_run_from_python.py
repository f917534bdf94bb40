"""A run from Python is the command's run: ``deflectbench.run(...)`` against a local
OpenAI-wire server stores the rows ``deflectbench run`` stores and gives the same ``analyze
--json``; ``status(...).to_json()`` is ``status --json``; ``judge``, ``estimate`` and the one
configuration (:class:`RunConfig`: run file, keywords, old spellings) as the CLI has them."""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from pathlib import Path

import pytest

import deflectbench as dfb
from deflectbench.api.run import estimate
from deflectbench.config import RunConfig
from deflectbench.errors import ConfigError
from support.cli_runs import write_toml
from support.in_process import run_cli

CLAIMS = ["L1_US_01", "L2_INT_03"]
TEMPLATES = ["explicit_direct_WA", "implicit_neutral"]


def _reply(req) -> str:
    seed = req.body.get("seed") if isinstance(req.body, dict) else None
    return f"But what about the other side's record? ({len(req.prompt)}, {seed})"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    return env


def _rows(db: Path) -> tuple[list[tuple], list[tuple]]:
    """What a run stored, without the ids and times that differ between two runs."""
    conn = sqlite3.connect(db)
    try:
        gens = conn.execute(
            "SELECT benchmark, model, condition, claim_id, prompt_id, sample, response, "
            "finish_reason, error FROM generations ORDER BY 2, 3, 4, 5, 6"
        ).fetchall()
        verdicts = conn.execute(
            "SELECT g.model, g.claim_id, g.prompt_id, g.sample, j.judge, j.raw, j.refusal, "
            "j.WA_present, j.parse_error, j.error FROM judgments j JOIN generations g USING (gen_id) "
            "ORDER BY 1, 2, 3, 4, 5"
        ).fetchall()
    finally:
        conn.close()
    return gens, verdicts


def _analyze(db: Path) -> dict:
    p = run_cli("analyze", "--json", "-", "--db", db, env=_env())
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture
def server(llm_server):
    return llm_server.reset(reply=_reply)


def _providers(server) -> dict:
    return {"vllm": {"base_url": server.openai_base_url, "max_retries": 0}}


def test_a_run_from_python_stores_what_the_command_stores(tmp_path: Path, server) -> None:
    py_db, cli_db = tmp_path / "py.db", tmp_path / "cli.db"
    result = dfb.run(
        db=py_db,
        models="vllm/m",
        judges=["lexical"],
        claims=CLAIMS,
        templates=TEMPLATES,
        samples=2,
        providers=_providers(server),
    )
    assert result.complete and result.exit_code == 0 and result.stop_reason is None
    assert result.account.startswith("complete: vllm/m [") and "8 cells" in result.account
    assert set(result.framing["framing"]) == {"direct", "implicit_neutral", "all"}
    assert len(result.scored) == 8 and result.control is None
    cfg = write_toml(
        tmp_path / "run.toml",
        {
            "run": {"models": ["vllm/m"], "judges": ["lexical"], "runs": 2},
            "providers.vllm": _providers(server)["vllm"],
        },
    )
    p = run_cli(
        "run", "--config", cfg, "--claims", ",".join(CLAIMS), "--templates", ",".join(TEMPLATES),
        "--db", cli_db, "--no-progress", "--no-report", env=_env(),
    )  # fmt: skip
    assert p.returncode == result.exit_code == 0, p.stderr
    assert result.account in p.stdout
    gens, verdicts = _rows(py_db)
    assert len(gens) == 8 and len(verdicts) == 8
    assert (gens, verdicts) == _rows(cli_db)
    assert _analyze(py_db) == _analyze(cli_db)


def test_status_to_json_is_status_json(tmp_path: Path, server) -> None:
    db = tmp_path / "s.db"
    dfb.run(
        db=db, models=["vllm/m"], judges="lexical", claims=CLAIMS[:1], templates=TEMPLATES[:1],
        providers=_providers(server),
    )  # fmt: skip
    st = dfb.status(db)
    p = run_cli("status", "--json", "--db", db, env=_env())
    assert p.returncode == st.exit_code == 0, p.stderr
    assert st.to_json() == json.loads(p.stdout)
    assert list(st.to_json()) == list(json.loads(p.stdout))  # the same keys in the same order
    assert st.models["vllm/m"].ok == 1 and st.judges["lexical"].judged == 1
    assert st.generations.loc[0, "missing"] == 0


def test_judge_and_the_dry_run_from_python(tmp_path: Path, server) -> None:
    db = tmp_path / "j.db"
    settings = dict(models=["vllm/m"], claims=CLAIMS[:1], templates=TEMPLATES, judges=["lexical"])
    est = estimate(db=db, providers=_providers(server), **settings)
    assert [(r.role, r.name, r.requests) for r in est.rows] == [
        ("model", "vllm/m", 2),
        ("judge", "lexical", 2),
    ]
    est.check()  # nothing refused
    assert not db.exists()  # a dry run writes nothing
    dfb.run(db=db, providers=_providers(server), **settings)
    done = dfb.judge(db, judges=["lexical"])
    assert done.complete and done.exit_code == 0
    assert done.account == "complete: judge lexical: done"
    p = run_cli("judge", "--judge", "lexical", "--db", db, "--no-progress", env=_env())
    assert p.returncode == 0 and done.account in p.stdout


def test_one_config_from_a_file_keywords_and_old_spellings(tmp_path: Path) -> None:
    cfg = write_toml(tmp_path / "run.toml", {"run": {"models": ["a/b"], "runs": 3, "seed": 7}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from deflectbench.config import load_config

        config = load_config(cfg)
    assert config.samples == 3 and any("'samples'" in str(w.message) for w in caught)
    merged = config.merged(RunConfig.of(seed=1, cache=False))
    assert (merged.models, merged.samples, merged.seed, merged.cache) == (["a/b"], 3, 1, False)
    assert RunConfig.of(models="a/b, c/d").models == ["a/b", "c/d"]
    with pytest.raises(ConfigError, match="unknown key 'sample'; allowed: models") as exc:
        RunConfig.of(sample=2)
    assert "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match="one setting"):
        RunConfig.of(runs=2, samples=2)
