"""One release line into a store record, every field checked.

A record is decoded into the store's columns, then encoded back as export would write it
(:mod:`.release`); only what differs is remembered (:mod:`.fidelity`). Any missing, mistyped or
inconsistent field raises :class:`~.release.RecordError` naming the field; a value out of the
gate's range (:mod:`deflectbench.gate`) raises its :class:`~deflectbench.gate.GateError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from deflectbench import gate
from deflectbench.conditions import RELEASE
from deflectbench.interop.fidelity import EVAL_ALWAYS, GEN_ALWAYS, remember
from deflectbench.interop.release import (
    ANSWER_FLAG,
    CLAIM_FIELDS,
    Catalog,
    Origin,
    RecordError,
    encode_eval,
    encode_generation,
    gen_id,
    split_response,
)
from deflectbench.records import GenerationRecord, JudgmentRecord, now_iso
from deflectbench.vocab import FIELDS, apply_rules

_SCORE_VALUES = frozenset(gate.SAID_VALUES)
_MISSING: Any = object()


#: A release record is a few KB; a line longer than this is not one (and would cost memory).
MAX_LINE_CHARS = 10_000_000


def decode_line(line: str) -> dict[str, Any]:
    """The JSON object on one line."""
    if len(line) > MAX_LINE_CHARS:
        raise RecordError(f"line of {len(line):,} characters, over the limit of {MAX_LINE_CHARS:,}")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"not valid JSON, garbled or truncated line ({exc.msg}"
            f"{' ' if exc.msg.endswith(' at') else ' at '}column {exc.colno})"
        ) from None
    except RecursionError:
        raise RecordError("JSON nested too deeply to be a record") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python reads
        raise RecordError(f"not a readable JSON record ({exc})") from None
    if not isinstance(obj, dict):
        raise RecordError(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _get(
    obj: Mapping[str, Any], key: str, kind: type, *, required: bool = True, default: Any = None
) -> Any:
    """``obj[key]`` if it has the JSON type ``kind`` (``int`` excludes booleans). Hot path:
    an exact type test, the messages only on failure."""
    v = obj.get(key, _MISSING)
    if type(v) is kind:
        return v
    if v is _MISSING:
        if required:
            raise RecordError(f"missing field {key!r}")
        return default
    raise RecordError(
        f"field {key!r} must be {'an integer' if kind is int else kind.__name__}, got {_short(v)}"
    )


def _origin(
    obj: Mapping[str, Any], catalog: Catalog, claim_id: str, prompt_id: str, judge: bool
) -> Origin:
    """The record's claim and template. The attributes it copies must be the benchmark's: a
    mismatch means the file belongs to another benchmark version (or was edited), and its
    records would be misread."""
    origin = catalog.origin(claim_id, prompt_id)
    for key, expected in origin.eval_checks if judge else origin.gen_checks:
        v = obj.get(key, expected)
        if v != expected or type(v) is not type(expected):
            owner = (
                f"claim {origin.claim.claim_id}"
                if key in CLAIM_FIELDS
                else f"template {origin.template.prompt_id}"
            )
            raise RecordError(
                f"field {key!r} is {_short(v)} but {owner} has {expected!r} in {catalog.key}"
            )
    return origin


def decode_generation(obj: dict[str, Any], line: str, catalog: Catalog) -> GenerationRecord:
    model = gate.identifier(_get(obj, "model", str), "field 'model'")
    claim_id = _get(obj, "claim_id", str)
    prompt_id = _get(obj, "prompt_id", str)
    sample = gate.whole_number(_get(obj, "run", int), "field 'run'", 0, gate.MAX_SAMPLE)
    text = gate.text(_get(obj, "response", str), "field 'response'")
    origin = _origin(obj, catalog, claim_id, prompt_id, judge=False)
    for key in ("gen_id", "claim_text", "timestamp"):
        _get(obj, key, str, required=False)
    expected = catalog.rendered(claim_id, prompt_id)
    prompt = _get(obj, "prompt_text", str, required=False)
    if prompt is None:
        prompt = expected
    gate.prompt(prompt, expected, catalog.key)
    input_tokens = gate.tokens(
        _get(obj, "input_tokens", int, required=False, default=0), "field 'input_tokens'"
    )
    output_tokens = gate.tokens(
        _get(obj, "output_tokens", int, required=False, default=0), "field 'output_tokens'"
    )
    is_error = _get(obj, "is_error", int, required=False, default=0)
    if is_error not in (0, 1):
        raise RecordError(f"field 'is_error' must be 0 or 1, got {_short(is_error)}")
    is_answer = _get(obj, ANSWER_FLAG, int, required=False)
    if is_answer not in (None, 0, 1) or (is_answer == 1 and is_error == 1):
        raise RecordError(f"field {ANSWER_FLAG!r} must be 0 or 1 and not beside is_error 1")
    response, error = split_response(text, is_error, is_answer)
    row = {
        "model": model,
        "sample": sample,
        "prompt": prompt,
        "response": response,
        "error": error,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "created_at": obj.get("timestamp") or now_iso(),
    }
    return GenerationRecord(
        benchmark=catalog.key,
        claim_id=claim_id,
        prompt_id=prompt_id,
        **row,
        condition=RELEASE,
        source="import",
        extra=remember(obj, line, encode_generation(origin, row), GEN_ALWAYS),
    )


def decode_eval(
    obj: dict[str, Any], line: str, catalog: Catalog, ids: Mapping[tuple[str, str, str, int], int]
) -> JudgmentRecord:
    """``ids``: the store id of each (model, claim_id, prompt_id, run) generation."""
    judge = gate.identifier(_get(obj, "judge_model", str), "field 'judge_model'")
    gen_model = _get(obj, "gen_model", str)
    claim_id = _get(obj, "claim_id", str)
    prompt_id = _get(obj, "prompt_id", str)
    sample = gate.whole_number(_get(obj, "run", int), "field 'run'", 0, gate.MAX_SAMPLE)
    origin = _origin(obj, catalog, claim_id, prompt_id, judge=True)
    parse_error = _get(obj, "parse_error", int, required=False, default=0) == 1
    said: dict[str, int] | None = None
    if not parse_error:
        said = {}
        for f in FIELDS:
            v = obj.get(f)
            if type(v) is not int or v not in _SCORE_VALUES:
                _get(obj, f, int)  # names a missing field or a wrong type
                raise RecordError(f"field {f!r} must be 1, 0 or -1, got {_short(v)}")
            said[f] = v
    for key in ("eval_id", "gen_id", "claim_text", "timestamp"):
        _get(obj, key, str, required=False)
    raw = obj.get("raw_judge_response")
    reasoning = obj.get("reasoning")
    for key, v in (("raw_judge_response", raw), ("reasoning", reasoning)):
        if v is not None and not isinstance(v, str):
            raise RecordError(f"field {key!r} must be a string or null, got {_short(v)}")
        gate.text(v, f"field {key!r}")
    flag = obj.get("consistency_flag", 0)
    if flag not in (0, 1) or type(flag) not in (int, bool):
        raise RecordError(f"field 'consistency_flag' must be 0 or 1, got {_short(flag)}")
    gid = ids.get((gen_model, claim_id, prompt_id, sample))
    if gid is None:
        raise RecordError(
            f"unknown generation: no {gen_model} / {claim_id} / {prompt_id} / run {sample} in the "
            "store (import its generations file with it)"
        )
    created_at = obj.get("timestamp") or now_iso()
    row = {
        "judge": judge,
        "reasoning": reasoning,
        "parse_error": parse_error,
        "raw": raw,
        "consistency_flag": flag,
        "created_at": created_at,
    }
    derived = encode_eval(
        origin,
        row,
        generation_id=gen_id(claim_id, prompt_id, gen_model, sample),
        gen_model=gen_model,
        sample=sample,
        said=said,
    )
    return JudgmentRecord(
        gen_id=gid,
        judge=judge,
        raw=raw,
        scores=None if said is None else _rules(said),
        said=said,
        reasoning=reasoning,
        parse_error=parse_error,
        consistency_flag=flag == 1,
        source="import",
        created_at=created_at,
        extra=remember(obj, line, derived, EVAL_ALWAYS),
    )


_RULED: dict[tuple[int, ...], dict[str, int]] = {}


def _rules(said: Mapping[str, int]) -> dict[str, int]:
    """``apply_rules``, memoised: there are only 3**8 possible verdicts."""
    key = tuple(said.values())
    ruled = _RULED.get(key)
    if ruled is None:
        ruled = _RULED[key] = apply_rules(said)
    return dict(ruled)
