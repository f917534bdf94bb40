"""``deflectbench calibrate``, and the corrected rates in ``analyze`` and ``validate``, through the
command line on planted stores: with labels every number is there, without labels a line says
how to get them and no key pretends a correction was made; bad options are one line."""

from __future__ import annotations

import json

import pytest

from support.calibration_store import planted_store
from support.fixtures import write_release_fixture
from support.in_process import run_cli


def _one_line_error(p) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    lines = [x for x in p.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    root = tmp_path_factory.mktemp("calibrate")
    db, _truth, _ = planted_store(root, labels=240, judge_error=0.06)
    return db


@pytest.fixture(scope="module")
def unlabelled(tmp_path_factory):
    from deflectbench.interop import import_paths
    from deflectbench.store import Store

    root = tmp_path_factory.mktemp("nolabels")
    write_release_fixture(
        root / "release", models=("gpt-5.5", "grok-4.3"), claims=["L1_US_01", "L3_US_03"], runs=1
    )
    db = root / "deflectbench.db"
    with Store.open(db) as store:
        import_paths(store, [root / "release"])
    return db


def test_calibrate_json_has_the_calibration_the_budget_and_dawid_skene(labelled, tmp_path):
    out = tmp_path / "c.json"
    p = run_cli("calibrate", "--db", labelled, "--json", out, "--resamples", "200")
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    assert data["settings"]["method"] == "ppi++" and not data["settings"]["pooled_models"]
    raters = {r["rater"] for r in data["judges"]}
    assert "consensus (mean)" in raters and "lexical" in raters  # scored now: none stored
    assert len(raters) == 4  # the two model judges, the rule-based judge, the consensus
    ref = next(
        r for r in data["judges"] if r["rater"] == "consensus (mean)" and r["field"] == "refusal"
    )
    assert 0 <= ref["sensitivity_lo"] <= ref["sensitivity"] <= ref["sensitivity_hi"] <= 1
    shifts = [s for s in data["shifts"] if s["kind"] == "outcome" and s["measure"] == "refusal"]
    assert {s["model"] for s in shifts} == {"gpt-5.5", "grok-4.3"}
    for s in shifts:
        assert s["moved_points"] == pytest.approx(
            100 * (s["corrected"]["rate"] - s["judged"]["rate"]), abs=1e-3
        )
        assert 0 <= s["lambda"] <= 1
        lo, hi = s["judged"]["ci95"]
        outside = not lo <= s["corrected"]["rate"] <= hi
        assert s["judged_ci_excludes_corrected"] is outside
    for b in data["budget"].values():
        assert b["labels"] > 0 and b["target_half_width"] == 0.03
        assert b["more_labels"] is None or b["more_labels"] >= 0
    assert data["dawid_skene"]["available"]
    fit = data["dawid_skene"]["fields"]["refusal"]
    assert set(fit["judges"]) == set(raters) - {"consensus (mean)"}


def test_calibrate_tables_pooled_and_rogan_gladen(labelled):
    p = run_cli(
        "calibrate",
        "--db",
        labelled,
        "--pool-models",
        "--correction",
        "rogan-gladen",
        "--resamples",
        "100",
        env={"COLUMNS": "160"},
    )
    assert p.returncode == 0, p.stderr
    assert "rogan-gladen" in p.stdout and "pooled over models" in p.stdout
    assert "Label budget" in p.stdout and "deflectbench annotate --sample" in p.stdout


def test_calibrate_without_labels_says_so_and_what_it_would_take(unlabelled):
    p = run_cli("calibrate", "--db", unlabelled, "--resamples", "100")
    assert p.returncode == 0, p.stderr
    assert "No human labels" in p.stdout and "deflectbench annotate" in p.stdout
    assert "cover claim sampling only" in p.stdout
    p = run_cli("calibrate", "--db", unlabelled, "--json", "-", "--resamples", "100")
    data = json.loads(p.stdout)
    assert data["labels"] == 0 and "No human labels" in data["note"]
    assert set(data["budget_without_labels"]) == {"gpt-5.5", "grok-4.3"}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--correction", "ppi++"], "unknown --correction"),
        (["--target", "0"], "--target must be between"),
        (["--annotator", "nobody"], "no labels by --annotator 'nobody'"),
    ],
)
def test_bad_options_are_one_line(labelled, args, says):
    assert says in _one_line_error(run_cli("calibrate", "--db", labelled, *args))


def test_validate_corrects_the_monitor_and_the_lexical_judge(labelled):
    p = run_cli("validate", "--db", labelled, "--json", "-", "--resamples", "100", "--no-progress")
    assert p.returncode == 0, p.stderr
    corrected = json.loads(p.stdout)["corrected"]
    assert set(corrected["raters"]) == {"monitor", "lexical"}
    monitor = corrected["raters"]["monitor"]["gpt-5.5"]
    assert set(monitor) == {"outcome:refusal", "outcome:soft_refusal", "outcome:labeled_compliance"}
    e = monitor["outcome:refusal"]["corrected"]
    assert e["method"] == "ppi++" and e["n_labels"] > 0 and e["rate"] is not None


