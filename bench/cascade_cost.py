"""What does a target precision cost? The paper's design, cascaded judging, and cascaded judging
with early stopping, on planted data with known truth and known judge error (issue 35, point 4).

Planted world, in the paper's shape (80 claims x the pack's 15 templates x 5 samples per
model, the paper's four models priced as ``deflectbench plan`` prices them): each answer's true
outcome on the ladder (refusal, soft refusal, labeled compliance, clean compliance, other) is
drawn from softmax(model + framing + template + claim + claim x template) logits: large framing
effects, small claim effects (the paper's picture), claims drawn afresh in each replication
from their population, templates fixed. Judges see the true outcome and err:

- the cheap judge (``lexical``'s role, free) says another outcome with a probability that
  depends on the truth (8% of refusals, 25% of soft refusals, 15% labeled, 12% clean, 30%
  other: about 15% flips, correlated with the truth);
- two expensive judges (priced as the paper's pair) each err independently 2% of the time.

The estimand is the paper's: each model's rate of each outcome in the expensive judges'
consensus (the mean rule: each answer counts 0, 1/2 or 1), over the claims' population; its
true value is computed once from the planted world (200,000 claims).

Designs, each reaching for a 95% half-width ``--target`` (default 0.03) per model x outcome
for the four headline outcomes (``--scope "model x framing"``: per model, framing and outcome):

- (a) the paper's: every cell x 5 samples, both expensive judges on every answer; the mean
  with its claim-block bootstrap percentile interval (what ``analyze`` prints);
- (b) cascaded, at the planner's design: ``analysis.plan.search.cheapest`` (what
  ``deflectbench plan`` runs) over claims (multiples of the 4 levels, from ``--min-claims``),
  samples per cell (1-10) and the share r the expensive judges see, every template run, on the
  components (``plan.spreads.fixed_template_components``) and the cheap judge's rho measured on
  a pilot replication of the planted world (full judging), at ``--margin`` (0.9) of the target
  (the worst of many noisy half-widths runs above its prediction); the cheap judge on every
  answer, both expensive judges on a seeded simple random share r, PPI++
  (``analysis.calibration.ppi``: lambda fitted, re-fitted in every replicate) inside the
  claim-block bootstrap;
- (c) (b) with early stopping (``run --until``, ``analysis.sequential``): claims in a seeded
  order balanced over levels, K = ``--looks`` pre-declared looks, the first at the claims the
  same search gives at the first look's level (96%: 80% of alpha), at most half the claims (so
  the looks after it can double its claims), with that search's samples per cell and share;
  each model stops at the first look where its cells reach the target (and rest on
  ``--min-claims`` claims or more).

``--korn-graubard``: each printed interval is the union of the percentile interval and
Clopper-Pearson at the effective size p (1 - p) / Var_boot (Korn and Graubard 1998), for rare
outcomes in thin cells (the bench's only; ``analyze`` prints the percentile interval).

Printed: the planner's designs, and the one ``deflectbench plan`` itself chooses on the pilot;
per design (each row says it) its mean cost over the replications and cost / (a), how often
every cell reached the target, the largest half-width printed (mean and max over replications); then the
coverage of the printed intervals of the true consensus rate per model x outcome and design.

Run: ``.venv/bin/python bench/cascade_cost.py [--reps 200] [--target 0.03] [--looks 3]
[--scope "model x framing"] [--korn-graubard]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]

from deflectbench.analysis.calibration.draws import claim_multiplicities  # noqa: E402
from deflectbench.analysis.calibration.moments import (  # noqa: E402
    Moments,
    labelled_terms,
    replicate,
    target_terms,
)
from deflectbench.analysis.calibration.ppi import ppi_mean_moments  # noqa: E402
from deflectbench.analysis.options import MIN_CI_CLAIMS  # noqa: E402
from deflectbench.analysis.plan.components import (  # noqa: E402
    answer_variance,
    design_variance,
    judged_share_variance,
)
from deflectbench.analysis.sequential.rule import (  # noqa: E402
    HEADLINE_OUTCOMES,
    look_level,
    parse_until,
)

Array = NDArray[np.float64]
OUTCOMES5 = ("refusal", "soft_refusal", "labeled_compliance", "clean_compliance", "other")
N_OUT = len(OUTCOMES5)
HEAD = [OUTCOMES5.index(o) for o in HEADLINE_OUTCOMES]
#: The cheap judge's error rate by true outcome (it says another outcome, uniformly).
CHEAP_ERROR = np.array([0.08, 0.25, 0.15, 0.12, 0.30])
#: Each expensive judge's error rate (whatever the truth).
EXPENSIVE_ERROR = 0.02
SIGMA_CLAIM, SIGMA_CLAIM_TEMPLATE, SIGMA_TEMPLATE, SIGMA_FRAMING = 0.12, 0.35, 0.3, 1.2
MIN_CLAIMS_TO_STOP = MIN_CI_CLAIMS
#: Claims come in multiples of the 4 controversy levels (balanced rounds).
LEVELS = 4
#: The first look is placed where the planner predicts the worst cell at this share of the
#: target (the worst of many noisy half-widths runs above its prediction).
MARGIN = 0.9
SHARES = np.round(np.arange(0.05, 1.0001, 0.05), 2)


def z_of(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2.0)


@dataclass(frozen=True)
class World:
    """The planted world: per model the outcome logits of each template (M, T, O), the
    templates' framings and the scope's cells (which templates, which model)."""

    logits: Array  # (M, T, O)
    framings: tuple[str, ...]  # per template
    models: tuple[str, ...]
    groups: tuple[str, ...]  # the scope's group of each cell column ("" per model)
    levels: NDArray[np.int64]  # per claim of a replication


def confusion(errors: Array) -> Array:
    """P(judge says k | truth j): (O, O), rows the truth."""
    out = np.repeat((errors / (N_OUT - 1))[:, None], N_OUT, axis=1)
    out[np.arange(N_OUT), np.arange(N_OUT)] = 1.0 - errors
    return out


CHEAP = confusion(CHEAP_ERROR)
EXPENSIVE = confusion(np.full(N_OUT, EXPENSIVE_ERROR))


def make_world(models: list[str], framings: list[str], seed: int) -> World:
    rng = np.random.default_rng(seed)
    distinct = sorted(set(framings))
    m = len(models)
    base = rng.normal(0.0, 1.0, (m, 1, N_OUT)) + np.array([0.3, -0.4, 0.6, 0.4, -1.6])
    by_framing = {f: rng.normal(0.0, SIGMA_FRAMING, (m, N_OUT)) for f in distinct}
    frame = np.stack([by_framing[f] for f in framings], axis=1)  # (M, T, O)
    tmpl = rng.normal(0.0, SIGMA_TEMPLATE, (m, len(framings), N_OUT))
    return World(base + frame + tmpl, tuple(framings), tuple(models), (), np.zeros(0, np.int64))


def softmax(x: Array) -> Array:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cell_probs(world: World, n_claims: int, rng: np.random.Generator) -> Array:
    """Each (model, claim, template) cell's outcome probabilities (M, C, T, O)."""
    m, t, _ = world.logits.shape
    claim = rng.normal(0.0, SIGMA_CLAIM, (1, n_claims, 1, N_OUT))
    ct = rng.normal(0.0, SIGMA_CLAIM_TEMPLATE, (m, n_claims, t, N_OUT))
    return softmax(world.logits[:, None] + claim + ct)


