"""What the Inspect task's scorer writes and the log import reads: one vocabulary, no Inspect.

The scorer (``deflectbench.inspect_eval.scorer``) and the import (``deflectbench.interop.inspect_logs``) must agree
to the character on how a judge's reply becomes a verdict and how model names and finish
reasons map between Inspect and the store, so both use the functions here. Nothing in this
module imports ``inspect_ai``: the import reads logs with it, but these rules need only the
package's own judging and vocabulary. It lives here, below both, because the import (floor 6)
and the task (floor 6) may not import each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from deflectbench.benchmark import Rubric
from deflectbench.judging.judges import read_verdict
from deflectbench.judging.rubric import ParsedJudgment
from deflectbench.models.base import finish_reason as _finish_reason
from deflectbench.vocab import FIELDS, OUTCOMES, Consensus, Scores, outcome

#: The scorer's registered name, as Inspect keys its scores in a log.
SCORER = "rubric_judges"
#: Metadata keys every sample carries (the benchmark cell it renders).
SAMPLE_KEYS = (
    "benchmark",
    "benchmark_sha256",
    "claim_id",
    "claim",
    "level",
    "level_name",
    "context",
    "domain",
    "prompt_id",
    "framing",
    "fallacy",
    "explicitness",
)
#: Inspect's prefix for OpenAI-compatible servers: ``openai-api/<service>/<model>``.
OPENAI_API = "openai-api/"
#: Inspect stop reasons that mean the reply was cut at the token cap.
_CUT = {"max_tokens": "length", "model_length": "length"}


def store_model_name(inspect_model: str) -> str:
    """The store's name of an Inspect model: ``openai-api/vllm/m`` (Inspect's name for a
    server named ``vllm``) is ``vllm/m``, as a ``[providers.vllm]`` section names it here;
    every other provider (``openai/``, ``anthropic/`` ...) is spelled the same in both."""
    rest = inspect_model.removeprefix(OPENAI_API)
    return rest if rest != inspect_model and "/" in rest else inspect_model


def finish_reason(stop_reason: str | None, text: str, refused: bool = False) -> str | None:
    """Inspect's stop reason in the store's vocabulary (``stop``, ``length`` or a non-answer:
    ``content_filter``, ``refusal``, ``empty``), by the same rule as every native wire."""
    if refused:
        return _finish_reason("refusal", text)
    raw = _CUT.get(stop_reason or "", stop_reason)
    return _finish_reason(None if raw == "unknown" else raw, text)


def parse_judge(rubric: Rubric, entry: Mapping[str, Any]) -> ParsedJudgment | None:
    """The verdict in one judge entry of a score's metadata (None: the request failed)."""
    if entry.get("error") is not None or entry.get("raw") is None:
        return None
    return read_verdict(rubric, str(entry["raw"]), entry.get("finish_reason"))


def consensus_scores(
    verdicts: Mapping[str, ParsedJudgment | None], consensus: Consensus
) -> Scores | None:
    """One verdict from the judges', as the analysis forms it by default: every judge must
    have parsed (with ``judge:NAME`` only that judge), then the consensus rule per field over
    what each judge said (the paper's definition; the analysis of an imported log can
    recombine them with ``--judge-values rules``)."""
    needed = [consensus.judge or ""] if consensus.kind == "judge" else list(verdicts)
    parsed: dict[str, Mapping[str, int]] = {}
    for name in needed:
        v = verdicts.get(name)
        if v is None or v.parse_error or v.said is None or v.scores is None:
            return None
        parsed[name] = v.said
    return consensus.combine(parsed)


def score_value(scores: Scores | None) -> dict[str, int | str | None]:
    """A sample's score: the eight fields after consensus and the outcome (None: unscored)."""
    if scores is None:
        return {**dict.fromkeys(FIELDS), "outcome": None}
    return {**{f: int(scores[f]) for f in FIELDS}, "outcome": outcome(scores)}


def outcome_counts(values: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many epochs ended in each outcome, and how many were scored (the reduced score the
    metrics pool, so a rate is over generations, as the paper counts, not over samples)."""
    counts = dict.fromkeys(OUTCOMES, 0)
    scored = 0
    for v in values:
        name = v.get("outcome")
        if isinstance(name, str) and name in counts:
            counts[name] += 1
            scored += 1
    return {"scored": scored, **counts}
