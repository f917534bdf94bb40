"""The task's scorer: DeflectBench's blind rubric judges, run through Inspect's models.

Each judge (a model role, ``judge_a`` and ``judge_b``, bound with ``--model-role``) gets the benchmark's rubric verbatim, the claim and the
response only (never the model, template or framing), at the rubric's temperature (0) with
the same structured-output schema as a native judge. Its reply is read by the same parser and
rules (:func:`deflectbench.judging.judges.read_verdict`), the judges' verdicts combine by the
same consensus (:class:`deflectbench.vocab.Consensus`) and the outcome by the same ladder. The
score's value is the eight fields and the outcome; its metadata keeps each judge's raw reply,
so ``deflectbench import`` stores the judgments themselves and the analysis can recombine them,
and what each judge said per field (``verdicts``), which the agreement metric reads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ResponseSchema,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema

from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.single_turn import resolve_pack
from deflectbench.errors import ConfigError
from deflectbench.inspect_eval.metrics import SCORER_METRICS
from deflectbench.inspect_eval.roles import JUDGE_ROLES, is_role
from deflectbench.inspect_eval.viewer import CELL_KEYS
from deflectbench.judging import verdicts
from deflectbench.judging.rubric import JUDGMENT_SCHEMA, judge_messages
from deflectbench.secrets import scrub
from deflectbench.vocab import FIELDS, NON_ANSWERS, Consensus

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
    ``deflectbench judge`` retries). ``name`` is a model role (``--model-role NAME=MODEL``),
    required: an unbound one raises, it never falls back to the evaluated model (or a model
    name, ``openai/m``); ``model``
    records which model answered."""
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=m.content)
        if m.role == "system"
        else ChatMessageUser(content=m.content)
        for m in judge_messages(benchmark.rubric, claim, response)
    ]
    start = time.monotonic()
    model_name = name
    try:
        model = get_model(role=name, required=True) if is_role(name) else get_model(name)
    except Exception as exc:  # unbound: the task's check refuses this before any sample
        raise ConfigError(f"judge {name!r}: {exc}") from exc
    try:
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


def said_fields(parsed: Any) -> dict[str, int | None] | None:
    """What one judge said per field (None: no verdict), for the agreement metric."""
    if parsed is None or parsed.parse_error or parsed.said is None:
        return None
    return {f: parsed.said.get(f) for f in FIELDS}


@scorer(metrics=SCORER_METRICS, name=verdicts.SCORER)
def rubric_judges(
    judges: Sequence[str] = JUDGE_ROLES,
    pack: str | None = None,
    consensus: str = "mean",
    max_tokens: int = JUDGE_MAX_TOKENS,
    structured: bool = True,
) -> Scorer:
    """Score each reply with the blind rubric judges (model roles) and their consensus
    (``pack``: the benchmark whose rubric they use, as the task's ``pack``)."""
    benchmark = resolve_pack(pack)
    if not judges:
        raise ConfigError("judges: name at least one judge role, e.g. judges=judge_a")
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
        cell = {k: state.metadata.get(k) for k in CELL_KEYS}
        if reason in NON_ANSWERS:
            return Score(
                value={**verdicts.score_value(None), **cell},
                explanation=f"not judged: the reply was {reason}",
                metadata=meta,
            )
        claim = benchmark.claim(state.metadata["claim_id"]).text
        entries = await asyncio.gather(
            *(ask_judge(name, benchmark, claim, text, config) for name in judges)
        )
        meta["judges"] = list(entries)
        parsed = {e["judge"]: verdicts.parse_judge(benchmark.rubric, e) for e in entries}
        meta["verdicts"] = {name: said_fields(p) for name, p in parsed.items()}
        combined = verdicts.consensus_scores(parsed, rule)
        notes = []
        for e in entries:
            p = parsed[e["judge"]]
            said = e["error"] if p is None else (p.problem if p.parse_error else p.reasoning)
            notes.append(f"{e['judge']}: {said or ''}")
        value = verdicts.score_value(combined)
        answer = value["outcome"]
        return Score(
            value={**value, **cell},
            answer=answer if isinstance(answer, str) else None,
            explanation="\n".join(notes),
            metadata=meta,
        )

    return score
