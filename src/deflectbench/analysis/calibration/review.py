"""What ``deflectbench calibrate`` shows: the calibration itself, beside the corrected rates.

- each judge's and the consensus' sensitivity and specificity per field against the people,
  with claim-bootstrap CIs (validate's :func:`.validity.measures.compare`: sensitivity is the
  recall of 1s, specificity the recall of 0s; counted on the labelled items as they are, so a
  stratified sample's over-represented strata weigh more here than in the corrected rates),
  each interval the hull of the claim bootstrap and the Wilson score interval of the count
  (0 of 120 reads [0, 3.1%], not a zero-width [0, 0]);
- per model and headline rate: judged and corrected with their CIs, the PPI++ lambda, how far
  the correction moved the rate (points) and whether the judged CI excludes the corrected rate;
- the label budget: how many more labels, per model, bring every headline rate's corrected CI
  half-width under a target, from the variances measured so far;
- the Dawid-Skene latent-class estimate (each judge's confusion per field, human labels as
  anchors) as a sensitivity analysis beside PPI++, with its EM iterations and whether it
  converged, and a flag where the labelled items show the judges err together (one-sided
  Fisher exact test of two judges' errors within each true class, Bonferroni over classes and
  judge pairs, p < 0.05): Dawid-Skene assumes they err independently given the truth, and
  with correlated errors it is off by up to 0.17 on planted data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.calibration.budget import (  # the label budget without labels
    DEFAULT_TARGET,
    budget_without_labels,
    label_needs,
)
from deflectbench.analysis.calibration.corrected import Corrected
from deflectbench.analysis.calibration.exact import wilson
from deflectbench.analysis.calibration.load import MEASURES, CalibrationInputs
from deflectbench.analysis.calibration.shown import (
    DawidSkeneFit,
    FieldFit,
    ModelBudget,
    Shift,
)
from deflectbench.analysis.validity.measures import compare
from deflectbench.vocab import FIELDS, OUTCOMES

__all__ = [
    "DEFAULT_TARGET",
    "HEADLINE",
    "budget",
    "budget_without_labels",
    "dawid_skene",
    "judge_accuracy",
    "judged_excludes",
    "label_needs",
    "shifts",
]

#: The headline rates: the signature's outcomes.
HEADLINE: tuple[tuple[str, str], ...] = tuple(("outcome", o) for o in OUTCOMES)


def _half(e: Any) -> float | None:
    if e.rate is None or e.ci95 is None:
        return None
    return (e.ci95[1] - e.ci95[0]) / 2.0


def judged_excludes(judged: Any, corrected: Any) -> bool | None:
    """Whether the judged 95% CI leaves out the corrected rate (None: either undefined)."""
    if judged.ci95 is None or corrected.rate is None:
        return None
    lo, hi = judged.ci95
    return bool(corrected.rate < lo or corrected.rate > hi)


def shifts(corrected: Corrected) -> list[Shift]:
    """One row per model and measure: judged, corrected, lambda, moved (points), excluded."""
    rows = []
    for model, cell in corrected.models.items():
        for kind, name in MEASURES:
            j = cell.get("judged", kind, name)
            c = cell.get("corrected", kind, name)
            moved = None if j.rate is None or c.rate is None else 100.0 * (c.rate - j.rate)
            lam = dict(c.details or {}).get("lam")
            rows.append(
                Shift(
                    model=model,
                    kind=kind,
                    measure=name,
                    judged=cell.shown("judged", kind, name),
                    corrected=cell.shown("corrected", kind, name),
                    lam=None if lam is None or not math.isfinite(lam) else float(lam),
                    moved_points=None if moved is None else _finite(round(moved, 4)),
                    judged_ci_excludes_corrected=judged_excludes(j, c),
                )
            )
    return rows


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def budget(
    corrected: Corrected, inputs: CalibrationInputs, target: float = DEFAULT_TARGET
) -> dict[str, ModelBudget]:
    """Per model: labels now, more labels needed so every headline rate's corrected CI
    half-width is under ``target`` (:func:`.budget.labels_needed`, the claim clustering through
    the judged rate's own bootstrap variance), and which rate needs the most; ``more_labels`` None when even labelling
    every generation would not do."""
    from deflectbench.analysis.calibration.budget import labels_needed

    if not 0 < target < 0.5:
        raise ValueError(f"--target must lie between 0 and 0.5 (a fraction), not {target}")
    lab_model = inputs.labelled["model"].astype(str).to_numpy()
    weights = inputs.labelled["weight"].to_numpy(dtype=np.float64)
    out: dict[str, ModelBudget] = {}
    for model, cell in corrected.models.items():
        mine = np.ones(len(lab_model), bool) if corrected.pooled else lab_model == model
        worst, more, unreachable = None, 0, False
        for kind, name in HEADLINE:
            k = MEASURES.index((kind, name))
            y, f = inputs.human[mine, k], inputs.judged_labelled[mine, k]
            ok = ~(np.isnan(y) | np.isnan(f))
            judged = cell.get("judged", kind, name)
            if ok.sum() < 2 or judged.n < ok.sum():
                continue
            w = weights[mine][ok] if inputs.weighting == "stratified" else None
            half = _half(judged)
            need = labels_needed(
                y[ok],
                f[ok],
                judged.n,
                target=target,
                w=w,
                judged_variance=None if half is None else (half / 1.959964) ** 2,
            )
            if need is None:
                unreachable, worst = True, name
                break
            if need > more:
                worst, more = name, need
        out[model] = ModelBudget(
            labels=cell.n_labels,
            more_labels=None if unreachable else more,
            labels_needed=None if unreachable else cell.n_labels + more,
            widest=worst,
            target_half_width=target,
            note=f"even labelling every generation would not bring {worst} under it"
            if unreachable
            else None,
        )
    return out


def _sens_spec(rater: np.ndarray, ref: np.ndarray, claims: list[Any], resamples: int, seed: int):
    # exact=False: the bootstrap alone here, its hull with the Wilson interval is _with_score's
    sens = compare(rater, ref, claims, n_resamples=resamples, seed=seed, chance=False, exact=False)
    spec = compare(
        1 - rater, 1 - ref, claims, n_resamples=resamples, seed=seed, chance=False, exact=False
    )
    return sens, spec


def _with_score(boot: Any, hits: int, n: int) -> tuple[float, float]:
    """The bootstrap interval's hull with the Wilson score interval of hits of n (the
    bootstrap alone gives 0 of 120 the width 0); NaN where the bootstrap has no interval."""
    if n <= 0 or not (math.isfinite(boot.lo) and math.isfinite(boot.hi)):
        return boot.lo, boot.hi
    lo, hi = wilson(hits, n)
    return min(boot.lo, float(lo)), max(boot.hi, float(hi))


def judge_accuracy(
    inputs: CalibrationInputs,
    verdicts: pd.DataFrame,
    *,
    consensus_name: str = "consensus",
    resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Each judge's (``verdicts``: gen_id, judge, the fields) and the consensus' sensitivity
    and specificity per field on the labelled items, with claim-bootstrap CIs."""
    lab = inputs.labelled
    human = pd.DataFrame(
        inputs.human[:, len(OUTCOMES) :], columns=list(FIELDS), index=lab["gen_id"].astype(int)
    )
    claims = dict(zip(lab["gen_id"].astype(int), lab["claim_id"], strict=True))
    cons = pd.DataFrame(
        inputs.judged_labelled[:, len(OUTCOMES) :], columns=list(FIELDS), index=human.index
    )
    raters = (
        [
            (str(j), part.drop_duplicates("gen_id").set_index("gen_id"))
            for j, part in verdicts.groupby("judge", sort=True)
        ]
        if len(verdicts)
        else []
    )
    raters.append((consensus_name, cons))
    rows = []
    for name, frame in raters:
        both = frame.index.intersection(human.index)
        cl = [claims[int(g)] for g in both]
        for f in FIELDS:
            x = frame.loc[both, f].to_numpy(dtype=np.float64)
            y = human.loc[both, f].to_numpy(dtype=np.float64)
            sens, spec = _sens_spec(x, y, cl, resamples, seed)
            s_lo, s_hi = _with_score(sens["recall"], sens.tp, sens.tp + sens.fn)
            p_lo, p_hi = _with_score(spec["recall"], spec.tp, spec.tp + spec.fn)
            rows.append(
                {
                    "rater": name,
                    "field": f,
                    "n": sens.n,
                    "positives": sens.tp + sens.fn,
                    "sensitivity": sens["recall"].value,
                    "sensitivity_lo": s_lo,
                    "sensitivity_hi": s_hi,
                    "specificity": spec["recall"].value,
                    "specificity_lo": p_lo,
                    "specificity_hi": p_hi,
                }
            )
    return pd.DataFrame(rows)


