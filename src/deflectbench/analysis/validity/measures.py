"""Judge validity: how well a judge's binary labels match people's, per rubric field.

Agreement between two LLM judges is a lower bound on reliability, not validity; this module
compares any rater (a judge, the consensus, the rule-based ``lexical`` judge, the monitor) with
a reference (the human labels, or the consensus) on one binary field at a time and reports
accuracy, Cohen's kappa, Gwet's AC1, precision, recall, F1 and n, each with a percentile
bootstrap CI. Kappa and AC1 are :mod:`.stats`' own functions; precision, recall, F1 and accuracy
are direct counts of the 2x2 confusion table. Every resample's table is computed at once (one
matrix product), and its kappa and AC1 by :func:`.stats.chance_corrected`, the counts form the
two :mod:`.stats` functions themselves use.

**CIs resample claims, not items.** The generations of one claim share its content (15
templates, 5 samples), so they are not independent, and the paper's CIs resample claims for
that reason (:func:`.stats.block_bootstrap_many`); a labeled subset is drawn from the same
generations, so resampling items would make the intervals too narrow. Each resample draws the
comparison's claims with replacement (exactly ``default_rng(seed).integers(0, n_claims,
size=(n_resamples, n_claims))``, claims in sorted order, as :mod:`.stats` does) and keeps every
item of each drawn claim; a statistic undefined in a resample (no predicted 1s for precision)
is left out of that statistic's percentiles. With one claim there is no interval (NaN): every
resample is that claim.

**Proportions are honest at the edges.** A percentile bootstrap of a recall of 0 of 120
positives, or a precision of 40 of 40, is [0, 0] or [1, 1]: a certainty n items do not hold.
So accuracy, precision and recall (each a proportion of its own n: all items, the rater's 1s,
the reference's 1s) report the hull of the claim-bootstrap interval and the exact
(Clopper-Pearson) interval on that n (:func:`.calibration.exact.clopper_pearson`), which stays
in [0, 1]; F1 is not a proportion of a count and keeps its bootstrap interval. Kappa is
undefined (NaN, shown as "undefined", never a number) when the rater and the reference each
give one and the same value; AC1 only without items.

Missing values: a NaN in the rater or the reference (an unset human field, a field a judge did
not give) leaves that item out of that field's comparison, so each field has its own n.
Everything here is pure: arrays and frames in, numbers and frames out.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from deflectbench.analysis.calibration.exact import clopper_pearson
from deflectbench.analysis.stats.agreement import chance_corrected, cohen_kappa, gwet_ac1
from deflectbench.analysis.stats.arrays import factorize
from deflectbench.vocab import FIELDS, LADDER, OUTCOMES

__all__ = [
    "AGREEMENT_METRICS",
    "CHANCE_METRICS",
    "COUNT_METRICS",
    "METRICS",
    "Comparison",
    "Estimate",
    "annotator_agreement",
    "compare",
    "count_metrics",
    "human_outcome",
    "human_reference",
    "outcome_validity",
    "rater_validity",
]

#: Statistics read straight off the confusion table (computed vectorised for every resample).
COUNT_METRICS: tuple[str, ...] = ("accuracy", "precision", "recall", "f1")
#: Chance-corrected agreement, from :mod:`.stats` (Cohen's kappa, Gwet's AC1).
CHANCE_METRICS: tuple[str, ...] = ("kappa", "ac1")
METRICS: tuple[str, ...] = ("accuracy", "kappa", "ac1", "precision", "recall", "f1")
#: The annotators' agreement with each other (accuracy: the share of items they agree on).
AGREEMENT_METRICS: tuple[str, ...] = ("accuracy", "kappa", "ac1")


@dataclass(frozen=True)
class Estimate:
    """A statistic and its percentile bootstrap CI (NaN where undefined)."""

    value: float
    lo: float
    hi: float

    def to_json(self) -> dict[str, Any]:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else round(float(x), 6)

        return {"value": clean(self.value), "ci95": [clean(self.lo), clean(self.hi)]}


NAN_ESTIMATE = Estimate(math.nan, math.nan, math.nan)


@dataclass(frozen=True)
class Comparison:
    """A rater against a reference on one binary field: the confusion table and its statistics.

    ``tp`` counts items both call 1, ``fp`` items only the rater calls 1, ``fn`` items only the
    reference calls 1, ``tn`` items both call 0; ``prevalence`` is the reference's share of 1s
    (the skew kappa is sensitive to); ``claims`` is how many claims the CIs resampled.
    """

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    claims: int
    prevalence: float
    estimates: Mapping[str, Estimate]

    def __getitem__(self, metric: str) -> Estimate:
        return self.estimates.get(metric, NAN_ESTIMATE)

    def row(self) -> dict[str, Any]:
        """Flat columns for a table: n, tp, fp, fn, tn, claims, prevalence, and each metric
        with ``_lo`` and ``_hi``."""
        out: dict[str, Any] = {
            "n": self.n,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "claims": self.claims,
            "prevalence": self.prevalence,
        }
        for m in METRICS:
            e = self[m]
            out[m], out[f"{m}_lo"], out[f"{m}_hi"] = e.value, e.lo, e.hi
        return out


def count_metrics(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike
) -> dict[str, NDArray[np.float64]]:
    """Accuracy, precision, recall and F1 from confusion counts (arrays: one per resample).

    accuracy = (tp + tn) / n; precision = tp / (tp + fp); recall = tp / (tp + fn);
    F1 = 2 tp / (2 tp + fp + fn) (the harmonic mean of precision and recall, written so it is
    defined whenever either side has a 1). A zero denominator gives NaN.
    """
    a, b, c, d = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn, tn))
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "accuracy": (a + d) / (a + b + c + d),
            "precision": a / (a + b),
            "recall": a / (a + c),
            "f1": 2 * a / (2 * a + b + c),
        }


def _percentiles(boot: NDArray[np.float64], level: float, claims: int = 2) -> tuple[float, float]:
    """The percentile interval of the defined resamples; undefined (NaN) with fewer than two
    claims, where every resample is the one claim and the interval would have zero width."""
    ok = boot[~np.isnan(boot)]
    if ok.size == 0 or claims < 2:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(ok, [tail, 1.0 - tail])
    return float(lo), float(hi)


def _proportions(tp: int, fp: int, fn: int, tn: int) -> dict[str, tuple[int, int]]:
    """The metrics that are a count over a count, as (hits, n): accuracy of all items,
    precision of the rater's 1s, recall of the reference's 1s."""
    return {
        "accuracy": (tp + tn, tp + fp + fn + tn),
        "precision": (tp, tp + fp),
        "recall": (tp, tp + fn),
    }


def _with_exact(e: Estimate, hits: int, n: int, level: float, claims: int) -> Estimate:
    """The hull of a proportion's bootstrap interval and its exact interval on its n, in [0, 1]
    (module docstring); unchanged where the proportion is undefined (n = 0) or one claim gives
    no interval."""
    if n <= 0 or claims < 2 or math.isnan(e.value):
        return e
    ex_lo, ex_hi = (float(v) for v in clopper_pearson(hits, n, level))
    lo = ex_lo if math.isnan(e.lo) else min(e.lo, ex_lo)
    hi = ex_hi if math.isnan(e.hi) else max(e.hi, ex_hi)
    return Estimate(e.value, max(0.0, lo), min(1.0, hi))


def compare(
    rater: ArrayLike,
    reference: ArrayLike,
    claims: Sequence[Hashable] | ArrayLike,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    chance: bool = True,
    exact: bool = True,
) -> Comparison:
    """A rater's 0/1 labels against a reference's on the same items, with claim-bootstrap CIs.

    ``rater`` and ``reference`` are 1-D, 0/1 or NaN (NaN: left out); ``claims`` gives each
    item's claim (the resampled unit). ``chance=False`` skips kappa and AC1 (a monitor's
    precision and recall on thousands of items need only the counts). ``exact=False`` keeps
    the proportions' bootstrap intervals alone (for a caller that widens them its own way,
    as :mod:`.calibration.review` does with the score interval).
    """
    x = np.asarray(rater, dtype=np.float64)
    y = np.asarray(reference, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"rater and reference must be 1-D of one length: {x.shape} vs {y.shape}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    keep = ~np.isnan(x) & ~np.isnan(y)
    c = np.asarray(claims, dtype=object)
    if c.shape != x.shape:
        raise ValueError(f"claims has {c.size} entries for {x.size} items")
    x, y, c = x[keep], y[keep], c[keep]
    for name, v in (("rater", x), ("reference", y)):
        if v.size and not np.isin(v, (0.0, 1.0)).all():
            raise ValueError(f"{name} must hold only 0, 1 or NaN")
    n = int(x.size)
    if n == 0:
        return Comparison(0, 0, 0, 0, 0, 0, math.nan, {})
    cell = (2 - 2 * x.astype(np.int64)) + (1 - y.astype(np.int64))  # 0 tp, 1 fp, 2 fn, 3 tn
    tp, fp, fn, tn = (int(k) for k in np.bincount(cell, minlength=4))

    codes, labels = factorize(c.tolist())
    k = len(labels)
    per_claim = np.zeros((k, 4))
    np.add.at(per_claim, (codes, cell), 1.0)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, size=(n_resamples, k))
    flat = (np.arange(n_resamples)[:, None] * k + draws).ravel()
    weights = np.bincount(flat, minlength=n_resamples * k).reshape(n_resamples, k)
    boot = weights.astype(np.float64) @ per_claim  # (n_resamples, 4) confusion tables

    point = count_metrics(tp, fp, fn, tn)
    resampled = count_metrics(*boot.T)
    estimates = {
        m: Estimate(float(point[m]), *_percentiles(resampled[m], level, k)) for m in COUNT_METRICS
    }
    for m, (hits, size) in _proportions(tp, fp, fn, tn).items() if exact else ():
        estimates[m] = _with_exact(estimates[m], hits, size, level, k)
    if chance:
        kappa = cohen_kappa(x.astype(np.int64), y.astype(np.int64))
        ac1 = gwet_ac1(x.astype(np.int64), y.astype(np.int64))
        boot_kappa, boot_ac1 = chance_corrected(*boot.astype(np.int64).T)
        estimates["kappa"] = Estimate(kappa, *_percentiles(boot_kappa, level, k))
        estimates["ac1"] = Estimate(ac1, *_percentiles(boot_ac1, level, k))
    return Comparison(n, tp, fp, fn, tn, k, (tp + fn) / n, estimates)


# --------------------------------------------------------------------------- human labels


def human_reference(humans: pd.DataFrame) -> pd.DataFrame:
    """One reference label per generation and field: the majority of the annotators who set it.

    ``humans`` has one row per (gen_id, annotator) with the 8 fields (NaN: unset), as the
    caller chose them (unsure labels in or out). A tie (one annotator says 1, another 0) has no
    majority: the field is NaN for that generation, so it leaves that field's n, like an unset
    field. Returns one row per gen_id (index) with the 8 fields, ``annotators`` (how many
    labeled it) and ``ties`` (how many of its fields tied).
    """
    cols = [*FIELDS, "annotators", "ties"]
    if humans.empty:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="gen_id"), dtype=float)
    values = humans[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
    codes, uniq = pd.factorize(humans["gen_id"], sort=True)
    g = len(uniq)
    ones = np.stack([np.bincount(codes, values[:, j] == 1, g) for j in range(len(FIELDS))], 1)
    zeros = np.stack([np.bincount(codes, values[:, j] == 0, g) for j in range(len(FIELDS))], 1)
    ref = np.where(ones > zeros, 1.0, np.where(zeros > ones, 0.0, np.nan))
    ties = (ones == zeros) & (ones > 0)
    out = pd.DataFrame(ref, index=pd.Index(uniq, name="gen_id"), columns=list(FIELDS))
    out["annotators"] = np.bincount(codes, minlength=g)
    out["ties"] = ties.sum(axis=1)
    return out


def human_outcome(values: Mapping[str, float]) -> str | None:
    """The outcome of a human label by the paper's ladder, or None when an unset field leaves
    it undecided (a rung above the first 1 is unset, or no 1 and some rung unset)."""
    for field, name in LADDER:
        v = values.get(field)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if v == 1:
            return name
    return OUTCOMES[-1]


# --------------------------------------------------------------------------- tables

#: The counts a comparison of 0/1 labels reports before its metrics.
_COUNT_COLUMNS: tuple[str, ...] = ("n", "tp", "fp", "fn", "tn", "claims", "prevalence")


def _with_ci(metrics: Iterable[str]) -> tuple[str, ...]:
    """Each metric's column followed by its CI's bounds: ``kappa, kappa_lo, kappa_hi``."""
    return tuple(f"{m}{s}" for m in metrics for s in ("", "_lo", "_hi"))


VALIDITY_COLUMNS: tuple[str, ...] = ("rater", "field", *_COUNT_COLUMNS, *_with_ci(METRICS))


@dataclass(frozen=True)
class ComparisonOptions:
    """How labels are compared (:func:`rater_validity`, :func:`annotator_agreement`): the
    fields, and the claim bootstrap's draws, seed and level."""

    fields: Sequence[str] = FIELDS
    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95


