"""``merge`` in chunks (issue 34, point 6): the rows and the conflicts reported are those of
the merge that held every answer in memory (pinned below from it, on crafted inputs: a
conflict, a duplicate, an error row replaced by a result, a verdict conflicting), whatever the
chunk size; and, for inputs that do not conflict, the order of the inputs changes nothing."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deflectbench.conditions import Settings
from deflectbench.interop.merge import merge_stores
from deflectbench.records import GenerationRecord, JudgmentRecord
from deflectbench.store import Store, merging
from deflectbench.vocab import FIELDS

VERDICT = dict.fromkeys(FIELDS, 0)
Cells = dict[tuple[str, str, int], str | None]


def write(path: Path, cells: Cells, judge_raw: dict[str, str] | None = None) -> Path:
    """One model's cells (None: an error row), each good one judged (its reply by default)."""
    with Store.open(path) as store:
        store.register_condition(
            "m", Settings(temperature=1.0, max_tokens=256, seed=0, benchmark_sha256="x" * 64), "c1"
        )
        for (claim, prompt, sample), response in cells.items():
            store.add_generation(
                GenerationRecord(
                    benchmark="b",
                    model="m",
                    claim_id=claim,
                    prompt_id=prompt,
                    sample=sample,
                    prompt=f"{claim} {prompt}",
                    response=response,
                    error=None if response is not None else "HTTP 500",
                    condition="c1",
                )
            )
            gid = store.generation_id("b", "m", claim, prompt, sample, "c1")
            if response is not None and gid is not None:
                raw = (judge_raw or {}).get(claim, response)
                store.add_judgment(JudgmentRecord(gid, "lexical", raw, VERDICT))
    return path


def contents(path: Path) -> tuple[list[tuple], list[tuple]]:
    with Store.open(path, readonly=True) as store:
        gens = [
            tuple(r)
            for r in store.conn.execute("SELECT claim_id, response, error FROM generations")
        ]
        judged = [
            tuple(r)
            for r in store.conn.execute(
                "SELECT g.claim_id, j.raw FROM judgments j JOIN generations g USING (gen_id)"
            )
        ]
    return sorted(gens), sorted(judged)


# What the in-memory merge (before issue 34) printed for these inputs, store by store:
# (name, runs, generations new, present, judgments new, present, refused).
PINNED_FIRST = [
    ("a.db", 0, 4, 0, 3, 0, 0),
    ("b.db", 0, 2, 2, 1, 1, 3),
    ("c.db", 0, 2, 1, 2, 0, 0),
]
PINNED_AGAIN = [("c.db", 0, 0, 3, 0, 2, 0), ("b.db", 0, 0, 4, 0, 2, 3)]
PINNED_PROBLEMS = [
    "T/b.db: generation m c3/p/1 [c1]: conflicting duplicate: m c3/p/1 [c1] is already stored "
    "(store id 3) with other content; kept the stored one, skipped this one",
    "T/b.db: judgment lexical on gen_id 3: its generation was not merged",
    "T/b.db: judgment lexical on gen_id 5: conflicting duplicate: judgment lexical on gen_id 5 "
    "is already stored (store id 3) with other content; kept the stored one, skipped this one",
]


@pytest.mark.parametrize("chunk", [1, 2, 2000])
def test_rows_and_conflicts_are_those_of_the_in_memory_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(merging, "CHUNK", chunk)
    a = write(
        tmp_path / "a.db",
        {("c1", "p", 1): "A1", ("c2", "p", 1): None, ("c3", "p", 1): "A3", ("c4", "p", 1): "A4"},
    )
    b = write(
        tmp_path / "b.db",
        {
            ("c1", "p", 1): "A1",  # a duplicate: already present
            ("c2", "p", 1): "B2",  # replaces a's error row
            ("c3", "p", 1): "other",  # a conflict: refused, named with its file
            ("c5", "p", 1): None,
            ("c4", "p", 1): "A4",
        },
        judge_raw={"c4": "another verdict"},  # a verdict conflicting
    )
    c = write(
        tmp_path / "c.db",
        {("c5", "p", 1): "C5", ("c2", "p", 1): None, ("c6", "p", 1): "C6"},
    )
    with Store.open(tmp_path / "out.db") as out:
        first = merge_stores(out, [a, b, c])
        again = merge_stores(out, [c, b])
    for report, pinned in ((first, PINNED_FIRST), (again, PINNED_AGAIN)):
        got = [
            (
                s.path.name,
                s.runs,
                s.generations_new,
                s.generations_present,
                s.judgments_new,
                s.judgments_present,
                s.refused,
            )
            for s in report.stores
        ]
        assert got == pinned
        assert [p.replace(str(tmp_path), "T") for p in report.problems] == PINNED_PROBLEMS
    gens, judged = contents(tmp_path / "out.db")
    assert gens == [
        ("c1", "A1", None),
        ("c2", "B2", None),
        ("c3", "A3", None),
        ("c4", "A4", None),
        ("c5", "C5", None),
        ("c6", "C6", None),
    ]
    assert judged == [(g[0], g[1]) for g in gens]


# A cell in a store is absent, its one answer, or an error row: no two stores conflict.
cell_states = st.sampled_from(["absent", "answer", "error"])
stores_of = st.lists(st.lists(cell_states, min_size=6, max_size=6), min_size=2, max_size=4)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    stores=stores_of, order=st.randoms(use_true_random=False), chunk=st.sampled_from([1, 3, 2000])
)
def test_the_order_of_the_inputs_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory,
    stores: list[list[str]],
    order: random.Random,
    chunk: int,
) -> None:
    tmp = tmp_path_factory.mktemp("order")
    paths = []
    for i, states in enumerate(stores):
        cells: Cells = {
            (f"c{k}", "p", 1): (f"answer {k}" if state == "answer" else None)
            for k, state in enumerate(states)
            if state != "absent"
        }
        paths.append(write(tmp / f"s{i}.db", cells))
    shuffled = list(paths)
    order.shuffle(shuffled)
    results = []
    for name, inputs in (("forward.db", paths), ("shuffled.db", shuffled)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(merging, "CHUNK", chunk)
            with Store.open(tmp / name) as out:
                report = merge_stores(out, inputs)
        assert report.ok, report.problems
        results.append(contents(tmp / name))
    assert results[0] == results[1]
    # and each cell holds its answer when any store has one, else its error row
    gens = results[0][0]
    expected = sorted(
        (f"c{k}", f"answer {k}", None)
        if any(s[k] == "answer" for s in stores)
        else (f"c{k}", None, "HTTP 500")
        for k in range(6)
        if any(s[k] != "absent" for s in stores)
    )
    assert gens == expected