def dawid_skene(
    inputs: CalibrationInputs, verdicts: pd.DataFrame, judges: Sequence[str]
) -> DawidSkeneFit:
    """Per field: the latent-class prevalence and each judge's sensitivity and specificity
    (human labels as anchors where present); not ``available`` (a note why) when the
    estimator is missing or there are no verdicts; a field that cannot be fitted has a note."""
    try:
        from deflectbench.analysis.calibration import latent
    except ImportError:
        return DawidSkeneFit(False, "the Dawid-Skene estimator is not installed")
    if not len(verdicts) or not judges:
        return DawidSkeneFit(False, "no judge verdicts to combine")
    wide = {
        j: part.drop_duplicates("gen_id").set_index("gen_id")
        for j, part in verdicts.groupby("judge")
    }
    ids = sorted(set().union(*(set(f.index) for f in wide.values())))
    anchors = pd.DataFrame(
        inputs.human[:, len(OUTCOMES) :],
        columns=list(FIELDS),
        index=inputs.labelled["gen_id"].astype(int),
    ).reindex(ids)
    fields: dict[str, FieldFit] = {}
    for f in FIELDS:
        votes = np.column_stack(
            [wide[j][f].reindex(ids).to_numpy(dtype=np.float64) for j in judges]
        )
        truth = anchors[f].to_numpy(dtype=np.float64)
        try:
            fit = latent.dawid_skene(votes, truth)
        except (ValueError, ArithmeticError) as exc:
            fields[f] = FieldFit(note=str(exc))
            continue
        fields[f] = replace(
            _field_fit(fit, judges), correlated=correlated_errors(votes, truth, judges)
        )
    return DawidSkeneFit(True, judges=tuple(judges), fields=fields)