def rater_validity(
    raters: pd.DataFrame,
    reference: pd.DataFrame,
    claims: Mapping[int, Hashable],
    how: ComparisonOptions = ComparisonOptions(),
) -> pd.DataFrame:
    """Each rater against the reference, per field (one row each, in the raters' order).

    ``raters`` has one row per (gen_id, rater) with the fields (NaN: not given); ``reference``
    one row per gen_id (index) with the fields (NaN: no reference); ``claims`` maps gen_id to
    its claim. Items are the generations both have; each field drops its own NaNs.
    """
    rows: list[dict[str, Any]] = []
    if raters.empty or reference.empty:
        return pd.DataFrame(rows, columns=list(VALIDITY_COLUMNS))
    for name in dict.fromkeys(raters["rater"].tolist()):
        mine = raters[raters["rater"] == name].drop_duplicates("gen_id").set_index("gen_id")
        both = mine.index.intersection(reference.index)
        for f, cmp in _by_field(mine, reference, both, claims, how):
            rows.append({"rater": name, "field": f, **cmp.row()})
    return pd.DataFrame(rows, columns=list(VALIDITY_COLUMNS))


def _by_field(
    rater: pd.DataFrame,
    reference: pd.DataFrame,
    both: pd.Index,
    claims: Mapping[int, Hashable],
    how: ComparisonOptions,
) -> Iterator[tuple[str, Comparison]]:
    """Each field's :func:`compare` of two frames (indexed by gen_id) on the items ``both``:
    raters against the reference and annotators against each other are compared alike."""
    c = [claims.get(int(g)) for g in both]
    for f in how.fields:
        yield (
            f,
            compare(
                rater.loc[both, f].to_numpy(dtype=np.float64),
                reference.loc[both, f].to_numpy(dtype=np.float64),
                c,
                n_resamples=how.n_resamples,
                seed=how.seed,
                level=how.level,
            ),
        )


