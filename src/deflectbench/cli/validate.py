"""``deflectbench validate``: each judge, the consensus and the ``lexical`` judge against the
human labels, the annotators against each other, and the monitor against the consensus
(:func:`deflectbench.api.labels.validate`, rendered by :mod:`deflectbench.views.terminal.validity`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.console import err
from deflectbench.cli.options import (
    DEFAULT_DB,
    AnalysisJudgesOption,
    AnnotatorsOption,
    BenchmarkOption,
    ConsensusOption,
    DbOption,
    IncludeUnsureOption,
    JudgeValuesOption,
    ProgressOption,
    ResamplesOption,
    json_file_option,
    print_result,
    said_busy,
)


def validate(
    json_out: Annotated[Path | None, json_file_option("every number (with CIs and counts)")] = None,
    annotator: AnnotatorsOption = None,
    include_unsure: IncludeUnsureOption = False,
    check_monitor: Annotated[
        bool,
        typer.Option(
            "--monitor/--no-monitor",
            help="Also score the monitor's refusal, soft-refusal and labeled-compliance flags "
            "against the consensus and the humans (runs it on every scored generation).",
        ),
    ] = True,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    judge_values: JudgeValuesOption = "said",
    resamples: ResamplesOption = 1000,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap draws (same seed, same CIs).")
    ] = 0,
    progress: ProgressOption = True,
    benchmark_name: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """How well the judges agree with people: judge validity, not just judge reliability.

    For each judge, the consensus and the rule-based `lexical` judge (scored now if the
    store has none of its verdicts), per rubric field against the human labels: accuracy,
    Cohen's kappa, Gwet's AC1, precision, recall, F1 and n, each with a 95% CI from a
    bootstrap that resamples claims (a claim's generations are not independent). Several
    annotators of one generation are combined by majority per field (a tie leaves the field
    out); pairs of annotators get their own agreement. Labels marked unsure are left out
    unless `--include-unsure`; a field left unset leaves only that field's n. The monitor
    (`deflectbench monitor`) is scored against the consensus of every scored generation and
    against the humans. One pack at a time: its generations, its labels (`--benchmark`; a
    store holding several packs needs it). The lexical judge and the monitor read English
    only, so a pack in another language is validated without them. Details: docs/validity.md.

    Examples:

        deflectbench validate

        deflectbench validate --json validity.json --annotator alice,bob

        deflectbench validate --consensus judge:lexical --no-monitor --json - | jq .counts

        deflectbench validate --benchmark deflectbench-v1-es --json validity-es.json
    """
    from deflectbench.api.labels import validate as validated
    from deflectbench.cli.progress import StageBars
    from deflectbench.views.terminal.validity import validation_terminal

    result = validated(
        db,
        benchmark=benchmark_name,
        consensus=consensus,
        judges=judge,
        judge_values=judge_values,
        annotators=annotator,
        include_unsure=include_unsure,
        monitor=check_monitor,
        resamples=resamples,
        seed=seed,
        progress=lambda: StageBars(enabled=progress and json_out is None),
        on_busy=said_busy,
    )
    if result.left_out:
        err.print(result.left_out, style="yellow", highlight=False, markup=False)
    if not result.has_labels and str(json_out) == "-":
        err.print(
            f"No human labels in --db {db} for {result.pack}: label a sample with `deflectbench "
            "annotate` first.",
            style="yellow",
            highlight=False,
            markup=False,
        )
    print_result(result, validation_terminal, json_out, "validity")
