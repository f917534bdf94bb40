"""The ``deflectbench`` Inspect task: the benchmark's cells as samples, scored by its judges.

``inspect eval deflectbench/deflectbench --model openai/gpt-5.5 --model-role
judge_a=openai/gpt-5.4-mini --model-role judge_b=anthropic/claude-haiku-4-5`` runs the paper's
protocol inside Inspect: every claim x template of the pack (or those chosen with ``-T``), the
prompt rendered as the release did, 5 epochs at temperature 1.0, scored by the two blind
rubric judges, which are required model roles (:mod:`.roles`: refused before any sample when
unbound, keyless or the evaluated model). Inspect's batch mode, caching, retries and log viewer work as for any task, and
``deflectbench import LOG`` brings the log into a results file for the full analysis.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from deflectbench.benchmark.single_turn import resolve_pack
from deflectbench.errors import ConfigError
from deflectbench.inspect_eval.dataset import (
    Ids,
    cell_metadata,
    cells,
    ids,
    sample_id,
)
from deflectbench.inspect_eval.human import human_labels
from deflectbench.inspect_eval.metrics import outcome_counts, task_metrics
from deflectbench.inspect_eval.roles import JUDGE_ROLES, check_judges, evaluated_model
from deflectbench.inspect_eval.scorer import JUDGE_MAX_TOKENS, rubric_judges
from deflectbench.inspect_eval.viewer import viewer_config
from deflectbench.judging import verdicts


def dataset(
    pack: str | None = None, claims: Ids = None, templates: Ids = None, framings: Ids = None
) -> MemoryDataset:
    """One sample per chosen cell; input is the rendered prompt, metadata the cell."""
    benchmark = resolve_pack(pack)
    samples = [
        Sample(
            id=sample_id(claim_id, prompt_id),
            input=benchmark.render(claim_id, prompt_id),
            metadata=cell_metadata(benchmark, claim_id, prompt_id),
        )
        for claim_id, prompt_id in cells(benchmark, claims, templates, framings)
    ]
    return MemoryDataset(samples, name=benchmark.key, shuffled=False)


@task
def deflectbench(
    pack: str | None = None,
    claims: Ids = None,
    templates: Ids = None,
    framings: Ids = None,
    judges: Ids = JUDGE_ROLES,
    epochs: int | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    consensus: str = "mean",
    judge_max_tokens: int = JUDGE_MAX_TOKENS,
    structured: bool = True,
    allow_self_judge: bool = False,
    ci_level: float = 0.95,
    ci_method: Literal["t", "bootstrap"] = "bootstrap",
    ci_resamples: int = 1000,
    labels: str | None = None,
) -> Task:
    """DeflectBench: does the model produce whataboutism, ad hominem or red herring on request,
    and does it refuse, hedge, label or comply cleanly?

    Args:
        pack: the benchmark pack (an id, or a pack file's path); default the paper's v1.
        claims: claim ids to keep (a list, or one comma-separated text); default all.
        templates: template (prompt) ids to keep; default all.
        framings: framings to keep (direct, political, coach, manipulation, choose,
            implicit_neutral, implicit_political); default all.
        judges: the blind rubric judges: model roles, all required (default judge_a,judge_b,
            bound with --model-role), or Inspect model names.
        epochs: samples per cell; default the pack's (5).
        temperature: the subject's sampling temperature; default the pack's (1.0).
        max_tokens: the subject's reply cap; default the provider's.
        consensus: how the judges combine: mean (the paper's), all, or judge:ROLE
            (judge:judge_a).
        judge_max_tokens: each judge's reply cap (512, as a native judge).
        structured: ask judges for the rubric's JSON schema (structured output).
        allow_self_judge: let a judge role be the evaluated model (refused by default).
        ci_level: the intervals' confidence level (0.95, as the analysis').
        ci_method: bootstrap (claims resampled, percentiles: the analysis' method) or t
            (Inspect's clustered t-interval).
        ci_resamples: bootstrap draws per interval.
        labels: a ``deflectbench annotate --export`` file: the evaluated model's human labels
            become a second scorer, ``human_labels`` (Inspect's ``precomputed_scores``), with
            the same metrics (the labels-only rates) and the rates corrected for judge error
            (``corrected_<measure>``: PPI++ and its claim-block bootstrap, as ``analyze``).

    The judges are the model roles ``judge_a`` and ``judge_b`` (``--model-role
    judge_a=MODEL``), both required: unbound, keyless or the evaluated model, the task refuses
    to start.
    """
    judge_names = list(check_judges(ids(judges) or [], allow_self_judge))
    benchmark = resolve_pack(pack)
    n = benchmark.runs_per_cell if epochs is None else int(epochs)
    if n < 1:
        raise ConfigError(f"epochs must be at least 1, got {n}")
    if ci_method not in ("t", "bootstrap"):
        raise ConfigError(f"ci_method must be bootstrap or t, got {ci_method!r}")
    if not 0 < ci_level < 1 or ci_resamples < 1:
        raise ConfigError("ci_level must be in (0, 1) and ci_resamples at least 1")
    judges_scorer = rubric_judges(
        judge_names,
        pack=pack,
        consensus=consensus,
        max_tokens=judge_max_tokens,
        structured=structured,
    )
    subject = evaluated_model()
    humans = (
        [
            human_labels(
                labels,
                model=verdicts.store_model_name(str(subject)) if subject is not None else None,
                benchmark=benchmark.key,
            )
        ]
        if labels
        else []
    )
    return Task(
        dataset=dataset(pack, claims, templates, framings),
        solver=generate(),
        scorer=[judges_scorer, *humans],
        config=GenerateConfig(
            temperature=benchmark.generation_temperature if temperature is None else temperature,
            max_tokens=max_tokens,
        ),
        metrics=task_metrics(ci_level, ci_method, int(ci_resamples)),
        epochs=Epochs(n, outcome_counts()),
        viewer=viewer_config(),
        version=benchmark.key,
        metadata={"benchmark": benchmark.key, "benchmark_sha256": benchmark.sha256},
    )
