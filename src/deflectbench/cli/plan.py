"""``deflectbench plan``: the cheapest design reaching a target precision, priced per provider,
beside the paper's (:func:`deflectbench.api.plan.plan`, rendered by
:mod:`deflectbench.views.terminal.plan`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.options import (
    BenchmarkOption,
    json_file_option,
    print_result,
    said_busy,
    split,
)


def plan(
    target: Annotated[
        str,
        typer.Option(
            "--target",
            help='What to reach: "MEASURE +-Hpp per SCOPE", e.g. "refusal +-3pp per model x '
            'framing" (SCOPE: model, model x framing).',
        ),
    ],
    pilot: Annotated[
        Path | None,
        typer.Option(
            "--pilot",
            metavar="STORE",
            help="A pilot run's results file: the variance components are measured on it "
            "(default: the paper's published spreads, stated assumptions).",
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", "-m", help="Models to price (default: the pilot's, else the paper's)."
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            help="The expensive judges (default: the paper's two); the lexical judge scores "
            "every answer.",
        ),
    ] = None,
    quantile: Annotated[
        float,
        typer.Option(
            help="Which cell must reach the target: 1 the worst (default), 0.9 the "
            "90% quantile of the cells."
        ),
    ] = 1.0,
    rho: Annotated[
        float | None,
        typer.Option(
            help="The lexical judge's correlation with the expensive judges' consensus "
            "(default: measured on the pilot, else 0.5)."
        ),
    ] = None,
    json_out: Annotated[Path | None, json_file_option("every number")] = None,
    benchmark_name: BenchmarkOption = None,
) -> None:
    """The cheapest design that reaches a target precision, and its price, beside the paper's.

    Claims, templates, samples per cell and the share of answers the expensive judges see
    (the rest scored by the lexical judge, corrected by PPI++), searched for the least price
    whose 95% intervals reach the target in every cell; from a pilot's variance components
    or the paper's published spreads. Exit code 1 when no design reaches it. Details:
    docs/plan.md.

    Examples:

        deflectbench plan --target "refusal +-3pp per model"

        deflectbench plan --target "refusal +-5pp per model x framing" --quantile 0.9

        deflectbench plan --target "clean_compliance +-2pp per model" --pilot pilot.db
    """
    from deflectbench.api.plan import plan as planned
    from deflectbench.views.terminal.plan import plan_terminal

    result = planned(
        target,
        pilot=pilot,
        benchmark=benchmark_name,
        models=split(model) or None,
        judges=split(judge) or None,
        quantile=quantile,
        rho=rho,
        on_busy=said_busy,
    )
    print_result(result, plan_terminal, json_out, "plan")
    if result.exit_code:
        raise typer.Exit(result.exit_code)
