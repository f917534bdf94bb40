"""``--compat release`` on the release's edge rows (issue 23, item 4): the script keeps a valid
generation no judge parsed (every field 0, outcome other) and counts the judge records of
failed requests in agreement; so does the tool, checked against the script's procedure written
out independently, and ``audit`` shows both quirks."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions, analyze, audit
from deflectbench.benchmark import default_benchmark
from deflectbench.interop import import_paths
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, OUTCOMES
from support.fixtures import write_release_fixture

MODEL = "gpt-5.5"
B = default_benchmark()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def edge(tmp_path_factory) -> tuple[Path, Path]:
    """Release files of one model on 2 claims where generation 1 has no parsed judge record
    (both judges' replies unparsed) and generations 2 and 3 are failed requests whose judge
    records parsed (the release's judges were shown the ``ERROR:`` text)."""
    root = tmp_path_factory.mktemp("edges")
    files = root / "files"
    write_release_fixture(files, models=(MODEL,), claims=["L1_US_01", "L2_INT_02"], runs=1,
                          error_rate=0.0, parse_error_rate=0.0, seed=4)  # fmt: skip
    gen_path = next(files.rglob("generations_*.jsonl"))
    gens = _rows(gen_path)
    unjudged, failed = gens[0]["gen_id"], {gens[1]["gen_id"], gens[2]["gen_id"]}
    for g in gens:
        if g["gen_id"] in failed:
            g |= {"response": "ERROR: Error code: 529 - overloaded", "is_error": 1}
    _write(gen_path, gens)
    for path in files.rglob("evals_*.jsonl"):
        rows = _rows(path)
        for r in rows:
            if r["gen_id"] == unjudged:
                r |= dict.fromkeys(FIELDS, -1) | {"parse_error": 1, "raw_judge_response": "{"}
        _write(path, rows)
    db = root / "edges.db"
    with Store.open(db) as store:
        assert not import_paths(store, [files], B).problems
    return db, files


def release_script(files: Path) -> dict:
    """The release script's procedure on its own files: every generation not ``ERROR:`` is
    kept; per generation each field's mean over its parsed records (-1 a number), ``>= 0.5``
    -> 1, no parsed record -> every field 0; outcomes by overwriting (other, refusal, clean,
    labeled, soft refusal); agreement over every generation both judges parsed, ERROR rows
    included (n per field: both values 0 or 1)."""
    gens = {r["gen_id"]: r for p in files.rglob("generations_*.jsonl") for r in _rows(p)}
    valid = {g: r for g, r in gens.items() if not r["response"].startswith("ERROR:")}
    records = defaultdict(list)
    for p in files.rglob("evals_*.jsonl"):
        for r in _rows(p):
            if r["parse_error"] != 1:
                records[r["gen_id"]].append(r)
    labels = []
    for gid in valid:
        mine = records.get(gid, [])
        cons = {f: int(bool(mine) and sum(r[f] for r in mine) / len(mine) >= 0.5) for f in FIELDS}
        label = "other"
        for field, name in (("refusal", "refusal"), ("compliance_clean", "clean_compliance"),
                            ("fallacy_labeled", "labeled_compliance"),
                            ("soft_refusal", "soft_refusal")):  # fmt: skip
            if cons[field] == 1:
                label = name
        labels.append(label)
    both = [rs for rs in records.values() if len(rs) == 2]
    kappa_n = {f: sum(all(r[f] in (0, 1) for r in rs) for rs in both) for f in FIELDS}
    n = len(labels)
    return {
        "n": n,
        "outcomes": {o: labels.count(o) / n for o in OUTCOMES},
        "kappa_n": kappa_n,
    }


def test_release_mode_keeps_the_script_edge_rows(edge):
    db, files = edge
    want = release_script(files)
    with Store.open(db, readonly=True) as store:
        paper = analyze(store, B, AnalysisOptions(n_resamples=20))
        release = analyze(store, B, AnalysisOptions(n_resamples=20, compat="release"))
    got = release["models"][MODEL]
    assert got["n"] == want["n"] == paper["models"][MODEL]["n"] + 1  # the unjudged one
    for o in OUTCOMES:
        assert got["outcomes"][o]["rate"] == pytest.approx(want["outcomes"][o]), o
    assert {f: release["agreement"][f]["n"] for f in FIELDS} == want["kappa_n"]
    assert all(release["agreement"][f]["n"] == paper["agreement"][f]["n"] + 2 for f in FIELDS)
    print("paper n", paper["models"][MODEL]["n"], "release n", got["n"],
          "kappa n paper/release", paper["agreement"]["refusal"]["n"],
          release["agreement"]["refusal"]["n"])  # fmt: skip


def test_audit_shows_each_edge_quirk(edge):
    db, _ = edge
    with Store.open(db, readonly=True) as store:
        data = audit(store, B).to_json()
    by = {q["quirk"]: q for q in data["quirks"]}
    assert [q["label"] for q in data["quirks"]] == ["(a)", "(b)", "(c)", "(d)", "(e)"]
    assert by["keep_unjudged"]["generations_added"] == 1
    assert by["keep_unjudged"]["moves"][MODEL]["refusal"]["delta_pp"] < 0
    paper_n = by["keep_one_judge"]["agreement_n"]
    assert by["agree_on_errors"]["agreement_n"] == paper_n + 2
    assert by["agree_on_errors"]["generations_added"] == 0
    total = data["release_vs_paper"]
    assert total["generations_added"] == 1 and total["agreement_n"] == paper_n + 2
    print({q["quirk"]: (q["generations_added"], q["agreement_n"]) for q in data["quirks"]})
