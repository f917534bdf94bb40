"""The gate's promise, as a property (issue 22): any generation the gate accepts goes out
through export (the release's JSON Lines, a Hugging Face folder) and back in through import
unchanged, and a second import adds nothing."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deflectbench import gate
from deflectbench.benchmark import default_benchmark
from deflectbench.conditions import RELEASE
from deflectbench.interop import export
from deflectbench.interop.hf import import_any
from deflectbench.records import GenerationRecord
from deflectbench.store import Store

B = default_benchmark()
CELLS = [(c.claim_id, t.prompt_id) for c in B.claims[:3] for t in B.templates[:3]]
KEPT = ("model", "claim_id", "prompt_id", "sample", "prompt", "response", "error",
        "input_tokens", "output_tokens")  # fmt: skip

#: Replies: any text (controls, separators, astral characters), and replies that start with
#: the release's error prefix (its format reads those as failed requests unless export marks
#: them as answers, which it does).
replies = st.one_of(
    st.text(max_size=300),
    st.sampled_from(["ERROR:", "ERROR: ", "ERROR: not a failure"]),
    st.text(max_size=40).map(lambda t: "ERROR: " + t),
)
models = st.sampled_from(["openai/gpt-5.5", "anthropic/claude-x", "local/m.v2", "vllm/Qwen-7B"])


@st.composite
def generations(draw) -> list[GenerationRecord]:
    out = {}
    for _ in range(draw(st.integers(1, 6))):
        claim_id, prompt_id = draw(st.sampled_from(CELLS))
        failed = draw(st.booleans())
        rec = GenerationRecord(
            benchmark=B.key,
            model=draw(models),
            claim_id=claim_id,
            prompt_id=prompt_id,
            sample=draw(st.integers(0, gate.MAX_SAMPLE)),
            prompt=B.render(claim_id, prompt_id),
            response=None if failed else draw(replies),
            error=draw(st.text(min_size=1, max_size=80)) if failed else None,
            input_tokens=draw(st.integers(0, gate.MAX_TOKENS)),
            output_tokens=draw(st.integers(0, gate.MAX_TOKENS)),
            condition=RELEASE,
            source="import",
        )
        gate.generation(rec)  # the gate accepts it
        out[(rec.model, rec.claim_id, rec.prompt_id, rec.sample)] = rec
    return list(out.values())


def _rows(store: Store) -> list[tuple]:
    return sorted(tuple(r[k] for k in KEPT) for r in store.generation_rows())


@pytest.mark.parametrize("fmt", ["release", "hf"])
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(recs=generations())
def test_what_the_gate_accepts_round_trips_through_export_and_import(fmt, recs):
    if fmt == "hf":
        pytest.importorskip("pyarrow")
    root = Path(tempfile.mkdtemp())
    try:
        with Store.open(root / "a.db") as a:
            a.add_generations(recs)
            original = _rows(a)
            export(a, root / "out", fmt=fmt, benchmark=B)
        with Store.open(root / "b.db") as b:
            first = import_any(b, [root / "out"], B)
            again = import_any(b, [root / "out"], B)
            assert first.ok, first.problems
            assert again.ok and again.total("generations", "imported") == 0
            assert _rows(b) == original
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("fmt", ["release", "hf"])
def test_a_reply_starting_with_the_error_prefix_stays_an_answer(fmt, tmp_path):
    """A model may answer ``ERROR: ...``: export marks it (``is_answer``), import keeps it an
    answer, never a failed request (the release's own ``ERROR:`` rows with ``is_error`` 0 are
    still errors: tests/interop/test_interop.py)."""
    if fmt == "hf":
        pytest.importorskip("pyarrow")
    claim_id, prompt_id = CELLS[0]
    rec = GenerationRecord(
        benchmark=B.key,
        model="openai/gpt-5.5",
        claim_id=claim_id,
        prompt_id=prompt_id,
        sample=1,
        prompt=B.render(claim_id, prompt_id),
        response="ERROR: I will not argue that.",
        condition=RELEASE,
        source="import",
    )
    with Store.open(tmp_path / "a.db") as a:
        a.add_generations([gate.generation(rec)])
        export(a, tmp_path / "out", fmt=fmt, benchmark=B)
    with Store.open(tmp_path / "b.db") as b:
        assert import_any(b, [tmp_path / "out"], B).ok
        (row,) = b.generation_rows()
    assert (row["response"], row["error"]) == ("ERROR: I will not argue that.", None)
