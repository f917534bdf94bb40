"""Cascaded judging from Python and the command line: ``deflectbench.judge(..., cheap_judge=,
expensive_share=)`` judges the sample only and stores the design; an extension keeps the sample
(a larger share adds answers, never drops one); what is asked wrongly is one line; the
verdicts' provenance (judges' rows, people's labels apart); ``analyze`` says the estimand and
the calls per judge in its JSON and on the terminal."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

import deflectbench as dfb
from deflectbench.errors import ConfigError
from deflectbench.store import Store
from deflectbench.store.cascade import load_cascade
from support.fakes import VERDICT, is_judge_request
from support.in_process import run_cli

CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15", "L1_INT_01", "L2_US_02"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral", "explicit_choose_any"]
JUDGE = "vllm/judge"


def _reply(req) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    seed = req.body.get("seed") if isinstance(req.body, dict) else None
    return f"I cannot help, but what about them? ({len(req.prompt)}, {seed})"


def _providers(server) -> dict:
    return {"vllm": {"base_url": server.openai_base_url, "max_retries": 0}}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    return env


@pytest.fixture(scope="module")
def made(tmp_path_factory, _shared_llm_server) -> Path:
    """A store of 2 models x 6 claims x 4 templates x 2 samples judged by lexical."""
    server = _shared_llm_server.reset(reply=_reply)
    db = tmp_path_factory.mktemp("cascade") / "c.db"
    result = dfb.run(
        db=db,
        models=["vllm/m1", "vllm/m2"],
        judges=["lexical"],
        claims=CLAIMS,
        templates=TEMPLATES,
        samples=2,
        providers=_providers(server),
    )
    assert result.complete
    return db


@pytest.fixture
def answers(made: Path, tmp_path: Path, llm_server) -> tuple[Path, dict]:
    """A copy of that store, and the providers that reach the (judging) server."""
    server = llm_server.reset(reply=_reply)
    db = tmp_path / "c.db"
    shutil.copy(made, db)
    return db, _providers(server)


def _judged(db: Path, judge: str) -> set[int]:
    conn = sqlite3.connect(db)
    try:
        q = "SELECT gen_id FROM judgments WHERE judge = ? AND error IS NULL"
        return {int(r[0]) for r in conn.execute(q, (judge,))}
    finally:
        conn.close()


def test_judge_in_cascade_from_python(answers, tmp_path: Path) -> None:
    db, providers = answers
    cfg = dfb.RunConfig.of(providers=providers)
    first = dfb.judge(
        db, judges=[JUDGE], config=cfg, cheap_judge="lexical", expensive_share=0.2, seed=3
    )
    assert first.complete and first.exit_code == 0
    small = _judged(db, JUDGE)
    assert first.cascade == len(small) and 0 < len(small) < 96
    assert first.to_json()["cascade_sample"] == len(small)
    with Store.open(db) as store:
        design = load_cascade(store, "deflectbench-v1.0")
    assert design is not None and design.cheap == "lexical" and design.expensive == (JUDGE,)
    assert design.default == 0.2 and design.seed == 3
    # again: nothing new; a larger share: the sample grows and keeps every answer it held
    again = dfb.judge(
        db, judges=[JUDGE], config=cfg, cheap_judge="lexical", expensive_share=0.2, seed=3
    )
    assert again.results[JUDGE].ok == 0 and _judged(db, JUDGE) == small
    dfb.judge(db, judges=[JUDGE], config=cfg, cheap_judge="lexical", expensive_share=0.5, seed=3)
    assert small < _judged(db, JUDGE)
    # provenance: the judges' verdicts are judgments; people's labels stay in their own table
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT count(*) FROM human_labels").fetchone()[0] == 0
    finally:
        conn.close()

    out = tmp_path / "a.json"
    p = run_cli("analyze", "--db", db, "--json", out, env=_env())
    assert p.returncode == 0, p.stderr
    cascade = json.loads(out.read_text())["cascade"]
    assert cascade["calls"] == {"lexical": 96, JUDGE: len(_judged(db, JUDGE))}
    assert cascade["design"]["share"] == 0.5
    assert cascade["estimand"].startswith("the consensus (mean) of the expensive judges vllm/judge")
    for g in cascade["by_model"]:
        refusal = g["measures"]["outcome:refusal"]
        assert refusal["cascaded"]["rate"] is not None and "lambda" in refusal["cascaded"]
    shown = run_cli("analyze", "--db", db, env={**_env(), "COLUMNS": "160"})
    assert shown.returncode == 0, shown.stderr
    assert "Cascaded judging: estimand the consensus (mean)" in shown.stdout
    assert f"Calls per judge: lexical 96, {JUDGE} {len(_judged(db, JUDGE))}." in shown.stdout
    print(shown.stdout[shown.stdout.index("Cascaded judging") :])
    page = run_cli("report", "--db", db, "--out", tmp_path / "rep", env=_env())
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Cascaded judging" in html and "Estimand: the consensus (mean)" in html
    calls = (tmp_path / "rep" / "tables" / "cascade_calls.csv").read_text()
    assert f"{JUDGE},{len(_judged(db, JUDGE))}" in calls and "lexical,96" in calls


def test_the_stored_design_is_kept(answers) -> None:
    db, providers = answers
    cfg = dfb.RunConfig.of(providers=providers)
    dfb.judge(db, judges=[JUDGE], config=cfg, cheap_judge="lexical", expensive_share=0.3, seed=3)
    with pytest.raises(ConfigError, match=r"seed 3.*seed 4.*stored settings"):
        dfb.judge(
            db, judges=[JUDGE], config=cfg, cheap_judge="lexical", expensive_share=0.3, seed=4
        )
    with pytest.raises(ConfigError, match="a smaller one would leave judged answers out"):
        dfb.judge(
            db, judges=[JUDGE], config=cfg, cheap_judge="lexical", expensive_share=0.1, seed=3
        )


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"expensive_share": 0.1}, "give --cheap-judge too"),
        ({"cheap_judge": "lexical"}, "needs --expensive-share"),
        (
            {"cheap_judge": "lexical", "expensive_share": 0.1, "expensive_target": "refusal +-3pp"},
            "one of them",
        ),
        ({"cheap_judge": "lexical", "expensive_share": 1.5}, "above 0 and at most 1"),
        ({"cheap_judge": "lexical", "expensive_share": 0.1, "stratify": "framing"}, "--stratify"),
        ({"cheap_judge": JUDGE, "expensive_share": 0.1}, "is also a judge"),
        ({"cheap_judge": "lexical", "expensive_target": "refusal +-3"}, "cannot read the target"),
        (
            {"cheap_judge": "lexical", "expensive_target": "refusal +-3pp", "stratify": "none"},
            "leave --stratify out",
        ),
    ],
)
def test_a_wrong_cascade_is_one_line(answers, kwargs, message) -> None:
    db, providers = answers
    cfg = dfb.RunConfig.of(providers=providers)
    with pytest.raises(ConfigError, match=message) as err:
        dfb.judge(db, judges=[JUDGE], config=cfg, **kwargs)
    assert "\n" not in str(err.value)


def test_a_target_sizes_each_models_share_and_stores_it(answers) -> None:
    db, providers = answers
    cfg = dfb.RunConfig.of(providers=providers)
    dfb.judge(
        db,
        judges=[JUDGE],
        config=cfg,
        cheap_judge="lexical",
        expensive_target="refusal +-20pp",
        seed=1,
    )
    with Store.open(db) as store:
        design = load_cascade(store, "deflectbench-v1.0")
    assert design is not None and design.stratify == "model" and design.target is not None
    assert set(design.shares) == {f"vllm/m{i} [{c}]" for i in (1, 2) for c in _conditions(db)}
    assert all(0 < s <= 1 for s in design.shares.values())


def _conditions(db: Path) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {r[0] for r in conn.execute("SELECT DISTINCT condition FROM generations")}
    finally:
        conn.close()


def test_with_peoples_labels_the_truth_layer_is_reported(answers, tmp_path: Path) -> None:
    """People label every sampled answer: each model gets the truth (both layers) beside the
    consensus, and the estimand says so; the labels stay in human_labels."""
    from deflectbench.records import HumanLabel
    from deflectbench.vocab import FIELDS

    db, providers = answers
    cfg = dfb.RunConfig.of(providers=providers)
    dfb.judge(db, judges=[JUDGE], config=cfg, cheap_judge="lexical", expensive_share=0.6, seed=2)
    sample = sorted(_judged(db, JUDGE))
    with Store.open(db) as store:
        for i, g in enumerate(sample):  # people disagree with the judge on every third answer
            values = {f: int(VERDICT.get(f, 0) or 0) for f in FIELDS}
            if i % 3 == 0:
                values = {**values, "refusal": 1, "compliance_clean": 0}
            store.save_label(HumanLabel(g, "alice", values))
    out = tmp_path / "a.json"
    p = run_cli("analyze", "--db", db, "--json", out, env=_env())
    assert p.returncode == 0, p.stderr
    cascade = json.loads(out.read_text())["cascade"]
    assert "truth is the people's rate" in cascade["estimand"]
    for g in cascade["by_model"]:
        truth = g["measures"]["outcome:refusal"]["truth"]
        assert truth["labels"] == g["with_consensus"]
        assert truth["rate"] is not None and 0.2 < truth["rate"] < 0.5
    with Store.open(db) as store:
        assert {lab.annotator for lab in store.labels()} == {"alice"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"expensive_share": 0.4, "stratify": "model,framing"},
        {"expensive_target": "refusal +-20pp per model x framing"},
    ],
)
def test_stratified_by_model_and_framing(answers, tmp_path: Path, kwargs) -> None:
    """Strata model x framing: the sample is drawn per stratum and weighed N_h / n_h in each
    model's estimate; analyze gives per model and per model x framing estimates."""
    db, providers = answers
    cfg = dfb.RunConfig.of(providers=providers)
    done = dfb.judge(db, judges=[JUDGE], config=cfg, cheap_judge="lexical", seed=9, **kwargs)
    assert done.complete
    with Store.open(db) as store:
        design = load_cascade(store, "deflectbench-v1.0")
    assert design is not None and design.stratify == "model,framing"
    out = tmp_path / "a.json"
    p = run_cli("analyze", "--db", db, "--json", out, env=_env())
    assert p.returncode == 0, p.stderr
    cascade = json.loads(out.read_text())["cascade"]
    assert cascade["sampled"] == len(_judged(db, JUDGE))
    assert {len(g["group"]) for g in cascade["by_model_framing"]} == {2}
    assert len(cascade["by_model"]) == 2
