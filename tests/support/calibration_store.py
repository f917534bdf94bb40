"""A planted store with human labels that are the truth: for testing judge-error correction.

The release fixture plants each generation's true outcome and lets two judges flip each field
with a known chance; here people "label" some generations with the planted truth (the ladder's
fields and any-fallacy; the three fallacy-type fields are left unset, as the truth of those is
not kept by the fixture), either a simple random sample or the stratified sample ``annotate``
draws (stored with its strata).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from deflectbench.benchmark import default_benchmark
from deflectbench.interop import import_paths
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.vocab import FIELDS

#: Claims of the default pack, two per level, for a store of a few thousand generations.
CLAIMS: tuple[str, ...] = (
    "L1_US_01",
    "L1_INT_05",
    "L2_INT_02",
    "L2_US_02",
    "L3_US_03",
    "L3_INT_07",
    "L4_INT_04",
    "L4_US_04",
)


def truth_fields(outcome: str) -> dict[str, int | None]:
    """The planted truth of a generation as a human label (fallacy types unset)."""
    values: dict[str, int | None] = dict.fromkeys(FIELDS, 0)
    for f in ("WA_present", "AH_present", "RH_present"):
        values[f] = None
    if outcome == "refusal":
        values["refusal"] = 1
    elif outcome == "soft_refusal":
        values["soft_refusal"] = 1
    elif outcome == "labeled_compliance":
        values["fallacy_labeled"] = 1
    elif outcome == "clean_compliance":
        values["compliance_clean"] = 1
    if outcome in ("soft_refusal", "labeled_compliance", "clean_compliance"):
        values["any_fallacy_present"] = 1
    return values


def planted_store(
    root: Path,
    *,
    models: Sequence[str] = ("gpt-5.5", "grok-4.3"),
    claims: Sequence[str] = CLAIMS,
    runs: int = 2,
    judge_error: float = 0.06,
    labels: int = 300,
    stratified: bool = False,
    seed: int = 0,
    label_models: Sequence[str] | None = None,
):
    """Write the fixture under ``root``, import it into ``root/deflectbench.db`` and label
    ``labels`` scored generations (of ``label_models``, default all) with the truth. Returns
    (db path, the fixture's truth, gen_id -> planted outcome of every valid generation)."""
    from support.fixtures import write_release_fixture

    truth = write_release_fixture(
        root / "release",
        models=models,
        claims=claims,
        runs=runs,
        seed=seed,
        judge_error=judge_error,
    )
    db = root / "deflectbench.db"
    with Store.open(db) as store:
        import_paths(store, [root / "release"])
        rows = store.generation_rows(columns=["gen_id", "model", "claim_id", "prompt_id", "sample"])
        planted = {
            int(r["gen_id"]): truth.truth[
                (r["model"], r["claim_id"], r["prompt_id"], int(r["sample"]))
            ]
            for r in rows
            if (r["model"], r["claim_id"], r["prompt_id"], int(r["sample"])) in truth.truth
        }
        b = default_benchmark()
        if stratified:
            from deflectbench.web.sample import ensure_sample

            items = ensure_sample(store, b, labels, seed=seed).items
            ids = [i.gen_id for i in items]
            if label_models is not None:
                model_of = {int(r["gen_id"]): r["model"] for r in rows}
                ids = [g for g in ids if model_of[g] in label_models]
        else:
            from deflectbench.analysis import scored_table

            scored = scored_table(store, b)
            if label_models is not None:
                scored = scored[scored["model"].isin(list(label_models))]
            pool = scored["gen_id"].astype(int).to_numpy()
            rng = np.random.default_rng(seed + 1)
            ids = rng.choice(pool, size=min(labels, len(pool)), replace=False).tolist()
        store.save_labels(HumanLabel(int(g), "alice", truth_fields(planted[int(g)])) for g in ids)
    return db, truth, planted
