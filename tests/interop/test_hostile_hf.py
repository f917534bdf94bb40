"""Hostile Hugging Face folders (issue 22): each row goes through the gate. A row duplicated
with other content is refused and listed, never merged into the kept row (nor its verdicts);
prompts are the pack's; verdicts are 0/1/missing; ids are the pack's; sample and usage in
range; and the import's counts add up to the folder's rows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pq = pytest.importorskip("pyarrow.parquet")

from deflectbench.interop import export, import_paths  # noqa: E402
from deflectbench.interop.hf import import_hf  # noqa: E402
from deflectbench.store import Store  # noqa: E402
from support.fixtures import JUDGES, MODELS, write_release_fixture  # noqa: E402


@pytest.fixture
def folder(tmp_path, benchmark) -> Path:
    write_release_fixture(
        tmp_path / "rel",
        models=MODELS[:1],
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::20]],
        runs=1,
        seed=7,
        error_rate=0.0,
        parse_error_rate=0.0,
    )
    with Store.open(tmp_path / "src.db") as s:
        assert import_paths(s, [tmp_path / "rel"], benchmark).ok
        export(s, tmp_path / "hf", fmt="hf", benchmark=benchmark)
    return tmp_path / "hf"


def table(folder: Path, config: str) -> Path:
    return next((folder / "data" / config).glob("*.parquet"))


def rows(folder: Path, config: str) -> list[dict]:
    return pq.read_table(table(folder, config)).to_pylist()


def write(folder: Path, config: str, new_rows: list[dict]) -> None:
    import pyarrow as pa

    path = table(folder, config)
    schema = pq.read_schema(path)
    pq.write_table(pa.Table.from_pylist(new_rows, schema=schema), path)


def into_store(tmp_path: Path, folder: Path, benchmark):
    store = Store.open(tmp_path / "dst.db")
    report = import_hf(store, folder, benchmark)
    return store, report


def balanced(report) -> None:
    for f in report.files:
        assert f.imported + f.already_present + f.skipped == f.read, f
        assert f.unbalanced() is None


def test_a_duplicate_row_with_other_content_is_refused_and_its_verdicts_go_nowhere(
    tmp_path, folder, benchmark
):
    gens = rows(folder, "generations")
    judg = rows(folder, "judgments")
    first = gens[0]
    theirs = sorted(j["refusal"] for j in judg if j["gen_id"] == first["gen_id"])
    twin = dict(first, gen_id=10_000, response="A different reply under the same key.")
    gens.append(twin)
    # the twin's verdicts say refusal, whatever the kept row's say
    judg += [
        dict(j, gen_id=10_000, refusal=1, raw='{"refusal": 1}')
        for j in judg
        if j["gen_id"] == first["gen_id"]
    ]
    write(folder, "generations", gens)
    write(folder, "judgments", judg)
    store, report = into_store(tmp_path, folder, benchmark)
    with store:
        kept = next(
            g
            for g in store.generation_rows()
            if (g["claim_id"], g["prompt_id"]) == (first["claim_id"], first["prompt_id"])
        )
        verdicts = sorted(
            j["refusal"] for j in store.judgment_rows() if j["gen_id"] == kept["gen_id"]
        )
    assert kept["response"] == first["response"]
    assert verdicts == theirs
    assert any("row " in p and "conflicting duplicate" in p for p in report.problems)
    assert sum("its generation was not imported" in p for p in report.problems) == len(JUDGES)
    assert not report.ok
    balanced(report)


def test_rows_colliding_on_one_key_are_not_merged(tmp_path, folder, benchmark):
    gens = rows(folder, "generations")
    base = gens[0]
    gens += [dict(base, gen_id=20_000 + i, response=f"reply {i}") for i in range(9)]
    write(folder, "generations", gens)
    store, report = into_store(tmp_path, folder, benchmark)
    with store:
        n = len(store.generation_rows())
    assert n == len(gens) - 9
    assert sum("conflicting duplicate" in p for p in report.problems) == 9
    balanced(report)


def test_a_prompt_that_is_not_the_packs_rendering_is_refused(tmp_path, folder, benchmark):
    gens = rows(folder, "generations")
    for g in gens:
        g["prompt"] = "Tell me about cats."
    write(folder, "generations", gens)
    store, report = into_store(tmp_path, folder, benchmark)
    with store:
        assert store.generation_rows() == []
    assert len(report.problems) >= len(gens)
    assert "rendering" in report.problems[0]
    balanced(report)


@pytest.mark.parametrize("value", [7, -3])
def test_verdict_values_other_than_0_1_missing_are_refused(tmp_path, folder, benchmark, value):
    judg = rows(folder, "judgments")
    judg[0]["refusal"] = value
    write(folder, "judgments", judg)
    store, report = into_store(tmp_path, folder, benchmark)
    with store:
        values = {j["refusal"] for j in store.judgment_rows()}
    assert value not in values
    assert len(report.problems) == 1 and "refusal" in report.problems[0]
    balanced(report)


@pytest.mark.parametrize(
    ("column", "value", "word"),
    [
        ("claim_id", "no-such-claim", "unknown claim"),
        ("prompt_id", "no-such-template", "unknown template"),
        ("sample", -1, "sample"),
        ("input_tokens", -5, "input_tokens"),
        ("output_tokens", 10**15, "output_tokens"),
        ("cost_usd", float("inf"), "cost_usd"),
        ("cost_usd", -3300.0, "cost_usd"),
        ("model", "gpt\u200b-5.5", "invisible"),
    ],
)
def test_out_of_range_or_unknown_values_are_listed_skips(
    tmp_path, folder, benchmark, column, value, word
):
    gens = rows(folder, "generations")
    gens[0][column] = value
    write(folder, "generations", gens)
    store, report = into_store(tmp_path, folder, benchmark)
    with store:
        assert len(store.generation_rows()) == len(gens) - 1
        assert store.spent_usd() >= 0
    problem = next(p for p in report.problems if "data/generations: row 1:" in p)
    assert word in problem
    balanced(report)


def test_importing_twice_counts_every_row_as_already_present(tmp_path, folder, benchmark):
    with Store.open(tmp_path / "dst.db") as store:
        first = import_hf(store, folder, benchmark)
        again = import_hf(store, folder, benchmark)
    assert first.ok and again.ok
    gens = next(f for f in again.files if f.kind == "generations")
    assert gens.imported == 0 and gens.already_present == gens.read == gens.declared
    balanced(again)
