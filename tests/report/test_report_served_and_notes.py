"""The report's counts and metadata say which replies another model served (issue 22: the
served model id is kept beside each reply; a mismatch is a warning in the report), escaped; and
the report page prints the summary's notes (e.g. the --allow-pack-change flag's)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from importlib import resources

from deflectbench.analysis import AnalysisOptions
from deflectbench.benchmark import default_benchmark
from deflectbench.benchmark.loader import parse_benchmark
from deflectbench.conditions import Settings
from deflectbench.store import Store
from deflectbench.views.report import build_report
from support.report_store import make_store

SERVED = "gpt-4o-evil<script>x</script>"
OPTIONS = AnalysisOptions(n_resamples=30)


def test_replies_served_by_another_model_are_a_line_in_the_metadata(tmp_path):
    b = default_benchmark()
    db = make_store(tmp_path / "s.db", b, hostile=False)
    with Store.open(db) as store:
        store.conn.execute(
            "UPDATE generations SET served_model = ? WHERE gen_id IN (SELECT gen_id FROM "
            "generations WHERE model = 'acme/alpha-1' AND error IS NULL ORDER BY gen_id LIMIT 2)",
            (SERVED,),
        )
        store.conn.execute(  # a dated snapshot of the model asked for is the same model
            "UPDATE generations SET served_model = 'beta-2-2025-01-01' WHERE model = 'acme/beta-2'"
        )
    with Store.open(db, readonly=True) as store:
        paths = build_report(store, b, tmp_path / "out", OPTIONS)
    html, md = paths.html.read_text(), paths.markdown.read_text()
    assert "<script>x</script>" not in html and "&lt;script&gt;" in html
    (line,) = [x for x in html.splitlines() if "another model served" in x]
    assert "served by" in line and "acme/alpha-1: 2 of " in line and "gpt-4o-evil" in line
    assert "beta-2" not in line
    (md_line,) = [x for x in md.splitlines() if "another model served" in x]
    assert md_line.startswith("- **served by:** acme/alpha-1: 2 of ") and "<script>" not in md_line


def test_the_page_prints_the_summary_notes(tmp_path):
    b = default_benchmark()
    db = make_store(tmp_path / "s.db", b, hostile=False)
    with Store.open(db) as store:  # the answers made with this content of the pack
        made = Settings(1.0, 256, 0, b.sha256)
        for model in {r["model"] for r in store.generation_rows(columns=["model"])}:
            store.register_condition(model, made, "made-with-v1")
        store.conn.execute("UPDATE generations SET condition = 'made-with-v1'")
    paper = json.loads(
        resources.files("deflectbench.benchmark").joinpath("data/deflectbench-v1.json").read_bytes()
    )
    edited = copy.deepcopy(paper)
    edited["claims"][0]["level"] = 4 if edited["claims"][0]["level"] != 4 else 1
    other = parse_benchmark(edited, sha256="e" * 64, pack=b.pack)
    with Store.open(db, readonly=True) as store:
        paths = build_report(
            store, other, tmp_path / "out", replace(OPTIONS, allow_pack_change=True)
        )
    for text in (paths.html.read_text(), paths.markdown.read_text()):
        assert "other content of pack" in text
