"""Hostile requests to the local pages (issue 22): digits in other scripts (superscripts pass
``str.isdigit``) are a 400, never a 500; a server on every address (``--host 0.0.0.0``)
answers the machine's own address, and still refuses a name it is not."""

from __future__ import annotations

import http.client
import socket
from pathlib import Path
from urllib.parse import quote

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from deflectbench.web import AnnotateApp, ViewApp, ViewIndex, WebServer, store_opener
from deflectbench.web.sample import ensure_sample
from support.report_store import make_store
from support.web_client import request

B = default_benchmark()
HOSTILE_NUMBERS = ["\u00b2", "1\u00b2", "\u0663", "\uff11", "-1", "+1", " 1", "9" * 5000]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("hostile-web") / "w.db", B)


@pytest.fixture(scope="module")
def view(db):
    with Store.open(db) as store:
        index = ViewIndex.build(store, B)
    with WebServer(ViewApp(store_opener(db, readonly=True), B, index)).running() as server:
        yield server


@pytest.fixture(scope="module")
def annotate(db):
    with Store.open(db) as store:
        items = ensure_sample(store, B, 20, seed=0).items
    app = AnnotateApp(store_opener(db, readonly=False), B, items, "alice")
    with WebServer(app).running() as server:
        yield server


@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
@pytest.mark.parametrize(
    ("path", "name"), [("/api/generations", "page"), ("/api/generation", "id")]
)
def test_view_numbers_in_other_scripts_are_a_400(view, path, name, value):
    status, data, _ = request(view, "GET", f"{path}?{name}={quote(value)}")
    assert status == 400, data


@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
def test_annotate_positions_in_other_scripts_are_a_400(annotate, value):
    status, data, _ = request(annotate, "GET", f"/api/item?annotator=alice&position={quote(value)}")
    assert status == 400, data


def _own_address() -> str | None:
    """An address of this machine other than loopback, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent over UDP connect
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if address.startswith("127.") else address


def _get(address: str, port: int, host: str) -> int:
    conn = http.client.HTTPConnection(address, port, timeout=10)
    conn.request("GET", "/api/facets", headers={"Host": host})
    status = conn.getresponse().status
    conn.close()
    return status


def test_a_wildcard_server_answers_its_own_address_and_refuses_other_names(db):
    with Store.open(db) as store:
        index = ViewIndex.build(store, B)
    app = ViewApp(store_opener(db, readonly=True), B, index)
    with WebServer(app, "0.0.0.0", 0, explicit=True).running() as server:
        port = server.port
        assert _get("127.0.0.1", port, f"127.0.0.1:{port}") == 200
        assert _get("127.0.0.1", port, f"rebind.example:{port}") == 421
        own = _own_address()
        if own is not None:
            assert _get(own, port, f"{own}:{port}") == 200
            assert _get(own, port, f"rebind.example:{port}") == 421