AGREEMENT_COLUMNS: tuple[str, ...] = (
    "annotator_a",
    "annotator_b",
    "field",
    "n",
    "claims",
    "prevalence",
    *_with_ci(AGREEMENT_METRICS),
)


def annotator_agreement(
    humans: pd.DataFrame,
    claims: Mapping[int, Hashable],
    how: ComparisonOptions = ComparisonOptions(),
) -> pd.DataFrame:
    """Inter-annotator agreement: each pair of annotators on the generations both labeled.

    Per pair and field: n, observed agreement (``accuracy``), Cohen's kappa and Gwet's AC1 with
    claim-bootstrap CIs. Pairs with no generation in common are left out; with fewer than two
    annotators the table is empty.
    """
    rows: list[dict[str, Any]] = []
    if humans.empty:
        return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
    by = {
        a: part.drop_duplicates("gen_id").set_index("gen_id")
        for a, part in humans.groupby("annotator")
    }
    for a, b in combinations(sorted(by), 2):
        both = by[a].index.intersection(by[b].index)
        if both.empty:
            continue
        for f, cmp in _by_field(by[a], by[b], both, claims, how):
            row = cmp.row()
            rows.append(
                {"annotator_a": a, "annotator_b": b, "field": f}
                | {k: row[k] for k in AGREEMENT_COLUMNS if k in row}
            )
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


