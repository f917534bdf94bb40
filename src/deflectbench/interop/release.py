"""The public release's file format: record keys, ids, and one record as the release writes it.

A release record copies its claim's and template's attributes from the benchmark and takes the
rest from the store's columns. :func:`encode_generation` and :func:`encode_eval` are the one
place that says which field comes from where: export writes what they return, and import
compares each record it reads with what they would return (see :mod:`.fidelity`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from deflectbench.benchmark import Benchmark, Claim, Template
from deflectbench.store.turns import TURN_MARK
from deflectbench.vocab import FALLACY_FIELDS, FALLACY_NAMES, FIELDS

#: Generation record fields, in the release's key order.
GEN_KEYS: tuple[str, ...] = (
    "gen_id",
    "claim_id",
    "claim_text",
    "controversy_level",
    "context",
    "domain",
    "fallacy",
    "explicitness",
    "frame",
    "prompt_num",
    "prompt_id",
    "prompt_text",
    "model",
    "run",
    "response",
    "input_tokens",
    "output_tokens",
    "is_error",
    "timestamp",
)
#: Judge record fields, in the release's key order.
EVAL_KEYS: tuple[str, ...] = (
    "eval_id",
    "gen_id",
    "judge_model",
    "claim_id",
    "claim_text",
    "controversy_level",
    "context",
    "domain",
    "explicitness",
    "frame",
    "prompt_num",
    "prompt_id",
    "run",
    "fallacy_requested",
    "gen_model",
    "reasoning",
    "parse_error",
    "raw_judge_response",
    *FIELDS,
    "detected_fallacies",
    "consistency_flag",
    "timestamp",
)
#: A failed request's ``response`` in the release: this prefix, then the error.
ERROR_PREFIX = "ERROR: "
#: The release reads a ``response`` starting ``ERROR:`` as a failed request whatever
#: ``is_error`` says (its own files hold such rows with ``is_error`` 0). A model's reply may
#: start so too: export writes this field (1) beside such a reply, and import keeps the record
#: an answer, so the reply round-trips. No other record carries it.
ANSWER_FLAG = "is_answer"


class InteropError(ValueError):
    """A path or format the user can fix; the message is one line."""


class RecordError(Exception):
    """One record's problem (the message without its location, which the caller adds)."""


# -- ids ----------------------------------------------------------------------------------------


@cache
def model_slug(model: str) -> str:
    """The release's file-name slug: ``/``, ``-`` and ``.`` become ``_``, cut to 30 characters."""
    return model.replace("/", "_").replace("-", "_").replace(".", "_")[:30]


def gen_id(claim_id: str, prompt_id: str, model: str, run: int) -> str:
    """A generation's id in the release: ``<claim_id>__<prompt_id>__<model slug>__r<run>``."""
    return f"{claim_id}__{prompt_id}__{model_slug(model)}__r{run}"


def eval_id(generation_id: str, judge: str) -> str:
    """A judge record's id in the release: ``<gen_id>__judge_<judge slug>``."""
    return f"{generation_id}__judge_{model_slug(judge)}"


# -- what a record copies from the benchmark ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Origin:
    """A record's claim and template, with the release fields copied from them."""

    claim: Claim
    template: Template
    #: A generation record in key order, the copied fields filled in, the rest None.
    generation: dict[str, Any]
    #: The same for a judge record.
    judgment: dict[str, Any]
    #: ``(key, value)`` of the copied fields a generation record must agree with.
    gen_checks: tuple[tuple[str, Any], ...]
    #: The same for a judge record.
    eval_checks: tuple[tuple[str, Any], ...]


#: Copied fields a record may differ in: the ids pick its origin, and an edited claim text is
#: kept verbatim. Every other copied field must match the benchmark.
_UNCHECKED = frozenset({"claim_id", "prompt_id", "claim_text"})
#: The checked fields a claim owns (the others are its template's).
CLAIM_FIELDS = frozenset({"controversy_level", "context", "domain"})
#: A judge record's names for copied fields a generation record names otherwise.
_JUDGED = {"fallacy": "fallacy_requested"}