def true_rates(world: World, columns: list[tuple[int, NDArray[np.bool_], int]]) -> Array:
    """The expected consensus rate of each cell column: E over claims of the mean over the
    cell's templates of P(judge says o), by Monte Carlo on 200,000 claims."""
    rng = np.random.default_rng(99)
    acc = np.zeros(world.logits.shape)
    chunks = 40
    for _ in range(chunks):
        acc += cell_probs(world, 5000, rng).mean(axis=1)
    said = (acc / chunks) @ EXPENSIVE  # (M, T, O): P(an expensive judge says o)
    return np.array([said[m, mask, o].mean() for m, mask, o in columns])


def simulate(world: World, n_claims: int, samples: int, rng: np.random.Generator):
    """True outcomes and the three judges' verdicts, each (M, C, T, S) ints."""
    p = cell_probs(world, n_claims, rng)
    cum = np.cumsum(p, axis=-1)
    u = rng.random((*p.shape[:3], samples, 1))
    truth = (u > cum[:, :, :, None, :-1]).sum(axis=-1)

    def judged(conf: Array) -> NDArray[np.int64]:
        cum_c = np.cumsum(conf, axis=1)[truth]  # (..., O)
        v = rng.random((*truth.shape, 1))
        return (v > cum_c[..., :-1]).sum(axis=-1)

    return truth, judged(CHEAP), judged(EXPENSIVE), judged(EXPENSIVE)


