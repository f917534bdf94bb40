"""A store's sides scored in one pass (issue 36): every model's scored table and judges are
the ones scoring that model alone gives, frame for frame (dtypes too), when the models share
their judges, and when they do not (then each is scored alone)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deflectbench.analysis.compare.select import Selector, StoreRead, read_store_frames, sides_of
from deflectbench.analysis.frames.scored import in_benchmark, scored_from_frames, take_counts
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.benchmark import default_benchmark
from deflectbench.store import Store
from support.compare_store import refusal_store


def alone(read: StoreRead, name: str, options: AnalysisOptions):
    """One model scored on its own, as each side was before."""
    pack = default_benchmark()
    gens = in_benchmark(read.gens, pack)
    scored = scored_from_frames(
        gens[gens["model"] == name], read.judg, pack,
        consensus=options.consensus, judges=options.judges,
    )  # fmt: skip
    return scored, tuple(take_counts(scored)["judges"])


@pytest.mark.parametrize("consensus", ["mean", "all", "judge:judge-a"])
@pytest.mark.parametrize("other_judges", [False, True])
def test_each_side_is_its_model_scored_alone(tmp_path: Path, consensus, other_judges):
    db = refusal_store(tmp_path / "s.db", {"m1": 0.3, "m2": 0.5}, n_claims=6)
    judges = ("judge-a",) if other_judges else ("judge-a", "judge-b")
    refusal_store(db, {"m3": 0.2}, n_claims=6, judges=judges, seed=3)
    options = AnalysisOptions(consensus=consensus)
    with Store.open(db) as store:
        read = read_store_frames(store, options)
    # a field missing for one model only: its column is float there, int elsewhere
    of_m1 = read.judg["gen_id"].isin(read.gens.loc[read.gens["model"] == "m1", "gen_id"].head(7))
    judg = read.judg.copy()
    judg["RH_present"] = judg["RH_present"].astype(float)
    judg.loc[of_m1.to_numpy(), "RH_present"] = np.nan
    read = StoreRead(read.path, read.gens, judg, read.runs)
    sides = sides_of(read, Selector(str(db), db), options)
    assert [s.name for s in sides] == ["m1", "m2", "m3"]
    for side in sides:
        scored, judged = alone(read, side.name, options)
        pd.testing.assert_frame_equal(side.scored, scored)
        assert side.judges == judged
    assert sides[0].scored["RH_present"].dtype.kind == "f"
    assert sides[1].scored["RH_present"].dtype.kind == "i"


def test_served_ids_read_with_the_frames_are_the_stores(tmp_path: Path):
    """The served model ids of each side, from the column read with the frames, are those the
    store counts for its model and condition (a model in two conditions: two sides)."""
    from deflectbench.analysis.compare.manifest import with_manifests

    db = refusal_store(tmp_path / "s.db", {"m1": 0.3}, n_claims=3, served="m1-0401")
    refusal_store(db, {"m1": 0.3}, n_claims=2, condition="hot", served="m1-0502", seed=1)
    refusal_store(db, {"m2": 0.4}, n_claims=3)
    options = AnalysisOptions()
    with Store.open(db) as store:
        read = read_store_frames(store, options)
        sides = sides_of(read, Selector(str(db), db), options)
        read_once = with_manifests(store, sides, read.runs, read.served)
        asked = with_manifests(store, sides)
        expected = {
            s.name: store.served_models(s.pack, s.model, s.condition or "default") for s in sides
        }
    assert [s.name for s in sides] == ["m1 [default]", "m1 [hot]", "m2"]
    assert expected["m1 [hot]"] == {"m1-0502": 2 * 15 * 2}
    for once, side in zip(read_once, asked, strict=True):
        assert once.manifest == side.manifest
        assert once.manifest["served_models"] == expected[side.name]
