"""The annotate page end to end in headless Chromium (Playwright): label 10 items with the
keyboard only, reload, resume at item 11, and find the labels in the store; a response
carrying HTML and script shows as text and runs nothing."""

from __future__ import annotations

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from deflectbench.vocab import FIELDS
from deflectbench.web import AnnotateApp, WebServer, ensure_sample, store_opener
from support.browser import ARGS, CHROMIUM
from support.report_store import HOSTILE, make_store

B = default_benchmark()

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="Chromium not installed at /usr/bin/chromium (apt-get install -y chromium); CI "
        "installs it and runs this",
    ),
]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def served(tmp_path):
    db = make_store(tmp_path / "a.db", B)
    with Store.open(db) as store:
        items = ensure_sample(store, B, 80, seed=0).items
    app = AnnotateApp(store_opener(db, readonly=False), B, items)
    with WebServer(app).running() as server:
        yield server, db, items


def _watch(page) -> list[str]:
    """Dialogs (an alert from injected script) and console errors, collected."""
    seen: list[str] = []
    page.on("dialog", lambda d: (seen.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("console", lambda m: seen.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.append(f"pageerror: {e}"))
    return seen


def _at(page, position: int) -> None:
    page.wait_for_function(
        "n => document.getElementById('position').textContent === String(n)", arg=position
    )


def test_label_ten_items_by_keyboard_reload_and_resume(browser, served):
    server, db, items = served
    page = browser.new_page()
    problems = _watch(page)
    page.goto(server.url + "?annotator=alice")
    _at(page, 1)
    # keyboard only: a different pattern per item, then "n" (no to the rest) and Enter
    plans = ["r", "w f c", "Shift+s a l", "h", "u", "w a h f", "Shift+r s", "l w f", "c", "r"]
    for n, plan in enumerate(plans, start=1):
        for key in plan.split():
            page.keyboard.press(key)
        page.keyboard.press("n")
        if n == 3:  # a note, typed and left with Escape
            page.keyboard.press("e")
            page.keyboard.type("odd one")
            page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        _at(page, n + 1)
    page.wait_for_function("() => document.getElementById('saved').textContent !== 'saving…'")
    page.reload()
    _at(page, 11)
    assert "10 of 80 labelled" in page.text_content("#progress")
    page.keyboard.press("k")  # back to item 10: its label is shown again
    _at(page, 10)
    assert page.text_content("#value-refusal") == "yes (1)"
    assert page.text_content("#value-WA_present") == "no (0)"
    assert problems == []

    with Store.open(db, readonly=True) as store:
        labels = {lab.gen_id: lab for lab in store.labels("alice")}
    assert set(labels) == {i.gen_id for i in items[:10]}
    got = [labels[i.gen_id] for i in items[:10]]
    assert all(v is not None for lab in got for v in lab.values.values())
    expect_yes = [
        {"refusal"},
        {"WA_present", "any_fallacy_present", "compliance_clean"},
        {"AH_present", "fallacy_labeled"},
        {"RH_present"},
        set(),
        {"WA_present", "AH_present", "RH_present", "any_fallacy_present"},
        {"soft_refusal"},
        {"fallacy_labeled", "WA_present", "any_fallacy_present"},
        {"compliance_clean"},
        {"refusal"},
    ]
    for lab, yes in zip(got, expect_yes, strict=True):
        assert {f for f in FIELDS if lab.values[f] == 1} == yes
    assert got[2].values["soft_refusal"] == 0 and got[2].note == "odd one"
    assert got[4].unsure and not got[0].unsure
    page.close()


def test_hostile_response_shows_as_text(browser, served):
    server, db, items = served
    with Store.open(db, readonly=True) as store:
        position = next(
            i.position for i in items if store.generation_row(i.gen_id)["response"] == HOSTILE
        )
    page = browser.new_page()
    problems = _watch(page)
    page.goto(f"{server.url}?annotator=bob&position={position}")
    _at(page, position)
    assert page.text_content("#response") == HOSTILE
    assert page.eval_on_selector("#response", "e => e.children.length") == 0
    assert page.query_selector("iframe") is None and page.query_selector("#response img") is None
    assert problems == []
    page.close()
