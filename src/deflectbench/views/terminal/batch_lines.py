"""What batch mode's commands print: what a round of batch mode did, the judges of batch runs
that have no batch API, what a batch run still lacks, ``status``'s warnings, the batch file
written for the user's engine and its results taken back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from deflectbench.escaping import terminal_safe
from deflectbench.views.format import count
from deflectbench.views.terminal.lines import Line, Shown, out, warn
from deflectbench.views.terminal.run_tables import batch_table

if TYPE_CHECKING:
    from pathlib import Path

    from deflectbench.pipeline.batches import BatchSummary
    from deflectbench.pipeline.batches.engine_judges import Standing
    from deflectbench.results.batches import BatchFollow, Imported, Written
    from deflectbench.results.status import ServedBy

#: What a failed request becomes in the line: the next status sends it again.
_AGAIN = "the next `deflectbench status` sends them again"


def summary(s: BatchSummary) -> Shown:
    """What batch mode did: batches submitted, results stored, items sent again or given up,
    problems (one line each, on stderr)."""
    shown: Shown = [
        Line(f"{n}: {k} batch results stored", err=True) for n, k in _items(s.collected)
    ]
    shown += [
        Line(f"{n}: {k} answered from the request cache", err=True, markup=True)
        for n, k in _items(s.cached)
    ]
    if s.new_batches:
        what = ", ".join(f"{n} {name}" for name, n in s.submitted.items())
        shown.append(
            Line(
                f"submitted {s.new_batches} batches ({what}); `deflectbench status` collects "
                "them (--wait: until done)",
                err=True,
            )
        )
    shown += [warn(line) for line in s.problems]
    shown += [
        Line(f"{n}: {k} items sent again", "yellow", err=True, markup=True)
        for n, k in _items(s.resent)
    ]
    shown += [
        warn(
            f"{n}: {k} items given up after repeated failures (stored as errors; "
            "`run --batch --retry-errors` sends them again)",
            "red",
        )
        for n, k in _items(s.given_up)
    ]
    shown += [
        Line(
            f"{n}: {k} items not sent: over the --max-cost budget", "yellow", err=True, markup=True
        )
        for n, k in _items(s.withheld)
    ]
    return shown


def _items(table: Mapping[str, int]) -> list[tuple[str, int]]:
    return list(table.items())


def follow(f: BatchFollow, *, table: bool = True) -> Shown:
    """``status``'s batch part after the follow-through: the engine judges, the batches,
    what failed and is sent again, turn-2 cells due, and a stop."""
    shown: Shown = []
    for s in f.leftovers.judges:
        shown += standing(s)
    if table and (t := batch_table(f.batches)) is not None:
        shown.append(t)
    for model, kind, n in f.leftovers.failing:
        shown.append(
            warn(f"{model}: {n} {kind} items failed or expired and were sent again; not done yet")
        )
    for model, n in f.leftovers.turns.items():
        cells = "cell" if n == 1 else "cells"
        shown.append(
            warn(
                f"{model}: {n} turn-2 {cells} due, not sent yet: run the same "
                "`deflectbench run --batch ...` again (turn 2 goes by ordinary requests)"
            )
        )
    if f.stopped:
        shown.append(
            warn("stopped: what finished is stored; `deflectbench status` again continues")
        )
    return shown


def standing(s: Standing) -> Shown:
    """One line per judge of a batch run without a batch API that judged now or has answers
    awaiting it."""
    res = s.result
    parts = []
    if res.ok:
        parts.append(f"{res.ok} answers judged now (no batch API: through the engine)")
        if res.parse_errors:
            parts[0] += f", {res.parse_errors} replies without a verdict"
    if s.awaiting:
        what = "await it" if res.ok else "answers await it"
        parts.append(f"{s.awaiting} {what}: {_why(s)}")
    line = f"{s.judge}: " + "; ".join(parts)
    return [Line(line, "yellow" if s.awaiting else None, err=True)]


def _why(s: Standing) -> str:
    if s.unreachable is not None:
        return s.unreachable
    failures = s.result.failures()
    if s.result.withheld:
        return (
            "not sent: over the run's --max-cost budget; "
            f"`deflectbench judge -j {s.judge} -c RUN.toml --max-cost USD` judges them with "
            "a larger one"
        )
    if failures:
        ranked = sorted(failures.items(), key=lambda kv: -kv[1])
        causes = ", ".join(f"{k} x{n}" for k, n in ranked)
        return f"its requests failed ({causes}); {_AGAIN}"
    return f"not judged yet; {_AGAIN}"


def served(entries: Sequence[ServedBy]) -> Shown:
    """Each reply served by another model on one line, its ids made safe (model text never
    acts on the terminal)."""
    return [Line(terminal_safe(e.line), "yellow") for e in entries]


def written(w: Written, path: Path) -> Shown:
    """``run --batch-file``: what was written, and what to do with it."""
    shown: Shown = [
        out(
            f"{path}: {w.written + w.held} cells of {w.model} as OpenAI batch JSONL"
            + (f" ({w.held} written before and not imported yet)" if w.held else "")
            + (f"; {w.cached} answered from the request cache" if w.cached else "")
            + (f"; {w.withheld} withheld by --max-cost" if w.withheld else "")
        )
    ]
    if w.written or w.held:
        shown.append(
            out(
                "run it with your engine (docs/open-models.md), then: deflectbench import-batch "
                "RESULTS.jsonl --db ..."
            )
        )
    return shown


def imported(report: Imported, results: Path) -> Shown:
    """``import-batch``: the lines read and the cells they answered (the judges' verdicts on
    a line of their own), what was skipped and why, each engine error with its message, a
    warning for replies naming another model; file text made safe for the terminal."""
    r = report
    line = f"{results}: {count(r.lines)} lines; {count(r.answered)} cells answered"
    if r.replaced:
        line += f" ({count(r.replaced)} of them replacing 'no result line' error rows)"
    if r.errors:
        line += f", {count(r.errors)} stored as error rows with the engine's message"
    shown: Shown = [out(terminal_safe(line))]
    skipped = [
        f"{count(n)} {what}"
        for n, what in (
            (r.other_cells, "for cells of no batch file of this store (another part's or run's)"),
            (r.duplicates, "duplicates (a cell answered before, or twice in the file)"),
        )
        if n
    ]
    if skipped:
        shown.append(out("skipped: " + "; ".join(skipped)))
    if r.judged:
        verdicts = ", ".join(f"{j} {count(n)}" for j, n in r.judged.items())
        shown.append(out(f"judged now: {verdicts} verdicts"))
    shown += [
        Line(terminal_safe(f"{count(n)} cells: {message}"), "yellow", err=True)
        for message, n in list(r.error_messages.items())[:_SHOWN]
    ]
    if len(r.error_messages) > _SHOWN:
        rest = sum(list(r.error_messages.values())[_SHOWN:])
        shown.append(Line(f"{count(rest)} cells: other errors (--json lists all)", err=True))
    if r.missing:
        shown.append(
            warn(
                f"{count(r.missing)} cells of the batch file had no line in this output: stored "
                "as 'no result line' error rows; importing the output that holds their lines "
                "replaces them (or `run --batch-file --retry-errors` writes them again)"
            )
        )
    if r.other_model:
        ids = ", ".join(f"{m!r} ({count(n)} lines)" for m, n in r.other_model.items())
        own = ", ".join(repr(x) for x in (sorted(set(r.models.values())) or r.expected))
        first = next(iter(r.other_model))
        shown.append(
            warn(
                terminal_safe(
                    f"{count(sum(r.other_model.values()))} lines are replies of another model "
                    f"than the cells were written for ({own}): {ids}; not imported. If the "
                    f"engine served the same model under that name, pass --accept-model {first}"
                ),
                "red",
            )
        )
    if r.ambiguous:
        shown.append(
            warn(
                f"{count(r.ambiguous)} lines fit cells of more than one batch file (the same "
                "cell id for another model or condition, and no model named): not imported"
            )
        )
    if r.unreadable:
        where = "; ".join(r.unreadable_lines)
        shown.append(warn(f"{count(r.unreadable)} unreadable lines skipped ({where})"))
    if r.unmatched:
        shown.append(
            warn("no line of this output is for a cell of this store's batch files (--db?)", "red")
        )
    shown += [Line(terminal_safe(f"note: {p}"), err=True) for p in r.problems]
    return shown


#: Engine error messages shown one a line (the rest counted; ``--json`` has all).
_SHOWN = 5
