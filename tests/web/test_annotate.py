"""The annotation sample and page without a browser: the seeded stratified draw, the blind
item API, saving and resuming, and the server's guards (loopback bind, Host header, JSON
same-origin writes). The browser end to end is in test_annotate_browser.py."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.vocab import FIELDS
from deflectbench.web import (
    AnnotateApp,
    WebError,
    WebServer,
    check_bind,
    ensure_sample,
    is_loopback,
    store_opener,
)
from deflectbench.web.pages import FIELD_KEYS, rubric_paragraphs
from deflectbench.web.sample import SampleError, draw
from deflectbench.web.server import allowed_hosts
from support.report_store import HOSTILE, make_store
from support.web_client import request

B = default_benchmark()


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("annotate") / "a.db", B)


@pytest.fixture
def fresh(db, tmp_path) -> Path:
    """A copy of the module's store, to write labels into."""
    copy = tmp_path / "a.db"
    copy.write_bytes(db.read_bytes())
    return copy


# -- the sample ------------------------------------------------------------------------------


def _table(sizes: dict[tuple[str, str, str], int]) -> pd.DataFrame:
    rows, gid = [], 0
    for (m, o, f), n in sizes.items():
        for _ in range(n):
            gid += 1
            rows.append({"gen_id": gid, "model": m, "outcome": o, "framing": f})
    return pd.DataFrame(rows)


def test_draw_is_seeded_stratified_and_spreads_evenly():
    sizes = {
        ("m1", "refusal", "direct"): 50,
        ("m1", "other", "coach"): 3,
        ("m2", "refusal", "direct"): 20,
    }
    table = _table(sizes)
    stratum = {r.gen_id: (r.model, r.outcome, r.framing) for r in table.itertuples()}
    a = draw(table, 9, seed=3)
    assert a == draw(table, 9, seed=3) and a != draw(table, 9, seed=4)
    assert len(set(a)) == 9
    # round robin: 9 items over 3 strata -> 3 each (the small stratum has exactly 3)
    assert Counter(stratum[g] for g in a) == dict.fromkeys(sizes, 3)
    # the small stratum runs out; the others share the rest as evenly as possible
    b = Counter(stratum[g] for g in draw(table, 20, seed=3))
    assert b[("m1", "other", "coach")] == 3 and sorted(b.values()) == [3, 8, 9]
    assert len(draw(table, 500, seed=0)) == 73  # never more than there are
    left = draw(table, 73, seed=0, exclude=a)
    assert not set(left) & set(a) and len(left) == 64


def test_negative_sample_is_refused():
    with pytest.raises(SampleError, match="--sample"):
        draw(_table({("m", "o", "f"): 2}), -1, seed=0)


def test_sample_is_stored_reused_and_only_grown(fresh):
    with Store.open(fresh) as store:
        first = ensure_sample(store, B, 30, seed=1)
        assert first.added == 30 and len(first.items) == 30
        again = ensure_sample(store, B, 10, seed=99)  # smaller: the stored sample as it is
        assert again.added == 0 and again.items == first.items
        grown = ensure_sample(store, B, 40, seed=1)
        assert grown.items[:30] == first.items and grown.added == 10
        assert len({i.gen_id for i in grown.items}) == 40
        assert len({i.item_id for i in grown.items}) == 40
        scored = {r["gen_id"] for r in store.generation_rows(include_errors=False)}
        assert {i.gen_id for i in grown.items} <= scored


def test_sample_covers_every_stratum_when_large_enough(fresh):
    from deflectbench.analysis import scored_table

    with Store.open(fresh) as store:
        scored = scored_table(store, B)
        strata = {tuple(r) for r in scored[["model", "outcome", "framing"]].to_numpy()}
        plan = ensure_sample(store, B, len(strata), seed=0)
    assert plan.strata == len(strata)


def test_empty_store_has_nothing_to_sample(tmp_path):
    with Store.open(tmp_path / "e.db") as store, pytest.raises(SampleError, match="no scored"):
        ensure_sample(store, B, 5)


# -- the page and its API ------------------------------------------------------------------


@pytest.fixture
def served(fresh):
    with Store.open(fresh) as store:
        items = ensure_sample(store, B, 80, seed=0).items
    app = AnnotateApp(store_opener(fresh, readonly=False), B, items, "alice")
    with WebServer(app).running() as server:
        yield server, fresh, items


