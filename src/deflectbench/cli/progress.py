"""Progress bars on stderr, and the graceful Ctrl-C that lets requests in flight be stored."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from deflectbench.cli.console import err


class StageBars:
    """A rich progress bar per stage with rate, errors and ETA."""

    def __init__(self, enabled: bool) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("[red]{task.fields[errors]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err,
            disable=not enabled,
            transient=False,
        )

    def __enter__(self) -> StageBars:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]

    def stage(self, description: str, total: int) -> Callable[[bool], None]:
        """A bar for a stage of ``total`` items; a stage with nothing to do (a resumed run's
        finished generation, say) gets none, not a ``0/0 ... ETA -:--:--`` bar."""
        if total <= 0:
            return _nothing_to_do
        task: TaskID = self.progress.add_task(description, total=total, rate="", errors="")
        errors = [0]

        def advance(ok: bool) -> None:
            errors[0] += not ok
            t = self.progress.tasks[task]
            speed = t.speed or 0.0
            self.progress.update(
                task,
                advance=1,
                rate=f"{speed * 60:.0f}/min" if speed else "",
                errors=f"{errors[0]} errors" if errors[0] else "",
            )

        return advance


def _nothing_to_do(ok: bool) -> None:
    """The advance of a stage without a bar."""


@contextmanager
def graceful_stop() -> Iterator[Callable[[], bool]]:
    """First Ctrl-C (or SIGTERM, as sent by ``kill``, systemd or a batch scheduler): stop
    dispatching, let requests in flight finish and be stored. A second one: stop at once (what
    is stored stays stored)."""
    stopped = [False]
    signals = [signal.SIGINT, signal.SIGTERM]
    previous = {s: signal.getsignal(s) for s in signals}

    def handler(signum: int, frame: Any) -> None:
        if stopped[0]:
            raise KeyboardInterrupt
        stopped[0] = True
        what = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
        err.print(
            f"\n[yellow]{what}: stopping, finishing the requests in flight (again to stop now)[/]"
        )

    for s in signals:
        signal.signal(s, handler)
    try:
        yield lambda: stopped[0]
    finally:
        for s in signals:
            signal.signal(s, previous[s])
