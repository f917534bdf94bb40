"""The planner: a target, a pilot (or the paper's spreads), the models and judges to price ->
the cheapest design reaching the target beside the paper's full design (:class:`Plan`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deflectbench.analysis.plan.search import MAX_SAMPLES, Design, PerCall, cheapest, design_of
from deflectbench.analysis.plan.spreads import (
    ASSUMED_RHO,
    CHEAP_JUDGE,
    CellSpread,
    paper_cells,
    pilot_cells,
)
from deflectbench.analysis.plan.target import Target
from deflectbench.benchmark import Benchmark
from deflectbench.cost import Price, estimate_tokens
from deflectbench.errors import ConfigError
from deflectbench.store import Store

__all__ = ["Plan", "Tokens", "make_plan", "paper_models", "priced_name"]

#: The release's model names as the providers' API names (the release gives bare names).
_RELEASE_PROVIDERS = {
    "claude": "anthropic",
    "gpt": "openai",
    "deepseek": "deepseek",
    "grok": "xai",
    "gemini": "gemini",
}


def priced_name(name: str) -> str:
    """A model as the price table names it: a release's bare name (``gpt-5.5``, as imported
    stores hold it) with its provider (``openai/gpt-5.5``); any other name as it is."""
    if "/" in name:
        return name
    provider = next((p for k, p in _RELEASE_PROVIDERS.items() if name.startswith(k)), None)
    return f"{provider}/{name}" if provider else name


def paper_models(benchmark: Benchmark) -> list[str]:
    """The paper's models as ``provider/model`` (a name of no known provider stays bare)."""
    return [priced_name(name) for name in benchmark.models_in_release]


@dataclass(frozen=True)
class Tokens:
    """The pipeline's expected output tokens (``deflectbench.pipeline``'s
    TYPICAL_OUTPUT_TOKENS and JUDGE_OUTPUT_TOKENS, handed in: the analysis does not import the
    pipeline): a reply when the pilot has none of a model's, and a judge's JSON verdict."""

    typical_reply: int = 400
    verdict: int = 90


@dataclass(frozen=True)
class Plan:
    """What the planner found: the ``target``; where the spreads come from (``source``);
    each cell's components; the cheapest design reaching the target (None: none within the
    bounds does) and the paper's full design, priced alike; the expected tokens each price
    is from; the notes (cells left out, assumptions)."""

    target: Target
    source: str
    quantile: float
    cells: tuple[CellSpread, ...]
    best: Design | None
    paper: Design
    #: The narrowest design the bounds allow (every claim and template, 10 samples, all judged).
    narrowest: Design
    calls: tuple[PerCall, ...]
    judges: tuple[str, ...]
    cheap_judge: str
    notes: tuple[str, ...]
    bounds: Mapping[str, object]


def _templates_per_framing(benchmark: Benchmark) -> dict[str, int]:
    return dict(Counter(t.framing for t in benchmark.templates))


def _calls(
    benchmark: Benchmark,
    models: Sequence[str],
    judges: Sequence[str],
    pilot: Store | None,
    tokens: Tokens,
) -> list[PerCall]:
    """Expected tokens per generation and per judgment, as the dry run expects them: prompts
    at about 4 characters a token (+8), a reply the pilot's mean length for its model, else a
    typical reply; a judgment the rubric, the claim and the reply in, a JSON verdict out."""
    prompts = benchmark.prompts()
    tokens_in = sum(estimate_tokens(p) + 8 for _, _, p in prompts) / max(len(prompts), 1)
    rubric = estimate_tokens(benchmark.rubric.system + benchmark.rubric.user_template)
    claim = sum(estimate_tokens(c.text) for c in benchmark.claims) / max(len(benchmark.claims), 1)
    calls: list[PerCall] = []
    for model in models:
        mean = pilot.mean_output_tokens(model) if pilot is not None else None
        out = mean if mean else float(tokens.typical_reply)
        priced = priced_name(model)
        calls.append(PerCall("model", priced, tokens_in, out))
        for judge in judges:
            calls.append(PerCall("judge", judge, rubric + claim + out, tokens.verdict, priced))
    return calls


def _claim_choices(benchmark: Benchmark) -> list[int]:
    """Claim counts that keep the controversy levels balanced: multiples of the levels' count
    up to the benchmark's claims (the smallest level's claims times the levels)."""
    by_level = Counter(c.level for c in benchmark.claims)
    levels = len(by_level)
    return [levels * k for k in range(1, min(by_level.values()) + 1)]


