"""Judge self-consistency (issue 27, item 4): a seeded share of the answers re-judged by each
judge, stored apart (never in the verdicts), the same sample under the same seed, and the
analysis setting a judge's agreement with itself beside its agreement with the other judge."""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from pathlib import Path

import pandas as pd

from deflectbench.analysis.summary.validity_checks import self_consistency
from deflectbench.pipeline.self_consistency import consistency_sample
from deflectbench.vocab import FIELDS
from support.cli_runs import write_toml
from support.in_process import run_cli
from support.servers import FakeLLMServer


def test_the_sample_is_the_same_under_the_same_seed():
    ids = list(range(1, 501))
    a = consistency_sample(ids, 0.02, seed=7)
    assert len(a) == 10 and a == sorted(a) and set(a) <= set(ids)
    assert consistency_sample(list(reversed(ids)), 0.02, seed=7) == a  # order does not matter
    assert consistency_sample(ids, 0.02, seed=8) != a
    assert consistency_sample(ids[:10], 0.02, seed=7) and consistency_sample([], 0.5, 1) == []


def test_self_agreement_against_a_count_by_hand():
    zero = dict.fromkeys(FIELDS, 0.0)
    verdicts = pd.DataFrame(
        [
            {"gen_id": 1, "model": "m", "judge": "a", **zero, "refusal": 1.0},
            {"gen_id": 1, "model": "m", "judge": "b", **zero},
            {"gen_id": 2, "model": "m", "judge": "a", **zero},
            {"gen_id": 2, "model": "m", "judge": "b", **zero},
        ]
    )
    again = [
        {"gen_id": 1, "judge": "a", "seed": 0, **dict.fromkeys(FIELDS, 0), "refusal": 1},
        {"gen_id": 2, "judge": "a", "seed": 0, **dict.fromkeys(FIELDS, 0), "WA_present": 1},
    ]
    (row,) = self_consistency(verdicts, again).to_dict(orient="records")
    # itself: 16 fields compared, 1 differs (WA on answer 2); b: 16 compared, 1 differs (refusal)
    assert row["judge"] == "a" and row["n"] == 2
    assert row["self_agreement"] == 15 / 16 and row["other_agreement"] == 15 / 16


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "200"
    return env


def test_judge_self_consistency_end_to_end(tmp_path: Path):
    def reply(req) -> str:
        if "Score the response below" not in req.prompt:
            return f"An answer {zlib.crc32(req.prompt.encode())}"  # each its own: no cache hit
        refusal = int(req.attempt > 0)  # a judge that says refusal when asked again
        return json.dumps({"reasoning": "r", **dict.fromkeys(FIELDS, 0), "refusal": refusal})

    with FakeLLMServer(reply=reply) as server:
        cfg = write_toml(
            tmp_path / "run.toml",
            {
                "run": {
                    "models": ["vllm/m"],
                    "judges": ["lexical", "judges/j"],
                    "claims": ["L1_US_01", "L1_US_02", "L2_INT_01", "L3_US_01"],
                    "runs": 1,
                },
                "providers.vllm": {"base_url": server.openai_base_url, "max_retries": 0},
                "providers.judges": {"base_url": server.openai_base_url, "max_retries": 0},
            },
        )
        db = tmp_path / "x.db"
        p = run_cli("run", "--config", cfg, "--db", db, "--no-progress", "--no-report", env=_env())
        assert p.returncode == 0, (p.stdout, p.stderr)
        with sqlite3.connect(db) as c:
            before = c.execute("SELECT count(*) FROM judgments").fetchone()[0]
        args = ("judge", "--config", cfg, "--db", db, "--no-progress", "--self-consistency", "0.1")
        p = run_cli(*args, "--seed", "3", env=_env())
        assert p.returncode == 0, (p.stdout, p.stderr)
        assert (
            "self-consistency judges/j: 6 answers in the sample (seed 3), 6 re-judged now"
            in p.stdout
        )
        with sqlite3.connect(db) as c:
            assert c.execute("SELECT count(*) FROM judgments").fetchone()[0] == before
            first = sorted(c.execute("SELECT gen_id, judge FROM rejudgments").fetchall())
        assert len(first) == 12
        p = run_cli(*args, "--seed", "3", env=_env())  # again: the same sample, nothing sent
        assert "6 answers in the sample (seed 3), 0 re-judged now" in p.stdout, p.stdout
        p = run_cli("analyze", "--json", tmp_path / "s.json", "--db", db, env=_env())
        assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path / "s.json").read_text())["validity_checks"]["self_consistency"]
    by_judge = {r["judge"]: r for r in rows}
    assert by_judge["lexical"]["self_agreement"] == 1.0 and by_judge["lexical"]["n"] == 6
    assert by_judge["judges/j"]["n"] == 6 and by_judge["judges/j"]["self_agreement"] == 7 / 8
    assert by_judge["judges/j"]["other_agreement"] is not None
    p = run_cli("judge", "--config", cfg, "--db", db, "--self-consistency", "2", env=_env())
    assert p.returncode == 2 and "(0, 1]" in p.stderr


