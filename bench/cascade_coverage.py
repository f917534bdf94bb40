"""Cascaded judging on planted data: does the PPI++ interval cover, at the planner's share?

Planted world per model, in the paper's shape (``--claims`` 80 claims x ``--per-claim`` 75
answers = 15 templates x 5 samples): each claim draws its rate p_c ~ Beta(p k, (1 - p) k)
around the model's rate p with the paper's spread (sd 2.75 pp: its 11 pp range over 80
claims as four standard deviations; claims are the independent units); the expensive judges'
consensus y is Bernoulli(p_c); the cheap judge f misses 25% of y's positives and calls 8% of
its negatives positive (a rule-based judge's kind of error). Per replication the planner's
share for the target half-width (``--halfwidth``, :func:`share_for_halfwidth` from the cheap
verdicts' claim-clustered variance over rho^2, rho assumed 0.5) draws a Bernoulli sample, the
expensive verdicts of the sample enter ``cascade_rates`` (PPI++ in the claim bootstrap, ``--resamples`` draws), and
the 95% interval is checked against

- the **full-judging consensus rate**: mean(y) over every answer (what judging all answers with
  the expensive judges would have printed: the acceptance point of issue 35);
- the model's planted rate p (the super-population rate the claim bootstrap is built for).

Also per replication on an iid draw: the largest |difference| from ``ppi_py`` (point estimate
and lambda), and with people's labels on half the sample, the two-layer estimate's coverage of
the people's rate (``truth_rates``).

Run: ``.venv/bin/python bench/cascade_coverage.py [--reps 200] [--resamples 1000]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from deflectbench.analysis.cascade import cascade_rates, share_for_halfwidth
from deflectbench.analysis.cascade.layers import truth_rates
from deflectbench.analysis.cascade.size import clustered_variance, consensus_variance

RATES = {"model-rare": 0.05, "model-mid": 0.3, "model-common": 0.6}
#: The claims' spread: the paper's 11 pp range over 80 claims read as four standard deviations
#: (the planner's PAPER_SPREADS).
CLAIM_SD = 0.11 / 4.0


def _world(rng, rate: float, claims: int, per_claim: int):
    k = rate * (1 - rate) / CLAIM_SD**2 - 1.0  # Beta(p k, (1 - p) k) has sd CLAIM_SD
    p = rng.beta(rate * k, (1 - rate) * k, claims)
    claim = np.repeat(np.arange(claims), per_claim)
    y = (rng.random(claim.size) < p[claim]).astype(float)
    u = rng.random(claim.size)
    f = np.where(y == 1, (u >= 0.25).astype(float), (u < 0.08).astype(float))
    return claim, y, f


def _ppi_py_gap(rng) -> float:
    import ppi_py
    from ppi_py.ppi import _calc_lam_glm

    n = 3000
    y = (rng.random(n) < 0.3).astype(float)
    f = np.where(rng.random(n) < 0.15, 1 - y, y)
    s = rng.random(n) < 0.1
    (g,) = cascade_rates(
        f, np.arange(n), [("m",)] * n, ["m"] * n, s, np.where(s, y, np.nan), resamples=10
    )
    e = g.estimates["ppi++"][0]
    point = float(ppi_py.ppi_mean_pointestimate(y[s], f[s], f, lam=None)[0])
    theta1 = f.mean() + (y[s] - f[s]).mean()
    lam = float(
        _calc_lam_glm(
            (y[s] - theta1)[:, None],
            (f[s] - theta1)[:, None],
            (f - theta1)[:, None],
            np.eye(1),
            clip=True,
        )
    )
    return max(abs(e.rate - point), abs(e.details["lam"] - lam))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--claims", type=int, default=80)
    ap.add_argument("--per-claim", type=int, default=75)
    ap.add_argument("--halfwidth", type=float, default=0.03)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    start = time.time()
    print(
        f"load average {os.getloadavg()[0]:.1f}; {a.reps} replications, {a.resamples} "
        f"resamples, {a.claims} claims x {a.per_claim} answers per model, target "
        f"+-{100 * a.halfwidth:g}pp"
    )
    print(
        f"{'model':14} {'rate':>5} {'share':>6} {'sampled':>8} {'cover full':>10} "
        f"{'cover p':>8} {'half-width':>10} {'truth cover':>11}"
    )
    gaps = []
    for name, rate in RATES.items():
        full = sup = truth_hits = 0
        shares, sampled, widths = [], [], []
        for r in range(a.reps):
            claim, y, f = _world(rng, rate, a.claims, a.per_claim)
            v = consensus_variance(clustered_variance(f, claim))
            share = share_for_halfwidth(a.halfwidth, y.size, v)
            s = rng.random(y.size) < share
            (g,) = cascade_rates(
                f,
                claim,
                [(name,)] * y.size,
                [name] * y.size,
                s,
                np.where(s, y, np.nan),
                resamples=a.resamples,
                seed=r,
            )
            e = g.estimates["ppi++"][0]
            lo, hi = e.ci95 if e.ci95 is not None else (np.nan, np.nan)
            full += lo <= y.mean() <= hi
            sup += lo <= rate <= hi
            shares.append(share)
            sampled.append(int(s.sum()))
            widths.append((hi - lo) / 2)
            # people's labels: the consensus errs on 10% of them; half the sample labelled
            h = np.where(rng.random(y.size) < 0.10, 1 - y, y)
            lab = s & (rng.random(y.size) < 0.5)
            (t,) = truth_rates(
                f,
                np.where(s, y, np.nan),
                np.where(lab, h, np.nan),
                claim,
                resamples=a.resamples,
                seed=r,
            )
            tl, th = t.ci95 if t.ci95 is not None else (np.nan, np.nan)
            truth_hits += tl <= h.mean() <= th
            if r < 20:
                gaps.append(_ppi_py_gap(rng))
        print(
            f"{name:14} {rate:5.2f} {np.mean(shares):6.3f} {np.mean(sampled):8.0f} "
            f"{full / a.reps:10.3f} {sup / a.reps:8.3f} {np.mean(widths):10.4f} "
            f"{truth_hits / a.reps:11.3f}"
        )
    print(
        f"ppi_py: largest |difference| (point estimate, lambda) over {len(gaps)} iid draws: "
        f"{max(gaps):.2e}"
    )
    print(f"{time.time() - start:.0f} s; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
