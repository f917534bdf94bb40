"""Batch mode on the command line: ``deflectbench batch cancel``, and the bar ``status
--wait`` shows between two looks at the open batches. The work is the library's
(:mod:`deflectbench.api.batches`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import typer

from deflectbench.cli.console import console, err
from deflectbench.cli.options import DEFAULT_DB, DbOption
from deflectbench.cli.run_output import ConfigOption

if TYPE_CHECKING:
    from deflectbench.api.batches import Pause
    from deflectbench.store.batches import BatchRow

batch_app = typer.Typer(
    name="batch",
    help="Provider batches of batch mode (`run --batch`): `deflectbench status` shows and "
    "collects them; `deflectbench batch cancel` cancels the open ones.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


def cancel(config: ConfigOption = None, db: DbOption = DEFAULT_DB) -> None:
    """Cancel every open batch.

    What they finished is still collected by the next `deflectbench status`; their other
    cells stay missing (a later `run --batch` sends them).

    Example:

        deflectbench batch cancel
    """
    from deflectbench.api.batches import cancel_batches

    cancelled = cancel_batches(db, config=config)
    if cancelled is None:
        console.print("no open batches", highlight=False)
    for row, status in cancelled or []:
        console.print(f"{row.model} batch {row.remote_id}: {status}", highlight=False)


def wait_bar(progress: bool, should_stop: Callable[[], bool]) -> Pause:
    """Sleep until the next look (or a stop), a bar showing the open batches' items done."""
    from deflectbench.api.batches import POLL_S

    async def pause(rows: Sequence[BatchRow]) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        total = sum(r.items for r in rows)
        done = sum(_done(r) for r in rows)
        with Progress(
            TextColumn("open batches"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("next look in {task.fields[left]}s"),
            console=err,
            disable=not progress,
            transient=True,
        ) as bar:
            task = bar.add_task("", total=total, completed=done, left=int(POLL_S))
            end = time.monotonic() + POLL_S
            while (left := end - time.monotonic()) > 0 and not should_stop():
                bar.update(task, left=int(left))
                await asyncio.sleep(min(1.0, left))

    return pause


def _done(row: BatchRow) -> int:
    c = row.counts
    done = sum(v for k, v in c.items() if k in ("completed", "failed"))
    return int(done) or int(sum(v for k, v in c.items() if k != "processing"))
