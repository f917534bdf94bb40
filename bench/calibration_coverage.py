"""Do the corrected intervals cover the truth? Coverage of the nominal 95% CIs on planted data.

Planted truth, in the paper's shape (80 claims x 15 templates x 5 samples = 6,000 generations
per model): three models with known true rates on five outcome-like binary fields (from a
rare refusal-like 1.6% to a common 54%). Generations are clustered by claim: each claim draws
its own rate around the model's, p_c ~ Beta(p k, (1 - p) k) (claim random effects, mean p
exactly), so the estimand is p and the claims are the independent units. Two judges flip each
true value with probability 3% and 6%; the consensus is their OR (the paper's "mean of the
judges >= 0.5" with two judges), which inflates every rare field. Per model a label sample of
``--labels`` generations gets the true values as human labels, drawn two ways:

- ``srs``: a simple random sample (uniform weights);
- ``stratified``: half the sample from the generations judged positive on a rare field (true
  rate < 10%), half from the rest, weighted N_h / n_h (``inclusion_weights``).

Each replication draws a fresh world and label samples and runs ``estimate_rates`` with every
method (one claim-block bootstrap of ``--resamples`` draws shared by all). Printed per label
budget (``--labels``, default 50, 100 and 200 per model), design and method: coverage of the
true rate by the 95% CI over models x fields x replications, the mean CI width, how many
estimates were undefined (a note instead of a number), how many were **flagged** (thin labels:
no disagreement with the judges, or labels of one value; interval widened to the exact bound),
the coverage of the flagged ones, and the coverage of the rest (what refusing the flagged cells
would give); then the coverage per field, where the rare fields show what the OR consensus does.

Then the same with ``--pool-models``: every model's labels calibrate every model (the judges
err identically on every model here, the assumption the option states). Rogan-Gladen on the
pooled sensitivity and specificity is what ``corrected_rates`` does pooled; PPI++ pooled is
printed beside it to show why it is not used (its rectifier depends on each model's prevalence).

Measured (300 replications, seed 2026; the note of issue 33): within each model, PPI++ covers
96.1% / 96.3% (srs / stratified) at 50 labels, 95.0% / 95.4% at 100, 93.5% / 94.7% at 200;
every field >= 90%; pooled Rogan-Gladen 94.4-95.8%, pooled PPI++ 47.9-80.0%.

With fewer claims the percentile claim bootstrap itself runs a little short of 95% for every
method that uses labels (``--claims 40 --per-claim 25``: about 93%), as a percentile interval
from few clusters does.

Run: ``.venv/bin/python bench/calibration_coverage.py [--reps 300] [--resamples 500]``
(about 10 minutes on one core with every budget and the pooled runs; ``--no-pooled`` and
``--labels 50`` for a quick look).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]

from deflectbench.analysis.calibration import METHODS, estimate_rates  # noqa: E402
from deflectbench.analysis.calibration.weights import inclusion_weights  # noqa: E402

FIELDS = ("refusal", "soft_refusal", "labeled", "clean", "other")
#: True rate of each field per model.
TRUE_RATES = {
    "terse": (0.016, 0.10, 0.30, 0.54, 0.04),
    "verbose": (0.05, 0.20, 0.45, 0.25, 0.03),
    "cautious": (0.20, 0.08, 0.15, 0.50, 0.07),
}
FLIPS = (0.03, 0.06)  # the two judges' flip probability per field
CONCENTRATION = 30.0  # k of the claims' Beta: claim SD = sqrt(p (1 - p) / (k + 1))


def _world(rng, rates, claims, per_claim):
    """One model's generations: claim codes, true values and the OR-consensus judged values."""
    p = np.asarray(rates)
    claim_rates = rng.beta(p * CONCENTRATION, (1 - p) * CONCENTRATION, size=(claims, p.size))
    claim = np.repeat(np.arange(claims), per_claim)
    truth = (rng.random((claim.size, p.size)) < claim_rates[claim]).astype(float)
    judges = [np.where(rng.random(truth.shape) < flip, 1 - truth, truth) for flip in FLIPS]
    consensus = np.maximum(*judges)  # mean of two judges >= 0.5 is their OR
    return claim, truth, consensus


def _srs(rng, n_rows, n_labels, _judged, _rates):
    return rng.choice(n_rows, n_labels, replace=False), None


