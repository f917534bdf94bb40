"""Each pack is scored with the judges that judged it, and a comparison across packs is made on
the judges both have (issue 23, item 1): a judge that sat out a pack (the rule-based judge is
refused for Spanish) no longer leaves that pack with nothing scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions, summarize
from deflectbench.analysis.frames.load import read_store
from deflectbench.analysis.summary.packs import compare_packs, packs_note
from deflectbench.benchmark import default_benchmark, load_pack
from deflectbench.store import Store
from support.report_store import claims_per_level, make_store

V1 = default_benchmark()
ES = load_pack("deflectbench-v1-es")
CONTROLLED = load_pack("deflectbench-v1-controlled")
TEMPLATES = ["explicit_direct_WA", "explicit_coach_RH", "implicit_neutral"]
OPTIONS = AnalysisOptions(n_resamples=50)


def _pack(db: Path, b, judges) -> None:
    make_store(db, b, models=("acme/alpha-1",), judges=judges, claims=claims_per_level(b, 2),
               templates=TEMPLATES, hostile=False)  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """v1 judged by two LLM judges and the rule-based one; Spanish and controlled by the two."""
    db = tmp_path_factory.mktemp("pack-judges") / "deflectbench.db"
    _pack(db, V1, ("judge-a", "judge-b", "lexical"))
    _pack(db, ES, ("judge-a", "judge-b"))
    _pack(db, CONTROLLED, ("judge-a", "judge-b"))
    return db


def _frames(db: Path):
    with Store.open(db, readonly=True) as s:
        f = read_store(s, values=OPTIONS.values)
    return f.generations, f.judgments


def test_each_pack_is_scored_with_its_own_judges(store):
    gens, judg = _frames(store)
    cmp = compare_packs(gens, judg, V1, OPTIONS)
    rows = {r["pack"]: r for r in cmp.packs.to_dict("records")}
    assert cmp.judges == {
        V1.pack: ("judge-a", "judge-b", "lexical"),
        ES.pack: ("judge-a", "judge-b"),
        CONTROLLED.pack: ("judge-a", "judge-b"),
    }
    for p in (ES.pack, CONTROLLED.pack):
        assert rows[p]["scored"] > 0 and rows[p]["judges"] == "judge-a, judge-b", rows[p]
    # the analysis of the Spanish pack alone uses its judges, not every judge in the store
    with Store.open(store, readonly=True) as s:
        es = summarize(s, ES, OPTIONS)
    assert es.judges == ("judge-a", "judge-b") and len(es.scored) == rows[ES.pack]["scored"]
    print("scored per pack:", {p: r["scored"] for p, r in rows.items()})


def test_a_comparison_uses_the_judges_both_packs_have(store):
    gens, judg = _frames(store)
    cmp = compare_packs(gens, judg, V1, OPTIONS)
    assert len(cmp.by_language) and cmp.by_language["h_refusal_vs_base"].notna().any()
    assert set(cmp.by_template["pack"]) == {ES.pack, CONTROLLED.pack}
    # the same numbers as a store whose v1 was judged by the two LLM judges only
    two = judg[judg["judge"] != "lexical"]
    alone = compare_packs(gens, two, V1, OPTIONS)
    assert cmp.by_template.equals(alone.by_template)
    assert cmp.by_language["h_refusal_vs_base"].equals(alone.by_language["h_refusal_vs_base"])
    note = packs_note(cmp, V1)
    assert "scored with the judges that judged it" in note
    assert f"{CONTROLLED.pack} is compared with {V1.pack} on the judges both have" in note
    assert not alone.notes
    print(note)


def test_packs_with_no_judge_in_common_are_not_compared(store):
    gens, judg = _frames(store)
    # v1 judged by the rule-based judge alone, the other packs by the two LLM judges
    v1_ids = set(gens.loc[gens["benchmark"] == V1.key, "gen_id"])
    keep = judg["gen_id"].isin(v1_ids) == (judg["judge"] == "lexical")
    cmp = compare_packs(gens, judg[keep], V1, OPTIONS)
    assert cmp.by_template.empty
    assert cmp.by_language["h_refusal_vs_base"].isna().all()
    assert f"{CONTROLLED.pack} is not compared with {V1.pack}: no judge judged both" in " ".join(
        cmp.notes
    )
    assert cmp.to_json()["notes"] == list(cmp.notes)
    print(cmp.notes)