def error_association(errors_a: np.ndarray, errors_b: np.ndarray) -> float:
    """One-sided Fisher exact p that two raters' 0/1 errors on the same items go together
    (odds ratio > 1); 1.0 when either never errs or never is right (nothing to test)."""
    from scipy.stats import fisher_exact

    a, b = errors_a.astype(bool), errors_b.astype(bool)
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    if not (a.any() and b.any() and (~a).any() and (~b).any()):
        return 1.0
    return float(fisher_exact(table, alternative="greater")[1])


def correlated_errors(
    votes: np.ndarray, truth: np.ndarray, judges: Sequence[str], alpha: float = 0.05
) -> str | None:
    """A sentence when the labelled items show two judges' errors associated within a true
    class (Fisher, Bonferroni over classes and judge pairs), None when they do not."""
    labelled = ~np.isnan(truth)
    pairs = [(i, k) for i in range(len(judges)) for k in range(i + 1, len(judges))]
    tests = []
    for i, k in pairs:
        for value in (0.0, 1.0):
            use = labelled & (truth == value) & ~np.isnan(votes[:, i]) & ~np.isnan(votes[:, k])
            if use.sum() < 2:
                continue
            p = error_association(votes[use, i] != value, votes[use, k] != value)
            tests.append((p, judges[i], judges[k], int(use.sum()), int(value)))
    if not tests:
        return None
    p, a, b, n, value = min(tests)
    if p * len(tests) >= alpha:
        return None
    return (
        f"the labels show {a} and {b} err together (Fisher p = {min(1.0, p * len(tests)):.2g} "
        f"after Bonferroni, {n} labelled items of true value {value}): Dawid-Skene assumes "
        "independent errors, so its rates are not to be trusted here; use the corrected rates"
    )


def _field_fit(fit: Any, judges: Sequence[str]) -> FieldFit:
    get = fit.get if isinstance(fit, Mapping) else lambda k, d=None: getattr(fit, k, d)
    sens = list(np.asarray(get("sensitivity", []), dtype=float))
    spec = list(np.asarray(get("specificity", []), dtype=float))

    def r(x: Any) -> float | None:
        return None if x is None or not math.isfinite(float(x)) else round(float(x), 6)

    iterations, converged = get("iterations"), get("converged")
    return FieldFit(
        iterations=None if iterations is None else int(iterations),
        converged=None if converged is None else bool(converged),
        prevalence=r(get("prevalence")),
        judges={
            j: (
                r(sens[i]) if i < len(sens) else None,
                r(spec[i]) if i < len(spec) else None,
            )
            for i, j in enumerate(judges)
        },
    )
