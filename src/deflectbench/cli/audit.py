"""``deflectbench audit``: what each of the release script's quirks does to the headline numbers
of a results file (the paper's definition against the release's computation)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.cli.console import UserError, console
from deflectbench.cli.options import (
    DEFAULT_DB,
    AnalysisJudgesOption,
    BenchmarkOption,
    DbOption,
    open_store,
    split,
    write_json,
)


def _pp(x: Any) -> str:
    if x is None:
        return "–"
    x = 0.0 if abs(x) < 0.005 else x  # no "-0.00"
    return f"{x:+.2f}"


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _moves_table(
    title: str, effect: Mapping[str, Any], measures: list[dict], totals: bool
) -> Table:
    """Per model and headline measure: the move in points (``totals``: paper -> release too)."""
    t = Table(title=title)
    t.add_column("model", overflow="fold")
    for m in measures:
        t.add_column(m["label"], justify="right")
    for model, row in effect["moves"].items():
        cells = []
        for m in measures:
            e = row.get(m["measure"]) or {}
            cell = _pp(e.get("delta_pp"))
            if totals:
                cell = f"{_pct(e.get('paper'))} → {_pct(e.get('with_quirk'))}\n[dim]{cell} pts[/]"
            cells.append(cell)
        t.add_row(escape(model), *cells)
    return t


def render_audit(data: Mapping[str, Any]) -> list[Table | Text]:
    """The audit's JSON (``Audit.to_json``) as terminal tables: one per quirk, then the total."""
    measures = data["measures"]
    out: list[Table | Text] = [
        Text(
            f"Paper definition: {data['paper_scored']:,} scored generations, judges "
            f"{', '.join(data['judges']) or 'none'}. Moves in percentage points (with the quirk "
            "minus the paper's); outcome shares for refusal, soft refusal, labeled and clean, the "
            "field rate for any fallacy."
        )
    ]
    for q in data["quirks"]:
        touched = (
            f"{q['generations_added']:,} generations added, {q['generations_changed']:,} changed"
            f", agreement on {q['agreement_n']:,}"
        )
        out.append(
            _moves_table(f"{q['label']} {escape(q['title'])}: {touched}", q, measures, totals=False)
        )
        out.append(Text(f"  affects: {q['affects']}", style="dim"))
    total = data["release_vs_paper"]
    out.append(
        _moves_table(
            "All five (--compat release): paper → release, "
            f"{total['scored']:,} scored ({total['generations_added']:,} added, "
            f"{total['generations_changed']:,} changed), agreement on "
            f"{total['agreement_n']:,} generations",
            total,
            measures,
            totals=True,
        )
    )
    out.append(Text(data["note"], style="dim"))
    return out


def audit(
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the audit as JSON to FILE; `-` prints only the JSON.",
        ),
    ] = None,
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
    from deflectbench.analysis.compat.audit import audit as run_audit
    from deflectbench.cli.options import stored_benchmark

    store = open_store(db, must_exist=True)
    try:
        result = run_audit(store, stored_benchmark(store, benchmark), split(judge) or None)
    finally:
        store.close()
    if result.paper_scored == 0 and result.release.scored == 0:
        raise UserError(
            f"nothing to audit in --db {db}: no generation is scored by the judges "
            f"({', '.join(result.judges) or 'no judges'}); run `deflectbench judge` first"
        )
    data = result.to_json()
    if write_json(data, json_out):
        return
    for part in render_audit(data):
        console.print(part)
    if json_out is not None:
        console.print(f"audit: {json_out.resolve()}", highlight=False, markup=False)