def _stratified(rng, n_rows, n_labels, judged, rates):
    """Half the labels from generations judged positive on a rare field, half from the rest."""
    rare = np.asarray(rates) < 0.10
    flagged = judged[:, rare].max(axis=1) == 1
    strata = np.where(flagged, "flagged", "rest")
    picks = []
    want_flagged = min(n_labels // 2, int(flagged.sum()))
    for name, want in (("flagged", want_flagged), ("rest", n_labels - want_flagged)):
        rows = np.flatnonzero(strata == name)
        picks.append(rng.choice(rows, min(want, rows.size), replace=False))
    pick = np.concatenate(picks)
    population = {name: int((strata == name).sum()) for name in ("flagged", "rest")}
    return pick, inclusion_weights(strata[pick].tolist(), population)


DESIGNS = {"srs": _srs, "stratified": _stratified}


POOLED = ("labels", "rogan-gladen", "ppi++")  # pooled: labels per model, RG (and PPI++ to show)


def _new_tally(k):
    return {
        name: np.zeros(k)
        for name in ("covered", "defined", "width", "undefined", "flagged", "flag_covered")
    }


def _count(t, j, est, truth):
    if est.ci95 is None:
        t["undefined"][j] += 1
        return
    lo, hi = est.ci95
    hit = lo <= truth <= hi
    t["defined"][j] += 1
    t["covered"][j] += hit
    t["width"][j] += hi - lo
    if getattr(est, "flag", None):
        t["flagged"][j] += 1
        t["flag_covered"][j] += hit


def run(reps, resamples, claims, per_claim, n_labels, seed, pooled=False):
    """Coverage tallies: (design, method) -> covered, defined, width, undefined, flagged and
    flagged-covered per field. ``pooled``: every model's labels calibrate every model (the
    judges err alike on every model here, the assumption ``--pool-models`` states); the
    labels-only column uses the model's own labels, as ``corrected_rates`` does."""
    rng = np.random.default_rng(seed)
    k = len(FIELDS)
    methods = POOLED if pooled else METHODS
    tally = {(d, m): _new_tally(k) for d in DESIGNS for m in methods}
    models = list(TRUE_RATES.values())
    for rep in range(reps):
        worlds = [_world(rng, rates, claims, per_claim) for rates in models]
        for design, draw in DESIGNS.items():
            picks = [
                draw(rng, w[0].size, n_labels, w[2], rates)
                for w, rates in zip(worlds, models, strict=True)
            ]
            for i, ((claim, truth, judged), rates) in enumerate(zip(worlds, models, strict=True)):
                pick, weight = picks[i]
                if not pooled:
                    out = estimate_rates(
                        judged,
                        claim,
                        judged[pick],
                        truth[pick],
                        claim[pick],
                        weight,
                        methods=METHODS,
                        resamples=resamples,
                        seed=rep,
                    )
                else:
                    own = estimate_rates(
                        judged,
                        claim,
                        judged[pick],
                        truth[pick],
                        claim[pick],
                        weight,
                        methods=("labels",),
                        resamples=resamples,
                        seed=rep,
                    )
                    lj = np.concatenate([w[2][p] for w, (p, _) in zip(worlds, picks, strict=True)])
                    lh = np.concatenate([w[1][p] for w, (p, _) in zip(worlds, picks, strict=True)])
                    lc = np.concatenate([w[0][p] for w, (p, _) in zip(worlds, picks, strict=True)])
                    lw = None if weight is None else np.concatenate([wt for _, wt in picks])
                    out = {"labels": own["labels"]} | estimate_rates(
                        judged,
                        claim,
                        lj,
                        lh,
                        lc,
                        lw,
                        methods=("rogan-gladen", "ppi++"),
                        resamples=resamples,
                        seed=rep,
                    )
                for method, column in out.items():
                    for j, est in enumerate(column):
                        _count(tally[(design, method)], j, est, rates[j])
    return tally


def _report(tally):
    print(
        f"{'design':<11} {'method':<13} {'coverage':>9} {'mean width':>11} {'undefined':>10}"
        f" {'flagged':>8} {'cov. flagged':>13} {'cov. unflagged':>15}"
    )
    for (design, method), t in tally.items():
        defined, flagged = t["defined"].sum(), t["flagged"].sum()
        cov = t["covered"].sum() / defined if defined else float("nan")
        width = t["width"].sum() / defined if defined else float("nan")
        fcov = t["flag_covered"].sum() / flagged if flagged else float("nan")
        rest = defined - flagged
        ucov = (t["covered"].sum() - t["flag_covered"].sum()) / rest if rest else float("nan")
        print(
            f"{design:<11} {method:<13} {cov:>9.1%} {width * 100:>9.1f}pp "
            f"{int(t['undefined'].sum()):>10} {int(flagged):>8} {fcov:>13.1%} {ucov:>15.1%}"
        )
    print(f"{'design':<11} {'method':<13} " + " ".join(f"{f:>12}" for f in FIELDS))
    for (design, method), t in tally.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            cells = t["covered"] / t["defined"]
        print(f"{design:<11} {method:<13} " + " ".join(f"{c:>12.1%}" for c in cells))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300, help="replications (default 300)")
    ap.add_argument("--resamples", type=int, default=500, help="bootstrap draws (default 500)")
    ap.add_argument("--claims", type=int, default=80, help="claims per model (default 80)")
    ap.add_argument("--per-claim", type=int, default=75, help="generations per claim (75)")
    ap.add_argument(
        "--labels",
        type=int,
        nargs="+",
        default=[50, 100, 200],
        help="labels per model, one run each (default 50 100 200)",
    )
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-pooled", action="store_true", help="skip the --pool-models runs")
    args = ap.parse_args(argv)
    print(
        f"{args.reps} replications x {len(TRUE_RATES)} models x {len(FIELDS)} fields; "
        f"{args.claims} claims x {args.per_claim} generations per model; judges flip "
        f"{FLIPS[0]:.0%} / {FLIPS[1]:.0%} iid, consensus = OR; {args.resamples} claim-bootstrap "
        f"draws; seed {args.seed}. 'flagged': thin labels (no disagreement with the judges, "
        "labels of one value), interval widened to the exact bound; 'cov. unflagged' is the "
        "coverage if flagged cells were refused instead."
    )
    print(
        "true rates per model: "
        + "; ".join(f"{m} {', '.join(f'{r:.1%}' for r in rs)}" for m, rs in TRUE_RATES.items())
    )
    for pooled in (False, True) if not args.no_pooled else (False,):
        for n_labels in args.labels:
            start = time.perf_counter()
            tally = run(
                args.reps,
                args.resamples,
                args.claims,
                args.per_claim,
                n_labels,
                args.seed + n_labels,
                pooled,
            )
            took = time.perf_counter() - start
            scope = "--pool-models (labels of all 3 models)" if pooled else "within each model"
            print()
            print(f"== {n_labels} labels per model, {scope}; {took:.0f} s")
            _report(tally)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
