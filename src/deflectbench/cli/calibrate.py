"""``deflectbench calibrate``: the judges against the people, as a correction: sensitivity and
specificity per judge and field, how far the correction moves each rate, and how many more
labels would make every headline rate's corrected CI narrow enough
(:func:`deflectbench.api.labels.calibrate`, rendered by :mod:`deflectbench.views.terminal.labels`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.console import console, err
from deflectbench.cli.options import (
    DEFAULT_DB,
    AnalysisJudgesOption,
    AnnotatorsOption,
    BenchmarkOption,
    ConsensusOption,
    CorrectionOption,
    DbOption,
    IncludeUnsureOption,
    PoolModelsOption,
    ResamplesOption,
    json_file_option,
    print_result,
    said_busy,
    split,
    write_json,
)


def calibrate(
    json_out: Annotated[Path | None, json_file_option("every number")] = None,
    target: Annotated[
        float,
        typer.Option(
            help="The label budget's goal: every headline rate's corrected 95% CI within "
            "± this many points.",
        ),
    ] = 3.0,
    correction: CorrectionOption = "ppi",
    pool_models: PoolModelsOption = False,
    annotator: AnnotatorsOption = None,
    include_unsure: IncludeUnsureOption = False,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    resamples: ResamplesOption = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap draws.")] = 0,
    benchmark_name: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """How the judges err against people, and what correcting for it does to the rates.

    Per judge and for the consensus, per field: sensitivity and specificity against the human
    labels with 95% CIs. Per model and headline rate: the judged and the corrected rate
    (PPI++ by default, `--correction rogan-gladen`), the PPI++ lambda, how many points the
    correction moved the rate and whether the judged CI excludes the corrected rate. A label
    budget: how many more labels per model bring every headline rate's corrected CI within
    `--target` points; `deflectbench annotate --sample N` then draws them. And the
    Dawid-Skene latent-class estimate of each judge's confusion, as a sensitivity analysis.
    Calibrated within each model unless `--pool-models`. Details: docs/validity.md.

    Examples:

        deflectbench calibrate

        deflectbench calibrate --target 2 --json calibration.json

        deflectbench calibrate --correction rogan-gladen --pool-models
    """
    from deflectbench.api.labels import calibrate as calibrated
    from deflectbench.views.terminal.labels import calibration_needs, calibration_terminal

    result = calibrated(
        db,
        benchmark=benchmark_name,
        target=target,
        correction=correction,
        pool_models=pool_models,
        annotators=split(annotator) or None,
        include_unsure=include_unsure,
        consensus=consensus,
        judges=judge,
        resamples=resamples,
        seed=seed,
        on_busy=said_busy,
    )
    if not result.has_labels:  # one line saying so and how to get labels; no corrected number
        said = write_json(result.to_json(), json_out)
        (err if said else console).print(result.note, style="yellow", highlight=False, markup=False)
        if not said and (needs := calibration_needs(result)):
            console.print(needs, highlight=False, markup=False)
        return
    print_result(result, calibration_terminal, json_out, "calibration")
