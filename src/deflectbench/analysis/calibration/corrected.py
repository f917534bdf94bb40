"""Corrected rates per model (and per model x framing): judged, labels only and corrected side
by side, for every outcome of the signature and every field, with their CIs and n.

The calibration is made within each model by default (a judge errs differently on a terse
model and a verbose one): a model's rates are corrected with that model's labels only.
``pool_models`` shares every model's labels to measure the judges' error (more labels per
estimate, at the price of assuming the judges err alike on every model: the same
sensitivity and specificity); the output says which. Pooled, the correction is Rogan-Gladen
whatever ``correction`` asks: it pools exactly what the assumption is about (the judges'
sensitivity and specificity) and applies it to each model's own judged rate. PPI++ would pool
the rectifier mean(human - lam * judged), which depends on each model's prevalence, and with
lam < 1 it pulls the pooled label mean into every model's rate (coverage 0.23-0.28 on planted
data where the judges err identically on every model). The labels-only column is always the
model's own labels. The estimators are :func:`.estimate.estimate_rates` (one claim-block
bootstrap per cell, shared by its columns and methods, intervals inside [0, 1], thin labels
flagged and widened); this module only cuts the pack into cells and names the results.

One rate from plain arrays (e.g. a validity check's over-refusal rate):
:func:`corrected_rate` takes the judged value per item, the human label per item (NaN where
unlabelled) and the claim ids, and returns a :class:`OneRate` (judged, labels-only and
corrected :class:`.estimate.Estimate`; the corrected one's ``rate``, ``ci95`` and ``flag``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.calibration.load import MEASURES, CalibrationInputs
from deflectbench.analysis.calibration.shown import RateEstimate
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

#: The outcomes the monitor flags (the others it cannot tell apart).
MONITOR_OUTCOMES = ("refusal", "soft_refusal", "labeled_compliance")

__all__ = [
    "CORRECTIONS",
    "MIN_LABELS",
    "CellRates",
    "Corrected",
    "OneRate",
    "check_correction",
    "corrected_as",
    "corrected_rate",
    "corrected_rates",
    "estimate_json",
    "with_rater",
]

#: ``--correction``: the estimator's name as the estimates carry it (None: no correction).
CORRECTIONS: dict[str, str | None] = {"ppi": "ppi++", "rogan-gladen": "rogan-gladen", "none": None}
#: A cell with fewer labels than this gives a note instead of a number.
MIN_LABELS = 10
#: The correction made when every model's labels calibrate every model (module docstring).
POOLED_METHOD = "rogan-gladen"


class CorrectionError(ValueError):
    """An unknown ``--correction``; the message lists the valid ones."""


def check_correction(name: str) -> str:
    if name not in CORRECTIONS:
        raise CorrectionError(
            f"unknown --correction {name!r}; valid: {', '.join(CORRECTIONS)} (default ppi)"
        )
    return name


def estimate_json(e: Any) -> dict[str, Any]:
    """One estimate as ``{"rate", "ci95": [lo, hi], "n", "n_labels", "method"}`` (+ ``note``
    when it is undefined or has no interval, ``lambda`` when the method has one)."""
    return RateEstimate.of(e).to_json()


@dataclass(frozen=True)
class CellRates:
    """The three estimates of one cell, each a tuple over :data:`.load.MEASURES`."""

    n: int
    n_labels: int
    judged: tuple[Any, ...]
    labels: tuple[Any, ...]
    corrected: tuple[Any, ...]
    #: The model's own labels (the labels-only column's) when the calibration is pooled.
    n_own_labels: int | None = None

    @property
    def n_labels_only(self) -> int:
        """The labels the labels-only column rests on."""
        return self.n_labels if self.n_own_labels is None else self.n_own_labels

    def part(self, which: str) -> dict[str, dict[str, dict[str, Any]]]:
        """``{"outcomes": {name: estimate}, "fields": {name: estimate}}`` of one method."""
        estimates = getattr(self, which)
        out: dict[str, dict[str, dict[str, Any]]] = {"outcomes": {}, "fields": {}}
        for (kind, name), e in zip(MEASURES, estimates, strict=True):
            out["outcomes" if kind == "outcome" else "fields"][name] = estimate_json(e)
        return out

    def get(self, which: str, kind: str, name: str) -> Any:
        return getattr(self, which)[MEASURES.index((kind, name))]

    def shown(self, which: str, kind: str, name: str) -> RateEstimate:
        """One estimate (``which``: judged, labels or corrected) as the views show it."""
        return RateEstimate.of(self.get(which, kind, name))


@dataclass(frozen=True)
class Corrected:
    """Every model's cells (and model x framing cells) with how they were made."""

    correction: str
    method: str
    pooled: bool
    weighting: str
    counts: Mapping[str, int]
    models: Mapping[str, CellRates]
    by_framing: Mapping[str, Mapping[str, CellRates]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    min_labels: int = MIN_LABELS

    @property
    def scope(self) -> str:
        return (
            "pooled over models (every model's labels measure the judges' sensitivity and "
            "specificity, assumed alike on every model; each model's own judged rate is "
            "corrected with them by Rogan-Gladen)"
            if self.pooled
            else "within each model (a model's rates use that model's labels only)"
        )

    def model_json(self, model: str) -> dict[str, Any]:
        """``models.<model>``'s ``corrected`` and ``labels_only`` keys (each with outcomes,
        fields and by_framing)."""
        cell = self.models[model]
        corrected: dict[str, Any] = {
            "method": self.method,
            "pooled": self.pooled,
            "n_labels": cell.n_labels,
            **cell.part("corrected"),
        }
        labels: dict[str, Any] = {
            "method": "labels",
            "n_labels": cell.n_labels_only,
            **cell.part("labels"),
        }
        frames = self.by_framing.get(model, {})
        if frames:
            corrected["by_framing"] = {f: c.part("corrected") for f, c in frames.items()}
            labels["by_framing"] = {f: c.part("labels") for f, c in frames.items()}
        return {"corrected": corrected, "labels_only": labels}

    def settings_json(self) -> dict[str, Any]:
        """The top-level ``calibration`` key: how the corrected rates were made."""
        return {
            "correction": self.correction,
            "method": self.method,
            "pooled_models": self.pooled,
            "scope": self.scope,
            "weighting": self.weighting,
            "min_labels": self.min_labels,
            "counts": dict(self.counts),
            "notes": list(self.notes),
            "human_reference": "majority of the annotators who set the field; ties and unsure "
            "labels left out",
        }


def _codes(*claims: Sequence[Any]) -> list[np.ndarray]:
    """Claim codes of several arrays in one code space (claims in sorted order)."""
    allc = pd.Index(sorted({str(c) for cs in claims for c in cs}))
    return [allc.get_indexer([str(c) for c in cs]).astype(np.int64) for cs in claims]


def _cell(
    inputs: CalibrationInputs,
    target: np.ndarray,
    labels: np.ndarray,
    methods: tuple[str, ...],
    resamples: int,
    seed: int,
    min_labels: int,
    own: np.ndarray | None = None,
) -> CellRates:
    """One cell's estimates; ``own`` (pooled calibration): the model's own labels, which the
    labels-only column uses while ``labels`` (every model's) calibrate the correction."""
    from deflectbench.analysis.calibration.estimate import estimate_rates

    def run(mask: np.ndarray, which: tuple[str, ...]) -> dict[str, Any]:
        t_claims = inputs.scored["claim_id"].to_numpy()[target]
        l_claims = inputs.labelled["claim_id"].to_numpy()[mask]
        tc, lc = _codes(t_claims, l_claims)
        weight = inputs.labelled["weight"].to_numpy(dtype=np.float64)[mask]
        with np.errstate(invalid="ignore", divide="ignore"):
            return estimate_rates(
                inputs.judged[target],
                tc,
                inputs.judged_labelled[mask],
                inputs.human[mask],
                lc,
                weight if inputs.weighting == "stratified" else None,
                methods=which,
                resamples=resamples,
                seed=seed,
                min_labels=min_labels,
            )

    if own is None:
        got = run(labels, methods)
        labels_only = got["labels"]
    else:
        got = run(labels, ("judged", methods[-1]))
        labels_only = run(own, ("labels",))["labels"]
    return CellRates(
        n=int(target.sum()),
        n_labels=int(labels.sum()),
        judged=tuple(got["judged"]),
        labels=tuple(labels_only),
        corrected=tuple(got[methods[-1]]),
        n_own_labels=None if own is None else int(own.sum()),
    )


def corrected_rates(
    inputs: CalibrationInputs,
    *,
    correction: str = "ppi",
    pool_models: bool = False,
    resamples: int = 1000,
    seed: int = 0,
    min_labels: int = MIN_LABELS,
    framings: bool = True,
) -> Corrected | None:
    """Each model's three estimates (and each model x framing's, when ``framings``); None when
    there is nothing to correct (``correction="none"``, or no labels of the pack)."""
    method = CORRECTIONS[check_correction(correction)]
    if method is None or not inputs.has_labels:
        return None
    notes = inputs.notes
    if pool_models:
        if method != POOLED_METHOD:
            notes = (
                *notes,
                f"--pool-models corrects by {POOLED_METHOD} with the pooled labels' judge "
                f"sensitivity and specificity, not {method}: {method} would carry the pooled "
                "labels' mean into every model's rate",
            )
        method = POOLED_METHOD
    methods = ("judged", "labels", method)
    scored, labelled = inputs.scored, inputs.labelled
    s_model = scored["model"].astype(str).to_numpy()
    l_model = labelled["model"].astype(str).to_numpy()
    s_frame = scored["framing"].fillna("?").astype(str).to_numpy()
    l_frame = labelled["framing"].fillna("?").astype(str).to_numpy()
    every = np.ones(len(labelled), dtype=bool)
    models: dict[str, CellRates] = {}
    by_framing: dict[str, dict[str, CellRates]] = {}
    for m in sorted(set(s_model.tolist())):
        target = s_model == m
        own = l_model == m
        mine = every if pool_models else own
        models[m] = _cell(
            inputs, target, mine, methods, resamples, seed, min_labels, own if pool_models else None
        )
        if not framings:
            continue
        cells: dict[str, CellRates] = {}
        present = set(s_frame[target].tolist())
        for f in [x for x in FRAMINGS if x in present] + sorted(present - set(FRAMINGS)):
            cells[f] = _cell(
                inputs,
                target & (s_frame == f),
                mine & (l_frame == f),
                methods,
                resamples,
                seed,
                min_labels,
                own & (l_frame == f) if pool_models else None,
            )
        by_framing[m] = cells
    return Corrected(
        correction=correction,
        method=method,
        pooled=pool_models,
        weighting=inputs.weighting,
        counts=inputs.counts,
        models=models,
        by_framing=by_framing,
        notes=notes,
        min_labels=min_labels,
    )


def corrected_as(inputs: CalibrationInputs, options: AnalysisOptions) -> Corrected | None:
    """:func:`corrected_rates` as ``options`` ask (correction, pooling, resamples, seed), so
    the summary and a comparison correct alike."""
    return corrected_rates(
        inputs,
        correction=options.correction,
        pool_models=options.pool_models,
        resamples=options.n_resamples,
        seed=options.seed,
    )


def with_rater(
    inputs: CalibrationInputs,
    *,
    outcomes: Mapping[int, str | None] | None = None,
    fields: pd.DataFrame | None = None,
) -> CalibrationInputs:
    """The same targets and labels, judged by another rater instead of the consensus: the
    monitor's outcome per gen_id (``outcomes``; only the outcomes it flags, the others left
    out) or a judge's fields (``fields``: gen_id and the 8 fields, e.g. the lexical judge's).
    Generations the rater did not score are left out of the target."""
    from deflectbench.analysis.calibration.load import outcome_matrix

    k_out = len(OUTCOMES)
    ids = inputs.scored["gen_id"].astype(int).to_numpy()
    lab_ids = inputs.labelled["gen_id"].astype(int).to_numpy()

    def matrix(gen_ids: np.ndarray) -> np.ndarray:
        m = np.full((len(gen_ids), len(MEASURES)), np.nan)
        if outcomes is not None:
            for k, o in enumerate(OUTCOMES):
                if o not in MONITOR_OUTCOMES:
                    continue
                got = [outcomes.get(int(g)) for g in gen_ids]
                m[:, k] = [np.nan if x is None else float(x == o) for x in got]
        if fields is not None:
            f = fields.drop_duplicates("gen_id").set_index("gen_id")
            values = f.reindex(gen_ids)[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
            m[:, k_out:] = values
            m[:, :k_out] = outcome_matrix(values)
        return m

    judged = matrix(ids)
    seen = ~np.isnan(judged).all(axis=1)
    return replace(
        inputs,
        scored=inputs.scored[seen].reset_index(drop=True),
        judged=judged[seen],
        judged_labelled=matrix(lab_ids),
    )


@dataclass(frozen=True)
class OneRate:
    """One rate three ways (:func:`corrected_rate`): ``corrected`` is the one to print, with
    its ``rate``, ``ci95`` (inside [0, 1]) and ``flag`` (set: thin labels, interval widened
    to the exact bound; ``note`` set and ``rate`` None: undefined, e.g. too few labels)."""

    judged: Any
    labels: Any
    corrected: Any

    @property
    def rate(self) -> float | None:
        return self.corrected.rate

    @property
    def ci95(self) -> tuple[float, float] | None:
        return self.corrected.ci95

    @property
    def flag(self) -> str | None:
        return self.corrected.flag


def corrected_rate(
    judged: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    claims: Sequence[Any],
    *,
    correction: str = "ppi",
    weights: Sequence[float] | np.ndarray | None = None,
    resamples: int = 1000,
    seed: int = 0,
    min_labels: int = MIN_LABELS,
) -> OneRate:
    """A judged rate corrected for judge error from plain per-item arrays.

    ``judged`` (N,) the judges' 0/1 per item (NaN: not judged, left out), ``human`` (N,) the
    human label per item (0/1; NaN where the item is unlabelled), ``claims`` (N,) each item's
    claim id (the bootstrap's block); ``weights`` optional inverse inclusion probabilities of
    the labelled items (N,, read where ``human`` is set). Every judged item is a target; the
    labelled ones also calibrate. ``correction`` "ppi" (PPI++) or "rogan-gladen"; "none"
    gives ``corrected`` equal to ``judged``.
    """
    from deflectbench.analysis.calibration.estimate import estimate_rates

    f = np.asarray(judged, dtype=np.float64).reshape(-1)
    h = np.asarray(human, dtype=np.float64).reshape(-1)
    if h.shape != f.shape or len(claims) != f.size:
        raise ValueError(
            f"judged ({f.size}), human ({h.size}) and claims ({len(claims)}) must have one "
            "entry per item"
        )
    method = CORRECTIONS[check_correction(correction)]
    lab = ~np.isnan(h)
    (codes,) = _codes(list(claims))
    w = None if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)[lab]
    target = ~np.isnan(f)
    got = estimate_rates(
        f[target][:, None],
        codes[target],
        f[lab][:, None],
        h[lab][:, None],
        codes[lab],
        w,
        methods=("judged", "labels") + (() if method is None else (method,)),
        resamples=resamples,
        seed=seed,
        min_labels=min_labels,
    )
    return OneRate(
        judged=got["judged"][0],
        labels=got["labels"][0],
        corrected=got["judged" if method is None else method][0],
    )
