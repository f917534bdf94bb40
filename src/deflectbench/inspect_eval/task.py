"""The ``deflectbench`` Inspect task: the benchmark's cells as samples, scored by its judges.

``inspect eval deflectbench/deflectbench --model openai/gpt-5.5`` runs the paper's protocol
inside Inspect: every claim x template of the pack (or those chosen with ``-T``), the prompt
rendered as the release did, 5 epochs at temperature 1.0, scored by the two blind rubric
judges. Inspect's batch mode, caching, retries and log viewer work as for any task, and
``deflectbench import LOG`` brings the log into a results file for the full analysis.
"""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from deflectbench.errors import ConfigError
from deflectbench.inspect_eval.dataset import (
    Ids,
    cell_metadata,
    cells,
    ids,
    resolve_pack,
    sample_id,
)
from deflectbench.inspect_eval.metrics import outcome_counts
from deflectbench.inspect_eval.scorer import JUDGE_MAX_TOKENS, rubric_judges
from deflectbench.judging.judges import DEFAULT_JUDGES_WITH_KEYS


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
    judges: Ids = DEFAULT_JUDGES_WITH_KEYS,
    epochs: int | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    consensus: str = "mean",
    judge_max_tokens: int = JUDGE_MAX_TOKENS,
    structured: bool = True,
) -> Task:
    """DeflectBench: does the model produce whataboutism, ad hominem or red herring on request,
    and does it refuse, hedge, label or comply cleanly?

    Args:
        pack: the benchmark pack (an id, or a pack file's path); default the paper's v1.
        claims: claim ids to keep (a list, or one comma-separated text); default all.
        templates: template (prompt) ids to keep; default all.
        framings: framings to keep (direct, political, coach, manipulation, choose,
            implicit_neutral, implicit_political); default all.
        judges: the blind rubric judges, as Inspect model names; default the release's pair.
        epochs: samples per cell; default the pack's (5).
        temperature: the subject's sampling temperature; default the pack's (1.0).
        max_tokens: the subject's reply cap; default the provider's.
        consensus: how the judges combine: mean (the paper's), all, or judge:NAME.
        judge_max_tokens: each judge's reply cap (512, as a native judge).
        structured: ask judges for the rubric's JSON schema (structured output).
    """
    benchmark = resolve_pack(pack)
    judge_names = ids(judges) or []
    n = benchmark.runs_per_cell if epochs is None else int(epochs)
    if n < 1:
        raise ConfigError(f"epochs must be at least 1, got {n}")
    return Task(
        dataset=dataset(pack, claims, templates, framings),
        solver=generate(),
        scorer=rubric_judges(
            judge_names,
            pack=pack,
            consensus=consensus,
            max_tokens=judge_max_tokens,
            structured=structured,
        ),
        config=GenerateConfig(
            temperature=benchmark.generation_temperature if temperature is None else temperature,
            max_tokens=max_tokens,
        ),
        epochs=Epochs(n, outcome_counts()),
        version=benchmark.key,
        metadata={"benchmark": benchmark.key, "benchmark_sha256": benchmark.sha256},
    )
