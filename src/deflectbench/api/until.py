"""``run --until``: the run in rounds, a look after each, until every model's intervals reach
the target or the design is exhausted (:mod:`deflectbench.analysis.sequential`; docs/until.md).

Each round is an ordinary run (:func:`deflectbench.execute.execute`) of the claims run so far,
in the rule's seeded order, with every template of a claim and every sample of a cell, for the
models whose cells have not met the target yet; the run judges each answer as it streams, so
a round ends judged. Its run row records the look (``config["extra"]["until"]``: the rule,
the look, the claims, each look's level) and, once checked, whether the target was met.
Resuming (the same rule, a tighter target, or none) repeats no request: a round re-run finds
its cells stored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from deflectbench.errors import ConfigError

if TYPE_CHECKING:
    from deflectbench.analysis.sequential import Look, UntilRule
    from deflectbench.config import RunPlan
    from deflectbench.execute import RunReport
    from deflectbench.pipeline import Board, StopCheck
    from deflectbench.results.until import UntilOutcome
    from deflectbench.store import Store

__all__ = ["Rounds", "check_until", "execute_run", "run_rounds"]


def check_until(config: Any) -> UntilRule | None:
    """The rule of a run's configuration (None: no ``until``), refused (ConfigError) where
    rounds cannot run: with batches (a round would wait up to a day), with a part
    (``--shard``: claims split by hash, not by round), with cascaded judging (its expensive
    judges judge after the run, so a look would find nothing scored: not supported yet)."""
    if config.until is None:
        return None
    # only now: the analysis (pandas) must not load before a plain run's first request
    from deflectbench.analysis.sequential import parse_until

    rule = parse_until(config.until)
    cascade = getattr(config, "cheap_judge", None)
    flags = ((config.batch, "--batch"), (config.shard, "--shard"), (cascade, "--cheap-judge"))
    for given, flag in flags:
        if given:
            raise ConfigError(
                f"--until with {flag}: not supported; run --until without it (docs/until.md)"
            )
    return rule


#: A run's set-up: (benchmark, plan, models, options).
SetUp = tuple[Any, "RunPlan", Any, Any]


@dataclass(frozen=True)
class Rounds:
    """What the rounds need from the run: its set-up, a fresh one for each later round (a
    round closes its models at its end), and the run's hooks."""

    first: SetUp
    prepare: Callable[[], SetUp]
    watch: Callable[[Board], None] | None
    should_stop: StopCheck | None


async def execute_run(
    store: Store, rule: UntilRule | None, rounds: Rounds
) -> tuple[RunReport, RunPlan, UntilOutcome | None]:
    """The run: one :func:`~deflectbench.execute.execute` of its plan, or with a rule its
    rounds (:func:`run_rounds`)."""
    from deflectbench.execute import execute

    if rule is not None:
        return await run_rounds(store, rule, rounds)
    benchmark, plan, models, options = rounds.first
    report = await execute(
        store,
        benchmark,
        plan,
        models,
        options,
        watch=rounds.watch,
        should_stop=rounds.should_stop,
    )
    return report, plan, None


