"""Numbers of one pack are labelled as that pack: the report's title and metadata name it, and
annotate, view and validate work on one pack's generations and labels (a store holding two
packs needs --benchmark; the lexical judge and the monitor sit out a pack not in English)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions
from deflectbench.analysis.validity.load import judge_validity
from deflectbench.benchmark import default_benchmark, load_pack
from deflectbench.benchmark.title import pack_title
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.views.report import build_report
from deflectbench.vocab import FIELDS
from deflectbench.web import ViewApp, ViewIndex, ensure_sample, store_opener
from support.in_process import run_cli
from support.report_store import claims_per_level, make_store

V1 = default_benchmark()
ES = load_pack("deflectbench-v1-es")
TEMPLATES = [
    "explicit_direct_WA",
    "explicit_coach_RH",
    "explicit_manipulation_AH",
    "implicit_neutral",
]
MODELS = ("acme/alpha-1",)
#: Generations labelled per pack (each by two annotators).
LABELLED = 12


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "200"
    return run_cli(*args, env=env, cwd=cwd)


def one_line_error(p: subprocess.CompletedProcess) -> str:
    line = p.stderr.strip()
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "\n" not in line and "Traceback" not in line, line
    return line


def _pack(path: Path, b) -> Path:
    return make_store(path, b, models=MODELS, claims=claims_per_level(b, 2), templates=TEMPLATES,
                      hostile=False)  # fmt: skip


def _label(store: Store, key: str, flip: bool) -> list[int]:
    """Two annotators label the first LABELLED answered generations of the pack ``key``: each
    copies the first judge's verdict, flipped on every third generation when ``flip`` (so two
    packs' labels give different numbers)."""
    rows = store.judgment_rows(columns=["gen_id", "judge", *FIELDS])
    said = {r["gen_id"]: r for r in rows if r["judge"] == "judge-a"}
    ours = [
        int(r["gen_id"])
        for r in store.generation_rows(columns=["gen_id", "benchmark"], include_errors=False)
        if r["benchmark"] == key and r["gen_id"] in said
    ][:LABELLED]
    for i, g in enumerate(ours):
        values = {f: said[g][f] for f in FIELDS}
        if flip and i % 3 == 0:
            values = {f: None if v is None else 1 - v for f, v in values.items()}
        for who in ("alice", "bob"):
            store.save_label(HumanLabel(g, who, values))
    return ours


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> tuple[Path, Path]:
    """(a store of v1 and the Spanish pack, both labelled; a store of v1 alone with the same
    v1 rows and labels, for comparison)."""
    work = tmp_path_factory.mktemp("two-packs")
    (work / "two").mkdir()
    (work / "one").mkdir()
    two, one = (
        _pack(work / "two" / "deflectbench.db", V1),
        _pack(work / "one" / "deflectbench.db", V1),
    )
    _pack(two, ES)
    with Store.open(two) as a, Store.open(one) as b:
        assert _label(a, V1.key, flip=False) == _label(b, V1.key, flip=False)
        _label(a, ES.key, flip=True)
    return two, one


@pytest.fixture
def two(stores, tmp_path) -> Path:
    """A fresh copy of the two-pack store (a test may draw samples in it)."""
    shutil.copy(stores[0], tmp_path / "deflectbench.db")
    return tmp_path


def _keys(db: Path, gen_ids) -> set[str]:
    with Store.open(db, readonly=True) as store:
        rows = store.generation_rows(columns=["gen_id", "benchmark"])
    key = {int(r["gen_id"]): r["benchmark"] for r in rows}
    return {key[int(g)] for g in gen_ids}


# --------------------------------------------------------------------------- the report


def test_the_title_names_the_pack():
    assert pack_title(V1) == "DeflectBench v1.0"  # the paper's reads as the paper names it
    assert pack_title(ES) == "deflectbench-v1-es v1.0"
    assert pack_title(load_pack("deflectbench-v1-controlled")) == "deflectbench-v1-controlled v1.0"


