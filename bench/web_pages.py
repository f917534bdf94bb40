"""How fast ``view`` and ``annotate`` answer on a paper-scale store (24,000 generations, 2 judges).

Timed: building the view's index (read once when ``deflectbench view`` starts), drawing a
200-item annotation sample (the first ``annotate``), and the JSON endpoints over a real local
server (median of ``--repeat`` requests each): the first list page, the disagreement filter,
a filtered later page, one generation's detail, the facets, an annotation item and a label save.

Run: ``.venv/bin/python bench/web_pages.py [--db PATH] [--repeat 20]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_store import ensure_paper_store

from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from deflectbench.web import (
    AnnotateApp,
    ViewApp,
    ViewIndex,
    WebServer,
    ensure_sample,
    store_opener,
)


def _ms(server: WebServer, method: str, path: str, body: dict | None, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        headers = {"Host": f"127.0.0.1:{server.port}", "Content-Type": "application/json"}
        t0 = time.perf_counter()
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        res = conn.getresponse()
        res.read()
        times.append((time.perf_counter() - t0) * 1000)
        conn.close()
        assert res.status == 200, (path, res.status)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    b = default_benchmark()
    work = Path(tempfile.mkdtemp(prefix="deflectbench-web-"))
    db = args.db or work / "paper.db"
    ensure_paper_store(db, b, work)
    with Store.open(db) as store:
        t0 = time.perf_counter()
        index = ViewIndex.build(store, b)
        print(f"view index: {len(index.rows)} generations in {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        plan = ensure_sample(store, b, 200, seed=0)
        print(
            f"annotation sample: {len(plan.items)} items, {plan.strata} strata, "
            f"{time.perf_counter() - t0:.2f} s"
        )
    view = ViewApp(store_opener(db, readonly=True), b, index)
    with WebServer(view).running() as server:
        for label, path in (
            ("list, first page", "/api/generations"),
            ("list, disagree=any", "/api/generations?disagree=any"),
            ("list, model+outcome page 3", "/api/generations?model=gpt-5.5&outcome=refusal&page=3"),
            ("one generation", "/api/generation?id=12345"),
            ("facets", "/api/facets"),
        ):
            print(f"view {label}: {_ms(server, 'GET', path, None, args.repeat):.0f} ms (median)")
    annotate = AnnotateApp(store_opener(db, readonly=False), b, plan.items, "bench")
    with WebServer(annotate).running() as server:
        item = "/api/item?annotator=bench"
        print(f"annotate item: {_ms(server, 'GET', item, None, args.repeat):.0f} ms (median)")
        label = {"annotator": "bench", "item_id": plan.items[0].item_id, "values": {"refusal": 1}}
        save = _ms(server, "POST", "/api/label", label, args.repeat)
        print(f"annotate save: {save:.0f} ms (median)")


if __name__ == "__main__":
    main()