def test_self_agreement_ci_against_a_plain_loop_over_claims():
    """Each share's 95% CI: every field compared is one row, the rows of a claim drawn together
    (the documented draws), against a plain loop."""
    import numpy as np

    rng = np.random.default_rng(4)
    claims = {g: f"C{g % 7}" for g in range(1, 61)}
    verdicts, again = [], []
    for g in claims:
        first = {f: float(rng.random() < 0.3) for f in FIELDS}
        other = {f: v if rng.random() < 0.85 else 1.0 - v for f, v in first.items()}
        second = {f: int(v) if rng.random() < 0.9 else int(1 - v) for f, v in first.items()}
        verdicts += [
            {"gen_id": g, "model": "m", "judge": "a", **first},
            {"gen_id": g, "model": "m", "judge": "b", **other},
        ]
        again.append({"gen_id": g, "judge": "a", "seed": 0, **second})
    (row,) = self_consistency(pd.DataFrame(verdicts), again, claims=claims, seed=3).to_dict(
        orient="records"
    )
    first_of = {r["gen_id"]: r for r in verdicts if r["judge"] == "a"}
    other_of = {r["gen_id"]: r for r in verdicts if r["judge"] == "b"}
    order = sorted(set(claims.values()))
    cells: dict[str, dict[str, list[int]]] = {c: {"self": [], "other": []} for c in order}
    for r in again:
        g = r["gen_id"]
        for f in FIELDS:
            cells[claims[g]]["self"].append(int(first_of[g][f] == r[f]))
            cells[claims[g]]["other"].append(int(first_of[g][f] == other_of[g][f]))
    draws = np.random.default_rng(3).integers(0, len(order), size=(1000, len(order)))
    for share in ("self", "other"):
        reps = []
        for draw in draws:
            picked = [x for k in draw for x in cells[order[k]][share]]
            reps.append(sum(picked) / len(picked))
        lo, hi = np.percentile(reps, [2.5, 97.5])
        assert abs(row[f"{share}_agreement_lo"] - lo) < 1e-12
        assert abs(row[f"{share}_agreement_hi"] - hi) < 1e-12
        assert row[f"{share}_agreement_lo"] <= row[f"{share}_agreement"]
        assert row[f"{share}_agreement"] <= row[f"{share}_agreement_hi"]
    assert row["claims"] == 7
    # without the claims of the answers there is no claim-block CI, not a generation one
    (bare,) = self_consistency(pd.DataFrame(verdicts), again).to_dict(orient="records")
    assert bare["self_agreement"] == row["self_agreement"]
    assert bare["self_agreement_lo"] != bare["self_agreement_lo"]  # NaN
