"""A run's board as the terminal shows it: a row per model and per judge (done / total, rate,
errors, ETA), a line per provider (requests in flight against its limit, requests in the
last minute, spending) and one per model with something to say of itself (an in-process
model's threads and why); or the same in one plain line for a log file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from deflectbench.pipeline import Board, Row


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def row_figures(board: Board, row: Row) -> tuple[int, int, float, float | None]:
    """(done, total, rate per minute, seconds left or None) of a row, as known now."""
    total = board.total(row)
    elapsed = max(board.elapsed(), 1e-6)
    rate = row.done / elapsed * 60.0
    left = max(total - row.done, 0)
    if not left:
        eta: float | None = 0.0
    else:
        eta = left / rate * 60.0 if rate > 0 else None
    return row.done, total, rate, eta


def tokens_per_second(board: Board, row: Row) -> float | None:
    """A model's output tokens per second so far (None before its first reply): on a busy
    machine an in-process model slows down, and this says by how much."""
    tokens = getattr(row.result, "output_tokens", 0)
    if row.role != "model" or not tokens:
        return None
    return tokens / max(board.elapsed(), 1e-6)


def _rate(board: Board, row: Row, rate: float) -> str:
    tps = tokens_per_second(board, row)
    return f"{rate:,.0f}/min" + (f" {tps:,.0f} tok/s" if tps is not None else "")


def _note(row: Row) -> str:
    """What the model says of itself now (an in-process model's threads and why), or ""."""
    return row.note() if row.note is not None else ""


def _name(row: Row) -> str:
    return row.name if row.role == "model" else f"judge {row.name}"


def _rows(board: Board) -> list[Row]:
    """Models first, then judges, each in the run's order."""
    return sorted(list(board.rows), key=lambda r: r.role != "model")


def render(board: Board) -> Group:
    """The panel: the rows, then the providers."""
    table = Table(box=None, pad_edge=False, expand=False, show_edge=False)
    columns = [("", "left", None), ("", "left", 16), ("done / total", "right", None)]
    columns += [("rate", "right", 9), ("errors", "right", None), ("ETA", "right", 7)]
    for header, justify, width in columns:
        table.add_column(header, justify=justify, no_wrap=True, min_width=width)  # type: ignore[arg-type]
    for row in _rows(board):
        done, total, rate, eta = row_figures(board, row)
        if not total and not done:  # a resumed run: nothing left for this row (no 0/0 bar)
            table.add_row(_name(row), Text(""), "nothing to do", "", Text(""), "done")
            continue
        errors = Text(str(row.errors), style="red") if row.errors else Text("")
        table.add_row(
            _name(row),
            ProgressBar(total=max(total, 1), completed=min(done, max(total, 1)), width=16),
            f"{done:,} / {total:,}",
            _rate(board, row, rate) if done else "",
            errors,
            "done" if row.finished and not eta else _clock(eta),
        )
    lines: list[Table | Text] = [table]
    for p in board.providers():
        line = f"{p.name}: {p.in_flight} / {p.limit} in flight"
        if p.limit < p.max_concurrency:
            line += f" (of {p.max_concurrency}, lowered after 429s)"
        line += f", {p.requests_last_minute:,} requests in the last minute"
        if p.spent_usd:
            line += f", {p.spent_usd:,.4f} USD"
        lines.append(Text(line, style="dim"))
    for row in _rows(board):
        if note := _note(row):
            lines.append(Text(f"{row.name}: {note}", style="dim"))
    lines.append(Text(f"elapsed {_clock(board.elapsed())}", style="dim"))
    return Group(*lines)


def log_line(board: Board) -> str:
    """The plain log's line: every row and provider in one line."""
    parts = []
    for row in _rows(board):
        done, total, rate, eta = row_figures(board, row)
        if not total and not done:
            parts.append(f"{_name(row)} nothing to do")
            continue
        text = f"{_name(row)} {done}/{total}"
        if row.errors:
            text += f" ({row.errors} errors)"
        if done and not row.finished:
            tps = tokens_per_second(board, row)
            text += f" {rate:.0f}/min" + (f" {tps:.0f} tok/s" if tps is not None else "")
            text += f" ETA {_clock(eta)}"
        if note := _note(row):
            text += f", {note}"
        parts.append(text)
    for p in board.providers():
        text = f"{p.name} {p.in_flight}/{p.limit} in flight {p.requests_last_minute} rpm"
        if p.spent_usd:
            text += f" {p.spent_usd:.4f} USD"
        parts.append(text)
    return f"[{_clock(board.elapsed())}] " + "; ".join(parts)