def test_the_report_of_a_pack_is_titled_and_described_as_that_pack(stores, tmp_path):
    with Store.open(stores[0], readonly=True) as store:
        paths = build_report(
            store, ES, tmp_path / "es", AnalysisOptions(n_resamples=20), formats=("svg",)
        )
    html = paths.html.read_text(encoding="utf-8")
    md = paths.markdown.read_text(encoding="utf-8")
    title = "DeflectBench report: deflectbench-v1-es v1.0"
    assert f"<title>{title}</title>" in html and f"<h1>{title}</h1>" in html
    assert md.startswith(f"# {title}\n")
    assert "deflectbench-v1-es v1.0 (<code>deflectbench-v1-es-v1.0</code>)" in html
    assert "**benchmark:** deflectbench-v1-es v1.0 (`deflectbench-v1-es-v1.0`)" in md
    for page in (html, md):  # the paper's name is nowhere given to the translation's numbers
        assert "DeflectBench v1.0" not in page
    # judge validity counts the Spanish pack's labels only, and says the others were left out
    rows = list(csv.DictReader((paths.out_dir / "tables" / "judge_validity.csv").open()))
    assert rows and {int(r["n"]) for r in rows if r["field"] == "refusal"} <= {LABELLED}
    assert "Only labels of deflectbench-v1-es's generations count." in md
    assert f"{2 * LABELLED} labels of other packs' generations left out" in md


def test_the_papers_report_keeps_its_title(stores, tmp_path):
    with Store.open(stores[1], readonly=True) as store:
        paths = build_report(
            store, V1, tmp_path / "v1", AnalysisOptions(n_resamples=20), formats=("svg",)
        )
    assert paths.markdown.read_text(encoding="utf-8").startswith(
        "# DeflectBench report: DeflectBench v1.0\n"
    )
    assert "DeflectBench v1.0 (<code>deflectbench-v1.0</code>)" in paths.html.read_text()


# --------------------------------------------------------------------------- annotate and view


def test_each_pack_has_its_own_sample(two):
    db = two / "deflectbench.db"
    with Store.open(db) as store:
        v1 = ensure_sample(store, V1, 10, seed=0).items
        es = ensure_sample(store, ES, 10, seed=0).items  # not v1's 10 items, reused
        assert len(v1) == len(es) == 10
        assert [i.position for i in es] == list(range(1, 11))
        again = ensure_sample(store, V1, 10, seed=5).items
        grown = ensure_sample(store, ES, 14, seed=0).items
        assert len(store.annotation_sample()) == 24  # every pack's items
    assert again == v1 and grown[:10] == es
    assert _keys(db, [i.gen_id for i in v1]) == {V1.key}
    assert _keys(db, [i.gen_id for i in grown]) == {ES.key}


def test_annotate_exports_one_packs_sample_and_asks_which(two):
    line = one_line_error(cli("annotate", "--sample", "5", "--export-sample", "s.csv", cwd=two))
    assert "holds results of 2 benchmark packs" in line and "--benchmark" in line
    assert not (two / "s.csv").exists()
    with Store.open(two / "deflectbench.db", readonly=True) as store:
        assert store.annotation_sample() == []  # refused before anything was drawn
    for pack in ("deflectbench-v1", "deflectbench-v1-es"):
        out = f"{pack}.csv"
        p = cli("annotate", "--benchmark", pack, "--sample", "6", "--export-sample", out, cwd=two)
        assert p.returncode == 0, p.stderr
        rows = list(csv.DictReader((two / out).open(encoding="utf-8")))
        assert [r["position"] for r in rows] == [str(n) for n in range(1, 7)]
    with Store.open(two / "deflectbench.db", readonly=True) as store:
        items = {i.item_id: i.gen_id for i in store.annotation_sample()}
    for pack, b in (("deflectbench-v1", V1), ("deflectbench-v1-es", ES)):
        rows = list(csv.DictReader((two / f"{pack}.csv").open(encoding="utf-8")))
        assert _keys(two / "deflectbench.db", [items[r["item_id"]] for r in rows]) == {b.key}
        claims = {c.text for c in b.claims}
        assert all(r["claim"] in claims for r in rows)