def test_item_is_blind(served):
    server, db, items = served
    with Store.open(db, readonly=True) as store:
        gens = {r["gen_id"]: r for r in store.generation_rows()}
    status, item, _ = request(server, "GET", "/api/item?annotator=alice&position=1")
    assert status == 200
    assert set(item) == {
        "annotator", "position", "total", "done", "resume", "item_id", "claim", "response",
        "label",
    }  # fmt: skip
    gen = gens[items[0].gen_id]
    assert item["response"] == gen["response"]
    assert item["claim"] == B.claim(gen["claim_id"]).text
    text = json.dumps(item)
    for secret in (gen["model"], gen["prompt_id"], "judge-a", str(gen["gen_id"]) + ","):
        assert secret not in text
    status, page, _ = request(server, "GET", "/")
    assert status == 200 and "acme" not in page and "judge-a" not in page
    assert all(
        p[:40] in page.replace("&#34;", '"').replace("&#39;", "'") for p in rubric_paragraphs(B)
    )
    assert all(f"<kbd>{k}</kbd>" in page for k in FIELD_KEYS.values())


def test_the_hostile_response_is_served_as_json_text(served):
    server, db, items = served
    with Store.open(db, readonly=True) as store:
        positions = [
            i.position for i in items if store.generation_row(i.gen_id)["response"] == HOSTILE
        ]
    assert positions, "the hostile generation is its own stratum, so it is in the sample"
    _status, item, res = request(
        server, "GET", f"/api/item?annotator=alice&position={positions[0]}"
    )
    assert item["response"] == HOSTILE
    assert res.getheader("Content-Type") == "application/json"
    assert "script-src 'self'" in res.getheader("Content-Security-Policy")


def test_save_resume_and_several_annotators(served):
    server, db, items = served
    full = dict.fromkeys(FIELDS, 0)
    for n in range(3):
        status, out, _ = request(
            server, "POST", "/api/label",
            {"annotator": "alice", "item_id": items[n].item_id, "values": full | {"refusal": 1}},
        )  # fmt: skip
        assert status == 200 and out["done"] == n + 1 and out["resume"] == n + 2
    # an incomplete label does not count as labelled; "unsure" does
    request(
        server,
        "POST",
        "/api/label",
        {"annotator": "alice", "item_id": items[3].item_id, "values": {"refusal": 0}},
    )
    _, item, _ = request(server, "GET", "/api/item?annotator=alice")
    assert item["position"] == 4 and item["label"]["values"]["refusal"] == 0
    request(
        server, "POST", "/api/label",
        {"annotator": "alice", "item_id": items[3].item_id, "values": {}, "unsure": True, "note": "?"},
    )  # fmt: skip
    _, item, _ = request(server, "GET", "/api/item?annotator=alice")
    assert item["position"] == 5 and item["done"] == 4
    _, bob, _ = request(server, "GET", "/api/item?annotator=bob")
    assert bob["position"] == 1 and bob["label"] is None
    with Store.open(db, readonly=True) as store:
        labels = store.labels("alice")
        assert store.annotators() == ["alice"]
    assert {lab.gen_id for lab in labels} == {i.gen_id for i in items[:4]}
    last = next(lab for lab in labels if lab.gen_id == items[3].gen_id)
    assert last.unsure and last.note == "?" and last.source == "annotate"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"annotator": "a b", "item_id": "x", "values": {}}, "unknown item_id"),
        ("not an object", "JSON object"),
        ({"annotator": "<b>", "item_id": None, "values": {}}, "unknown item_id"),
    ],
)
def test_bad_saves_are_refused(served, body, message):
    server, _, _ = served
    status, out, _ = request(server, "POST", "/api/label", body)
    assert status == 400 and message in out["error"]


def test_bad_annotator_and_values_are_refused(served):
    server, _, items = served
    item = items[0].item_id
    status, out, _ = request(
        server, "POST", "/api/label", {"annotator": "a b", "item_id": item, "values": {}}
    )
    assert status == 400 and "annotator name" in out["error"]
    status, out, _ = request(
        server, "POST", "/api/label", {"annotator": "a", "item_id": item, "values": {"refusal": 3}}
    )
    assert status == 400 and "give 0, 1" in out["error"]
    status, out, _ = request(server, "GET", "/api/item?annotator=")
    assert status == 400
    status, out, _ = request(server, "GET", "/api/item?annotator=a&position=999")
    assert status == 400 and "position must be 1 to 80" in out["error"]


# -- the server's guards -----------------------------------------------------------------------


def test_loopback_is_the_default_and_others_must_be_explicit():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.7")
    check_bind("127.0.0.1", explicit=False)
    check_bind("192.0.2.7", explicit=True)
    with pytest.raises(WebError, match=r"pass --host 0\.0\.0\.0 explicitly"):
        check_bind("0.0.0.0", explicit=False)
    with pytest.raises(WebError, match="refusing"):
        WebServer(AnnotateApp(lambda: None, B, []), "192.0.2.7", 0)  # type: ignore[arg-type]