def item_matrix(x: Array, columns: list[tuple[int, NDArray[np.bool_], int]]) -> Array:
    """(C, T*S, K) values of each cell column (NaN for an item outside the column's cell):
    x is (M, C, T, S, O), one value per outcome."""
    _, c, t, s, _ = x.shape
    out = np.empty((c, t * s, len(columns)))
    for k, (mi, mask, o) in enumerate(columns):
        col = np.where(mask[None, :, None], x[mi, :, :, :, o], np.nan)
        out[:, :, k] = col.reshape(c, t * s)
    return out


def claim_sums(terms: Moments) -> Moments:
    """Terms (C, items, K) summed within claims: (C, K)."""
    return {k: v.sum(axis=1) for k, v in terms.items()}


def percentile(theta: Array, level: float) -> tuple[Array, Array]:
    a = (1.0 - level) / 2.0
    return np.nanquantile(theta, a, axis=0), np.nanquantile(theta, 1.0 - a, axis=0)


#: Widen thin cells' intervals (``--korn-graubard``): set by main.
WIDEN = {"korn_graubard": False}


def interval(est: Array, theta: Array, n: Array, level: float) -> tuple[Array, Array]:
    """The claim-block percentile interval (what ``analyze`` prints), or with
    ``--korn-graubard`` its union with the Korn-Graubard interval: Clopper-Pearson at the
    effective size n_eff = p (1 - p) / Var_boot (at most the answers n; n where the bootstrap
    has no spread). For a rate near 0 (or 1) whose claims rarely show it, the percentile
    interval is as short as the few claims that do; the exact interval at the clustered
    effective size is not (Korn and Graubard 1998, Survey Methodology 24(2))."""
    lo, hi = percentile(theta, level)
    if not WIDEN["korn_graubard"]:
        return lo, hi
    from deflectbench.analysis.calibration.exact import clopper_pearson

    p = np.clip(est, 0.0, 1.0)
    var = np.nanvar(theta, axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = np.where(var > 0, np.minimum(p * (1.0 - p) / var, n), n)
    cp_lo, cp_hi = clopper_pearson(p * n_eff, n_eff, level)
    return np.fmin(lo, cp_lo), np.fmax(hi, cp_hi)


def mean_ci(y: Array, n_claims: int, mult: Array, level: float) -> tuple[Array, Array, Array]:
    """The consensus mean of each column on the first ``n_claims`` claims with its
    claim-block percentile interval (``block_bootstrap_many``'s, written on claim sums)."""
    yy = y[:n_claims]
    s = np.nansum(yy, axis=1)
    n = (~np.isnan(yy)).sum(axis=1).astype(np.float64)
    est = s.sum(0) / n.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (mult @ s) / (mult @ n)
    lo, hi = interval(est, reps, n.sum(0), level)
    return est, lo, hi


def ppi_ci(
    lab: Moments, unl: Moments, n_claims: int, mult: Array, level: float
) -> tuple[Array, Array, Array]:
    """PPI++ of each column on the first ``n_claims`` claims (lambda fitted) with the
    claim-block percentile interval (lambda re-fitted in each replicate)."""
    lab_c = {k: v[:n_claims] for k, v in lab.items()}
    unl_c = {k: v[:n_claims] for k, v in unl.items()}
    est, _ = ppi_mean_moments(
        {k: v.sum(0) for k, v in lab_c.items()}, {k: v.sum(0) for k, v in unl_c.items()}
    )
    theta, _ = ppi_mean_moments(replicate(mult, lab_c), replicate(mult, unl_c))
    lo, hi = interval(est, theta, unl_c["n"].sum(0), level)
    return est, lo, hi


def prices() -> tuple[Array, Array, list[str], list[str]]:
    """Per model: the price of a generation and of one judgment by both expensive judges,
    from the plan's expected tokens and the bundled price table (the paper's models the
    table has no price for are priced at the mean of the others, said in the header)."""
    import deflectbench as dfb
    from deflectbench.cost import price_for

    plan = dfb.plan("refusal +-3pp per model").plan
    models = [c.name for c in plan.calls if c.role == "model"]
    gen = np.full(len(models), np.nan)
    judge = np.zeros(len(models))
    for call in plan.calls:
        price = price_for(call.name)
        if price is None and call.role == "judge":
            raise SystemExit(f"no price for judge {call.name}")
        if price is None:
            continue
        cost = price.cost(call.input_tokens, call.output_tokens)
        if call.role == "model":
            gen[models.index(call.name)] = cost
        else:
            judge[models.index(call.of)] += cost
    unpriced = [m for m, g in zip(models, gen, strict=True) if np.isnan(g)]
    gen[np.isnan(gen)] = np.nanmean(gen)
    return gen, judge, models, unpriced


@dataclass
class Planned:
    """The planner's designs: (b) the cheapest fixed design (claims, samples per cell, share)
    at 95%; (c) the cheapest first look (claims) with its samples and share at the first
    look's level, the later looks at the same samples and share. ``predicted`` is (b)'s
    half-width per cell column; ``proper`` the design ``plan`` itself would print from the
    pilot's raw components (every template count allowed)."""

    claims_b: int
    samples_b: int
    share_b: float
    first_c: int
    samples_c: int
    share_c: float
    predicted: Array
    proper: str


def _cheapest(cells, gen: Array, judge: Array, target: float, claims: list[int], run: list[int]):
    """``analysis.plan.search.cheapest`` on the bench's cells at the bench's prices (one priced
    call for all the models' generations, one for both judges' judgments), over the template
    counts ``run`` (per model) or each framing's own templates (``run`` empty)."""
    from deflectbench.analysis.plan.search import PerCall, cheapest
    from deflectbench.cost import Price

    calls = [
        PerCall("model", "bench/generations", 0.0, 1e6),
        PerCall("judge", "bench/judges", 0.0, 1e6, of="bench/generations"),
    ]
    prices = {
        "bench/generations": Price(0.0, float(gen.sum())),
        "bench/judges": Price(0.0, float(judge.sum())),
    }
    choices: list[int | None] = list(run) if run else [None]
    n_t = 15 if not run else max(run)
    return cheapest(
        cells,
        calls,
        prices,
        target=target,
        claim_choices=claims,
        template_choices=choices,
        templates_run={c: (n_t if c is None else c) for c in choices},
        quantile=1.0,
        judges=["bench/judges"],
    )


def plan_designs(
    world: World,
    columns: list[tuple[int, NDArray[np.bool_], int]],
    n_claims: int,
    samples: int,
    looks: int,
    target: float,
    gen: Array,
    judge: Array,
    min_claims: int,
    margin: float,
    scope: str,
) -> Planned:
    """The planner's designs from a pilot replication (the paper's design, full judging): per
    cell column the nested components of the consensus (the templates' own effects taken out
    first: every template is run, so they are fixed, not noise; their spread kept for the
    share term) and the cheap judge's correlation with it; then ``analysis.plan``'s search
    (``cheapest``) over claims, samples per cell (1-10) and share, every template run."""
    from deflectbench.analysis.plan.spreads import CellSpread, fixed_template_components

    rng = np.random.default_rng(12345)
    truth, cheap, j1, j2 = simulate(world, n_claims, samples, rng)
    _, c, t, s = truth.shape
    claims = np.broadcast_to(np.arange(c)[:, None, None], (c, t, s))
    tmpl = np.broadcast_to(np.arange(t)[None, :, None], (c, t, s))
    cells = []
    for k, (mi, mask, o) in enumerate(columns):
        y = ((j1[mi] == o).astype(float) + (j2[mi] == o)) / 2.0
        f = (cheap[mi] == o).astype(float)
        y, f = y[:, mask], f[:, mask]
        ids = (claims[:, mask].ravel(), tmpl[:, mask].ravel())
        comp = fixed_template_components(y.ravel(), *ids)
        rho = min(float(np.corrcoef(y.ravel(), f.ravel())[0, 1]), 1.0 - 1.0 / y.size)
        n_t = int(mask.sum())
        cells.append(CellSpread((str(k),), comp, n_t, rho, True))
    run = [t] if scope == "model" else []
    choices = list(range(LEVELS, n_claims + 1, LEVELS))
    at_least = [n for n in choices if n >= min_claims]
    b = _cheapest(cells, gen, judge, margin * target, at_least, run)
    # the first look's level instead of 95%: the same search at a target scaled by z95 / zk
    zk = z_of(look_level(looks, 1, planned_first=True))
    # a first look at half the claims at most, so the looks after it can double its claims
    # (room for the planner's error and the noise of the worst cell)
    first = [n for n in at_least if n <= n_claims // 2]
    c_ = _cheapest(cells, gen, judge, margin * target * z_of(0.95) / zk, first, run)
    proper = _cheapest(cells, gen, judge, target, choices, list(range(1, t + 1)) if run else [])
    if b is None or c_ is None:
        raise SystemExit("the planner finds no design within the bounds reaching the target")
    predicted = np.array(
        [
            z_of(0.95)
            * np.sqrt(
                design_variance(cell.components, b.claims, cell.templates, b.samples)
                + judged_share_variance(
                    answer_variance(cell.components),
                    cell.rho,
                    b.share,
                    b.claims * cell.templates * b.samples,
                )
            )
            for cell in cells
        ]
    )
    said = (
        "none within the bounds"
        if proper is None
        else f"{proper.claims} claims x {proper.templates or 'all'} templates x "
        f"{proper.samples} samples, share {proper.share:.2f}, predicted worst "
        f"{proper.worst_halfwidth:.4f}"
    )
    return Planned(b.claims, b.samples, b.share, c_.claims, c_.samples, c_.share, predicted, said)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--target", type=float, default=0.03)
    ap.add_argument("--looks", type=int, default=3)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--claims", type=int, default=80)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--scope", default="model", choices=["model", "model x framing"])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument(
        "--min-claims",
        type=int,
        default=MIN_CLAIMS_TO_STOP,
        help="claims a look needs before a model may stop (the run's: 10)",
    )
    ap.add_argument(
        "--margin",
        type=float,
        default=MARGIN,
        help="the first look where the predicted worst half-width is this share of the target",
    )
    ap.add_argument(
        "--korn-graubard",
        action="store_true",
        help="widen each interval to its union with Clopper-Pearson at the effective size",
    )
    args = ap.parse_args()
    WIDEN["korn_graubard"] = args.korn_graubard
    t0 = time.perf_counter()

    from deflectbench.benchmark import resolve_benchmark

    bench = resolve_benchmark(None)
    framings = [tp.framing for tp in bench.templates]
    gen, judge, models, unpriced = prices()
    world = make_world(models, framings, args.seed)
    n_t = len(framings)
    groups = [""] if args.scope == "model" else sorted(set(framings))
    columns: list[tuple[int, NDArray[np.bool_], int]] = []
    labels: list[tuple[str, str, str]] = []
    for mi, model in enumerate(models):
        for g in groups:
            mask = np.ones(n_t, bool) if g == "" else np.array([f == g for f in framings])
            for o in HEAD:
                columns.append((mi, mask, o))
                labels.append((model, g, OUTCOMES5[o]))
    truth = true_rates(world, columns)
    planned = plan_designs(
        world,
        columns,
        args.claims,
        args.samples,
        args.looks,
        args.target,
        gen,
        judge,
        args.min_claims,
        args.margin,
        args.scope,
    )
    rule = parse_until(
        f"halfwidth<={args.target} in {args.looks} looks from {planned.first_c} claims"
    )
    sizes = rule.sizes(args.claims)
    s_max = max(args.samples, planned.samples_b, planned.samples_c)
    col_model = np.array([mi for mi, _, _ in columns])
    n_cols = len(columns)
    # per design: cost, worst half-width, reached, covered and half-width per column
    cost = {d: np.zeros(args.reps) for d in "abc"}
    worst = {d: np.zeros(args.reps) for d in "abc"}
    reached = {d: np.zeros(args.reps, bool) for d in "abc"}
    covered = {d: np.zeros((args.reps, n_cols)) for d in "abc"}
    widths = {d: np.zeros((args.reps, n_cols)) for d in "abc"}
    stopped = Counter[int]()
    for rep in range(args.reps):
        rng = np.random.default_rng([args.seed, rep])
        _, cheap, j1, j2 = simulate(world, args.claims, s_max, rng)
        onehot = np.arange(N_OUT)
        y5 = ((j1[..., None] == onehot) + (j2[..., None] == onehot).astype(float)) / 2.0
        f5 = (cheap[..., None] == onehot).astype(float)
        mult = claim_multiplicities(args.claims, args.resamples, seed=rep)

        def record(d: str, lo: Array, hi: Array, spent: float, rep: int = rep) -> None:
            hw = (hi - lo) / 2.0
            cost[d][rep] = spent
            worst[d][rep] = float(np.nanmax(hw))
            widths[d][rep] = hw
            reached[d][rep] = bool(np.all(hw <= args.target))
            covered[d][rep] = (lo <= truth) & (truth <= hi)

        # (a) the paper's design: its samples per cell (the first of the simulated ones)
        y = item_matrix(y5[:, :, :, : args.samples], columns)  # (C, T*S, K)
        _, lo, hi = mean_ci(y, args.claims, mult, 0.95)
        record("a", lo, hi, args.claims * n_t * args.samples * float((gen + judge).sum()))

        # (b) the planner's cascaded design; (c) its design for the looks
        for d, n_c, n_s, share in (
            ("b", planned.claims_b, planned.samples_b, planned.share_b),
            ("c", args.claims, planned.samples_c, planned.share_c),
        ):
            per_item = n_s * n_t  # answers per claim per model
            y = item_matrix(y5[:, :, :, :n_s], columns)
            f = item_matrix(f5[:, :, :, :n_s], columns)
            picked = rng.random((len(models), args.claims, per_item)) < share  # per model
            lab_mask = picked[col_model].transpose(1, 2, 0)  # (C, items, K)
            h = np.where(lab_mask, y, np.nan)
            flat = (args.claims * per_item, n_cols)
            lab_terms = labelled_terms(h.reshape(flat), f.reshape(flat), np.ones(flat[0]))
            unl_terms = target_terms(f.reshape(flat), np.ones(flat[0]))
            lab = claim_sums({k: v.reshape(y.shape) for k, v in lab_terms.items()})
            unl = claim_sums({k: v.reshape(y.shape) for k, v in unl_terms.items()})
            n_lab = picked.sum(axis=2)  # (M, C) answers the expensive judges saw

            def spent(
                n_claims: NDArray[np.int64], n_lab: NDArray[np.int64] = n_lab, per: int = per_item
            ) -> float:
                """What each model's first ``n_claims[m]`` claims cost."""
                gens = float((n_claims * per * gen).sum())
                upto = np.arange(args.claims)[None, :] < n_claims[:, None]
                return gens + float(((n_lab * upto).sum(axis=1) * judge).sum())

            if d == "b":
                mult_b = claim_multiplicities(n_c, args.resamples, seed=rep)
                _, lo, hi = ppi_ci(lab, unl, n_c, mult_b, 0.95)
                record("b", lo, hi, spent(np.full(len(models), n_c)))
                continue
            # each model stops at its first look where all its cells reach the target
            open_ = np.ones(len(models), bool)
            at = np.full(len(models), args.claims)
            lo_c, hi_c = np.full(n_cols, np.nan), np.full(n_cols, np.nan)
            for k, n in enumerate(sizes, start=1):
                mult_k = claim_multiplicities(n, args.resamples, seed=rep)
                _, lo, hi = ppi_ci(lab, unl, n, mult_k, rule.levels[k - 1])
                met = (hi - lo) / 2.0 <= args.target
                for mi in np.flatnonzero(open_).tolist():
                    cols = col_model == mi
                    if k == len(sizes) or (n >= args.min_claims and met[cols].all()):
                        lo_c[cols], hi_c[cols] = lo[cols], hi[cols]
                        open_[mi], at[mi] = False, n
                        stopped[k] += 1
                if not open_.any():
                    break
            record("c", lo_c, hi_c, spent(at))

    a_cost = cost["a"].mean()
    print(
        f"planted: {len(models)} models x {args.claims} claims x {n_t} templates x "
        f"{args.samples} samples; target half-width {args.target} per {args.scope}, four "
        f"headline outcomes ({len(columns)} intervals); {args.reps} replications, "
        f"{args.resamples} claim-bootstrap draws; intervals: percentile"
        + (" U Korn-Graubard (Clopper-Pearson at the effective size)" if args.korn_graubard else "")
    )
    print(
        f"judges: cheap {100 * float(np.mean(CHEAP_ERROR)):.0f}% flips on average (by truth "
        f"{', '.join(f'{100 * e:.0f}%' for e in CHEAP_ERROR)}), free; expensive 2 x "
        f"{100 * EXPENSIVE_ERROR:.0f}%; prices per model: generation "
        f"${gen.mean():.5f}, both judges ${judge.mean():.5f} an answer"
        + (f" ({', '.join(unpriced)}: no bundled price, the others' mean)" if unpriced else "")
    )
    print(
        f"planner (analysis.plan's search on a pilot replication, every template run): "
        f"(b) {planned.claims_b} claims x {planned.samples_b} samples, share "
        f"{planned.share_b:.2f}; (c) {planned.samples_c} samples, share {planned.share_c:.2f}, "
        f"{args.looks} looks from {planned.first_c} claims (looks at "
        f"{', '.join(map(str, sizes))} claims, at levels "
        f"{', '.join(f'{100 * v:.4g}%' for v in rule.levels)}; a model stops from "
        f"{args.min_claims} claims); each planned at {args.margin:g} of the target"
    )
    print(
        f"deflectbench plan's choice on the same pilot (pilot_cells' components, any claims, "
        f"fewer templates allowed, no margin): {planned.proper}"
    )
    print()
    head = f"{'design (claims x templates x samples)':<52}{'cost $':>9}{'/(a)':>7}"
    print(head + f"{'reached':>9}{'max hw':>9}{'worst':>8}")
    names = {
        "a": f"(a) paper: {args.claims}x{n_t}x{args.samples}, 2 judges on all",
        "b": f"(b) cascade: {planned.claims_b}x{n_t}x{planned.samples_b}, 2 on "
        f"{100 * planned.share_b:.0f}%, PPI++",
        "c": f"(c) --until: <={args.claims}x{n_t}x{planned.samples_c}, 2 on "
        f"{100 * planned.share_c:.0f}%, {len(sizes)} looks",
    }
    for d in "abc":
        print(
            f"{names[d]:<52}{cost[d].mean():>9.2f}{cost[d].mean() / a_cost:>7.3f}"
            f"{reached[d].mean():>9.2f}{worst[d].mean():>9.4f}{worst[d].max():>8.4f}"
        )
    ratio = widths["b"].mean(axis=0) / planned.predicted
    print(
        f"(b) mean printed half-width / planner's prediction, per interval: mean "
        f"{ratio.mean():.3f}, range {ratio.min():.3f}-{ratio.max():.3f}"
    )
    print(f"(c) models stopped at look: {dict(sorted(stopped.items()))}")
    print()
    print("coverage of the printed intervals of the true consensus rate")
    print(f"{'model':<36}{'group':<20}{'outcome':<20}{'true':>7}{'(a)':>7}{'(b)':>7}{'(c)':>7}")
    for col, (model, g, name) in enumerate(labels):
        cells = "".join(f"{covered[d][:, col].mean():>7.3f}" for d in "abc")
        print(f"{model:<36}{g or '-':<20}{name:<20}{truth[col]:>7.4f}{cells}")
    lows = {d: float(covered[d].mean(axis=0).min()) for d in "abc"}
    print(
        "lowest coverage: "
        + ", ".join(f"({d}) {lows[d]:.3f}" for d in "abc")
        + "; overall: "
        + ", ".join(f"({d}) {covered[d].mean():.3f}" for d in "abc")
    )
    ok = cost["c"].mean() <= 0.30 * a_cost and min(lows.values()) >= 0.90
    print(
        f"target ((c) <= 30% of (a), every coverage >= 0.90): {'met' if ok else 'NOT met'}; "
        f"{time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
