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

Honest at small label budgets (:mod:`.exact`):

- bounds: every rate and interval end is clipped to [0, 1] (a PPI++ estimate is a judged
  rate plus a rectifier and can leave it; the percentile interval follows its replicates);
- labels only: the interval is the hull of the claim-bootstrap percentile interval (claim
  clustering) and the exact Clopper-Pearson interval of the labels' count (small counts:
  0 of 40 reads [0, 8.8%], not [0, 0]); weighted labels enter with their Kish effective size;
- thin labels: a corrected rate whose labels show fewer than ``min_disagreements``
  disagreements with the judges (default 1: none at all), or labels of one value, has
  ``flag`` set. Its bootstrap cannot see the judge error the labels did not happen to show
  (every replicate has a rectifier of variance 0), so its interval is widened to hold the
  exact bound: with a = P(human 1, judged 0) and b = P(human 0, judged 1) on the labelled
  items, the truth is E f + a - b, bounded by [judged_lo + a_lo - b_hi, judged_hi + a_hi -
  b_lo] (Clopper-Pearson for a and b; for Rogan-Gladen the formula at the corners of the
  judged interval and the exact intervals of sensitivity and specificity). On planted data
  (``bench/calibration_coverage.py``) this holds coverage >= 0.90 at 50 labels per model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from deflectbench.analysis.calibration.draws import claim_multiplicities
from deflectbench.analysis.calibration.exact import clopper_pearson, effective
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

__all__ = ["METHODS", "MIN_DISAGREEMENTS", "Estimate", "estimate_rates"]

METHODS = ("judged", "labels", "ppi++", "rogan-gladen")
LEVEL = 0.95
#: A corrected rate whose labels disagree with the judges fewer times than this is flagged
#: and its interval widened to the exact bound (1: flagged when no label disagrees; 0: never
#: flagged, the raw bootstrap interval, for checking the estimator's own properties).
MIN_DISAGREEMENTS = 1


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
    #: Set when the estimate rests on thin labels (no disagreement with the judges, labels of
    #: one value): says so and what widened the interval; the rate and interval stand.
    flag: str | None = None


def _claims(x: np.ndarray, rows: int, name: str) -> NDArray[np.int64]:
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.size != rows:
        raise ValueError(f"{name} must be 1-D with one code per row ({rows}), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer claim codes")
    return arr.astype(np.int64)


class _Arrays(NamedTuple):
    """The six arrays a calibration reads (see :func:`estimate_rates`)."""

    target: np.ndarray
    target_claim: np.ndarray
    labelled_judged: np.ndarray
    labelled_human: np.ndarray
    labelled_claim: np.ndarray
    labelled_weight: np.ndarray | None


def _validate(
    given: _Arrays, methods: Sequence[str], min_labels: int, resamples: int
) -> tuple[
    NDArray[np.float64],
    NDArray[np.int64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.int64],
    NDArray[np.float64],
]:
    """The inputs as float matrices and int codes (the weights 1 when none are given), or a
    one-line ValueError naming the fault."""
    target, target_claim, labelled_judged, labelled_human, labelled_claim, labelled_weight = given
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
    min_disagreements: int = MIN_DISAGREEMENTS,
) -> dict[str, list[Estimate]]:
    """Per method, one :class:`Estimate` per column of ``target`` (see the module docstring).

    ``target`` (N, K) judged indicators of the target generations (NaN = missing),
    ``target_claim`` (N,) their claim codes; ``labelled_judged``/``labelled_human`` (L, K) the
    calibration items' judged values and human labels (0/1, NaN = missing or unsure),
    ``labelled_claim`` (L,) their claim codes in the same code space, ``labelled_weight`` (L,)
    inverse inclusion probabilities (None = a simple random sample). Methods needing labels
    give no number for a column with fewer than ``min_labels`` labels; a corrected column with
    fewer than ``min_disagreements`` label-judge disagreements is flagged and widened.
    """
    given = _Arrays(
        target, target_claim, labelled_judged, labelled_human, labelled_claim, labelled_weight
    )
    tgt, tc, lj, lh, lc, lw = _validate(given, methods, min_labels, resamples)
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
        judged_ci = _percentile(t_m[1]["vf"] / t_m[1]["v"]) if t_m[1] is not None else None
        out = {}
        for method in dict.fromkeys(methods):
            raw = _method(method, k, t_m, l_m, o_m, n_target, min_labels)
            out[method] = [
                _honest(method, e, j, t_m[0], l_m[0], o_m[0], judged_ci, min_disagreements)
                for j, e in enumerate(raw)
            ]
        return out


