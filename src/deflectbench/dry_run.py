"""The dry run: what a run would ask of each model and judge, and what it would cost, before
anything is sent (and without writing to the store).

JUDGE_OUTPUT_TOKENS (a judge's JSON verdict) and TYPICAL_OUTPUT_TOKENS (a generation when the
store has none of the model's yet) are the pipeline's, which paces by them too; the condition
a model would run under is found as :func:`deflectbench.execute.execute` registers it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Protocol

from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.definition import CONVERSATION_PREAMBLE
from deflectbench.conditions import Settings
from deflectbench.config import RunPlan
from deflectbench.cost import Price, estimate_tokens, price_for
from deflectbench.models.base import Model
from deflectbench.pipeline import JUDGE_OUTPUT_TOKENS, TYPICAL_OUTPUT_TOKENS, condition_settings
from deflectbench.pipeline.batches import batch_api
from deflectbench.records import PendingGeneration
from deflectbench.store import Store

if TYPE_CHECKING:
    import pandas as pd


def plan_settings(benchmark: Benchmark, plan: RunPlan, model: Model) -> Settings:
    """The settings a plan runs ``model`` under: what its condition is registered by."""
    return condition_settings(
        benchmark, model, seed=plan.seed, max_tokens=plan.max_tokens, temperature=plan.temperature
    )


def planned_condition(store: Store, model: str, settings: Settings, label: str | None) -> str:
    """The label a run with these settings will use, found without writing (the dry run), and
    refused as the run refuses it (ConditionError: a label naming other settings, settings
    stored under another label): the store's one check, :meth:`Store.checked_condition`."""
    return store.checked_condition(model, settings, label)[0]


class DryRunOptions(Protocol):
    """What a dry run reads of a run's options (:class:`deflectbench.execute.RunOptions` has it)."""

    @property
    def retry_errors(self) -> bool: ...
    @property
    def prices(self) -> Mapping[str, Price]: ...
    @property
    def label(self) -> str | None: ...
    @property
    def batch(self) -> bool: ...


@dataclass(frozen=True)
class DryRun:
    """A dry run's options, when there is no run's to give."""

    #: Cells whose stored row is an error count as missing.
    retry_errors: bool = False
    prices: Mapping[str, Price] = field(default_factory=dict)
    #: The condition's label (None: derived from the settings).
    label: str | None = None
    #: Models and judges with a batch API are priced at their batch price.
    batch: bool = False


@dataclass(frozen=True)
class EstimateRow:
    """What one model or judge will be asked, before anything is sent."""

    role: str  # "model" or "judge"
    name: str
    done: int
    requests: int
    input_tokens: int
    output_tokens: int
    output_tokens_max: int
    cost_usd: float | None
    cost_usd_max: float | None
    #: Where the expected output tokens come from (the upper bound is always max_tokens).
    output_from: str = ""