class Catalog:
    """The benchmark's claim x template pairs as release fields, each built once: an import
    meets every pair thousands of times."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.key = benchmark.key
        self._origins: dict[tuple[str, str], Origin] = {}
        self._rendered: dict[tuple[str, str], str] = {}

    def origin(self, claim_id: str, prompt_id: str) -> Origin:
        found = self._origins.get((claim_id, prompt_id))
        if found is None:
            found = self._origins[claim_id, prompt_id] = self._build(claim_id, prompt_id)
        return found

    def rendered(self, claim_id: str, prompt_id: str) -> str:
        """The pack's prompt for a claim and template, rendered once per pair."""
        found = self._rendered.get((claim_id, prompt_id))
        if found is None:
            found = self._rendered[claim_id, prompt_id] = self.benchmark.render(claim_id, prompt_id)
        return found

    def prompts(self, claim_id: str, prompt_id: str) -> tuple[str, ...]:
        """The prompts the pack sends for a stored cell: its template's rendering for turn 1; for
        a later turn (``<prompt_id>#turn2``) each follow-up's rendering. Unknown claim or
        template ids raise :class:`RecordError`."""
        base, mark, turn = prompt_id.rpartition(TURN_MARK)
        if not (mark and turn.isascii() and turn.isdigit()):
            base, turn = prompt_id, "1"
        self.origin(claim_id, base)  # unknown ids raise
        if turn == "1":
            return (self.rendered(claim_id, base),)
        return tuple(
            self.benchmark.render_followup(f, claim_id, base) for f in self.benchmark.followups
        )

    def _build(self, claim_id: str, prompt_id: str) -> Origin:
        b = self.benchmark
        try:
            claim = b.claim(claim_id)
        except KeyError:
            raise RecordError(
                f"field 'claim_id': unknown claim {claim_id!r} (not in {b.key})"
            ) from None
        try:
            template = b.template(prompt_id)
        except KeyError:
            raise RecordError(
                f"field 'prompt_id': unknown template {prompt_id!r} (not in {b.key})"
            ) from None
        copied = {
            "claim_id": claim.claim_id,
            "claim_text": claim.text,
            "controversy_level": claim.level,
            "context": claim.context,
            "domain": claim.domain,
            "fallacy": template.fallacy,
            "explicitness": template.explicitness,
            "frame": template.frame,
            "prompt_num": template.prompt_num,
            "prompt_id": template.prompt_id,
        }
        as_judged = {_JUDGED.get(k, k): v for k, v in copied.items()}
        return Origin(
            claim,
            template,
            generation={**dict.fromkeys(GEN_KEYS), **copied},
            judgment={**dict.fromkeys(EVAL_KEYS), **as_judged},
            gen_checks=tuple((k, v) for k, v in copied.items() if k not in _UNCHECKED),
            eval_checks=tuple(
                (_JUDGED.get(k, k), v) for k, v in copied.items() if k not in _UNCHECKED
            ),
        )


# -- one record ---------------------------------------------------------------------------------
# Each encoder fills every field its Origin left None, on a copy (faster than a dict display).


def response_text(response: str | None, error: str | None) -> str | None:
    """The release's ``response``: the reply, or a failed request's error behind the prefix."""
    return ERROR_PREFIX + error if error is not None else response


def split_response(
    text: str, is_error: Any, is_answer: Any = None
) -> tuple[str | None, str | None]:
    """``(response, error)`` from a release ``response`` (the inverse of :func:`response_text`;
    a flagged error without the prefix is kept whole; ``is_answer`` 1, :data:`ANSWER_FLAG`,
    keeps a reply that starts with the prefix an answer)."""
    if is_answer == 1 and is_error != 1:
        return text, None
    if is_error == 1 or text.startswith("ERROR:"):
        return None, text[len(ERROR_PREFIX) :] if text.startswith(ERROR_PREFIX) else text
    return text, None


def encode_generation(origin: Origin, row: Mapping[str, Any]) -> dict[str, Any]:
    """The release record of a generation from its store columns (``model``, ``sample``,
    ``prompt``, ``response``, ``error``, ``input_tokens``, ``output_tokens``, ``created_at``)."""
    model = row["model"]
    sample = row["sample"]
    error = row["error"]
    record = origin.generation.copy()
    record["gen_id"] = gen_id(origin.claim.claim_id, origin.template.prompt_id, model, sample)
    record["prompt_text"] = row["prompt"]
    record["model"] = model
    record["run"] = sample
    record["response"] = response_text(row["response"], error)
    record["input_tokens"] = row["input_tokens"]
    record["output_tokens"] = row["output_tokens"]
    record["is_error"] = int(error is not None)
    record["timestamp"] = row["created_at"]
    if error is None and record["response"] is not None and record["response"].startswith("ERROR:"):
        record[ANSWER_FLAG] = 1  # a reply that reads like the release's error rows
    return record


def encode_eval(
    origin: Origin,
    row: Mapping[str, Any],
    *,
    generation_id: str,
    gen_model: str,
    sample: int,
    said: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The release record of a judgment from its store columns (``judge``, ``reasoning``,
    ``parse_error``, ``raw``, ``consistency_flag``, ``created_at``), what the judge said and
    its generation's release id, model and run."""
    parse_error = row["parse_error"]
    scores = (
        {f: -1 for f in FIELDS}
        if parse_error or said is None
        else {f: said.get(f, -1) for f in FIELDS}
    )
    judge = row["judge"]
    record = origin.judgment.copy()
    record["eval_id"] = eval_id(generation_id, judge)
    record["gen_id"] = generation_id
    record["judge_model"] = judge
    record["run"] = sample
    record["gen_model"] = gen_model
    record["reasoning"] = row["reasoning"]
    record["parse_error"] = int(parse_error)
    record["raw_judge_response"] = row["raw"]
    record.update(scores)
    record["detected_fallacies"] = [FALLACY_NAMES[f] for f in FALLACY_FIELDS if scores[f] == 1]
    record["consistency_flag"] = row["consistency_flag"]
    record["timestamp"] = row["created_at"]
    return record
