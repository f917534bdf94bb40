"""The report's "Corrected for judge error" section: with labels, the figure, the three
estimates per model (the numbers of ``analyze --json``), the label counts and one sentence
per model whose judged CI excludes a corrected rate; without labels, what the intervals cover
and how many labels the budget asks for; model names escaped."""

from __future__ import annotations

import csv

import pytest

from deflectbench.analysis import AnalysisOptions, analyze
from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from deflectbench.views.report import build_report
from support.calibration_store import planted_store

RESAMPLES = 100
OPTIONS = AnalysisOptions(n_resamples=RESAMPLES)
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    root = tmp_path_factory.mktemp("report_calibration")
    db, _truth, _ = planted_store(root, models=("gpt-5.5", HOSTILE), labels=240)
    with Store.open(db, readonly=True) as store:
        paths = build_report(store, default_benchmark(), root / "out", OPTIONS, formats=("svg",))
        summary = analyze(store, default_benchmark(), OPTIONS)
    return paths, summary


def test_the_section_figure_and_tables_are_there(labelled):
    paths, summary = labelled
    html = paths.html.read_text()
    assert "Corrected for judge error" in html
    assert (paths.out_dir / "figures" / "corrected_signatures.svg").exists()
    assert 'id="fig-corrected_signatures"' in html
    rows = list(csv.DictReader((paths.out_dir / "tables" / "corrected_rates.csv").open()))
    assert {r["model"] for r in rows} == {"gpt-5.5", HOSTILE}
    for r in rows:
        if r["kind"] == "outcome" and r["measure"] == "refusal":
            mine = summary["models"][r["model"]]
            assert float(r["corrected"]) == pytest.approx(
                mine["corrected"]["outcomes"]["refusal"]["rate"], abs=1e-6
            )
            assert float(r["judged"]) == pytest.approx(
                mine["outcomes"]["refusal"]["rate"], abs=1e-6
            )
            assert int(r["n_labels"]) == mine["corrected"]["n_labels"] > 0
    assert (paths.out_dir / "tables" / "corrected_by_framing.csv").exists()


def test_one_sentence_per_model_whose_judged_ci_excludes_the_corrected_rate(labelled):
    paths, summary = labelled
    md = paths.markdown.read_text()
    for model, sec in summary["models"].items():
        excluded = []
        for o, e in sec["corrected"]["outcomes"].items():
            lo, hi = sec["outcomes"][o]["ci95"]
            if e["rate"] is not None and not lo <= e["rate"] <= hi:
                excluded.append(o)
        shown = model.replace("<", "\\<").replace(">", "\\>")
        said = f"For {shown}, the judged 95% CI leaves out the corrected rate"
        assert (said in md) is bool(excluded), (model, excluded)


def test_model_names_are_escaped(labelled):
    paths, _ = labelled
    html = paths.html.read_text()
    assert HOSTILE not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_without_labels_it_says_what_the_intervals_cover_and_the_labels_needed(tmp_path):
    from deflectbench.interop import import_paths
    from support.fixtures import write_release_fixture

    write_release_fixture(
        tmp_path / "release", models=("gpt-5.5",), claims=["L1_US_01", "L3_US_03"], runs=2
    )
    db = tmp_path / "deflectbench.db"
    with Store.open(db) as store:
        import_paths(store, [tmp_path / "release"])
        paths = build_report(
            store, default_benchmark(), tmp_path / "out", OPTIONS, formats=("svg",)
        )
    html = paths.html.read_text()
    assert "cover the sampling of claims only" in html
    assert "the label budget asks for at most" in html and "gpt-5.5 about" in html
    assert not (paths.out_dir / "tables" / "corrected_rates.csv").exists()
    assert not (paths.out_dir / "figures" / "corrected_signatures.svg").exists()
