"""The report's examples and served-model lines, read the short way, equal the long way (kept
here as the reference): the cells from the shared model and outcome codes equal the pandas
groups, the picked rows read column by column equal ``to_dict``, the judges' verdicts sorted in
Python equal ``sort_values``, and a store whose replies name no served model has no line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from deflectbench.analysis import summarize
from deflectbench.analysis.frames.load import read_store
from deflectbench.analysis.sharing import shared_codes
from deflectbench.analysis.summary import examples as ex
from deflectbench.analysis.summary.metadata import served_lines
from deflectbench.analysis.tables.grouping import group_codes, rows_of_groups
from deflectbench.gate import served_line
from deflectbench.interop import import_paths
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, OUTCOMES
from support.fixtures import copy_of_release_fixture


def _cells_reference(scored: pd.DataFrame) -> list[np.ndarray]:
    cells, labels = group_codes(scored, ["model", "outcome"])
    return rows_of_groups(cells, len(labels))


def _scored_like(rng: np.random.Generator, n: int, outcomes: list[str]) -> pd.DataFrame:
    models = ["zeta", "alpha", "Mu", "beta-2", "ölm"]
    return pd.DataFrame(
        {
            "gen_id": np.arange(n) * 3 + 7,
            "model": rng.choice(models, size=n),
            "outcome": pd.Series(rng.choice(outcomes, size=n), dtype=object),
        }
    )


@pytest.mark.parametrize("seed", range(6))
def test_cells_from_shared_codes_are_the_groups(seed):
    rng = np.random.default_rng(seed)
    present = list(rng.choice(list(OUTCOMES), size=int(rng.integers(1, 6)), replace=False))
    scored = _scored_like(rng, int(rng.integers(1, 400)), present)
    with shared_codes():
        got = ex._cells(scored)
    want = _cells_reference(scored)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()


def test_cells_with_an_outcome_off_the_ladder_or_no_model_are_the_groups():
    rng = np.random.default_rng(3)
    scored = _scored_like(rng, 200, [*OUTCOMES, "unheard_of"])
    scored.loc[5, "model"] = None
    got, want = ex._cells(scored), _cells_reference(scored)
    assert [a.tolist() for a in got] == [b.tolist() for b in want]


def test_records_are_to_dict():
    frame = pd.DataFrame(
        {
            "i": np.array([1, -2, 3, 4], dtype=np.int64),
            "f": [0.1, math.nan, 1e-7, -0.0],
            "b": [True, False, True, True],
            "s": pd.Series(["a", None, "ü<", "=x"], dtype="str"),
            "o": pd.Series(["e", None, "f", None], dtype=object),
        }
    )
    rows = np.array([3, 0, 2], dtype=np.intp)
    got = ex._records(frame, rows, ["o", "i", "f", "b", "s"])
    want = frame.take(rows)[["o", "i", "f", "b", "s"]].to_dict(orient="records")
    assert got is not None and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert list(g) == list(w)
        for k in g:
            assert type(g[k]) is type(w[k])
            assert g[k] == w[k] or (g[k] != g[k] and w[k] != w[k])
    mixed = frame.assign(o=pd.Series([1, "x", None, 2.5], dtype=object))
    assert ex._records(mixed, rows, ["o"]) is None  # to_dict would box these: asked of it
    assert ex._records(frame.astype({"i": "Int64"}), rows, ["i"]) is None


def _verdicts_reference(judg, gen_ids, judges, reasonings):
    mine = judg[judg["gen_id"].isin(list(gen_ids))]
    out: dict[int, list[ex.JudgeVerdict]] = {}
    for r in mine.sort_values(["gen_id", "judge"]).to_dict(orient="records"):
        out.setdefault(int(r["gen_id"]), []).append(
            ex.JudgeVerdict(
                judge=str(r["judge"]),
                used=r["judge"] in judges,
                fields={f: ex._verdict(r.get(f)) for f in FIELDS},
                parse_error=bool(r.get("parse_error") or 0),
                error=r.get("error"),
                reasoning=reasonings.get((int(r["gen_id"]), str(r["judge"]))) or "",
            )
        )
    return out


def _judgments(rng: np.random.Generator, judges: list) -> pd.DataFrame:
    n = 60
    data = {
        "gen_id": rng.integers(0, 15, size=n),
        "judge": pd.Series(rng.choice(judges, size=n), dtype="str"),
        "parse_error": rng.integers(0, 2, size=n),
        "error": pd.Series([None if k % 3 else "boom" for k in range(n)], dtype=object),
    }
    for f in FIELDS:
        data[f] = np.where(rng.random(n) < 0.2, math.nan, rng.integers(-1, 2, size=n))
    return pd.DataFrame(data)


@pytest.mark.parametrize("seed", range(4))
def test_judge_verdicts_are_the_sorted_records(seed):
    rng = np.random.default_rng(seed)
    judg = _judgments(rng, ["gpt-x", "claude-y", "Äjudge"])  # ties kept in table order
    ids = [3, 7, 11, 0, 14]
    reasons = {(3, "gpt-x"): "why", (0, "claude-y"): None}
    got = ex._judge_verdicts(judg, ids, ["gpt-x"], reasons)
    assert got == _verdicts_reference(judg, ids, ["gpt-x"], reasons)
    missing = judg.assign(judge=judg["judge"].where(rng.random(len(judg)) < 0.8))
    assert ex._judge_verdicts(missing, ids, ["gpt-x"], reasons) == _verdicts_reference(
        missing, ids, ["gpt-x"], reasons
    )


def _served_reference(attempted: pd.DataFrame) -> tuple[str, ...]:
    if attempted.empty or "served_model" not in attempted.columns:
        return ()
    replies = attempted[attempted["error"].isna()] if "error" in attempted else attempted
    out: list[str] = []
    for shown, rows in replies.groupby("model", sort=True):
        name = str(shown)
        if "condition" in rows and len(rows):
            name = name.removesuffix(f" [{rows['condition'].iloc[0]}]")
        served = rows["served_model"].dropna().astype(str).value_counts().to_dict()
        if line := served_line(name, served, len(rows)):
            out.append(line if name == shown else line.replace(name, str(shown), 1))
    return tuple(out)


@pytest.mark.parametrize(
    "served",
    [
        [None] * 6,
        [None, None, "other-model", None, None, None],  # only on a failed request: no line
        [None, "other-model", None, None, "m1-2025-01-01", None],
        ["evil<x>", "evil<x>", None, "m2", None, "other"],
    ],
)
def test_served_lines_are_the_groupby_version(served):
    attempted = pd.DataFrame(
        {
            "gen_id": range(6),
            "model": ["m1", "m1", "m1", "m2 [hot]", "m2 [hot]", "m2 [cold]"],
            "condition": ["default", "default", "default", "hot", "hot", "cold"],
            "error": [None, None, "timeout", None, None, None],
            "served_model": pd.Series(served, dtype=object),
        }
    )
    assert served_lines(attempted) == _served_reference(attempted)
    no_errors = attempted.drop(columns=["error"])
    assert served_lines(no_errors) == _served_reference(no_errors)


@pytest.fixture(scope="module")
def store(tmp_path_factory, benchmark_module):
    root = tmp_path_factory.mktemp("examples")
    copy_of_release_fixture(
        root / "rel",
        claims=[c.claim_id for c in benchmark_module.claims[::10]],
        runs=2,
        seed=5,
    )
    with Store.open(root / "x.db") as s:
        assert import_paths(s, [root / "rel"]).ok
    s = Store.open(root / "x.db")
    yield s
    s.close()


@pytest.fixture(scope="module")
def benchmark_module():
    from deflectbench.benchmark import default_benchmark

    return default_benchmark()


def test_the_examples_of_a_store_are_the_reference_picks(store, benchmark_module):
    summary = summarize(store, benchmark_module, detail=True)
    frames = read_store(store, detail=True)
    scored, judg = summary.scored, frames.judgments
    rng = np.random.default_rng(summary.options.seed)
    taken: list[int] = []
    for rows in _cells_reference(scored):
        k = min(ex.EXAMPLES_PER_CELL, len(rows))
        taken.extend(rows[np.sort(rng.choice(len(rows), size=k, replace=False))].tolist())
    picked = scored.take(taken).to_dict(orient="records")
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    picked.sort(key=lambda r: (r["model"], rank.get(r["outcome"], 9)))
    assert summary.examples
    assert [e.gen_id for e in summary.examples] == [int(r["gen_id"]) for r in picked]
    for e, r in zip(summary.examples, picked, strict=True):
        assert (e.model, e.outcome, e.sample) == (r["model"], r["outcome"], int(r["sample"]))
        assert e.consensus == {f: ex._cell(r[f]) for f in FIELDS}
    assert frames.texts is not None
    ids = [e.gen_id for e in summary.examples]
    want = _verdicts_reference(judg, ids, summary.judges, frames.texts.reasonings(ids))
    assert {e.gen_id: list(e.judges) for e in summary.examples} == {i: want[i] for i in ids}


def test_cells_of_a_categorical_outcome_follow_its_order():
    rng = np.random.default_rng(9)
    scored = _scored_like(rng, 120, list(OUTCOMES))
    scored["outcome"] = pd.Categorical(scored["outcome"], categories=list(reversed(OUTCOMES)))
    got, want = ex._cells(scored), _cells_reference(scored)
    assert [a.tolist() for a in got] == [b.tolist() for b in want]
