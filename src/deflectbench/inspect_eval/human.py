"""The human labels' scorer: ``annotate --export`` labels read by Inspect's
``precomputed_scores()``, so a log carries, beside the judges' scores, the people's, and the
same metrics give the labels-only rates (``deflectbench analyze``'s ``labels`` column) and the
rates corrected for judge error (:mod:`.corrected`, ``analyze``'s ``corrected`` column).

``inspect eval deflectbench/deflectbench ... -T labels=labels.jsonl`` (a run whose replies the
labels are of: an imported Inspect run, or a rerun served from Inspect's cache), or
``inspect score LOG`` with this scorer after the judges'. Every score carries the judges'
verdict of its epoch (``metadata["judged"]``, read from the judges' score of the same epoch):
the correction needs every judged generation, labelled or not. An epoch nobody labelled gets a
score with no field set (no rate counts it, the correction takes it as a target only); with no
judges' score either, it is left unscored.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from inspect_ai.scorer import Score, Scorer, Target, precomputed_scores, scorer
from inspect_ai.solver import TaskState

from deflectbench.inspect_eval.corrected import JUDGED
from deflectbench.inspect_eval.labels import write_label_scores
from deflectbench.inspect_eval.metrics import SCORER_METRICS
from deflectbench.judging import verdicts

#: The scorer's registered name, as a log keys its scores.
HUMAN_SCORER = "human_labels"


def _judged(state: TaskState) -> dict | None:
    """The judges' score value of this epoch (None: they have not scored it)."""
    found = (state.scores or {}).get(verdicts.SCORER)
    value = found.value if found is not None else None
    return dict(value) if isinstance(value, Mapping) else None


@scorer(metrics=SCORER_METRICS, name=HUMAN_SCORER)
def human_labels(labels: str, model: str | None = None, benchmark: str | None = None) -> Scorer:
    """The labels of ``model`` (the store's name; None: the file's one model) in
    ``benchmark`` from an ``annotate --export`` file (.csv or .jsonl)."""
    out = Path(tempfile.mkdtemp(prefix="deflectbench-labels-")) / "scores.json"
    write_label_scores(Path(labels), model, benchmark, out)
    read = precomputed_scores(str(out))

    async def score(state: TaskState, target: Target) -> Score | None:
        found = await read(state, target)
        judged = _judged(state)
        if found is None:
            if judged is None:
                return None
            return Score(
                value=verdicts.score_value(None),
                explanation="not labelled",
                metadata={JUDGED: judged},
            )
        return Score(
            value=found.value,
            answer=found.answer,
            explanation=found.explanation,
            metadata={**(found.metadata or {}), JUDGED: judged},
        )

    return score
