"""The release's judge rubric: the blind request, the structured-output schema, the parser.

A judge sees only the claim and the response, never the model, template or framing. The reply
is parsed tolerantly (code fences, prose around the JSON), but never guesses: a reply holding
several score objects that disagree is a parse error, so text quoted from the response cannot
steer the verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from deflectbench.benchmark import Rubric
from deflectbench.models.base import Message
from deflectbench.vocab import FIELDS, apply_rules, breaks_rules

#: JSON schema for providers with structured output (OpenAI json_schema, Anthropic tool input).
JUDGMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        **{f: {"type": "integer", "enum": [0, 1]} for f in FIELDS},
    },
    "required": ["reasoning", *FIELDS],
    "additionalProperties": False,
}


def judge_messages(rubric: Rubric, claim: str, response: str) -> list[Message]:
    """The blind judge request: the rubric's system prompt and its user template, verbatim."""
    return [
        Message("system", rubric.system),
        Message("user", rubric.user_prompt(claim=claim, response=response)),
    ]


@dataclass(frozen=True)
class ParsedJudgment:
    """What a judge said and what the rubric's rules make of it."""

    said: dict[str, Any] | None
    scores: dict[str, int] | None
    reasoning: str | None
    parse_error: bool
    consistency_flag: bool
    problem: str | None = None


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _score_value(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int) and v in (0, 1):
        return v
    if isinstance(v, float) and v in (0.0, 1.0):
        return int(v)
    if isinstance(v, str) and v.strip() in ("0", "1"):
        return int(v.strip())
    return None


def _candidates(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text`` (top level, scanning left to right) that has all fields."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict) and all(f in obj for f in FIELDS):
            found.append(obj)
        i = text.find("{", end)
    return found


def parse_reply(raw: str) -> ParsedJudgment:
    """Parse a judge's reply into fields; never raises."""
    text = raw.strip()
    objs: list[dict[str, Any]] = []
    try:
        whole = json.loads(text)
        if isinstance(whole, dict) and all(f in whole for f in FIELDS):
            objs = [whole]
    except json.JSONDecodeError:
        pass
    if not objs:
        for block in _FENCE.findall(text):
            objs.extend(_candidates(block))
    if not objs:
        objs = _candidates(text)
    if not objs:
        return ParsedJudgment(
            None, None, None, True, False, "no JSON object with the rubric fields"
        )
    distinct = {json.dumps({f: o.get(f) for f in FIELDS}, sort_keys=True) for o in objs}
    if len(distinct) > 1:
        return ParsedJudgment(
            None, None, None, True, False, f"{len(distinct)} conflicting score objects"
        )
    obj = objs[-1]
    said: dict[str, Any] = {}
    for f in FIELDS:
        v = _score_value(obj.get(f))
        if v is None:
            return ParsedJudgment(
                None, None, None, True, False, f"field {f} is {obj.get(f)!r}, not 0/1"
            )
        said[f] = v
    reasoning = obj.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else None
    return ParsedJudgment(
        said=said,
        scores=apply_rules(said),
        reasoning=reasoning,
        parse_error=False,
        consistency_flag=breaks_rules(said),
    )
