"""The human labels' scorer: ``annotate --export`` labels read by Inspect's
``precomputed_scores()``, so a log carries, beside the judges' scores, the people's, and the
same metrics give the labels-only rates (``deflectbench analyze``'s ``labels`` column).

``inspect eval deflectbench/deflectbench ... -T labels=labels.jsonl`` (a run whose replies the
labels are of: an imported Inspect run, or a rerun served from Inspect's cache), or
``inspect score LOG`` with this scorer. An epoch nobody labelled is left unscored.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from inspect_ai.scorer import Scorer, precomputed_scores, scorer

from deflectbench.inspect_eval.labels import write_label_scores
from deflectbench.inspect_eval.metrics import SCORER_METRICS

#: The scorer's registered name, as a log keys its scores.
HUMAN_SCORER = "human_labels"


@scorer(metrics=SCORER_METRICS, name=HUMAN_SCORER)
def human_labels(labels: str, model: str | None = None, benchmark: str | None = None) -> Scorer:
    """The labels of ``model`` (the store's name; None: the file's one model) in
    ``benchmark`` from an ``annotate --export`` file (.csv or .jsonl)."""
    out = Path(tempfile.mkdtemp(prefix="deflectbench-labels-")) / "scores.json"
    write_label_scores(Path(labels), model, benchmark, out)
    return precomputed_scores(str(out))