def make_plan(
    target: Target,
    benchmark: Benchmark,
    *,
    pilot: Store | None,
    models: Sequence[str] | None,
    judges: Sequence[str],
    prices: Mapping[str, Price],
    quantile: float = 1.0,
    rho: float | None = None,
    pilot_name: str = "",
    tokens: Tokens = Tokens(),
) -> Plan:
    """The cheapest design reaching ``target`` and the paper's (see :mod:`.search`)."""
    if not 0.0 < quantile <= 1.0:
        raise ConfigError(f"--quantile must be above 0 and at most 1, not {quantile}")
    if rho is not None and not -1.0 <= rho <= 1.0:
        raise ConfigError(f"--rho must lie between -1 and 1, not {rho}")
    judges = [j for j in dict.fromkeys(judges) if j != CHEAP_JUDGE]
    if not judges:
        raise ConfigError(
            "no expensive judge to plan for: name one or more with --judge provider/model "
            f"({CHEAP_JUDGE} is the cheap judge every answer gets)"
        )
    per_framing = _templates_per_framing(benchmark)
    notes: list[str] = []
    if pilot is None:
        names = list(models) if models else paper_models(benchmark)
        cells = paper_cells(target, names, per_framing, ASSUMED_RHO if rho is None else rho)
        source = "the paper's published spreads (assumed components: docs/plan.md)"
        notes.append(
            "no pilot: the components are the paper's published spreads, pessimistic where "
            "it is silent (docs/plan.md); a pilot run (--pilot STORE) measures them"
        )
    else:
        from deflectbench.analysis.frames.scored import (
            generation_frame,
            in_benchmark,
            judges_of,
            judgment_frame,
            scored_from_frames,
        )

        gens, judg = generation_frame(pilot), judgment_frame(pilot)
        stored = judges_of(judg, in_benchmark(gens, benchmark))
        expensive = [j for j in stored if j != CHEAP_JUDGE] or None
        scored = scored_from_frames(gens, judg, benchmark, judges=expensive)
        if not len(scored):
            raise ConfigError(
                f"the pilot {pilot_name} holds no scored generations of {benchmark.key}: "
                "run and judge a pilot first, or plan from the paper's spreads (no --pilot)"
            )
        if models:
            scored = scored[scored["model"].isin(list(models))]
            if not len(scored):
                raise ConfigError(
                    f"the pilot {pilot_name} holds none of the models {', '.join(models)}"
                )
        cheap = None
        if CHEAP_JUDGE in stored and expensive:
            cheap = scored_from_frames(gens, judg, benchmark, consensus=f"judge:{CHEAP_JUDGE}")
        cells_list, skipped = pilot_cells(scored, cheap, target, per_framing, rho)
        if not cells_list:
            raise ConfigError(
                f"no cell of the pilot {pilot_name} has the data the components need "
                f"({skipped[0] if skipped else 'none'}): run at least 2 claims and 2 samples"
            )
        cells = cells_list
        notes.extend(f"left out (too few data): {s}" for s in skipped)
        names = sorted(scored["model"].unique().tolist())
        source = f"the pilot {pilot_name} (method-of-moments components per cell)"
    if not any(c.rho_measured for c in cells):
        value = ASSUMED_RHO if rho is None else rho
        notes.append(
            f"the cheap judge's correlation with the expensive judges' consensus is "
            f"{'assumed' if rho is None else 'given'} to be {value:g} (no pilot verdicts of "
            f"{CHEAP_JUDGE} beside theirs{'' if rho is None else ', or --rho'})"
        )
    calls = _calls(benchmark, names, judges, pilot, tokens)
    total_templates = len(benchmark.templates)
    if target.scope == "model":
        template_choices: list[int | None] = list(range(1, total_templates + 1))
        run_of: dict[int | None, int] = {t: t for t in template_choices if t is not None}
    else:
        template_choices = [None]
        run_of = {None: total_templates}
    claim_choices = _claim_choices(benchmark)
    best = cheapest(
        cells,
        calls,
        prices,
        target=target.halfwidth,
        claim_choices=claim_choices,
        template_choices=template_choices,
        templates_run=run_of,
        quantile=quantile,
        judges=judges,
    )
    paper = design_of(
        cells,
        calls,
        prices,
        claims=len(benchmark.claims),
        templates=None if target.scope != "model" else total_templates,
        templates_run=total_templates,
        samples=benchmark.runs_per_cell,
        share=1.0,
        quantile=quantile,
        judges=judges,
    )
    narrowest = design_of(
        cells,
        calls,
        prices,
        claims=claim_choices[-1],
        templates=None if target.scope != "model" else total_templates,
        templates_run=total_templates,
        samples=MAX_SAMPLES,
        share=1.0,
        quantile=quantile,
        judges=judges,
    )
    bounds = {
        "claims": claim_choices,
        "templates": "each framing's own" if target.scope != "model" else [1, total_templates],
        "samples": [1, MAX_SAMPLES],
        "share": [0.05, 1.0],
    }
    return Plan(
        target,
        source,
        quantile,
        tuple(cells),
        best,
        paper,
        narrowest,
        tuple(calls),
        tuple(judges),
        CHEAP_JUDGE,
        tuple(notes),
        bounds,
    )
