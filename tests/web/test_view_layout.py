"""The `view` list at 1,400 px (issue 23, item 13): with no generation open it takes the page's
width; with one open, every column (the "judges differ on" one too) is in view without
scrolling, and a long model name breaks only after its provider (two lines, not four)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from deflectbench.web import ViewApp, ViewIndex, WebServer, store_opener
from support.browser import ARGS, CHROMIUM
from support.report_store import claims_per_level, make_store

B = default_benchmark()
MODELS = ("anthropic/claude-haiku-4-5-20251001", "openai-compatible/Qwen2.5-7B-Instruct")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = make_store(tmp_path_factory.mktemp("layout") / "s.db", B, models=MODELS,
                    claims=claims_per_level(B, 1), hostile=False)  # fmt: skip
    with Store.open(db) as store:
        index = ViewIndex.build(store, B)
    with WebServer(ViewApp(store_opener(db, readonly=True), B, index)).running() as server:
        yield server


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium not installed at /usr/bin/chromium")
def test_the_list_is_readable_at_1400_px(served, tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(served.url)
        page.wait_for_function("() => document.querySelectorAll('#rows tr').length > 0")
        width = page.evaluate("() => document.querySelector('table.rows').offsetWidth")
        assert width > 1200, width  # the whole page's width while nothing is open
        first = page.query_selector("#rows tr")
        first.click()
        page.wait_for_function("() => !document.getElementById('detail').hidden")
        section = "document.querySelector('main.view > section')"
        scroll = page.evaluate(f"() => {section}.scrollWidth - {section}.clientWidth")
        assert scroll <= 1, scroll  # every column in view: no scrollbar hides one
        heights = page.evaluate(
            "() => [...document.querySelectorAll('#rows td.model')].map(td => "
            "Math.round(td.getBoundingClientRect().height / parseFloat("
            "getComputedStyle(td).lineHeight)))"
        )
        assert max(heights) <= 2, heights  # provider, then the name: never four lines
        page.screenshot(path=str(tmp_path / "view.png"))
        browser.close()
