"""What ``run`` and ``judge`` print: the dry run's estimate, a line per stage, the tables
after a run and the closing account, kept apart so the commands stay a list of steps."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any

from deflectbench.cli.console import console, err

if TYPE_CHECKING:
    from deflectbench.benchmark import Benchmark
    from deflectbench.config import RunPlan
    from deflectbench.execute import RunOptions
    from deflectbench.store import Store


def print_account(line: str, complete: bool) -> None:
    """The one line every run and judge ends with: done, or what is missing and why."""
    if complete:
        console.print(line, highlight=False, markup=False)
    else:
        err.print(line, style="yellow", highlight=False, markup=False)
        err.print(
            "run the same command again to continue; --retry-errors sends failed requests again",
            style="yellow",
            highlight=False,
        )


def print_estimate(
    db: Path, b: Benchmark, plan: RunPlan, built: dict[str, Any], options: RunOptions
) -> None:
    """The dry run: nothing is sent and nothing is written."""
    from deflectbench.views.terminal.run_tables import estimate_view
    from deflectbench.execute import estimate
    from deflectbench.store import Store

    with ExitStack() as stack:
        if db.exists():
            store = Store.open(db, readonly=True)
        else:  # nothing stored yet: estimate against an empty store that is thrown away
            store = Store.open(Path(stack.enter_context(TemporaryDirectory())) / "dry-run.db")
        stack.callback(store.close)
        rows = estimate(store, b, plan, built, options)
    for part in estimate_view(rows, len(plan.cells), options.max_cost_usd):
        console.print(part)


def print_aborted(name: str, res: Any) -> None:
    if res.aborted:
        err.print(
            f"{name} stopped early: {res.aborted}. Fix the cause (API key, model name, base_url, "
            "quota) and run the same command: the failed cells are kept as error rows and "
            "--retry-errors sends them again.",
            style="red",
            highlight=False,
            markup=False,
        )


def print_stage(label: str, res: Any, what: str) -> None:
    line = f"{label}: {res.ok} {what}"
    if res.cached:
        line += f" ({res.cached} from the request cache)"
    if res.non_answers:
        line += ", no answer: " + ", ".join(f"{n} {k}" for k, n in sorted(res.non_answers.items()))
    if res.truncated:
        line += f", {res.truncated} cut at max_tokens"
    if res.parse_errors:
        line += f", {res.parse_errors} replies without a verdict"
    console.print(line, highlight=False, markup=False)
    for cause, n in sorted(res.errors_by_cause.items(), key=lambda kv: -kv[1]):
        example = res.error_examples.get(cause, "")
        console.print(f"  {n} x {cause}: {example}", highlight=False, markup=False)
    if res.parse_errors and res.parse_error_example:
        console.print(
            f"  first reply without a verdict: {res.parse_error_example}",
            highlight=False,
            markup=False,
        )


def scored_for_plan(store: Store, b: Benchmark, plan: RunPlan) -> Any:
    """The run's models, scored by the run's judges (what the table after a run shows)."""
    from deflectbench.analysis.frames.scored import scored_table

    scored = scored_table(store, b, judges=list(plan.judges))
    return scored[scored["model"].isin(plan.models)] if len(scored) else scored


def print_run_report(report: Any, scored: Any, plan: RunPlan, db: Path) -> None:
    from deflectbench.analysis.tables.rates import framing_outcomes
    from deflectbench.views.terminal.run_tables import framing_tables

    for m, res in report.generation.items():
        what = f"generated, {res.skipped} already stored, {res.errors} errors"
        print_stage(m, res, what)
        print_aborted(f"generation for {m}", res)
    for j, res in report.judging.items():
        print_stage(f"judge {j}", res, f"judged, {res.errors} errors")
        print_aborted(f"judge {j}", res)
    for m, res in report.turns.generation.items():  # a multi-turn pack's turn 2
        what = f"generated, {res.skipped} already stored, {res.errors} errors"
        print_stage(f"{m} turn 2", res, what)
        print_aborted(f"turn 2 for {m}", res)
    for j, res in report.turns.judging.items():
        print_stage(f"judge {j} after turn 2", res, f"judged, {res.errors} errors")
        print_aborted(f"judge {j}", res)
    for table in framing_tables(framing_outcomes(scored), plan.judges):
        console.print(table)
    if report.spent_usd:
        console.print(
            f"spent: {report.spent_usd:,.4f} USD (priced requests of this run)", highlight=False
        )
    if report.stop_reason == "budget":
        console.print(
            "[yellow]stopped at the --max-cost budget: what finished is stored; raise the budget and "
            "run the same command to continue[/]"
        )
    elif report.stopped_early:
        console.print("[yellow]stopped early: run the same command again to finish[/]")
    console.print(
        f"results: {db.resolve()}   (see `deflectbench status --db {db}`)", highlight=False
    )


def manifest_json(store: Store) -> list[dict[str, Any]]:
    """Every run's manifest rows, oldest run first: ``run_id``, ``role``, ``name``,
    ``condition`` and the manifest's own keys (``status --json``'s ``manifest``)."""
    from deflectbench.store.manifests import manifest_rows

    return [
        {k: r[k] for k in ("run_id", "role", "name", "condition", "updated_at")} | r["manifest"]
        for r in manifest_rows(store)
    ]


def manifest_tables(rows: list[dict[str, Any]]) -> list[Any]:
    """The latest run's manifest of each model (and condition) and judge, as two tables (what
    was run; throughput at the client); none for a store without a manifest. Every cell is
    provider text made safe for the terminal."""
    from rich.markup import escape
    from rich.table import Table

    from deflectbench.analysis.manifests import cells
    from deflectbench.escaping import terminal_safe

    latest: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for r in rows:  # oldest run first: the last one wins
        latest[(r["role"], r["name"], r["condition"])] = r
    if not latest:
        return []
    what = Table(title="Manifest: what the latest run of each ran (status --json: every run)")
    speed = Table(title="Throughput measured at the client (latest run of each)")
    heads = (
        ("served as", "fingerprint", "sent", "server"),
        ("requests", "tokens in / out", "wall s", "items/s", "out tok/s", "spent USD"),
    )
    for t, names in zip((what, speed), heads, strict=True):
        t.add_column("model / judge", overflow="fold")
        for c in names:
            t.add_column(c, overflow="fold", justify="left" if t is what else "right")
    for (role, name, condition), r in latest.items():
        label = ("judge " if role == "judge" else "") + name
        label += f" [{condition}]" if condition else ""
        shown = cells(r)
        for t, names in zip((what, speed), heads, strict=True):
            values = [label, *(shown[c] for c in names)]
            t.add_row(*(escape(terminal_safe(str(v))) for v in values))
    return [what, speed]


def print_manifest(rows: list[dict[str, Any]]) -> None:
    for table in manifest_tables(rows):
        console.print(table)
