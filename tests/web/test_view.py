"""The view page: every generation listed with the analysis' consensus and outcome, filters
that match an independent count, judge disagreement, human labels, links that reopen a view,
the server's guards; and the page in headless Chromium with hostile model text."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

import pytest

from deflectbench.analysis import scored_table
from deflectbench.benchmark import default_benchmark
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.vocab import FIELDS
from deflectbench.web import ViewApp, ViewIndex, WebServer, store_opener
from support.browser import ARGS, CHROMIUM
from support.report_store import HOSTILE, PAYLOAD, make_store
from support.web_client import request

B = default_benchmark()


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = make_store(tmp_path_factory.mktemp("view") / "v.db", B)
    with Store.open(path) as store:
        store.save_label(HumanLabel(7, "alice", dict.fromkeys(FIELDS, 0), note=PAYLOAD))
    return path


@pytest.fixture(scope="module")
def served(db):
    with Store.open(db) as store:
        index = ViewIndex.build(store, B)
    with WebServer(ViewApp(store_opener(db, readonly=True), B, index)).running() as server:
        yield server, db


def _get(server, path, **query):
    status, data, _ = request(server, "GET", path + ("?" + urlencode(query) if query else ""))
    assert status == 200, data
    return data


def _independent_disagreements(store) -> dict[int, set[str]]:
    """From the stored replies, not the analysis: fields on which parsed judges differ."""
    said: dict[int, list[dict]] = {}
    for r in store.judgment_rows():
        if r["error"] is None and not r["parse_error"]:
            said.setdefault(r["gen_id"], []).append(json.loads(r["said_json"]))
    return {
        g: {f for f in FIELDS if len({v[f] for v in vs}) > 1}
        for g, vs in said.items()
        if len(vs) > 1 and any(len({v[f] for v in vs}) > 1 for f in FIELDS)
    }


def test_every_generation_is_listed_with_the_analysis_outcome(served):
    server, db = served
    with Store.open(db, readonly=True) as store:
        gens = store.generation_rows()
        scored = scored_table(store, B)
    data = _get(server, "/api/generations", per_page=500)
    assert data["total"] == len(gens)
    rows = {r["gen_id"]: r for r in data["rows"]}
    outcome = dict(zip(scored["gen_id"], scored["outcome"], strict=True))
    for g in gens:
        want = outcome.get(g["gen_id"], "error" if g["error"] else "unscored")
        assert rows[g["gen_id"]]["outcome"] == want


@pytest.mark.parametrize(
    "query",
    [
        {"model": "acme/beta-2"},
        {"framing": "coach"},
        {"template": "explicit_direct_WA", "claim": "L1_INT_01"},
        {"outcome": "refusal", "model": "acme/alpha-1"},
        {"condition": "default", "outcome": "unscored"},
        {"outcome": "error"},
    ],
)
def test_filters_match_an_independent_count(served, query):
    server, db = served
    with Store.open(db, readonly=True) as store:
        gens = store.generation_rows()
        scored = scored_table(store, B)
    outcome = dict(zip(scored["gen_id"], scored["outcome"], strict=True))
    framing = {t.prompt_id: t.framing for t in B.templates}
    column = {"template": "prompt_id", "claim": "claim_id"}

    def value(g, name):
        if name == "outcome":
            return outcome.get(g["gen_id"], "error" if g["error"] else "unscored")
        if name == "framing":
            return framing[g["prompt_id"]]
        return g[column.get(name, name)]

    expected = [g["gen_id"] for g in gens if all(value(g, k) == v for k, v in query.items())]
    data = _get(server, "/api/generations", per_page=500, **query)
    assert data["total"] == len(expected) > 0
    assert [r["gen_id"] for r in data["rows"]] == expected


def test_disagreement_filter_matches_the_stored_replies(served):
    server, db = served
    with Store.open(db, readonly=True) as store:
        differ = _independent_disagreements(store)
    assert differ, "the fixture's second judge flips soft_refusal now and then"
    data = _get(server, "/api/generations", disagree="any", per_page=500)
    assert {r["gen_id"]: set(r["disagree"]) for r in data["rows"]} == differ
    one = _get(server, "/api/generations", disagree="soft_refusal", per_page=500)
    assert {r["gen_id"] for r in one["rows"]} == {
        g for g, f in differ.items() if "soft_refusal" in f
    }
    assert _get(server, "/api/generations", disagree="refusal")["total"] == sum(
        "refusal" in f for f in differ.values()
    )


def test_labelled_filter_and_human_labels_in_detail(served):
    server, _ = served
    data = _get(server, "/api/generations", labelled="yes")
    assert [r["gen_id"] for r in data["rows"]] == [7] and data["rows"][0]["labelled"]
    detail = _get(server, "/api/generation", id=7)
    (human,) = detail["human"]
    assert human["annotator"] == "alice" and human["note"] == PAYLOAD
    assert human["values"] == dict.fromkeys(FIELDS, 0)


def test_detail_has_prompt_response_judges_consensus_outcome(served):
    server, db = served
    with Store.open(db, readonly=True) as store:
        scored = scored_table(store, B).set_index("gen_id")
        hostile = next(g for g in store.generation_rows() if g["response"] == HOSTILE)
    d = _get(server, "/api/generation", id=hostile["gen_id"])
    assert d["response"] == HOSTILE and d["prompt"] == hostile["prompt"]
    assert d["model"] == hostile["model"] and d["framing"] == "direct"
    assert d["outcome"] == scored.at[hostile["gen_id"], "outcome"] == "other"
    assert d["consensus"] == {f: int(scored.at[hostile["gen_id"], f]) for f in FIELDS}
    assert [j["judge"] for j in d["judges"]] == ["judge-a", "judge-b"]
    assert all(j["reasoning"] == PAYLOAD for j in d["judges"])


def test_facets_and_bad_queries(served):
    server, _ = served
    facets = _get(server, "/api/facets")
    assert facets["model"] == ["acme/alpha-1", "acme/beta-2"]
    assert facets["judges"] == ["judge-a", "judge-b"]
    assert "other" in facets["outcome"] and "error" in facets["outcome"]
    for query, message in (
        ("colour=red", "unknown filter 'colour'"),
        ("page=0", "page must be"),
        ("per_page=9999", "per_page must be"),
    ):
        status, data, _ = request(server, "GET", "/api/generations?" + query)
        assert status == 400 and message in data["error"]
    status, data, _ = request(server, "GET", "/api/generation?id=999999")
    assert status == 404
    assert _get(server, "/api/generations", model="nobody")["total"] == 0
    status, _, _ = request(server, "POST", "/api/label", {"x": 1})
    assert status == 405  # read-only


def test_view_refuses_other_hosts(served):
    server, _ = served
    status, _, _ = request(server, "GET", "/api/facets", headers={"Host": "rebound.example"})
    assert status == 421


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium not installed at /usr/bin/chromium")
def test_shared_link_reopens_the_view_and_shows_text_as_text(served):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    server, db = served
    with Store.open(db, readonly=True) as store:
        hostile = next(g for g in store.generation_rows() if g["response"] == HOSTILE)
    link = f"{server.url}?model=acme/beta-2&outcome=other&gen={hostile['gen_id']}"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        page = browser.new_page()
        problems: list[str] = []
        page.on("dialog", lambda d: (problems.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(link)
        page.wait_for_function("() => document.getElementById('d-response').textContent.length > 0")
        assert page.text_content("#d-response") == HOSTILE
        assert page.eval_on_selector("#d-response", "e => e.children.length") == 0
        assert page.query_selector("iframe") is None
        assert PAYLOAD in page.text_content("#d-reasoning")
        assert page.input_value("#filter-model") == "acme/beta-2"
        assert page.input_value("#filter-outcome") == "other"
        assert page.text_content("#count").startswith("1 generations")
        rows = page.query_selector_all("#rows tr.current")
        assert len(rows) == 1
        # changing a filter updates the address, so the link can be passed on
        page.select_option("#filter-framing", "direct")
        page.wait_for_function("() => location.search.includes('framing=direct')")
        assert "gen=" in page.url and page.get_attribute("#share", "href").endswith(
            page.url.split("/", 3)[3]
        )
        assert problems == []
        browser.close()


def test_outcome_counts_add_up(served):
    server, _ = served
    facets = _get(server, "/api/facets")
    total = _get(server, "/api/generations")["total"]
    counts = Counter()
    for o in facets["outcome"]:
        counts[o] = _get(server, "/api/generations", outcome=o)["total"]
    assert sum(counts.values()) == total


def test_a_value_outside_the_vocabulary_is_a_400_not_an_empty_list(served):
    """A mistyped shared link (outcome=refusals) used to show "0 generations" as if true."""
    server, _ = served
    for query, message in (
        ("outcome=refusals", "outcome 'refusals' is not one of: refusal"),
        ("disagree=refusl", "disagree 'refusl' is not one of: any, refusal"),
        ("labelled=true", "labelled 'true' is not one of: yes, no"),
    ):
        status, data, _ = request(server, "GET", "/api/generations?" + query)
        assert status == 400 and message in data["error"]
    assert _get(server, "/api/generations", outcome="non_answer:content_filter")["total"] >= 0
    assert _get(server, "/api/generations", model="nobody")["total"] == 0  # a name: no rows
