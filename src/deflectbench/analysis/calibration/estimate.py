"""Rates corrected for judge error, with intervals from one claim-block bootstrap.

:func:`estimate_rates` takes the judged indicators of the target generations (what ``analyze``
counts today) and a labelled calibration set (judged and human values of some items, usually
a subset of the targets) and returns, per method and column, an :class:`Estimate`:

- ``judged``: the judges' rate, as today (claim sampling only);
- ``labels``: the (weighted) mean of the human labels alone;
- ``ppi++``: the prediction-powered mean (:mod:`.ppi`), lam re-fitted in every replicate;
- ``rogan-gladen``: the judged rate corrected by the judge's sensitivity and specificity,
  both re-measured in every replicate (:mod:`.rogan_gladen`).

All columns and methods share one bootstrap: claims are drawn with replacement and a drawn
claim brings its target and its labelled items together, because both are correlated within
a claim. Undefined cases give ``rate``/``ci95`` None and a ``note`` instead of a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from deflectbench.analysis.calibration.draws import claim_multiplicities
from deflectbench.analysis.calibration.moments import (
    Moments,
    label_only_terms,
    labelled_terms,
    per_claim,
    replicate,
    target_terms,
    total,
)
from deflectbench.analysis.calibration.ppi import ppi_mean_moments
from deflectbench.analysis.calibration.rogan_gladen import rogan_gladen_moments, sens_spec
from deflectbench.analysis.stats.arrays import columns

__all__ = ["METHODS", "Estimate", "estimate_rates"]

METHODS = ("judged", "labels", "ppi++", "rogan-gladen")
LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """One rate of one column by one method, with its 95% interval and what it rests on."""

    rate: float | None  # None when undefined (then `note` says why)
    ci95: tuple[float, float] | None
    n: int  # target generations the estimate is about
    n_labels: int  # labelled items used (calibration set)
    method: str  # "judged", "labels", "ppi++", "rogan-gladen"
    note: str | None = None
    details: Mapping[str, float] = field(default_factory=dict)


def _claims(x: np.ndarray, rows: int, name: str) -> NDArray[np.int64]:
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.size != rows:
        raise ValueError(f"{name} must be 1-D with one code per row ({rows}), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer claim codes")
    return arr.astype(np.int64)


def _validate(
    target: np.ndarray,
    target_claim: np.ndarray,
    labelled_judged: np.ndarray,
    labelled_human: np.ndarray,
    labelled_claim: np.ndarray,
    labelled_weight: np.ndarray | None,
    methods: Sequence[str],
    min_labels: int,
    resamples: int,
) -> tuple[
    NDArray[np.float64],
    NDArray[np.int64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.int64],
    NDArray[np.float64],
]:
    """The inputs as float matrices and int codes, or a one-line ValueError naming the fault."""
    tgt = columns(target, "target")
    lj = columns(labelled_judged, "labelled_judged")
    lh = columns(labelled_human, "labelled_human")
    k = tgt.shape[1]
    if lj.shape != lh.shape:
        raise ValueError(f"labelled_judged is {lj.shape} but labelled_human {lh.shape}")
    if lj.shape[0] == 0:
        lj, lh = np.zeros((0, k)), np.zeros((0, k))
    if lj.shape[1] != k:
        raise ValueError(f"target has {k} columns but the labelled items {lj.shape[1]}")
    seen = lh[~np.isnan(lh)]
    if seen.size and not np.isin(seen, (0.0, 1.0)).all():
        raise ValueError("labelled_human must hold only 0, 1 and NaN")
    for name, arr in (("target", tgt), ("labelled_judged", lj)):
        vals = arr[~np.isnan(arr)]
        if vals.size and ((vals < 0).any() or (vals > 1).any()):
            raise ValueError(f"{name} must hold indicators in [0, 1] (NaN = missing)")
    tc = _claims(target_claim, tgt.shape[0], "target_claim")
    lc = _claims(labelled_claim, lj.shape[0], "labelled_claim")
    if labelled_weight is None:
        lw = np.ones(lj.shape[0])
    else:
        lw = np.asarray(labelled_weight, dtype=np.float64)
        if lw.shape != (lj.shape[0],):
            raise ValueError(
                f"labelled_weight must have one weight per labelled item ({lj.shape[0]})"
            )
        if not (np.isfinite(lw).all() and (lw > 0).all()):
            raise ValueError("labelled_weight must be positive and finite")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r}; choose from {', '.join(METHODS)}")
    if min_labels < 1:
        raise ValueError("min_labels must be at least 1")
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    return tgt, tc, lj, lh, lc, lw


def _point_and_reps(fn, *moments: tuple[Moments, Moments | None]):
    """Apply an estimator to the full sums and to the replicate sums."""
    full = fn(*(m[0] for m in moments))
    reps = fn(*(m[1] for m in moments)) if moments[0][1] is not None else None
    return full, reps


def estimate_rates(
    target: np.ndarray,
    target_claim: np.ndarray,
    labelled_judged: np.ndarray,
    labelled_human: np.ndarray,
    labelled_claim: np.ndarray,
    labelled_weight: np.ndarray | None,
    *,
    methods: Sequence[str] = ("judged", "labels", "ppi++"),
    resamples: int = 1000,
    seed: int = 0,
    min_labels: int = 10,
) -> dict[str, list[Estimate]]:
    """Per method, one :class:`Estimate` per column of ``target`` (see the module docstring).

    ``target`` (N, K) judged indicators of the target generations (NaN = missing),
    ``target_claim`` (N,) their claim codes; ``labelled_judged``/``labelled_human`` (L, K) the
    calibration items' judged values and human labels (0/1, NaN = missing or unsure),
    ``labelled_claim`` (L,) their claim codes in the same code space, ``labelled_weight`` (L,)
    inverse inclusion probabilities (None = a simple random sample). Methods needing labels
    give no number for a column with fewer than ``min_labels`` labels.
    """
    tgt, tc, lj, lh, lc, lw = _validate(
        target,
        target_claim,
        labelled_judged,
        labelled_human,
        labelled_claim,
        labelled_weight,
        methods,
        min_labels,
        resamples,
    )
    k = tgt.shape[1]
    claims, inverse = np.unique(np.concatenate([tc, lc]), return_inverse=True)
    n_claims = claims.size
    t_codes, l_codes = inverse[: tc.size], inverse[tc.size :]

    t_pc = per_claim(target_terms(tgt, np.ones(tgt.shape[0])), t_codes, n_claims)
    l_pc = per_claim(labelled_terms(lh, lj, lw), l_codes, n_claims)
    o_pc = per_claim(label_only_terms(lh, lw), l_codes, n_claims)
    mult = claim_multiplicities(n_claims, resamples, seed) if n_claims > 1 else None
    t_m = (total(t_pc), replicate(mult, t_pc) if mult is not None else None)
    l_m = (total(l_pc), replicate(mult, l_pc) if mult is not None else None)
    o_m = (total(o_pc), replicate(mult, o_pc) if mult is not None else None)

    n_target = t_m[0]["n"].astype(int)
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 -> NaN -> a note
        return {
            method: _method(method, k, t_m, l_m, o_m, n_target, min_labels)
            for method in dict.fromkeys(methods)
        }


def _method(method, k, t_m, l_m, o_m, n_target, min_labels) -> list[Estimate]:
    """One method's estimates of every column, from full and replicate moment sums."""
    details: list[dict[str, float]] = [{} for _ in range(k)]
    if method == "judged":
        n_lab = np.zeros(k, dtype=int)
        rate, reps = _point_and_reps(lambda t: t["vf"] / t["v"], t_m)
    elif method == "labels":
        n_lab = o_m[0]["n"].astype(int)
        rate, reps = _point_and_reps(lambda o: o["wh"] / o["w"], o_m)
    elif method == "ppi++":
        n_lab = l_m[0]["n"].astype(int)
        (rate, lam), both = _point_and_reps(ppi_mean_moments, l_m, t_m)
        reps = both[0] if both is not None else None
        details = [{"lam": float(lam[j])} for j in range(k)]
    else:  # rogan-gladen
        n_lab = l_m[0]["n"].astype(int)
        rate, reps = _point_and_reps(rogan_gladen_moments, l_m, t_m)
        sens, spec = sens_spec(l_m[0])
        p_obs = t_m[0]["vf"] / t_m[0]["v"]
        details = [
            {"sensitivity": float(sens[j]), "specificity": float(spec[j]), "p_obs": float(p_obs[j])}
            for j in range(k)
        ]
    return [
        _column(
            method, j, rate, reps, int(n_target[j]), int(n_lab[j]), details[j], min_labels, l_m[0]
        )
        for j in range(k)
    ]


