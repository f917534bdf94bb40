"""``deflectbench compare``: the regression gate's exit codes and messages, the JSON, CSV and
HTML files, the judge check and the selectors' one-line errors, on stores with planted rates."""

from __future__ import annotations

import csv
import json

import pytest

from support.compare_store import refusal_store
from support.in_process import run_cli

PAYLOAD = "<script>alert(1)</script>"


def _one_line_error(p) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    lines = [x for x in p.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    old = refusal_store(root / "old.db", {"acme/m": 0.5}, seed=0)
    again = refusal_store(root / "again.db", {"acme/m": 0.5}, seed=1)
    new = refusal_store(root / "new.db", {"acme/m": 0.2}, seed=2, response=PAYLOAD)
    other = refusal_store(root / "other.db", {"acme/m": 0.5}, seed=3, judges=("judge-a", "judge-c"))
    both = refusal_store(root / "both.db", {"acme/m": 0.5}, seed=4, condition="t1")
    refusal_store(both, {"acme/m": 0.2}, seed=5, condition="t0")
    return {"old": old, "again": again, "new": new, "other": other, "both": both, "root": root}


def test_the_gate_exits_6_with_one_line_per_failure(stores):
    p = run_cli(
        "compare", stores["new"], "--baseline", stores["old"],
        "--fail-if", "refusal < -5pp", "--fail-if", "clean_compliance > +3pp@coach",
        "--fail-if", "refusal < -60pp", "--resamples", "300",
    )  # fmt: skip
    assert p.returncode == 6, (p.stdout[-2000:], p.stderr[-2000:])
    fails = [x for x in p.stderr.splitlines() if x.startswith("fail: ")]
    assert len(fails) == 2, p.stderr
    assert fails[0].startswith("fail: refusal overall, new.db:acme/m vs baseline old.db:acme/m: -")
    assert "lies wholly below -5 pp (--fail-if 'refusal < -5pp')" in fails[0]
    assert "clean_compliance @coach" in fails[1] and "wholly above +3 pp" in fails[1]


def test_the_gate_passes_two_runs_of_the_same_planted_data(stores, tmp_path):
    out = tmp_path / "cmp.json"
    p = run_cli(
        "compare", stores["again"], "--baseline", stores["old"], "--fail-if", "refusal < -5pp",
        "--fail-if", "refusal > +5pp", "--json", out, "--resamples", "300",
    )  # fmt: skip
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    assert "gate passed" in p.stderr and "fail:" not in p.stderr
    rows = json.loads(out.read_text())["rows"]
    assert min(r["p_holm"] for r in rows if r["p_holm"] is not None) > 0.05


def test_json_csv_and_html(stores, tmp_path):
    j, c, h = tmp_path / "c.json", tmp_path / "c.csv", tmp_path / "c.html"
    p = run_cli(
        "compare", stores["old"], stores["new"], "--json", j, "--csv", c, "--html", h,
        "--resamples", "200",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    data = json.loads(j.read_text())
    rows = data["rows"]
    assert len(rows) == 13 * (1 + 7 + 15)
    overall = next(r for r in rows if r["measure"] == "refusal" and r["scope"] == "overall"
                   and r["kind"] == "outcome")  # fmt: skip
    for key in ("model_a", "model_b", "measure", "framing", "rate_a", "rate_b", "diff", "ci95",
                "p", "p_holm", "h", "corrected"):  # fmt: skip
        assert key in overall
    assert overall["framing"] is None and overall["corrected"] is False
    assert overall["model_a"] == "old.db:acme/m" and overall["model_b"] == "new.db:acme/m"
    assert overall["diff"] == pytest.approx(overall["rate_b"] - overall["rate_a"], abs=1e-9)
    lo, hi = overall["ci95"]
    assert lo <= overall["diff"] <= hi < 0
    coach = [r for r in rows if r["scope"] == "framing" and r["framing"] == "coach"]
    assert len(coach) == 13
    assert data["flips"] and data["flips"][0]["example_b"].startswith(("No. <script>", "Sure. <s"))
    with c.open(newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(rows) and table[0]["model_a"] == "old.db:acme/m"
    page = h.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page and "Content-Security-Policy" in page


def test_different_judges_are_refused_unless_allowed(stores, tmp_path):
    line = _one_line_error(run_cli("compare", stores["old"], stores["other"]))
    assert "judged by judge-a, judge-b" in line and "judge-a, judge-c" in line
    assert "--allow-judge-change" in line
    out = tmp_path / "j.json"
    p = run_cli(
        "compare", stores["old"], stores["other"], "--allow-judge-change", "--json", out,
        "--resamples", "100",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "flagged:" in p.stderr
    data = json.loads(out.read_text())
    assert all(r["judges_differ"] for r in data["rows"]) and data["judge_notes"]


def test_two_conditions_of_one_model(stores, tmp_path):
    both = stores["both"]
    out = tmp_path / "c.json"
    p = run_cli(
        "compare", f"{both}:acme/m:t1", f"{both}:acme/m:t0", "--json", out, "--resamples", "100"
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())["rows"][0]
    assert r["model_a"] == "both.db:acme/m [t1]" and r["model_b"] == "both.db:acme/m [t0]"
    assert "2 conditions (t0, t1)" in _one_line_error(run_cli("compare", f"{both}:acme/m", both))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{old}:acme/x", "{new}"], "no model 'acme/x' in that store (did you mean 'acme/m'?)"),
        (["{root}/nowhere.db", "{new}"], "no results store at"),
        (["{new}", "--baseline", "{old}", "--fail-if", "refusal <= 5"], "--fail-if 'refusal <= 5'"),
        (["{new}", "--baseline", "{old}", "--fail-if", "refusal < 5pp@nowhere"], "@nowhere"),
        (["{new}", "{old}", "--baseline", "{old}"], "not both"),
        (["{new}"], "needs two sides"),
    ],
)
def test_bad_input_is_one_line(stores, args, message):
    argv = [a.format(**{k: str(v) for k, v in stores.items()}) for a in args]
    assert message in _one_line_error(run_cli("compare", *argv, "--resamples", "20"))


def test_the_manifests_are_shown_and_their_differences_said(tmp_path):
    old = refusal_store(tmp_path / "m1.db", {"acme/m": 0.5}, served="acme-m-2026-01", n_claims=4)
    new = refusal_store(
        tmp_path / "m2.db", {"acme/m": 0.5}, served="acme-m-2026-03", version="9.9", n_claims=4
    )
    out = tmp_path / "m.json"
    p = run_cli("compare", old, new, "--json", out, "--resamples", "50")
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    a, b = data["sides"][0]["a"], data["sides"][0]["b"]
    assert a["served_models"] == {"acme-m-2026-01": 120} and b["versions"] == [
        {"deflectbench": "9.9"}
    ]
    assert a["judges"] == {"judge-a": 120, "judge-b": 120}
    notes = data["manifest_notes"]
    assert any("served model ids differ" in n and "acme-m-2026-03" in n for n in notes)
    assert any("deflectbench version of the answers" in n and "9.9" in n for n in notes)
    assert "note: served model ids differ" in p.stderr
    assert "acme-m-2026-01" in p.stdout  # the manifest table


def test_corrected_rates_are_compared_where_both_sides_have_them(tmp_path):
    from support.calibration_store import planted_store

    db, _truth, _ = planted_store(tmp_path, labels=240, judge_error=0.06)
    out = tmp_path / "c.json"
    p = run_cli("compare", f"{db}:gpt-5.5", f"{db}:grok-4.3", "--json", out, "--resamples", "100")
    assert p.returncode == 0, p.stderr
    rows = json.loads(out.read_text())["rows"]
    fixed = [r for r in rows if r["corrected"]]
    assert fixed and {r["scope"] for r in fixed} <= {"overall", "framing"}
    r = next(r for r in fixed if r["measure"] == "refusal" and r["scope"] == "overall")
    lo, hi = r["ci95"]
    assert lo < r["diff"] < hi and r["p_holm"] is not None
    judged = next(
        x
        for x in rows
        if not x["corrected"] and x["measure"] == "refusal" and x["scope"] == "overall"
    )
    assert judged["rate_a"] != r["rate_a"] or judged["rate_b"] != r["rate_b"]
    assert "Corrected for judge error" in p.stdout
    p = run_cli("compare", f"{db}:gpt-5.5", f"{db}:grok-4.3", "--json", out, "--resamples", "50",
                "--correction", "none")  # fmt: skip
    assert not any(r["corrected"] for r in json.loads(out.read_text())["rows"])


def test_one_pack_against_another_of_the_same_claims(tmp_path):
    from deflectbench.benchmark import resolve_benchmark

    db = refusal_store(tmp_path / "packs.db", {"acme/m": 0.5}, n_claims=4)
    controlled = resolve_benchmark("deflectbench-v1-controlled")
    refusal_store(db, {"acme/m": 0.1}, n_claims=4, seed=1, benchmark=controlled)
    out = tmp_path / "p.json"
    p = run_cli(
        "compare", db, db, "--benchmark", "deflectbench-v1", "--benchmark-b",
        "deflectbench-v1-controlled", "--json", out, "--resamples", "100",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    r = data["rows"][0]
    assert r["model_a"] == "packs.db:acme/m (deflectbench-v1.0)"
    assert r["model_b"] == "packs.db:acme/m (deflectbench-v1-controlled-v1.0)"
    assert r["n_claims"] == 4
    refusal = next(x for x in data["rows"] if x["measure"] == "refusal" and x["scope"] == "overall")
    assert refusal["ci95"][1] < 0