@dataclass(frozen=True)
class Estimate:
    """A dry run: each model's and judge's rows, over ``units`` (cells per model, or the
    stored answers of the pack), the budget, and the refusal the run would meet (an unpriced
    model or judge under a budget), raised by :meth:`check` once the table is shown; the
    warnings the run would give (:attr:`warnings`): API keys not set (the run's own message),
    an expected cost over ``max_cost``."""

    rows: tuple[EstimateRow, ...]
    units: int
    max_cost: float | None = None
    of: str = "cells per model"
    refusal: Exception | None = None
    #: The run's refusal for API keys that are not set (the dry run sends nothing, so it runs).
    missing_keys: str | None = None
    #: What the store has spent already: the run's budget counts it as spent.
    spent_usd: float = 0.0
    #: What a part (``--shard``) does to the providers' limits (the run says it first too).
    limits: tuple[str, ...] = ()

    @property
    def expected_usd(self) -> float:
        """The expected cost of the priced rows (unpriced ones count nothing)."""
        return sum(r.cost_usd or 0.0 for r in self.rows)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the run would meet that the table does not say: keys not set, and a budget
        the expected cost runs past (the run would stop there, cells left missing)."""
        out: list[str] = []
        if self.missing_keys:
            out.append(f"the run would be refused: {self.missing_keys} (this dry run sent nothing)")
        if self.max_cost is not None:
            spent = (
                f" plus {self.spent_usd:,.2f} USD this store has spent" if self.spent_usd else ""
            )
            if self.expected_usd + self.spent_usd > self.max_cost:
                out.append(
                    f"expected cost {self.expected_usd:,.2f} USD{spent} exceeds --max-cost "
                    f"{self.max_cost:,.2f} USD: the run would stop at the budget with cells "
                    "missing; raise --max-cost, or run fewer claims, templates or samples"
                )
        return tuple(out)

    @property
    def sources(self) -> tuple[str, ...]:
        """Where each row's expected output tokens come from, one line per source."""
        by: dict[str, list[str]] = {}
        for r in self.rows:
            if r.output_from and r.requests:
                by.setdefault(r.output_from, []).append(r.name)
        return tuple(f"expected output tokens of {', '.join(n)}: {s}" for s, n in by.items())

    @property
    def self_hosted(self) -> frozenset[str]:
        """The rows' names served by the user's own server (no API price): openai-compatible/,
        or a [providers.NAME] section that is not one of the API providers DeflectBench knows."""
        from deflectbench.models.providers import PROVIDERS

        return frozenset(
            r.name
            for r in self.rows
            if (p := r.name.partition("/")[0]) == "openai-compatible" or p not in PROVIDERS
        )

    @property
    def table(self) -> pd.DataFrame:
        """The rows as a DataFrame (role, name, done, requests, tokens, cost)."""
        import pandas as pd

        return pd.DataFrame(
            [asdict(r) for r in self.rows], columns=[f.name for f in fields(EstimateRow)]
        )

    def check(self) -> None:
        """Raise what the run would be refused for (nothing when it would go)."""
        if self.refusal is not None:
            raise self.refusal


def estimate(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    options: DryRunOptions = DryRun(),
) -> list[EstimateRow]:
    """Requests, tokens and cost per model and judge for what is still missing; a condition
    label the run would refuse is refused here too (ConditionError).

    Input tokens are estimated from the prompt text (about 4 characters a token); output tokens
    from this model's stored mean if it has generations already, else a typical length capped
    by ``max_tokens``; the upper bound assumes every reply runs to ``max_tokens``. With
    ``batch``, models whose provider has a batch API are priced at the table's batch price.
    ``options``: a :class:`DryRun`, or a run's options.
    """
    from deflectbench.judging.judges import is_rule_based

    retry_errors, prices, label, batch = (
        options.retry_errors,
        options.prices,
        options.label,
        options.batch,
    )

    def price_of(name: str) -> Price | None:
        price = price_for(name, prices)
        model = models.get(name)
        if price is not None and batch and model is not None and batch_api(model) is not None:
            return price.in_batch()
        return price

    rows: list[EstimateRow] = []
    cells = plan.cells
    new_responses: list[tuple[str, int]] = []  # (claim_id, expected output tokens) to judge
    for name in plan.models:
        model = models[name]
        condition = planned_condition(store, name, plan_settings(benchmark, plan, model), label)
        todo = store.missing_cells(
            benchmark.key, name, cells, retry_errors=retry_errors, condition=condition
        )
        max_tokens = plan.max_tokens or model.default_max_tokens
        mean_out = store.mean_output_tokens(name)
        expected_out = round(mean_out) if mean_out else min(TYPICAL_OUTPUT_TOKENS, max_tokens)
        source = (
            f"the mean of its stored replies ({expected_out:,} a reply)"
            if mean_out
            else f"a typical reply ({expected_out:,} tokens: none stored yet)"
        )
        tokens_in = sum(estimate_tokens(benchmark.render(c, p)) + 8 for c, p, _ in todo)
        price = price_of(name)
        rows.append(
            EstimateRow(
                "model",
                name,
                len(cells) - len(todo),
                len(todo),
                tokens_in,
                expected_out * len(todo),
                max_tokens * len(todo),
                None if price is None else price.cost(tokens_in, expected_out * len(todo)),
                None if price is None else price.cost(tokens_in, max_tokens * len(todo)),
                source,
            )
        )
        new_responses.extend((c, expected_out) for c, _, _ in todo)
    rubric_tokens = estimate_tokens(benchmark.rubric.system + benchmark.rubric.user_template)
    for name in plan.judges:
        pending = store.pending_judgments(
            name, benchmark=benchmark.key, models=plan.models, retry_errors=retry_errors
        )
        judged = store.judged_count(name, benchmark.key, plan.models)
        tokens_in = sum(judge_input_tokens(benchmark, p) for p in pending)
        tokens_in += sum(
            rubric_tokens + estimate_tokens(benchmark.claim(c).text) + out
            for c, out in new_responses
        )
        n = len(pending) + len(new_responses)
        price = price_of(name)
        cost = None if price is None else price.cost(tokens_in, JUDGE_OUTPUT_TOKENS * n)
        rows.append(
            EstimateRow(
                "judge",
                name,
                judged,
                n,
                tokens_in,
                JUDGE_OUTPUT_TOKENS * n,
                JUDGE_OUTPUT_TOKENS * n,
                cost,
                cost,
                "" if is_rule_based(name) else JUDGE_VERDICT,
            )
        )
    return rows