def _percentile(reps: NDArray[np.float64]) -> NDArray[np.float64]:
    """(2, K) percentile interval ends of replicate columns (NaN replicates left out)."""
    tail = (1.0 - LEVEL) / 2.0
    out = np.full((2, reps.shape[1]), np.nan)
    for j in range(reps.shape[1]):
        col = reps[:, j][np.isfinite(reps[:, j])]
        if col.size:
            out[:, j] = np.quantile(col, [tail, 1.0 - tail])
    return out


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def _hull(e: Estimate, lo: float, hi: float) -> tuple[float, float]:
    assert e.rate is not None
    a, b = e.ci95 if e.ci95 is not None else (e.rate, e.rate)
    return _clip(min(a, lo)), _clip(max(b, hi))


def _honest(
    method: str,
    e: Estimate,
    j: int,
    tgt: Moments,
    lab: Moments,
    only: Moments,
    judged_ci: NDArray[np.float64] | None,
    min_disagreements: int,
) -> Estimate:
    """The estimate clipped to [0, 1]; labels-only with the exact interval in its hull; a thin
    corrected estimate flagged and widened to the exact bound (module docstring)."""
    if e.rate is None:
        return e
    rate = _clip(e.rate)
    if e.ci95 is None:  # one claim: no interval to widen (the note says so)
        return replace(e, rate=rate)
    ci = None if e.ci95 is None else (_clip(e.ci95[0]), _clip(e.ci95[1]))
    e = replace(e, rate=rate, ci95=ci)
    if method == "judged":
        return e
    if method == "labels":
        x, n = effective(only["wh"][j], only["w"][j], only["w2"][j])
        exact = clopper_pearson(x, n, LEVEL)
        return replace(e, ci95=_hull(e, float(exact[0]), float(exact[1])))
    x_pos, n_eff = effective(lab["wh"][j], lab["w"][j], lab["w2"][j])
    miss_w = lab["wh"][j] - lab["whf"][j]  # human 1, judged 0
    false_w = lab["wf"][j] - lab["whf"][j]  # human 0, judged 1
    disagree = float((miss_w + false_w) / lab["w"][j] * n_eff)
    one_value = x_pos < 0.5 or n_eff - x_pos < 0.5
    if min_disagreements <= 0 or (disagree >= min_disagreements - 1e-9 and not one_value):
        return e
    if lab["n"][j] >= e.n:  # every target labelled: the judges' error on it is all seen
        return e
    n_lab = round(float(lab["n"][j]))
    p_lo, p_hi = (
        (float(judged_ci[0, j]), float(judged_ci[1, j]))
        if judged_ci is not None and np.isfinite(judged_ci[:, j]).all()
        else (rate, rate)
    )
    lo: float
    hi: float
    if method == "rogan-gladen":
        lo, hi = _rg_bound(lab, j, p_lo, p_hi)
    else:
        a_lo, a_hi = clopper_pearson(*effective(miss_w, lab["w"][j], lab["w2"][j]), LEVEL)
        b_lo, b_hi = clopper_pearson(*effective(false_w, lab["w"][j], lab["w2"][j]), LEVEL)
        lo, hi = p_lo + float(a_lo) - float(b_hi), p_hi + float(a_hi) - float(b_lo)
    if one_value:
        value = 0 if x_pos < 0.5 else 1
        why = (
            f"all {n_lab} labels are {value}: the interval is the exact bound on the judges' "
            f"error; label generations the judges call {1 - value} to measure it"
        )
    elif disagree < 0.5:
        why = (
            f"no label of {n_lab} disagrees with the judges: the interval is widened to the "
            "exact bound on the error they did not show"
        )
    else:
        why = (
            f"{disagree:.0f} of {n_lab} labels disagree with the judges: the interval is "
            "widened to the exact bound on their error"
        )
    return replace(e, ci95=_hull(e, lo, hi), flag=why)


def _rg_bound(lab: Moments, j: int, p_lo: float, p_hi: float) -> tuple[float, float]:
    """Rogan-Gladen's range over the judged interval and the exact intervals of the
    sensitivity and specificity (a linear-fractional map: its extremes lie at the corners);
    [0, 1] when a corner has sensitivity + specificity <= 1."""
    pos, neg = lab["wh"][j], lab["w"][j] - lab["wh"][j]
    tp, tn = lab["whf"][j], lab["w"][j] - lab["wh"][j] - lab["wf"][j] + lab["whf"][j]
    # counts in Kish effective units (the whole sample's design effect for both classes)
    _, n_eff = effective(0.0, lab["w"][j], lab["w2"][j])
    unit = float(n_eff / lab["w"][j]) if lab["w"][j] > 0 else 0.0
    se = clopper_pearson(tp * unit, pos * unit, LEVEL) if pos > 0 else (0.0, 1.0)
    sp = clopper_pearson(tn * unit, neg * unit, LEVEL) if neg > 0 else (0.0, 1.0)
    values = []
    for p in (p_lo, p_hi):
        for sens in (float(se[0]), float(se[1])):
            for spec in (float(sp[0]), float(sp[1])):
                youden = sens + spec - 1.0
                if not youden > 1e-12:
                    return 0.0, 1.0
                values.append((p + spec - 1.0) / youden)
    return _clip(min(values)), _clip(max(values))


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