def _undefined_reason(
    method: str, j: int, n_target: int, n_lab: int, min_labels: int, lab: Moments
) -> str | None:
    if n_target == 0:
        return "no judged generations"
    if method == "judged":
        return None
    if n_lab == 0:
        return "no labels"
    if n_lab < min_labels:
        return f"{n_lab} label{'s' if n_lab != 1 else ''} (at least {min_labels} needed)"
    if method == "rogan-gladen":
        pos, neg = lab["wh"][j], lab["w"][j] - lab["wh"][j]
        if pos <= 0:
            return "no positive human label: sensitivity undefined"
        if neg <= 0:
            return "no negative human label: specificity undefined"
    return None


def _column(method, j, rate, reps, n_target, n_lab, details, min_labels, lab) -> Estimate:
    reason = _undefined_reason(method, j, n_target, n_lab, min_labels, lab)
    if reason is None and not np.isfinite(rate[j]):
        reason = (
            "sensitivity + specificity <= 1: the judge is no better than chance"
            if method == "rogan-gladen"
            else "rate undefined"
        )
    if reason is not None:
        return Estimate(None, None, n_target, n_lab, method, reason, details)
    value = float(rate[j])
    if reps is None:
        return Estimate(value, None, n_target, n_lab, method, "one claim: no interval", details)
    col = reps[:, j]
    ok = np.isfinite(col)
    if not ok.any():
        return Estimate(
            value,
            None,
            n_target,
            n_lab,
            method,
            "no bootstrap replicate defined: no interval",
            details,
        )
    tail = (1.0 - LEVEL) / 2.0
    lo, hi = np.quantile(col[ok], [tail, 1.0 - tail])
    if not ok.all():
        details = {**details, "undefined_replicates": float(1.0 - ok.mean())}
    return Estimate(value, (float(lo), float(hi)), n_target, n_lab, method, None, details)
