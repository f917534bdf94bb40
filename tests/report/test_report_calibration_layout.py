"""The report's corrected-rates table at 1,400 px (issue 33, point 7): a cell's note (too few
labels, labels of one value) used to be repeated in every cell of the corrected column, which
pushed the table past its container (scroll width 1,237 px in a 1,132 px column, the corrected
column off-screen). Now each note is a mark in the cell and said once under the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions
from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from deflectbench.views.report import build_report
from support.browser import ARGS, CHROMIUM
from support.calibration_store import planted_store


@pytest.fixture(scope="module")
def thin_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("thin_labels")
    db, _, _ = planted_store(root, labels=24)  # 12 labels a model: notes and flags
    with Store.open(db, readonly=True) as store:
        paths = build_report(
            store, default_benchmark(), root / "out", AnalysisOptions(n_resamples=100),
            formats=("svg",),
        )  # fmt: skip
    return paths


def test_each_note_is_said_once_under_the_table(thin_report):
    html = thin_report.html.read_text()
    table = html[html.index('id="table-corrected_by_framing"') :]
    table = table[: table.index("CSV:")]
    assert table.count("too few labels for a corrected rate") == 1
    assert "(at least 10 needed)" not in table
    assert "[1]" in table


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium not installed at /usr/bin/chromium")
def test_the_corrected_column_fits_at_1400_px(thin_report, tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(thin_report.html.as_uri())
        for name in ("corrected_rates", "corrected_by_framing"):
            over = page.evaluate(
                f"() => {{ const t = document.getElementById('table-{name}')"
                ".querySelector('table'); return t.scrollWidth - t.parentElement.clientWidth; }"
            )
            assert over <= 0, (name, over)
        browser.close()