async def run_rounds(
    store: Store, rule: UntilRule, rounds: Rounds
) -> tuple[RunReport, RunPlan, UntilOutcome]:
    """Every round until the rule stops the run: the last round's report (its spending the
    rounds' total), its plan and what the looks found."""
    from deflectbench.analysis.sequential import claim_order
    from deflectbench.benchmark.control_replies import CONTROL_MODEL
    from deflectbench.execute import execute
    from deflectbench.results.until import UntilOutcome

    benchmark, plan = rounds.first[0], rounds.first[1]
    level = {c.claim_id: c.level for c in benchmark.claims}
    order = claim_order(plan.claim_ids, [level[c] for c in plan.claim_ids], plan.seed)
    sizes = rule.sizes(len(order))
    order_key = hashlib.sha256(",".join(order).encode()).hexdigest()[:16]
    _check_declared(store, benchmark.key, rule, sizes, order_key)
    stopped: dict[str, int | None] = {m: None for m in plan.models if m != CONTROL_MODEL}
    looks: list[Look] = []
    spent = 0.0
    report: RunReport | None = None
    sub = plan
    for k, n in enumerate(sizes, start=1):
        benchmark, plan, models, options = rounds.first if k == 1 else rounds.prepare()
        chosen = set(order[:n])
        open_models = tuple(m for m in plan.models if stopped.get(m) is None)
        record = {
            **rule.to_json(),
            "look": k,
            "claims": n,
            "sizes": list(sizes),
            "order": order_key,
        }
        sub = replace(
            plan,
            models=open_models,
            claim_ids=tuple(c for c in plan.claim_ids if c in chosen),
            extra={**plan.extra, "until": record},
        )
        report = await execute(
            store,
            benchmark,
            sub,
            {m: models[m] for m in (*open_models, *plan.judges) if m in models},
            options,
            watch=rounds.watch if k == 1 else None,
            should_stop=rounds.should_stop,
        )
        spent += report.spent_usd
        if report.stopped_early:
            break
        look = _look(store, benchmark, sub, rule, k, n, report)
        looks.append(look)
        for model in open_models:
            if model in stopped and _model_met(look, model):
                stopped[model] = k
        _mark(store, report.run_id, look.met, stopped)
        if all(v is not None for v in stopped.values()):
            break
    assert report is not None  # sizes holds one look at least
    report.spent_usd = spent
    return report, sub, UntilOutcome(rule, sizes, tuple(looks), stopped)


def _look(
    store: Store,
    benchmark: Any,
    plan: RunPlan,
    rule: UntilRule,
    index: int,
    claims: int,
    report: RunReport,
) -> Look:
    """The look on the store's scored answers of the round's models, claims and templates,
    judged by the run's judges."""
    from deflectbench.analysis.frames.scored import scored_table
    from deflectbench.analysis.sequential import check_look

    scored = scored_table(store, benchmark, judges=list(plan.judges))
    if len(scored):
        scored = scored[
            scored["model"].isin(list(plan.models))
            & scored["claim_id"].isin(list(plan.claim_ids))
            & scored["prompt_id"].isin(list(plan.prompt_ids))
        ]
    return check_look(scored, rule, index=index, claims=claims, seed=plan.seed)


def _model_met(look: Look, model: str) -> bool:
    """Every cell of ``model`` at this look met the target (a model with no cell has not)."""
    mine = [c for c in look.cells if c.key[0] == model]
    return bool(mine) and all(c.met(look.rule.halfwidth) for c in mine)


def _mark(store: Store, run_id: str, met: bool, stopped: dict[str, int | None]) -> None:
    """The look's outcome in its run row: whether every open model met the target, and the
    look each model stopped at so far."""
    row = store.conn.execute("SELECT config_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        return
    config = json.loads(row[0])
    until = config.setdefault("extra", {}).setdefault("until", {})
    until["met"] = met
    until["stopped"] = dict(stopped)
    with store.transaction():
        store.conn.execute(
            "UPDATE runs SET config_json = ? WHERE run_id = ?",
            (json.dumps(config, sort_keys=True), run_id),
        )


def _check_declared(
    store: Store, benchmark: str, rule: UntilRule, sizes: tuple[int, ...], order: str
) -> None:
    """Refuse looks other than those already declared in this store for this pack: the
    Bonferroni levels hold only for looks fixed before the data (a tighter target or another
    measure is fine; other looks, another schedule or another claim order are not)."""
    for run in store.runs():
        until = ((run.get("config") or {}).get("extra") or {}).get("until")
        if run.get("benchmark") != benchmark or not isinstance(until, dict):
            continue
        if until.get("order", order) != order:
            raise ConfigError(
                "this results file was run with --until on another order of claims (another "
                "seed or other claims); looks are declared once: keep the seed and the claims, "
                "or run without --until"
            )
        if until.get("looks") != rule.looks or until.get("sizes") != list(sizes):
            raise ConfigError(
                f"this results file was run with --until in {until.get('looks')} looks at "
                f"{until.get('sizes')} claims; looks are declared once: keep the same looks "
                f"(`in {until.get('looks')} looks`"
                + (f" from {until['first']} claims" if until.get("first") else "")
                + "), or run without --until"
            )