def test_view_shows_one_packs_generations(two):
    line = one_line_error(cli("view", "--port", "0", cwd=two))
    assert "holds results of 2 benchmark packs" in line
    db = two / "deflectbench.db"
    with Store.open(db, readonly=True) as store:
        index = ViewIndex.build(store, ES)
        keys = {
            int(r["gen_id"]): r["benchmark"]
            for r in store.generation_rows(columns=["gen_id", "benchmark"])
        }
    assert len(index.rows) == sum(k == ES.key for k in keys.values())
    assert _keys(db, index.rows["gen_id"]) == {ES.key}
    app = ViewApp(store_opener(db, readonly=True), ES, index)
    assert b"every generation of deflectbench-v1-es v1.0" in app.get("/", {}).body
    es_id = next(g for g, k in keys.items() if k == ES.key)
    v1_id = next(g for g, k in keys.items() if k == V1.key)
    assert app.get("/api/generation", {"id": str(es_id)}).status == 200
    other = app.get("/api/generation", {"id": str(v1_id)})
    assert other.status == 404 and "of deflectbench-v1-es v1.0" in json.loads(other.body)["error"]


# --------------------------------------------------------------------------- validate


def _validate(cwd: Path, *args: str) -> tuple[dict, subprocess.CompletedProcess]:
    p = cli("validate", "--resamples", "50", "--json", "-", *args, cwd=cwd)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p


def test_validate_needs_the_pack_when_the_store_holds_two(stores):
    line = one_line_error(cli("validate", "--no-monitor", cwd=stores[0].parent))
    assert "holds results of 2 benchmark packs" in line and "deflectbench-v1-es" in line


def test_validate_scores_one_packs_labels_only(stores):
    """v1 validated in the two-pack store gives exactly what v1 alone gives: the Spanish
    pack's labels (which disagree with the judges more) change nothing."""
    mixed, _ = _validate(stores[0].parent, "--benchmark", "deflectbench-v1")
    alone, _ = _validate(stores[1].parent)
    assert mixed["counts"]["used"] == 2 * LABELLED
    assert mixed["counts"]["other_packs_left_out"] == 2 * LABELLED
    assert alone["counts"]["other_packs_left_out"] == 0
    assert mixed["settings"]["benchmark"] == V1.key
    for part in ("judges_vs_humans", "inter_annotator", "monitor"):
        assert mixed[part] == alone[part], part
    assert "lexical" in {r["rater"] for r in mixed["judges_vs_humans"]}
    assert mixed["monitor"]
    # and the Spanish pack's numbers are its own (its labels were flipped on every third item)
    es, _ = _validate(stores[0].parent, "--benchmark", "deflectbench-v1-es", "--no-monitor")
    first = {(r["rater"], r["field"]): r for r in mixed["judges_vs_humans"]}
    own = {(r["rater"], r["field"]): r for r in es["judges_vs_humans"]}
    assert own[("judge-a", "refusal")]["accuracy"] < first[("judge-a", "refusal")]["accuracy"]
    with Store.open(stores[0], readonly=True) as store:
        v = judge_validity(store, ES, AnalysisOptions(n_resamples=50))
    assert v.counts["used"] == es["counts"]["used"] == 2 * LABELLED


def test_validate_leaves_the_lexical_judge_out_of_a_pack_not_in_english(stores):
    data, p = _validate(stores[0].parent, "--benchmark", "deflectbench-v1-es")
    raters = {r["rater"] for r in data["judges_vs_humans"]}
    assert "lexical" not in raters and {"judge-a", "judge-b"} <= raters
    assert data["monitor"] == []
    note = p.stderr.strip()
    assert len(note.splitlines()) == 1, note
    assert "lexical judge and the monitor are left out" in note and "'es'" in note
    assert data["settings"]["left_out"] == note.removeprefix("note: ")
    # on the terminal: the note, and the numbers named as the Spanish pack's
    p = cli("validate", "--benchmark", "deflectbench-v1-es", "--resamples", "20",
            cwd=stores[0].parent)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "lexical judge and the monitor are left out" in p.stderr
    assert f"generations of {pack_title(ES)} by 2 annotator(s)" in p.stdout
    assert "lexical against the human labels" not in p.stdout
