"""The ``deflectbench/deflectbench`` Inspect task: found through its entry point, samples that are
the release's prompts to the character, the blind rubric judges with the native request, and
metrics that are the paper's pooled rates. Runs go through ``inspect_ai.eval`` against
Inspect's ``mockllm`` model and against the local wire-format server (``openai-api``)."""

from __future__ import annotations

import json
import math
from importlib.metadata import entry_points

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import SampleScore, Score

from deflectbench.benchmark.single_turn import resolve_pack
from deflectbench.errors import ConfigError
from deflectbench.inspect_eval.metrics import rate_of
from deflectbench.inspect_eval.task import dataset, deflectbench
from deflectbench.judging import verdicts
from deflectbench.judging.rubric import judge_messages
from deflectbench.vocab import FIELDS, OUTCOMES
from support import inspect_runs as ir

CLEAN = {
    "reasoning": "a pivot, unlabeled",
    "refusal": 0,
    "soft_refusal": 0,
    "WA_present": 1,
    "AH_present": 0,
    "RH_present": 0,
    "any_fallacy_present": 1,
    "compliance_clean": 1,
    "fallacy_labeled": 0,
}
LABELED = CLEAN | {"reasoning": "labels it", "compliance_clean": 0, "fallacy_labeled": 1}


def _output(text: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = ModelUsage(input_tokens=5, output_tokens=len(text.split()), total_tokens=5)
    return out


# -- registry and dataset -----------------------------------------------------------------------


def test_the_entry_point_names_the_registry_module():
    eps = {ep.name: ep.value for ep in entry_points(group="inspect_ai")}
    assert eps.get("deflectbench") == "deflectbench.inspect_eval._registry"


def test_every_sample_is_the_release_prompt_with_its_cell_as_metadata(benchmark):
    ds = dataset()
    assert len(ds) == len(benchmark.claims) * len(benchmark.templates) == 1200
    for s in ds:
        md = s.metadata
        assert s.input == benchmark.render(md["claim_id"], md["prompt_id"])
        claim, template = benchmark.claim(md["claim_id"]), benchmark.template(md["prompt_id"])
        assert (md["claim"], md["level"], md["context"]) == (claim.text, claim.level, claim.context)
        assert (md["framing"], md["fallacy"]) == (template.framing, template.fallacy)
        assert set(verdicts.SAMPLE_KEYS) <= set(md)


def test_parameters_choose_cells_and_bad_ids_are_one_line_errors(benchmark):
    ds = dataset(claims="L1_US_01, L2_INT_03", framings=["coach"])
    assert len(ds) == 2 * 3
    assert {s.metadata["framing"] for s in ds} == {"coach"}
    with pytest.raises(ConfigError, match=r"unknown claim 'L1_US_1' \(did you mean 'L1_US_01'\?\)"):
        deflectbench(claims="L1_US_1")
    with pytest.raises(ConfigError, match="epochs must be at least 1"):
        deflectbench(epochs=0)
    task = deflectbench(claims="L1_US_01")
    assert task.epochs == benchmark.runs_per_cell == 5
    assert task.config.temperature == benchmark.generation_temperature == 1.0


# -- metrics ------------------------------------------------------------------------------------


def test_metrics_pool_generations_not_samples():
    """Two samples, 1 of 1 and 1 of 3 scored epochs refused: 2/4, not the mean of 1 and 1/3."""
    one = verdicts.outcome_counts([{"outcome": "refusal"}])
    three = verdicts.outcome_counts(
        [{"outcome": "refusal"}, {"outcome": "other"}, {"outcome": "clean_compliance"}]
    )
    unscored = verdicts.outcome_counts([{"outcome": None}])
    scores = [SampleScore(score=Score(value=v)) for v in (one, three, unscored)]
    assert rate_of("refusal", scores) == 2 / 4
    assert rate_of("clean_compliance", scores) == 1 / 4
    assert math.isnan(rate_of("refusal", [SampleScore(score=Score(value=unscored))]))


# -- runs ---------------------------------------------------------------------------------------


def test_mockllm_run_scores_with_the_native_judge_request(tmp_path, benchmark):
    seen: dict[str, list] = {"subject": [], "a": [], "b": []}

    def subject(messages, tools, tool_choice, config):
        seen["subject"].append((messages, config))
        text = messages[-1].text
        return _output("" if "coach" in text.lower() else f"What about the others? {len(text)}")

    def judge(name, verdict):
        def answer(messages, tools, tool_choice, config):
            seen[name].append((messages, config))
            return _output(json.dumps(verdict))

        return answer

    (log,) = inspect_eval(
        "deflectbench/deflectbench",
        model=get_model("mockllm/subject", custom_outputs=subject),
        model_roles={
            "judge_a": get_model("mockllm/judge-a", custom_outputs=judge("a", CLEAN)),
            "judge_b": get_model("mockllm/judge-b", custom_outputs=judge("b", LABELED)),
        },
        task_args={
            "claims": "L1_US_01,L4_INT_15",
            "templates": "explicit_direct_WA,explicit_coach_AH",
            "judges": ["judge_a", "judge_b"],
            "epochs": 2,
        },
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    assert len(log.samples) == 2 * 2 * 2
    # the subject: the rendered prompt alone, at temperature 1.0
    assert {c.temperature for _, c in seen["subject"]} == {1.0}
    assert {m[-1].text for m, _ in seen["subject"]} == {
        benchmark.render(c, p)
        for c in ("L1_US_01", "L4_INT_15")
        for p in ("explicit_direct_WA", "explicit_coach_AH")
    }
    # the judges: the rubric verbatim, blind, at temperature 0 with the schema
    assert len(seen["a"]) == len(seen["b"]) == 4  # the coach replies are empty: never judged
    replies = {(s.metadata["claim"], s.output.completion) for s in log.samples}
    asked = [
        [(m.role, m.content) for m in judge_messages(benchmark.rubric, claim, reply)]
        for claim, reply in replies
    ]
    for messages, config in seen["a"] + seen["b"]:
        assert [(m.role, m.text) for m in messages] in asked
        assert config.temperature == 0.0 and config.seed == 0 and config.max_tokens == 512
        assert config.response_schema is not None
        assert "mockllm" not in messages[1].text and "explicit_direct_WA" not in messages[1].text
    # consensus mean: either judge's 1 wins, so labeled (judge b) outranks clean (judge a)
    for s in log.samples:
        value = s.scores[verdicts.SCORER].value
        if s.metadata["framing"] == "coach":
            assert value["outcome"] is None
            assert s.scores[verdicts.SCORER].metadata["finish_reason"] == "empty"
        else:
            assert value["outcome"] == "labeled_compliance"
            assert {f: value[f] for f in FIELDS} == {f: max(CLEAN[f], LABELED[f]) for f in FIELDS}
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert {k: metrics[k] for k in OUTCOMES} == {
        "refusal": 0.0,
        "soft_refusal": 0.0,
        "labeled_compliance": 1.0,
        "clean_compliance": 0.0,
        "other": 0.0,
    }
    assert {f: metrics[f"field_{f}"] for f in FIELDS} == {
        f: float(max(CLEAN[f], LABELED[f])) for f in FIELDS
    }
    # every judged generation agrees: each interval collapses on its rate
    for name in [*OUTCOMES, *(f"field_{f}" for f in FIELDS)]:
        assert metrics[f"{name}_lower"] == metrics[f"{name}_upper"] == metrics[name]
    # the judges agree on every field but the two where judge b labels and judge a does not
    split = {"compliance_clean", "fallacy_labeled"}
    assert {f: metrics[f"alpha_{f}"] for f in FIELDS if f not in split} == {
        f: 1.0 for f in FIELDS if f not in split
    }
    assert all(metrics[f"alpha_{f}"] < 0 for f in split)


@pytest.fixture(scope="module")
def wire_run(tmp_path_factory):
    """One eval through Inspect's openai-api provider against the local server."""
    logs = tmp_path_factory.mktemp("inspect") / "logs"
    srv = ir.server()
    start = len(srv.requests)
    with pytest.MonkeyPatch.context() as mp:
        ir.point_inspect_at(mp, srv)
        log = ir.run_inspect(logs, epochs=2)
        yield log, srv.requests[start:]


def test_openai_compatible_run_end_to_end(wire_run, benchmark):
    log, requests = wire_run
    assert log.status == "success"
    assert log.eval.task == "deflectbench/deflectbench"
    assert len(log.samples) == len(ir.CLAIMS) * len(ir.TEMPLATES) * 2
    subject = [r for r in requests if not ir.is_judge(r)]
    judges = [r for r in requests if ir.is_judge(r)]
    assert {r.body["model"] for r in subject} == {"test-model"}
    assert {r.body["temperature"] for r in subject} == {1.0}
    assert {r.prompt for r in subject} == {
        benchmark.render(c, p) for c in ir.CLAIMS for p in ir.TEMPLATES
    }
    assert {r.body["model"] for r in judges} == {"judge-a", "judge-b"}
    for r in judges:
        assert r.body["temperature"] == 0.0 and r.body["seed"] == 0
        assert r.body["response_format"]["type"] == "json_schema"
        assert "test-model" not in json.dumps(r.body["messages"])
    # each judge's raw reply is kept in the score's metadata, for the import
    some = log.samples[0].scores[verdicts.SCORER].metadata["judges"]
    assert [j["model"] for j in some] == list(ir.INSPECT_JUDGES)
    # the metrics are the pooled outcome shares of the per-epoch scores
    values = [s.scores[verdicts.SCORER].value for s in log.samples]
    scored = [v["outcome"] for v in values if v["outcome"] is not None]
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    for name in OUTCOMES:
        assert metrics[name] == pytest.approx(scored.count(name) / len(scored))
    assert 0 < len(scored) < len(values)  # some replies are blank or not parsed: unscored


def test_a_shipped_pack_renders_its_own_prompts_and_multi_turn_is_refused():
    from deflectbench.benchmark import resolve_benchmark

    es = resolve_benchmark("deflectbench-v1-es")
    ds = dataset(pack="deflectbench-v1-es", claims="L1_US_01")
    assert [s.input for s in ds] == [es.render("L1_US_01", t.prompt_id) for t in es.templates]
    assert {s.metadata["benchmark"] for s in ds} == {es.key}
    with pytest.raises(ConfigError, match="multi-turn"):
        deflectbench(pack="deflectbench-v1-multiturn")


def test_judges_are_named_once():
    from deflectbench.inspect_eval.scorer import rubric_judges

    with pytest.raises(ConfigError, match="each judge once"):
        rubric_judges(["openai/gpt-5.4-mini", "openai/gpt-5.4-mini"])
    with pytest.raises(ConfigError, match="name at least one judge"):
        rubric_judges([])


def test_an_unknown_pack_names_the_task_parameter():
    """The error spoke of --benchmark, an option Inspect does not have; the parameter is
    -T pack=."""
    with pytest.raises(ConfigError, match=r"^-T pack=nope: no shipped pack of that name"):
        resolve_pack("nope")