#: The monitor's outcomes, in the ladder's order.
MONITOR_OUTCOMES: tuple[str, ...] = ("refusal", "soft_refusal", "labeled_compliance")
OUTCOME_COLUMNS: tuple[str, ...] = (
    "reference",
    "outcome",
    *_COUNT_COLUMNS,
    *_with_ci(COUNT_METRICS),
)


def outcome_validity(
    predicted: Sequence[str | None],
    reference: Sequence[str | None],
    claims: Sequence[Hashable],
    *,
    name: str,
    outcomes: Iterable[str] = MONITOR_OUTCOMES,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Precision, recall, F1 and accuracy of predicted outcomes against reference outcomes,
    one outcome at a time (that outcome vs any other); None on either side leaves the item out.
    ``name`` fills the ``reference`` column (e.g. ``consensus (mean)``, ``humans``)."""
    p = np.asarray(predicted, dtype=object)
    r = np.asarray(reference, dtype=object)
    known = np.array([a is not None and b is not None for a, b in zip(p, r, strict=True)])
    rows: list[dict[str, Any]] = []
    for o in outcomes:
        x = np.where(known, (p == o).astype(np.float64), np.nan)
        y = np.where(known, (r == o).astype(np.float64), np.nan)
        cmp = compare(x, y, claims, n_resamples=n_resamples, seed=seed, level=level, chance=False)
        row = cmp.row()
        rows.append(
            {"reference": name, "outcome": o} | {k: row[k] for k in OUTCOME_COLUMNS if k in row}
        )
    return pd.DataFrame(rows, columns=list(OUTCOME_COLUMNS))