def test_allowed_host_headers():
    assert allowed_hosts("127.0.0.1", 8765) == {
        "127.0.0.1:8765",
        "localhost:8765",
        "[::1]:8765",
    }
    assert allowed_hosts("192.0.2.7", 80) == {"192.0.2.7:80", "192.0.2.7"}


def test_requests_for_another_host_are_refused(served):
    """DNS rebinding: a page on evil.example whose name now points to 127.0.0.1."""
    server, db, items = served
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1:1", ""):
        status, _, _ = request(server, "GET", "/", headers={"Host": host})
        assert status == 421, host
    status, _, _ = request(
        server, "POST", "/api/label",
        {"annotator": "x", "item_id": items[0].item_id, "values": {"refusal": 1}},
        headers={"Host": "evil.example"},
    )  # fmt: skip
    assert status == 421
    status, _, _ = request(server, "GET", "/", headers={"Host": f"localhost:{server.port}"})
    assert status == 200
    with Store.open(db, readonly=True) as store:
        assert store.labels() == []


def test_writes_must_be_same_origin_json(served):
    server, db, items = served
    label = {"annotator": "x", "item_id": items[0].item_id, "values": {"refusal": 1}}
    status, _, _ = request(
        server, "POST", "/api/label", label, headers={"Origin": "http://evil.example"}
    )
    assert status == 403
    status, _, _ = request(
        server,
        "POST",
        "/api/label",
        json.dumps(label).encode(),
        headers={"Content-Type": "text/plain"},
    )
    assert status == 415  # a cross-site form can send only text/plain and form types
    status, _out, _ = request(server, "POST", "/api/label", b"{", headers={})
    assert status == 400
    with Store.open(db, readonly=True) as store:
        assert store.labels() == []
    status, _, _ = request(
        server, "POST", "/api/label", label, headers={"Origin": f"http://127.0.0.1:{server.port}"}
    )
    assert status == 200


def test_static_files_and_unknown_paths(served):
    server, _, _ = served
    status, js, res = request(server, "GET", "/static/annotate.js")
    assert status == 200 and res.getheader("Content-Type").startswith("text/javascript")
    assert "innerHTML" not in js  # model text is only ever set as text
    for path in ("/static/../server.py", "/static/nope.js", "/static/__init__.py", "/nope"):
        status, _, _ = request(server, "GET", path)
        assert status == 404, path


def test_field_keys_are_the_rubric_fields_in_order():
    assert tuple(FIELD_KEYS) == FIELDS
    assert len(set(FIELD_KEYS.values())) == len(FIELDS)
    assert not set(FIELD_KEYS.values()) & set("nuejk")  # no clash with the other keys


def test_labels_saved_before_are_shown_back(served):
    server, db, items = served
    with Store.open(db) as store:
        store.save_label(HumanLabel(items[1].gen_id, "carol", {"WA_present": 1}, note="hi"))
    _, item, _ = request(server, "GET", "/api/item?annotator=carol&position=2")
    assert item["label"]["values"]["WA_present"] == 1 and item["label"]["note"] == "hi"


def test_unsure_must_be_a_boolean(served):
    """`"unsure": "false"` was stored as unsure (bool("false") is True)."""
    server, _, items = served
    body = {"annotator": "qa-unsure", "item_id": items[0].item_id, "values": {}}
    status, out, _ = request(server, "POST", "/api/label", body | {"unsure": "false"})
    assert status == 400 and "unsure must be true or false" in out["error"]
    status, _, _ = request(server, "POST", "/api/label", body | {"unsure": False})
    assert status == 200
    status, out, _ = request(server, "GET", "/api/item?annotator=qa-unsure&position=1")
    assert out["label"]["unsure"] is False


def test_an_address_that_cannot_be_served_says_which_option_to_change():
    """A busy port needs another --port, but an unknown or foreign address needs another
    --host (the old message always said --port)."""
    with pytest.raises(WebError, match=r"no such address.*give --host an IP address"):
        WebServer(None, "no-such-host.invalid", 0, explicit=True)
    with pytest.raises(WebError, match=r"not an address of this machine.*give --host"):
        WebServer(None, "192.0.2.7", 0, explicit=True)  # TEST-NET-1: never local
    busy = WebServer(None, "127.0.0.1", 0)
    try:
        with pytest.raises(WebError, match="Address already in use; pass another --port"):
            WebServer(None, "127.0.0.1", busy.port)
    finally:
        busy.close()


def test_a_server_without_its_page_yet_answers_503():
    """The CLI binds first (so a busy port fails before a sample is drawn) and attaches the
    page after; a request in between is told to reload."""
    server = WebServer(None, "127.0.0.1", 0)
    with server.running():
        status, out, _ = request(server, "GET", "/")
    assert status == 503 and "reload" in out["error"]
