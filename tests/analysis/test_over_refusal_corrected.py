"""Over-refusal is a judged number (issue 33, point 4): on planted benign twins with a true
over-refusal of 0.8% and judges whose false positives are 3% and 6%, the OR tie rule reports
about 9.5%; ``analyze`` (JSON and terminal) and the report give that judged rate with its 95%
claim-block CI, and, with 200 human labels of the twins, the rate corrected for judge error
whose CI covers 0.8%; a cell whose labels are too thin is flagged, a rate without labels says
so. Coverage over many seeds: ``bench/validity_coverage.py``; over a few, the slow test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import ppi_py  # the reference implementation of PPI++ (dev dependency)
import pytest

from deflectbench.analysis.frames.scored import scored_from_frames
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.analysis.summary.validity_checks import (
    CORRECTED_SUFFIXES,
    OVER_REFUSAL_RATES,
    ValidityChecks,
    over_refusal,
    with_labels,
)
from support.in_process import run_cli
from support.over_refusal_planted import (
    BENIGN,
    V1,
    judged_over_refusal,
    planted,
    write_store,
)

TRUTH = 0.008


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "100"
    return env


@pytest.fixture(scope="module")
def planted_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(planted(0), tmp_path_factory.mktemp("planted") / "x.db")


def _all_row(j: dict) -> dict:
    return next(r for r in j["validity_checks"]["over_refusal"] if r["framing"] == "all")


def test_judged_over_refusal_with_its_ci_and_the_corrected_rate(planted_db: Path, tmp_path):
    out = tmp_path / "s.json"
    p = run_cli("analyze", "--db", planted_db, "--benchmark", "deflectbench-v1", "--json", out,
                env=_env())  # fmt: skip
    assert p.returncode == 0, (p.stdout, p.stderr)
    j = json.loads(out.read_text())
    row = _all_row(j)
    # judged: about 9.5% (0.8% true, 8.8% of the rest false positives under the OR); its CI
    # covers claim sampling only, so it covers the judged expectation, not the truth
    assert abs(judged_over_refusal() - 0.0955) < 1e-3
    assert row["n_benign"] == 640 and row["claims_benign"] == 80
    assert row["over_refusal_lo"] <= judged_over_refusal() <= row["over_refusal_hi"]
    assert row["over_refusal_lo"] > 5 * TRUTH
    # corrected with 200 labels of the twins (the judges' consensus as prediction, PPI++)
    assert j["validity_checks"]["over_refusal_correction"] == "ppi++"
    assert row["over_refusal_n_labels"] == 200
    lo, hi = row["over_refusal_corrected_lo"], row["over_refusal_corrected_hi"]
    assert 0.0 <= lo <= TRUTH <= hi <= 1.0, (lo, hi)
    assert hi < row["over_refusal_lo"]  # the correction moves it off the judged interval
    # the point estimate is ppi_py's PPI++ mean (the reference implementation): the labels'
    # truth, the OR consensus on the labelled twins and on every twin, lambda fitted
    world = planted(0)
    twins = world.gens.loc[world.gens["benchmark"] == BENIGN.key, "gen_id"]
    judged = world.judgments.groupby("gen_id")["refusal"].max()  # two judges: the OR
    labelled = [lab.gen_id for lab in world.labels]
    point = ppi_py.ppi_mean_pointestimate(
        np.array([float(lab.values["refusal"]) for lab in world.labels]),
        judged.loc[labelled].to_numpy(dtype=float),
        judged.loc[twins].to_numpy(dtype=float),
        lam=None,
    )
    assert row["over_refusal_corrected"] == pytest.approx(float(np.ravel(point)[0]), abs=1e-6)
    assert row["over_refusal"] == pytest.approx(float(judged.loc[twins].mean()), abs=1e-12)
    # no labels of the manipulative pack: no number, and a note saying why
    assert row["refusal_corrected"] is None and row["refusal_n_labels"] == 0
    assert row["refusal_corrected_note"] == "no human labels of deflectbench-v1"
    # every row has every corrected key; a flag is text or null
    for r in j["validity_checks"]["over_refusal"]:
        for rate, _, _ in OVER_REFUSAL_RATES:
            assert all(f"{rate}_{s}" in r for s in CORRECTED_SUFFIXES)
            flag = r[f"{rate}_corrected_flag"]
            assert flag is None or "labels" in flag
    # the terminal shows both tables
    p = run_cli("analyze", "--db", planted_db, "--benchmark", "deflectbench-v1", env=_env())
    assert p.returncode == 0, p.stderr
    assert "Over-refusal on the benign twins" in p.stdout
    assert "Over-refusal corrected for judge error (ppi++" in p.stdout
    assert "† manip. ref.: no human labels of deflectbench-v1" in p.stdout
    assert f"{100 * row['over_refusal']:.1f}%" in p.stdout
    # at 80 columns no header of the validity tables is cut
    p = run_cli("analyze", "--db", planted_db, "--benchmark", "deflectbench-v1",
                env={**_env(), "COLUMNS": "80"})  # fmt: skip
    shown = p.stdout[p.stdout.index("Over-refusal on the benign twins") :]
    assert "…" not in shown and "over-ref." in shown, shown


def test_no_correction_asked_no_corrected_columns(planted_db: Path, tmp_path):
    out = tmp_path / "s.json"
    p = run_cli("analyze", "--db", planted_db, "--benchmark", "deflectbench-v1", "--json", out,
                "--correction", "none", env=_env())  # fmt: skip
    assert p.returncode == 0, p.stderr
    j = json.loads(out.read_text())
    assert j["validity_checks"]["over_refusal_correction"] is None
    assert "over_refusal_corrected" not in _all_row(j)


def test_the_report_shows_the_ci_and_the_corrected_rate(planted_db: Path, tmp_path):
    out = tmp_path / "report"
    p = run_cli("report", "--benchmark", "deflectbench-v1-benign", "--db", planted_db,
                "--out", out, env=_env())  # fmt: skip
    assert p.returncode == 0, (p.stdout, p.stderr)
    html = (out / "report.html").read_text()
    glance = html[html.index('id="summary"') : html.index("</section>", html.index('id="summary"'))]
    assert "corrected for judge error" in glance, glance
    table = (out / "tables" / "over_refusal_corrected.csv").read_text().splitlines()
    assert table[0].startswith("model,framing,over_refusal_corrected,over_refusal_corrected_lo")
    assert "Over-refusal corrected for judge error with the human labels" in html


@pytest.mark.slow
def test_corrected_ci_covers_the_planted_truth_over_seeds():
    """Eight fresh worlds of 200 labels: the corrected interval of the model's over-refusal
    (framing all) covers 0.8% in each; the judged one in none."""
    covered = judged = 0
    seeds = range(100, 108)
    for seed in seeds:
        p = planted(seed)
        scored = scored_from_frames(p.gens, p.judgments, V1)
        checks = with_labels(
            ValidityChecks(over_refusal=over_refusal(p.gens, p.judgments, V1, scored)),
            p.labels_of(),
            (p.gens, p.judgments),
            V1,
            scored,
            AnalysisOptions(),
            None,
        )
        assert checks is not None and checks.over_refusal is not None
        row = checks.over_refusal.iloc[0]
        assert row["framing"] == "all"
        lo, hi = row["over_refusal_corrected_lo"], row["over_refusal_corrected_hi"]
        assert 0.0 <= lo <= hi <= 1.0
        covered += int(lo <= TRUTH <= hi)
        judged += int(row["over_refusal_lo"] <= TRUTH <= row["over_refusal_hi"])
    assert covered >= len(seeds) - 1 and judged == 0, (covered, judged)


def test_pooled_over_models_names_the_method_it_made(planted_db: Path, tmp_path):
    """--pool-models: the over-refusal's correction is named as the calibration made it (the
    benign pack's own analysis says which method that is)."""
    got = {}
    for pack in ("deflectbench-v1", "deflectbench-v1-benign"):
        out = tmp_path / f"{pack}.json"
        p = run_cli("analyze", "--db", planted_db, "--benchmark", pack, "--pool-models",
                    "--json", out, env=_env())  # fmt: skip
        assert p.returncode == 0, p.stderr
        got[pack] = json.loads(out.read_text())
    method = got["deflectbench-v1-benign"]["calibration"]["method"]
    for j in got.values():
        assert j["validity_checks"]["over_refusal_correction"] == method
    a, b = (_all_row(j) for j in got.values())
    assert a["over_refusal_corrected"] == b["over_refusal_corrected"]  # either pack's analysis
