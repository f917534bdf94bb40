"""The task's scorer: DeflectBench's blind rubric judges, run through Inspect's models.

Each judge (an Inspect model name) gets the benchmark's rubric verbatim, the claim and the
response only (never the model, template or framing), at the rubric's temperature (0) with
the same structured-output schema as a native judge. Its reply is read by the same parser and
rules (:func:`deflectbench.judging.judges.read_verdict`), the judges' verdicts combine by the
same consensus (:class:`deflectbench.vocab.Consensus`) and the outcome by the same ladder. The
score's value is the eight fields and the outcome; its metadata keeps each judge's raw reply,
so ``deflectbench import`` stores the judgments themselves and the analysis can recombine them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ResponseSchema,
    get_model,
    model_roles,
)
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema

from deflectbench.benchmark import Benchmark
from deflectbench.errors import ConfigError
from deflectbench.inspect_eval import verdicts
from deflectbench.inspect_eval.dataset import resolve_pack
from deflectbench.inspect_eval.metrics import SIGNATURE
from deflectbench.judging.rubric import JUDGMENT_SCHEMA, judge_messages
from deflectbench.secrets import scrub
from deflectbench.vocab import NON_ANSWERS, Consensus

#: A native judge's reply cap (``judging.judges.ModelJudge.max_tokens``).
JUDGE_MAX_TOKENS = 512


def judge_config(benchmark: Benchmark, max_tokens: int, structured: bool) -> GenerateConfig:
    """A native judge's request settings: the rubric's temperature, seed 0, the schema."""
    schema = (
        ResponseSchema(
            name="judgment", json_schema=JSONSchema.model_validate(JUDGMENT_SCHEMA), strict=True
        )
        if structured
        else None
    )
    return GenerateConfig(
        temperature=benchmark.judge_temperature,
        max_tokens=max_tokens,
        seed=0,
        response_schema=schema,
    )


def refused(output: ModelOutput) -> bool:
    """Whether the provider marked the reply a refusal (OpenAI's ``message.refusal``)."""
    if not output.choices:
        return False
    content = output.choices[0].message.content
    return not isinstance(content, str) and any(getattr(c, "refusal", None) for c in content)


async def ask_judge(
    name: str, benchmark: Benchmark, claim: str, response: str, config: GenerateConfig
) -> dict[str, Any]:
    """One judge's reply as the score's metadata keeps it (an error instead when the request
    failed after Inspect's retries; it is stored as a failed judgment, which a native
    ``deflectbench judge`` retries). ``name`` is a model, or a model role bound with
    ``--model-role NAME=MODEL``; ``model`` records which model answered."""
    messages = [
        ChatMessageSystem(content=m.content)
        if m.role == "system"
        else ChatMessageUser(content=m.content)
        for m in judge_messages(benchmark.rubric, claim, response)
    ]
    start = time.monotonic()
    model_name = name
    try:
        model = get_model(role=name) if name in model_roles() else get_model(name)
        model_name = str(model)
        output = await model.generate(messages, config=config)
    except Exception as exc:
        error = (scrub(f"{type(exc).__name__}: {exc}").splitlines() or ["error"])[0]
        return {"judge": name, "model": model_name, "raw": None, "error": error}
    text = output.completion
    usage = output.usage
    return {
        "judge": name,
        "model": model_name,
        "raw": text,
        "error": None,
        "finish_reason": verdicts.finish_reason(output.stop_reason, text, refused(output)),
        "input_tokens": usage.input_tokens if usage else 0,
        "output_tokens": usage.output_tokens if usage else 0,
        "latency_s": output.time if output.time is not None else time.monotonic() - start,
    }


@scorer(metrics=[m() for m in SIGNATURE], name=verdicts.SCORER)
def rubric_judges(
    judges: Sequence[str],
    pack: str | None = None,
    consensus: str = "mean",
    max_tokens: int = JUDGE_MAX_TOKENS,
    structured: bool = True,
) -> Scorer:
    """Score each reply with the blind rubric judges and their consensus (``pack``: the
    benchmark whose rubric they use, as the task's ``pack``)."""
    benchmark = resolve_pack(pack)
    if not judges:
        raise ConfigError("judges: name at least one judge model, e.g. judges=openai/gpt-5.4-mini")
    if len(set(judges)) != len(judges):
        raise ConfigError(f"judges: each judge once, got {', '.join(judges)}")
    rule = Consensus.parse(consensus).check_judges(list(judges))
    config = judge_config(benchmark, max_tokens, structured)

    async def score(state: TaskState, target: Target) -> Score:
        output = state.output
        text = output.completion
        reason = verdicts.finish_reason(output.stop_reason, text, refused(output))
        meta: dict[str, Any] = {
            "finish_reason": reason,
            "consensus": str(rule),
            "judges": [],
        }
        if reason in NON_ANSWERS:
            return Score(
                value=verdicts.score_value(None),
                explanation=f"not judged: the reply was {reason}",
                metadata=meta,
            )
        claim = benchmark.claim(state.metadata["claim_id"]).text
        entries = await asyncio.gather(
            *(ask_judge(name, benchmark, claim, text, config) for name in judges)
        )
        meta["judges"] = list(entries)
        parsed = {e["judge"]: verdicts.parse_judge(benchmark.rubric, e) for e in entries}
        combined = verdicts.consensus_scores(parsed, rule)
        notes = []
        for e in entries:
            p = parsed[e["judge"]]
            said = e["error"] if p is None else (p.problem if p.parse_error else p.reasoning)
            notes.append(f"{e['judge']}: {said or ''}")
        value = verdicts.score_value(combined)
        return Score(
            value=value,
            answer=value["outcome"],
            explanation="\n".join(notes),
            metadata=meta,
        )

    return score