#: Where a judge's expected output tokens come from.
JUDGE_VERDICT = f"a JSON verdict ({JUDGE_OUTPUT_TOKENS} tokens a request)"


def judge_input_tokens(benchmark: Benchmark, p: PendingGeneration) -> int:
    """A judge request's input tokens, estimated: the rubric, the claim, the reply and, for a
    later turn of a multi-turn pack, the conversation it is shown with."""
    rubric = benchmark.rubric
    tokens = estimate_tokens(rubric.system + rubric.user_template)
    tokens += estimate_tokens(benchmark.claim(p.claim_id).text + p.response)
    if p.conversation:
        tokens += estimate_tokens(CONVERSATION_PREAMBLE + "".join(u.text for u in p.conversation))
    return tokens


def judge_estimate(
    store: Store,
    benchmark: Benchmark,
    judges: Sequence[str],
    options: DryRunOptions = DryRun(),
    *,
    self_consistency: float | None = None,
    seed: int = 0,
) -> list[EstimateRow]:
    """``judge --dry-run``: per judge, the stored answers it has not judged, then (with
    ``self_consistency``) the seeded sample it would re-judge: the answers every judge will
    have a verdict on once these are judged, less those re-judged under ``seed`` already.
    Each re-judgment's upper bound is the judge's ``max_tokens`` of output, as the budget
    reserves it."""
    from deflectbench.judging.judges import ModelJudge
    from deflectbench.pipeline.self_consistency import (
        consistency_sample,
        judged_by_all,
        rejudged_answers,
        still_to_rejudge,
    )

    rows: list[EstimateRow] = []
    pending_ids: set[int] = set()
    for name in judges:
        pending = store.pending_judgments(
            name, benchmark=benchmark.key, retry_errors=options.retry_errors
        )
        pending_ids.update(p.gen_id for p in pending)
        tokens_in = sum(judge_input_tokens(benchmark, p) for p in pending)
        out = JUDGE_OUTPUT_TOKENS * len(pending)
        price = price_for(name, options.prices)
        cost = None if price is None else price.cost(tokens_in, out)
        done = store.conn.execute(
            "SELECT count(*) FROM judgments j JOIN generations g ON g.gen_id = j.gen_id "
            "WHERE j.judge = ? AND j.error IS NULL AND g.benchmark = ?",
            (name, benchmark.key),
        ).fetchone()[0]
        rows.append(EstimateRow("judge", name, done, len(pending), tokens_in, out, out, cost, cost))
    if self_consistency is None:
        return rows
    answers = set(judged_by_all(store, benchmark, list(judges))) | pending_ids
    sample = consistency_sample(sorted(answers), self_consistency, seed)
    texts = rejudged_answers(store, sample)
    for name in judges:
        todo = [texts[g] for g in still_to_rejudge(store, name, sample, seed) if g in texts]
        tokens_in = sum(judge_input_tokens(benchmark, p) for p in todo)
        cap = ModelJudge.max_tokens  # what the budget reserves for each reply
        out, out_max = JUDGE_OUTPUT_TOKENS * len(todo), cap * len(todo)
        price = price_for(name, options.prices)
        rows.append(
            EstimateRow(
                "self-consistency",
                name,
                len(sample) - len(todo),
                len(todo),
                tokens_in,
                out,
                out_max,
                None if price is None else price.cost(tokens_in, out),
                None if price is None else price.cost(tokens_in, out_max),
            )
        )
    return rows
