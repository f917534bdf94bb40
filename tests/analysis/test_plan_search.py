"""The planner's target grammar, and its search against a plain brute force over the same
designs: the design it returns reaches the target and nothing cheaper does; the paper's
design is the paper's counts, priced from the price table by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deflectbench.analysis.plan import (
    MEASURES,
    CellSpread,
    Components,
    make_plan,
    parse_target,
)
from deflectbench.analysis.plan.search import SHARES, PerCall, cheapest
from deflectbench.benchmark import default_benchmark
from deflectbench.cost import Price
from deflectbench.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "measure", "h", "scope"),
    [
        ("refusal +-3pp per model x framing", "refusal", 0.03, "model x framing"),
        ("Refusal ± 2.5 pp per model", "refusal", 0.025, "model"),
        (
            "clean_compliance +/-4points per model X framing",
            "clean_compliance",
            0.04,
            "model x framing",
        ),
        ("wa_present +-1pp per model×framing", "WA_present", 0.01, "model x framing"),
    ],
)
def test_target_grammar_reads_the_accepted_forms(text, measure, h, scope):
    t = parse_target(text)
    assert (t.measure, t.scope) == (measure, scope)
    assert t.halfwidth == pytest.approx(h)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("refusals +-3pp per model", "unknown measure 'refusals'"),
        ("refusal +-3pp per claim", "unknown scope 'claim'"),
        ("refusal +-0pp per model", "out of range"),
        ("refusal 3pp per model", "cannot read the target"),
        ("", "cannot read the target"),
    ],
)
def test_target_grammar_refuses_in_one_line_listing_the_forms(text, names):
    with pytest.raises(ConfigError) as exc:
        parse_target(text)
    message = str(exc.value)
    assert names in message and "\n" not in message
    assert "'model x framing'" in message and all(m in message for m in MEASURES)


def _cells(rng, n):
    return [
        CellSpread(
            (f"m{i}",),
            Components(
                float(rng.uniform(0, 0.01)),
                float(rng.uniform(0, 0.03)),
                float(rng.uniform(0.05, 0.2)),
                0.3,
                80,
                3,
                5.0,
                float(rng.uniform(0, 0.05)),
            ),
            3,
            float(rng.uniform(0, 0.95)),
            False,
        )
        for i in range(n)
    ]


def _plain_halfwidth(cell, c, t, s, r):
    comp = cell.components
    var = comp.claim / c + comp.claim_template / (c * t) + comp.within / (c * t * s)
    var += (1 - t / cell.templates) * comp.template_spread / t
    total = comp.claim + comp.claim_template + comp.within
    var += (1 - r) * (1 - cell.rho**2) * total / (r * c * t * s)
    return 1.959963984540054 * math.sqrt(var)


@pytest.mark.parametrize("seed", range(4))
def test_search_equals_a_brute_force_over_the_same_designs(seed):
    rng = np.random.default_rng(seed)
    cells = _cells(rng, 3)
    calls = [
        PerCall("model", "openai/m", 300, 400),
        PerCall("judge", "anthropic/j", 900, 90, "openai/m"),
    ]
    prices = {"openai/m": Price(2.0, 8.0), "anthropic/j": Price(1.0, 5.0)}
    gen_cost = (300 * 2.0 + 400 * 8.0) / 1e6
    judge_cost = (900 * 1.0 + 90 * 5.0) / 1e6
    target = 0.04
    claims = [4 * k for k in range(1, 21)]
    got = cheapest(
        cells,
        calls,
        prices,
        target=target,
        claim_choices=claims,
        template_choices=[1, 2, 3],
        templates_run={1: 1, 2: 2, 3: 3},
        quantile=1.0,
        judges=["anthropic/j"],
    )
    best = None
    for t in (1, 2, 3):
        for c in claims:
            for s in range(1, 11):
                for r in SHARES:
                    if max(_plain_halfwidth(x, c, t, s, r) for x in cells) <= target:
                        n = c * t * s
                        rank = (n * (gen_cost + r * judge_cost), n, n * r)
                        if best is None or rank < best[0]:
                            best = (rank, (c, t, s, r))
    assert best is not None and got is not None
    assert (got.claims, got.templates, got.samples, got.share) == best[1]
    assert got.worst_halfwidth <= target
    assert got.price == pytest.approx(best[0][0])


def test_the_papers_design_is_its_counts_priced_by_hand():
    b = default_benchmark()
    judges = ["anthropic/claude-haiku-4-5-20251001", "openai/gpt-5.4-mini"]
    plan = make_plan(
        parse_target("refusal +-3pp per model x framing"),
        b,
        pilot=None,
        models=["openai/gpt-5.5"],
        judges=judges,
        prices={},
    )
    paper = plan.paper
    assert (paper.claims, paper.templates_run, paper.samples, paper.share) == (80, 15, 5, 1.0)
    assert paper.generations == 80 * 15 * 5
    assert dict(paper.judge_calls) == dict.fromkeys(judges, 6000)
    # by hand: the bundled table's prices and the dry run's tokens
    from deflectbench.cost import estimate_tokens, price_for

    calls = {(c.role, c.name): c for c in plan.calls}
    gen = calls[("model", "openai/gpt-5.5")]
    prompts = b.prompts()
    assert gen.input_tokens == pytest.approx(
        sum(estimate_tokens(p) + 8 for _, _, p in prompts) / len(prompts)
    )
    assert gen.output_tokens == 400  # a typical reply: no pilot
    want_openai = 6000 * price_for("openai/gpt-5.5").cost(gen.input_tokens, 400)
    j = calls[("judge", "openai/gpt-5.4-mini")]
    want_openai += 6000 * price_for("openai/gpt-5.4-mini").cost(j.input_tokens, 90)
    assert paper.price_by_provider["openai"] == pytest.approx(want_openai)
    assert paper.price is not None  # every part priced


def test_unpriced_models_are_unknown_never_free():
    plan = make_plan(
        parse_target("refusal +-5pp per model"),
        default_benchmark(),
        pilot=None,
        models=["openai/gpt-5.5", "nobody/unknown-model"],
        judges=["openai/gpt-5.4-mini"],
        prices={},
    )
    assert plan.paper.price is None and "nobody/unknown-model" in plan.paper.unpriced
    assert plan.paper.price_by_provider["nobody"] is None


def test_per_framing_cells_keep_each_framings_templates_and_claims_stay_balanced():
    plan = make_plan(
        parse_target("refusal +-6pp per model x framing"),
        default_benchmark(),
        pilot=None,
        models=["openai/gpt-5.5"],
        judges=["openai/gpt-5.4-mini"],
        prices={},
    )
    per = {c.key[1]: c.templates for c in plan.cells}
    assert per == {
        "direct": 3,
        "political": 3,
        "coach": 3,
        "manipulation": 3,
        "choose": 1,
        "implicit_neutral": 1,
        "implicit_political": 1,
    }
    assert plan.best is not None and plan.best.claims % 4 == 0
    assert plan.best.templates is None and plan.best.templates_run == 15


def test_the_planners_token_defaults_are_the_pipelines():
    """The analysis may not import the pipeline, so the api hands its constants in; the
    defaults stay equal to them."""
    from deflectbench.analysis.plan.planner import Tokens
    from deflectbench.pipeline import JUDGE_OUTPUT_TOKENS, TYPICAL_OUTPUT_TOKENS

    assert Tokens() == Tokens(TYPICAL_OUTPUT_TOKENS, JUDGE_OUTPUT_TOKENS)
