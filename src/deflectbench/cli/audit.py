"""``deflectbench audit``: what each of the release script's quirks does to the headline numbers
of a results file (the paper's definition against the release's computation)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from deflectbench.cli.console import UserError
from deflectbench.cli.options import (
    DEFAULT_DB,
    AnalysisJudgesOption,
    BenchmarkOption,
    DbOption,
    json_file_option,
    print_result,
    said_busy,
)


def audit(
    json_out: Annotated[Path | None, json_file_option("the audit")] = None,
    judge: AnalysisJudgesOption = None,
    benchmark: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """How far each quirk of the release's analysis script moves the headline numbers.

    The paper's definition (what `analyze` computes by default) against the release script,
    one quirk at a time and all five together (`analyze --compat release`): (a) it keeps
    generations that only one judge parsed, (b) it assigns outcomes by overwriting in the order
    other -> refusal -> clean -> labeled -> soft refusal, so soft refusal, labeled and clean all
    beat refusal, (c) it averages missing values (-1) as numbers, (d) it keeps valid
    generations no judge parsed, every field 0 (other), (e) its agreement counts the judge
    records of failed requests. Per model: refusal, soft
    refusal, labeled and clean compliance (outcome shares) and any fallacy (field rate), in
    points.

    Examples:

        deflectbench audit

        deflectbench audit --db paper.db --json - | jq .release_vs_paper
    """
    from deflectbench.api.results import audit as run_audit
    from deflectbench.views.terminal.audit import render_audit

    result = run_audit(db, benchmark=benchmark, judges=judge, on_busy=said_busy)
    if result.empty:
        raise UserError(
            f"nothing to audit in --db {db}: no generation is scored by the judges "
            f"({', '.join(result.judges) or 'no judges'}); run `deflectbench judge` first"
        )
    print_result(result, render_audit, json_out, "audit")
