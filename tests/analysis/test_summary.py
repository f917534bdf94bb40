"""From a store to the numbers: consensus and counts, the summary's shape, planted rates
recovered, and our own runs analysed exactly like an imported release."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deflectbench.analysis import (
    AnalysisOptions,
    analyze,
    consensus_fields,
    generation_frame,
    judgment_frame,
    scored_table,
    summarize,
    verdict_table,
)
from deflectbench.interop import export, import_paths
from deflectbench.pipeline import RunContext, generate, judge_lexical, pending_for_judge
from deflectbench.store import GenerationRecord, JudgmentRecord, Store
from deflectbench.views.terminal.tables import render_terminal
from deflectbench.vocab import FIELDS, OUTCOMES, Consensus, ConsensusError, apply_rules, outcome
from support.fakes import EchoModel
from support.fixtures import write_release_fixture

ZERO = dict.fromkeys(FIELDS, 0)


def scores(**ones: int) -> dict[str, int]:
    return {**ZERO, **ones}


def add_gen(
    store: Store, b, model: str, claim: str, prompt: str, sample: int = 1, *, error: bool = False
) -> int:
    store.add_generation(
        GenerationRecord(
            benchmark=b.key,
            model=model,
            claim_id=claim,
            prompt_id=prompt,
            sample=sample,
            prompt=b.render(claim, prompt),
            response=None if error else f"reply {claim} {prompt} {sample}",
            error="503 overloaded" if error else None,
            output_tokens=0 if error else 40,
        )
    )
    gid = store.generation_id(b.key, model, claim, prompt, sample)
    assert gid is not None
    return gid


def judge(
    store: Store,
    gid: int,
    name: str,
    s: dict[str, int] | None,
    *,
    parse_error: bool = False,
    error: str | None = None,
) -> None:
    store.add_judgment(
        JudgmentRecord(
            gen_id=gid,
            judge=name,
            raw=None if error else json.dumps(s),
            scores=s,
            said=s,
            parse_error=parse_error,
            error=error,
        )
    )


@pytest.fixture
def small_store(tmp_path, benchmark):
    """Two judges, and every way a generation can fail to be scored."""
    b = benchmark
    ids: dict[str, int] = {}
    with Store.open(tmp_path / "s.db") as store:
        ids["either"] = add_gen(store, b, "m1", "L1_US_01", "explicit_direct_WA")
        judge(store, ids["either"], "jA", scores(refusal=1))
        judge(
            store,
            ids["either"],
            "jB",
            scores(any_fallacy_present=1, WA_present=1, compliance_clean=1),
        )
        ids["both"] = add_gen(store, b, "m1", "L1_US_01", "explicit_coach_WA")
        for j in ("jA", "jB"):
            judge(
                store,
                ids["both"],
                j,
                scores(any_fallacy_present=1, WA_present=1, fallacy_labeled=1),
            )
        ids["parse_error"] = add_gen(store, b, "m1", "L2_US_01", "explicit_direct_WA")
        judge(store, ids["parse_error"], "jA", None, parse_error=True)
        judge(store, ids["parse_error"], "jB", scores(refusal=1))
        ids["judge_failed"] = add_gen(store, b, "m2", "L2_US_01", "explicit_direct_WA")
        judge(store, ids["judge_failed"], "jA", scores(refusal=1))
        judge(store, ids["judge_failed"], "jB", None, error="429 rate limited")
        ids["one_judge_missing"] = add_gen(store, b, "m2", "L3_US_01", "explicit_direct_WA")
        judge(store, ids["one_judge_missing"], "jA", scores(soft_refusal=1))
        ids["gen_error"] = add_gen(store, b, "m2", "L3_US_01", "explicit_coach_WA", error=True)
        ids["ok_m2"] = add_gen(store, b, "m2", "L4_US_01", "explicit_coach_WA")
        for j in ("jA", "jB"):
            judge(
                store,
                ids["ok_m2"],
                j,
                scores(any_fallacy_present=1, AH_present=1, compliance_clean=1),
            )
        # another benchmark's generation is not attempted here
        store.add_generation(
            GenerationRecord(
                benchmark="other-v9",
                model="m1",
                claim_id="X",
                prompt_id="Y",
                sample=1,
                prompt="p",
                response="r",
            )
        )
    return tmp_path / "s.db", ids


def test_counts_at_each_step_and_unscored_generations(small_store, benchmark):
    path, ids = small_store
    with Store.open(path, readonly=True) as store:
        scored = scored_table(store, benchmark)
        assert {"prompt", "response"} <= set(generation_frame(store, text=True))
        assert {"raw", "reasoning"} <= set(judgment_frame(store, text=True))
        assert "response" not in generation_frame(store)
    c = scored.attrs["counts"]
    assert (c["attempted"], c["errors"], c["valid_generations"], c["scored"]) == (7, 1, 6, 3)
    assert set(scored["gen_id"]) == {ids["either"], ids["both"], ids["ok_m2"]}
    assert c["by_model"]["m2"] == {"attempted": 4, "valid_generations": 3, "scored": 1}
    assert c["by_judge"]["jA"] == {
        "parsed": 5,
        "parse_errors": 1,
        "errors": 0,
        "missing": 0,
        "consistency_flags": 0,
    }
    assert c["by_judge"]["jB"] == {
        "parsed": 4,
        "parse_errors": 0,
        "errors": 1,
        "missing": 1,
        "consistency_flags": 0,
    }
    assert c["judges"] == ["jA", "jB"] and c["consensus"] == "mean"
    assert {
        "level",
        "context",
        "domain",
        "framing",
        "fallacy_requested",
        "explicitness",
        "n_judges",
    } <= set(scored)
    assert (scored["n_judges"] == 2).all()
    assert scored[list(FIELDS)].dtypes.map(lambda d: d.kind == "i").all()


def test_consensus_rules(small_store, benchmark):
    path, ids = small_store
    with Store.open(path, readonly=True) as store:
        mean = scored_table(store, benchmark).set_index("gen_id")
        strict = scored_table(store, benchmark, consensus="all").set_index("gen_id")
        only_a = scored_table(store, benchmark, consensus="judge:jA").set_index("gen_id")
        with pytest.raises(ConsensusError, match="no judge 'jC'"):
            scored_table(store, benchmark, consensus="judge:jC")
        with pytest.raises(ConsensusError, match="unknown consensus rule"):
            scored_table(store, benchmark, consensus="median")
    # mean: a 1 from either judge wins, then the ladder puts refusal first
    e = mean.loc[ids["either"]]
    assert e["refusal"] == 1 and e["compliance_clean"] == 1 and e["outcome"] == "refusal"
    assert mean.loc[ids["both"], "outcome"] == "labeled_compliance"
    # all: both must say 1
    assert (
        strict.loc[ids["either"], "refusal"] == 0
        and strict.loc[ids["either"], "outcome"] == "other"
    )
    # judge:jA takes jA's word, and only jA needs to have parsed
    assert only_a.attrs["counts"]["judges"] == ["jA"]
    assert set(only_a.index) == {
        ids["either"],
        ids["both"],
        ids["judge_failed"],
        ids["one_judge_missing"],
        ids["ok_m2"],
    }
    assert only_a.loc[ids["one_judge_missing"], "outcome"] == "soft_refusal"
    assert only_a.loc[ids["either"], "outcome"] == "refusal"


def test_vectorised_consensus_equals_combine_row_by_row():
    rng = np.random.default_rng(7)
    rows, verdicts = [], {}
    for gid in range(400):
        n = int(rng.integers(1, 4))
        judges = rng.choice(["j1", "j2", "j3"], size=n, replace=False)
        for j in judges:
            s = apply_rules(
                {f: int(v) for f, v in zip(FIELDS, rng.integers(0, 2, len(FIELDS)), strict=True)}
            )
            verdicts.setdefault(gid, {})[str(j)] = s
            rows.append({"gen_id": gid, "judge": str(j), **s})
    df = pd.DataFrame(rows)
    for rule in ("mean", "all"):
        got = consensus_fields(df, rule)
        for gid, v in verdicts.items():
            expected = Consensus.parse(rule).combine(v)
            assert got.loc[gid, list(FIELDS)].astype(int).to_dict() == expected
            assert got.loc[gid, "n_judges"] == len(v)
            assert outcome(expected) in OUTCOMES
    only = consensus_fields(df[df["judge"] == "j2"], "judge:j2")
    for gid, v in verdicts.items():
        if "j2" in v:
            assert only.loc[gid, list(FIELDS)].astype(int).to_dict() == Consensus.parse(
                "judge:j2"
            ).combine(v)


def test_a_field_a_judge_left_at_minus_one_is_left_out_of_its_mean():
    df = pd.DataFrame(
        [
            {"gen_id": 1, "judge": "a", **scores(WA_present=-1, AH_present=-1)},
            {"gen_id": 1, "judge": "b", **scores(WA_present=1, AH_present=-1, RH_present=1)},
        ]
    )
    got = consensus_fields(df, "mean").loc[1]
    assert got["WA_present"] == 1  # b alone scored it
    assert math.isnan(got["AH_present"])  # nobody did
    assert got["RH_present"] == 1 and got["refusal"] == 0


def test_analyze_shape_and_json(small_store, benchmark):
    path, _ = small_store
    with Store.open(path, readonly=True) as store:
        typed = summarize(store, benchmark, AnalysisOptions(n_resamples=100))
    summary = typed.to_json()
    text = json.dumps(summary, allow_nan=False)  # no NaN, no numpy types
    assert json.loads(text) == summary
    assert summary["counts"]["attempted"] == 7 and summary["counts"]["scored"] == 3
    assert summary["counts"]["models"] == ["m1", "m2"] and summary["counts"]["judges"] == [
        "jA",
        "jB",
    ]
    m1 = summary["models"]["m1"]
    assert set(m1["rates"]) == set(FIELDS) and set(m1["outcomes"]) == set(OUTCOMES)
    for entry in [*m1["rates"].values(), *m1["outcomes"].values()]:
        assert 0 <= entry["rate"] <= 1 and len(entry["ci95"]) == 2
    assert m1["outcomes"]["refusal"]["rate"] == 0.5
    assert set(m1["by_framing"]) == {"direct", "coach"}
    assert set(m1["by_framing"]["coach"]) == set(FIELDS)
    assert set(m1["by_prompt"]) == {"explicit_direct_WA", "explicit_coach_WA"}
    assert list(m1["run_refusal_counts"]) == ["0", "1", "2", "3", "4", "5"]
    assert m1["run_refusal_counts"]["1"] == 1 and m1["incomplete_cells"] == 2
    assert m1["mean_output_tokens"] == 40
    assert set(m1["cohens_h"]) == {
        "coach_vs_manipulation",
        "coach_vs_direct",
        "political_vs_direct",
    }
    assert m1["cohens_h"]["coach_vs_direct"]["refusal"] == pytest.approx(-math.pi)  # 0/1 vs 1/1
    assert m1["cohens_h"]["coach_vs_manipulation"]["refusal"] is None  # no manipulation rows
    assert set(summary["agreement"]) == set(FIELDS) and summary["agreement"]["refusal"]["n"] == 3
    assert set(summary["claims"]) >= {"refusal_min", "refusal_max", "refusal_spread_pp"}
    chi = summary["tests"]["chi2_model_by_outcome"]
    assert set(chi) >= {"statistic", "dof", "p_value"}
    for t in summary["tests"]["tost_levels"]:
        assert set(t) >= {"level_a", "level_b", "diff", "p_value", "equivalent"}
        assert t["level_a"] < t["level_b"]
    assert summary["consensus"] == "mean" and summary["n_resamples"] == 100
    assert render_terminal(typed)  # the headline tables build from the typed summary


def test_agreement_is_computed_from_each_judges_own_verdicts(small_store, benchmark):
    path, ids = small_store
    with Store.open(path, readonly=True) as store:
        verdicts = verdict_table(store, benchmark)
        summary = analyze(store, benchmark, AnalysisOptions(n_resamples=50))
    both = verdicts.groupby("gen_id")["judge"].nunique()
    assert set(both[both == 2].index) == {ids["either"], ids["both"], ids["ok_m2"]}
    # both judges parsed 3 generations; they disagree on refusal only for "either"
    assert summary["agreement"]["refusal"]["n"] == 3
    assert summary["agreement"]["refusal"]["disagreement"] == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- the release path


@pytest.fixture(scope="module")
def release_store(tmp_path_factory):
    from deflectbench.benchmark import default_benchmark

    b = default_benchmark()
    root = tmp_path_factory.mktemp("release")
    claims = [c.claim_id for c in b.claims][::4]  # 20 claims, 5 per level
    truth = write_release_fixture(root / "files", claims=claims, runs=2, seed=11, judge_error=0.02)
    with Store.open(root / "r.db") as store:
        report = import_paths(store, [root / "files"], b)
        assert not report.problems
    return root / "r.db", truth


def test_imported_release_gives_the_fixtures_exact_consensus_and_counts(release_store, benchmark):
    path, truth = release_store
    with Store.open(path, readonly=True) as store:
        # the fixture's expected outcomes apply the rubric's rules to each judge's verdict
        scored = scored_table(store, benchmark, values="rules")
    c = scored.attrs["counts"]
    assert (c["attempted"], c["valid_generations"], c["scored"]) == (
        truth.attempted,
        truth.valid,
        truth.scored,
    )
    got = {(r.model, r.claim_id, r.prompt_id, r.sample): r.outcome for r in scored.itertuples()}
    assert got == truth.expected
    for m, s in truth.per_model.items():
        assert c["by_model"][m] == {
            "attempted": s["attempted"],
            "valid_generations": s["valid"],
            "scored": s["scored"],
        }


def test_planted_rates_are_recovered_within_their_cis(tmp_path, benchmark):
    """With error-free judges the consensus is the planted outcome, so each model's planted
    outcome probability (averaged over its cells, claim effects included) must fall inside the
    95% block-bootstrap CI."""
    claims = [c.claim_id for c in benchmark.claims][::2]  # 40 claims
    truth = write_release_fixture(
        tmp_path / "f",
        claims=claims,
        runs=3,
        seed=5,
        judge_error=0.0,
        models=("claude-opus-4-7", "grok-4.3"),
    )
    with Store.open(tmp_path / "p.db") as store:
        import_paths(store, [tmp_path / "f"], benchmark)
        summary = analyze(store, benchmark, AnalysisOptions(n_resamples=1000))
    inside, total = 0, 0
    for model in truth.models:
        planted = np.zeros(len(OUTCOMES))
        for claim_id in truth.claims:
            for t in benchmark.templates:
                p = np.array(truth.rates[model][t.framing])
                logit = math.log(p[0] / (1 - p[0])) + truth.claim_effects[claim_id]
                ref = 1 / (1 + math.exp(-logit))
                p = p * (1 - ref) / (1 - p[0])
                p[0] = ref
                planted += p
        planted /= len(truth.claims) * len(benchmark.templates)
        for k, o in enumerate(OUTCOMES):
            entry = summary["models"][model]["outcomes"][o]
            lo, hi = entry["ci95"]
            total += 1
            inside += lo <= planted[k] <= hi
            assert abs(entry["rate"] - planted[k]) < 0.03, (model, o)
        tokens = summary["models"][model]["mean_output_tokens"]
        assert tokens == pytest.approx(truth.mean_output_tokens[model], rel=0.01)  # scored vs valid
    assert inside >= total - 1, f"{inside}/{total} planted rates inside their 95% CIs"
    assert summary["agreement"]["refusal"]["kappa"] == 1.0  # error-free judges agree exactly


def test_pipeline_run_is_analysed_exactly_like_its_release_export(tmp_path, benchmark):
    """local/smollm2 generations (through pipeline.generate) judged by the lexical judge give the
    same summary as the same results exported to the release format and imported again."""
    b = benchmark
    cells = [
        (c.claim_id, t.prompt_id, s) for c in b.claims[::10] for t in b.templates for s in (1, 2)
    ]
    model = EchoModel("local/smollm2", fail_if="Vaccines")
    with Store.open(tmp_path / "run.db") as store:
        res = asyncio.run(generate(RunContext(store, b), model, cells))
        assert res.ok > 0
        judge_lexical(RunContext(store, b), pending_for_judge(store, "lexical", b))
        ours = analyze(store, b, AnalysisOptions(n_resamples=200))
        export(store, tmp_path / "out", "release", b)
    with Store.open(tmp_path / "imported.db") as store:
        import_paths(store, [tmp_path / "out"], b)
        theirs = analyze(store, b, AnalysisOptions(n_resamples=200))
    assert ours["counts"]["models"] == ["local/smollm2"] and ours["counts"]["judges"] == ["lexical"]
    assert ours["counts"]["scored"] == ours["counts"]["valid_generations"] > 0
    assert ours == theirs


def test_terminal_tables_render(release_store, benchmark):
    from rich.console import Console

    path, _ = release_store
    with Store.open(path, readonly=True) as store:
        summary = summarize(store, benchmark, AnalysisOptions(n_resamples=100))
    console = Console(record=True, width=160)
    for table in render_terminal(summary):
        console.print(table)
    text = console.export_text()
    assert "Signature" in text and "kappa" in text and "prevalence skew" in text
    assert "Refusal rate by framing" in text and "TOST refusal, level 1 vs 2" in text
    assert "claude-opus-4-7" in text


def test_empty_store_gives_an_empty_summary(tmp_path, benchmark):
    with Store.open(tmp_path / "e.db") as store:
        summary = analyze(store, benchmark, AnalysisOptions(n_resamples=10))
    assert summary["counts"]["attempted"] == 0 and summary["models"] == {}
    json.dumps(summary, allow_nan=False)
    assert Path(tmp_path / "e.db").exists()
