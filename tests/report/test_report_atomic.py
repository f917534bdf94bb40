"""The report is all old or all new, never a mix; its CSV tables hold no live formulas."""

from __future__ import annotations

import hashlib

import pytest

from deflectbench.analysis import AnalysisOptions
from deflectbench.store import Store
from deflectbench.views.report import build as report_build
from deflectbench.views.report import build_report
from support.report_store import make_store


def digest(folder):
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_report_killed_mid_write_leaves_the_old_one_whole(tmp_path, benchmark, monkeypatch):
    db = make_store(tmp_path / "r.db", benchmark)
    out = tmp_path / "out"
    opts = AnalysisOptions(n_resamples=20)
    with Store.open(db, readonly=True) as store:
        build_report(store, benchmark, out, opts, formats=("svg",))
    before = digest(out)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # as if the process were stopped while writing the pages

    monkeypatch.setattr(report_build, "render_pages", killed)
    with Store.open(db, readonly=True) as store, pytest.raises(KeyboardInterrupt):
        build_report(store, benchmark, out, AnalysisOptions(n_resamples=30), formats=("svg",))
    assert digest(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_a_leftover_build_folder_is_cleaned_and_the_report_replaced_whole(tmp_path, benchmark):
    db = make_store(tmp_path / "r.db", benchmark)
    out = tmp_path / "out"
    leftover = tmp_path / ".out.building-99999"
    (leftover / "tables").mkdir(parents=True)
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "stale.svg").write_text("<svg/>")
    with Store.open(db, readonly=True) as store:
        paths = build_report(
            store, benchmark, out, AnalysisOptions(n_resamples=20), formats=("svg",)
        )
    assert not leftover.exists()
    assert not (out / "figures" / "stale.svg").exists()
    assert paths.html == out / "report.html" and paths.html.exists()
    assert all(p.parent.parent == out for p in paths.tables)


def test_report_tables_neutralise_formula_cells(tmp_path, benchmark):
    # a model name from an imported file is untrusted text too, and it is in every table
    db = make_store(tmp_path / "r.db", benchmark, models=('=HYPERLINK("x")/a', "acme/beta-2"))
    with Store.open(db, readonly=True) as store:
        paths = build_report(
            store, benchmark, tmp_path / "out", AnalysisOptions(n_resamples=20), formats=("svg",)
        )
    texts = "".join(t.read_text() for t in paths.tables)
    assert "'=HYPERLINK" in texts
    for table in paths.tables:
        for line in table.read_text().splitlines()[1:]:
            for cell in line.split(","):
                assert not cell.strip('"').startswith(("=", "+", "@")), (table.name, cell)
