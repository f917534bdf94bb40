"""The rates corrected for judge error, as an Inspect metric of the human labels' scorer.

With ``-T labels=FILE`` every epoch's ``human_labels`` score carries the judges' verdict of the
same generation (``metadata["judged"]``; an epoch nobody labelled gets a score with no field
set, so only this metric reads it). The metric hands the analysis what ``deflectbench
analyze`` hands it for that model: the judged indicators of every scored generation (the
target), the human labels of the labelled ones among them (one per generation, already
combined by :mod:`.labels`), their claims, uniform weights (an imported label file carries no
sample stratum), and calls :func:`~deflectbench.analysis.calibration.corrected.corrected_rates`
(PPI++ by default, :func:`~deflectbench.analysis.calibration.estimate.estimate_rates` with
the claim-block bootstrap, seed 0), so the numbers are ``analyze``'s to the last digit when
the same labels are imported there (``deflectbench annotate --import``) and the resamples
agree.

Metric names: ``corrected_<measure>`` (``corrected_refusal``, ``corrected_field_WA_present``),
``corrected_<measure>_lower`` / ``_upper`` (the 95% interval), and ``corrected_n_labels``. Fewer
than ``min_labels`` labels (10) give no number: the measure and its interval are NaN.

**Thin labels are said, not hidden.** Labels of one value (every label of a measure 0, or every
one 1), or labels that never disagree with the judges, still give a number, as ``analyze``
does (:mod:`~deflectbench.analysis.calibration.estimate`): the corrected rate lies in [0, 1]
and its interval is widened to the exact bound (for PPI++ the judged interval moved by the
Clopper-Pearson intervals of the judges' misses and false alarms on the labels: the bootstrap
cannot see an error the labels did not show), unless every judged generation is labelled (then
the labels saw every error). Such a measure is flagged: ``corrected_<measure>_flagged`` is 1
and ``labels_only_<measure>`` with ``_lower`` / ``_upper`` is the labels' own rate with its
exact interval (the hull of the claim bootstrap and Clopper-Pearson on the labels' count: 0 of
40 reads [0, 8.8%]). A measure that is not flagged has neither, so an ordinary log's metrics
are what they were.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from inspect_ai.scorer import Metric, SampleScore, Value, metric

from deflectbench.analysis.calibration.corrected import CORRECTIONS, MIN_LABELS, corrected_rates
from deflectbench.analysis.calibration.load import MEASURES, CalibrationInputs, outcome_matrix
from deflectbench.vocab import FIELDS, OUTCOMES

#: Metric-name prefix of a corrected rate (the field prefix as the other metrics have it).
PREFIX = "corrected_"
#: Metric-name prefix of a flagged measure's labels-only rate (its exact interval beside it).
LABELS_ONLY = "labels_only_"
#: The score metadata key holding the judges' verdict of a labelled scorer's epoch.
JUDGED = "judged"
#: The one model of a log (a cell of the analysis is a model).
_MODEL = "evaluated"


def _names() -> list[str]:
    """Each measure's metric name in :data:`MEASURES` order (5 outcomes, then 8 fields)."""
    return [name if kind == "outcome" else f"field_{name}" for kind, name in MEASURES]


def _epochs(s: SampleScore) -> list[tuple[Any, Any]]:
    """(human value, judged value) of every epoch of a reduced score (an unreduced: its own)."""
    meta = s.score.metadata or {}
    judged = meta.get(JUDGED)
    if isinstance(judged, list):
        humans = meta.get("epochs")
        humans = humans if isinstance(humans, list) else [None] * len(judged)
        return list(zip(humans, judged, strict=False))
    return [(s.score.value, judged)]


def _bits(value: Mapping[str, Any]) -> list[float]:
    return [float(value[f]) if value.get(f) in (0, 1) else math.nan for f in FIELDS]


