"""One live view of a run on stderr, drawn by :mod:`deflectbench.views.terminal.board`.

On a terminal, a rich Live panel redrawn a few times a second; elsewhere (a log file, CI), one
plain line a minute. The pipeline writes the board; this only reads it (from rich's refresh
thread).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live

from deflectbench.cli.console import err
from deflectbench.views.terminal.board import log_line, render, row_figures, tokens_per_second

if TYPE_CHECKING:  # the pipeline (numpy, the engine) loads when a run starts, not for --help
    from deflectbench.pipeline import Board

__all__ = ["LOG_EVERY_S", "LiveBoard", "log_line", "render", "row_figures", "tokens_per_second"]

#: Seconds between two lines of the plain log.
LOG_EVERY_S = 60.0


class LiveBoard:
    """Shows a run's board on stderr while it goes (``attach`` is the run's ``watch``)."""

    def __init__(
        self, enabled: bool, *, console: Console = err, log_every_s: float = LOG_EVERY_S
    ) -> None:
        self.enabled = enabled
        self.console = console
        self.log_every_s = log_every_s
        self.board: Board | None = None
        self._live: Live | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LiveBoard:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def attach(self, board: Board) -> None:
        """Start showing ``board`` (called by the run before its first request)."""
        self.board = board
        if not self.enabled or not board.rows:
            return
        if self.console.is_terminal:
            self._live = Live(
                get_renderable=lambda: render(board),
                console=self.console,
                refresh_per_second=4,
                transient=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        else:
            self._thread = threading.Thread(target=self._log, name="run-log", daemon=True)
            self._thread.start()

    def _log(self) -> None:
        board = self.board
        assert board is not None
        while not self._stop.wait(self.log_every_s):
            self.console.print(log_line(board), highlight=False, markup=False, soft_wrap=True)

    def close(self) -> None:
        """Stop showing: the panel keeps its last frame; the log ends with a last line."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)
            self._thread = None
            if self.board is not None and self.board.elapsed() >= self.log_every_s:
                self.console.print(
                    log_line(self.board), highlight=False, markup=False, soft_wrap=True
                )
