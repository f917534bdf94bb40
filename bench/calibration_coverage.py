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
method (one claim-block bootstrap of ``--resamples`` draws shared by all). Printed per design
and method: coverage of the true rate by the 95% CI over models x fields x replications, the
mean CI width, and how many estimates were undefined (a note instead of a number); then the
coverage per field, where the rare fields show what the OR consensus does. Target: corrected
(ppi++) coverage >= 93% with a width below labels-only.

With fewer claims the percentile claim bootstrap itself runs a little short of 95% for every
method that uses labels (``--claims 40 --per-claim 25``: about 93%), as a percentile interval
from few clusters does.

Run: ``.venv/bin/python bench/calibration_coverage.py [--reps 300] [--resamples 500]``
(about 30 s on one core).
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


def run(reps, resamples, claims, per_claim, n_labels, seed):
    """Coverage tallies: (design, method) -> covered, defined, width sums, per field too."""
    rng = np.random.default_rng(seed)
    k = len(FIELDS)
    tally = {
        (d, m): {
            "covered": np.zeros(k),
            "defined": np.zeros(k),
            "width": np.zeros(k),
            "undefined": np.zeros(k),
        }
        for d in DESIGNS
        for m in METHODS
    }
    for rep in range(reps):
        for rates in TRUE_RATES.values():
            claim, truth, judged = _world(rng, rates, claims, per_claim)
            for design, draw in DESIGNS.items():
                pick, weight = draw(rng, claim.size, n_labels, judged, rates)
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
                for method, column in out.items():
                    t = tally[(design, method)]
                    for j, est in enumerate(column):
                        if est.ci95 is None:
                            t["undefined"][j] += 1
                            continue
                        lo, hi = est.ci95
                        t["defined"][j] += 1
                        t["covered"][j] += lo <= rates[j] <= hi
                        t["width"][j] += hi - lo
    return tally


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300, help="replications (default 300)")
    ap.add_argument("--resamples", type=int, default=500, help="bootstrap draws (default 500)")
    ap.add_argument("--claims", type=int, default=80, help="claims per model (default 80)")
    ap.add_argument("--per-claim", type=int, default=75, help="generations per claim (75)")
    ap.add_argument("--labels", type=int, default=200, help="labels per model (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    tally = run(args.reps, args.resamples, args.claims, args.per_claim, args.labels, args.seed)
    took = time.perf_counter() - start
    models = len(TRUE_RATES)
    print(
        f"{args.reps} replications x {models} models x {len(FIELDS)} fields; "
        f"{args.claims} claims x {args.per_claim} generations and {args.labels} labels per "
        f"model; judges flip {FLIPS[0]:.0%} / {FLIPS[1]:.0%}, consensus = OR; "
        f"{args.resamples} claim-bootstrap draws; {took:.0f} s"
    )
    print()
    print(f"{'design':<11} {'method':<13} {'coverage':>9} {'mean width':>11} {'undefined':>10}")
    for (design, method), t in tally.items():
        defined = t["defined"].sum()
        cov = t["covered"].sum() / defined if defined else float("nan")
        width = t["width"].sum() / defined if defined else float("nan")
        print(
            f"{design:<11} {method:<13} {cov:>9.1%} {width * 100:>9.1f}pp "
            f"{int(t['undefined'].sum()):>10}"
        )
    print()
    print(
        "coverage per field (true rates per model: "
        + "; ".join(f"{m} {', '.join(f'{r:.1%}' for r in rs)}" for m, rs in TRUE_RATES.items())
        + ")"
    )
    print(f"{'design':<11} {'method':<13} " + " ".join(f"{f:>12}" for f in FIELDS))
    for (design, method), t in tally.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            cells = t["covered"] / t["defined"]
        print(f"{design:<11} {method:<13} " + " ".join(f"{c:>12.1%}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