def calibration_frame(scores: list[SampleScore]) -> CalibrationInputs | None:
    """The analysis' inputs of one log: every judged generation as the target, the labelled
    ones among them as the calibration set (None: no score carries the judges' verdict)."""
    rows: list[dict[str, Any]] = []
    judged: list[list[float]] = []
    human: list[list[float]] = []
    labelled: list[int] = []
    for s in scores:
        meta = s.sample_metadata or {}
        for h, j in _epochs(s):
            if not isinstance(j, Mapping) or j.get("outcome") not in OUTCOMES:
                continue  # unscored by the judges: neither target nor calibration item
            row = len(rows)
            rows.append(
                {
                    "gen_id": row,
                    "model": _MODEL,
                    "claim_id": str(meta.get("claim_id", s.sample_id)),
                    "framing": meta.get("framing"),
                    "outcome": j["outcome"],
                }
            )
            judged.append(_bits(j))
            if isinstance(h, Mapping) and any(h.get(f) in (0, 1) for f in FIELDS):
                labelled.append(row)
                human.append(_bits(h))
    if not rows:
        return None
    scored = pd.DataFrame(rows)
    j_fields = np.array(judged, dtype=np.float64)
    j_all = np.hstack([outcome_matrix(j_fields, scored["outcome"].tolist()), j_fields])
    h_fields = np.array(human, dtype=np.float64).reshape(len(human), len(FIELDS))
    h_all = np.hstack([outcome_matrix(h_fields), h_fields])
    lab = scored.iloc[labelled][["gen_id", "model", "claim_id", "framing"]].reset_index(drop=True)
    lab["stratum"] = None
    lab["weight"] = 1.0
    return CalibrationInputs(
        benchmark="",
        scored=scored,
        labelled=lab,
        judged=j_all,
        judged_labelled=j_all[labelled] if labelled else np.zeros((0, len(MEASURES))),
        human=h_all if labelled else np.zeros((0, len(MEASURES))),
        weighting="uniform",
        counts={"scored_generations": len(rows), "labelled_scored": len(labelled)},
    )


def _put(out: dict[str, float], name: str, e: Any) -> None:
    """An estimate as three metrics: ``name``, ``name_lower``, ``name_upper`` (NaN: none)."""
    rate = e.rate if e is not None and e.rate is not None else math.nan
    lo, hi = e.ci95 if e is not None and e.ci95 is not None else (math.nan, math.nan)
    out[name], out[f"{name}_lower"], out[f"{name}_upper"] = float(rate), float(lo), float(hi)


@metric(name="corrected_rates")
def corrected(
    correction: str = "ppi", resamples: int = 1000, seed: int = 0, min_labels: int = MIN_LABELS
) -> Metric:
    """Every outcome's and field's rate corrected by the human labels (``correction``: ppi,
    i.e. PPI++, as ``analyze`` by default, or rogan-gladen) with its claim-block bootstrap
    interval; nothing on a scorer whose scores carry no judged verdicts (the judges' own)."""
    if CORRECTIONS.get(correction) is None:
        raise ValueError(f"correction must be one of ppi, rogan-gladen, got {correction!r}")

    def compute(scores: list[SampleScore]) -> Value:
        inputs = calibration_frame(scores)
        if inputs is None:
            return {}
        out: dict[str, float] = {f"{PREFIX}n_labels": float(len(inputs.labelled))}
        found = (
            corrected_rates(
                inputs,
                correction=correction,
                resamples=resamples,
                seed=seed,
                min_labels=min_labels,
                framings=False,
            )
            if inputs.has_labels
            else None
        )
        cell = found.models[_MODEL] if found is not None else None
        for k, name in enumerate(_names()):
            e = cell.corrected[k] if cell is not None else None
            _put(out, PREFIX + name, e)
            if cell is not None and e is not None and e.flag:  # thin labels: said (docstring)
                out[f"{PREFIX}{name}_flagged"] = 1.0
                _put(out, f"{LABELS_ONLY}{name}", cell.labels[k])
        return out

    return compute
