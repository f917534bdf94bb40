"""Cascaded judging's four flags, one spelling for ``run`` and ``judge`` (docs/cascade.md)."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["CheapJudgeOption", "ExpensiveShareOption", "ExpensiveTargetOption", "StratifyOption"]

CheapJudgeOption = Annotated[
    str | None,
    typer.Option(
        help="Cascaded judging: this judge (e.g. lexical) scores every answer, the --judge "
        "judges only a seeded sample; `analyze` estimates their consensus with PPI++ "
        "(docs/cascade.md). Needs --expensive-share or --expensive-target.",
    ),
]
ExpensiveShareOption = Annotated[
    float | None,
    typer.Option(help="With --cheap-judge: the share of answers the judges see, e.g. 0.1."),
]
ExpensiveTargetOption = Annotated[
    str | None,
    typer.Option(
        help='With --cheap-judge: the shares a half-width needs, e.g. "refusal +-3pp per '
        'model" (or "per model x framing"), sized from the cheap verdicts and stored.',
    ),
]
StratifyOption = Annotated[
    str | None,
    typer.Option(
        help="With --expensive-share: one share per model or per model,framing "
        "(none, model, model,framing; default none).",
    ),
]