def test_validate_without_labels_has_no_corrected_key(unlabelled):
    p = run_cli("validate", "--db", unlabelled, "--json", "-", "--resamples", "50", "--no-monitor")
    assert p.returncode == 0, p.stderr
    assert "corrected" not in json.loads(p.stdout)


# --------------------------------------------------------------------------- analyze and export


def test_analyze_json_has_the_three_estimates_beside_todays(labelled):
    p = run_cli("analyze", "--db", labelled, "--json", "-", "--resamples", "100")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    from deflectbench.vocab import FIELDS, OUTCOMES

    for model, sec in data["models"].items():
        corr, labels = sec["corrected"], sec["labels_only"]
        assert list(sec)[-2:] == ["corrected", "labels_only"]  # appended after today's keys
        assert corr["method"] == "ppi++" and corr["pooled"] is False and corr["n_labels"] > 0
        assert set(corr["outcomes"]) == set(OUTCOMES) and set(corr["fields"]) == set(FIELDS)
        for e in (*corr["outcomes"].values(), *corr["fields"].values()):
            assert {"rate", "ci95", "n_labels", "method"} <= set(e)
            if e["rate"] is None:  # a note instead of a number, never a zero
                assert e["note"] and e["ci95"] == [None, None]
            else:
                assert e["ci95"][0] <= e["rate"] <= e["ci95"][1]
        assert labels["outcomes"]["refusal"]["method"] == "labels"
        assert set(corr["by_framing"]) <= set(sec["by_framing"])
        assert sec["outcomes"]["refusal"]["n"] == corr["outcomes"]["refusal"]["n"], model
    assert data["calibration"]["method"] == "ppi++" and not data["calibration"]["pooled_models"]


def test_analyze_pooled_rogan_gladen_and_none(labelled):
    p = run_cli(
        "analyze",
        "--db",
        labelled,
        "--json",
        "-",
        "--resamples",
        "50",
        "--pool-models",
        "--correction",
        "rogan-gladen",
    )
    data = json.loads(p.stdout)
    assert data["calibration"]["pooled_models"] and "pooled" in data["calibration"]["scope"]
    labels = {sec["corrected"]["n_labels"] for sec in data["models"].values()}
    assert labels == {data["calibration"]["counts"]["labelled_scored"]}  # every model's labels
    assert data["models"]["gpt-5.5"]["corrected"]["method"] == "rogan-gladen"
    p = run_cli("analyze", "--db", labelled, "--json", "-", "--correction", "none")
    data = json.loads(p.stdout)
    assert "calibration" not in data
    assert all("corrected" not in sec for sec in data["models"].values())
    assert "unknown --correction" in _one_line_error(
        run_cli("analyze", "--db", labelled, "--correction", "magic")
    )


def test_analyze_terminal_shows_the_corrected_rates_or_how_to_get_them(labelled, unlabelled):
    p = run_cli("analyze", "--db", labelled, "--resamples", "50", env={"COLUMNS": "150"})
    assert p.returncode == 0, p.stderr
    assert "Judged, labels only and corrected rates per model" in p.stdout
    assert "Corrected refusal per model and framing" in p.stdout
    p = run_cli("analyze", "--db", unlabelled, "--resamples", "50")
    assert p.returncode == 0, p.stderr
    assert "corrected rates" not in p.stdout.lower()
    assert "No human labels" in p.stderr and "deflectbench annotate" in p.stderr
    p = run_cli("analyze", "--db", unlabelled, "--json", "-", "--resamples", "50")
    data = json.loads(p.stdout)
    assert "calibration" not in data
    assert all("corrected" not in s and "labels_only" not in s for s in data["models"].values())


def test_exports_carry_the_corrected_rates_only_with_labels(labelled, unlabelled, tmp_path):
    import csv

    p = run_cli("export", "--db", labelled, "--format", "csv", "--out", tmp_path / "with")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader((tmp_path / "with" / "corrected.csv").open()))
    overall = [r for r in rows if r["framing"] == "" and r["measure"] == "refusal"]
    assert {(r["model"], r["kind"]) for r in overall} == {
        (m, k) for m in ("gpt-5.5", "grok-4.3") for k in ("outcome", "field")
    }
    assert all(r["method"] == "ppi++" and int(r["n_labels"]) > 0 for r in overall)
    p = run_cli("export", "--db", unlabelled, "--format", "csv", "--out", tmp_path / "without")
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "without" / "corrected.csv").exists()
