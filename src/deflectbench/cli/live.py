"""One live view of a run on stderr, drawn by :mod:`deflectbench.views.terminal.board`.

On a terminal, a rich Live panel redrawn a few times a second; elsewhere (a log file, CI), one
plain line a minute. The pipeline writes the board; this only reads it (from rich's refresh
thread). While the requests run, it also imports what the command shows after them (``warm``:
pandas and the analysis, seconds of CPU), so the summary table follows the last reply at once.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
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
#: What ``deflectbench run`` imports after its last reply, for the summary table: the scored
#: table (pandas, and the analysis package with scipy), the framing table, and what pandas
#: imports only when a table of arrow strings is first converted.
RUN_SUMMARY_MODULES = (
    "pandas",
    "deflectbench.analysis.frames.scored",
    "deflectbench.analysis.tables.rates",
    "deflectbench.analysis.summary.validity_checks",
    "pandas.core.methods.to_dict",
    "pyarrow.pandas_compat",
)
#: How often the warm-up looks whether the first reply has come.
_POLL_S = 0.05
#: How often what the run says (a replica set aside, or back) is printed.
_SAY_EVERY_S = 0.25


class LiveBoard:
    """Shows a run's board on stderr while it goes (``attach`` is the run's ``watch``)."""

    def __init__(
        self,
        enabled: bool,
        *,
        console: Console = err,
        log_every_s: float = LOG_EVERY_S,
        warm: Sequence[str] = (),
    ) -> None:
        self.enabled = enabled
        self.console = console
        self.log_every_s = log_every_s
        self.warm = tuple(warm)
        #: The modules the warm-up imported (a test reads it).
        self.warmed: list[str] = []
        self.board: Board | None = None
        self._live: Live | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._warmer: threading.Thread | None = None
        self._speaker: threading.Thread | None = None
        #: How many of the board's said lines are printed.
        self._said = 0

    def __enter__(self) -> LiveBoard:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def attach(self, board: Board) -> None:
        """Start showing ``board`` (called by the run before its first request), and warming
        up once the first reply has come."""
        self.board = board
        self._said = 0
        if self._speaker is None:  # what the run says (a replica set aside), shown always
            self._speaker = threading.Thread(target=self._speak, name="run-said", daemon=True)
            self._speaker.start()
        if self.warm and self._warmer is None:
            self._warmer = threading.Thread(target=self._warm_up, name="run-warm-up", daemon=True)
            self._warmer.start()
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

    def _warm_up(self) -> None:
        """Import :attr:`warm` once the first reply is in and every SDK is loaded (not before:
        the run's first requests and its SDKs go first) and no model runs in this process
        (its llama.cpp threads spin on the cores and collapse when an import competes), unless
        the run ends before. An import that fails here is left to fail where it is needed (a
        library's inner module may move)."""
        from deflectbench.models.llama_local import IN_PROCESS
        from deflectbench.models.sdk_loader import idle as sdk_idle

        board = self.board
        assert board is not None

        def ready() -> bool:
            rows = board.rows
            in_process = any(r.provider in IN_PROCESS and not r.finished for r in rows)
            # and no SDK is loading: its provider's requests wait for it (issue 37)
            return any(r.done for r in rows) and not in_process and sdk_idle()

        while not ready():
            if self._stop.wait(_POLL_S):
                return
        for name in self.warm:
            if self._stop.is_set():
                return
            try:
                importlib.import_module(name)
            except Exception:  # the main thread meets it again, with its message
                continue
            self.warmed.append(name)

    def _speak(self) -> None:
        while not self._stop.wait(_SAY_EVERY_S):
            self._print_said()

    def _print_said(self) -> None:
        board = self.board
        if board is None:
            return
        said = list(getattr(board, "said", ()))[self._said :]  # a board without lines: none
        self._said += len(said)
        for line in said:
            self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def _log(self) -> None:
        board = self.board
        assert board is not None
        while not self._stop.wait(self.log_every_s):
            self.console.print(log_line(board), highlight=False, markup=False, soft_wrap=True)

    def close(self) -> None:
        """Stop showing: the panel keeps its last frame; the log ends with a last line. An
        unfinished warm-up is not waited for (the command imports what it still needs)."""
        self._stop.set()
        if self._speaker is not None:
            self._speaker.join(timeout=5)
            self._speaker = None
        self._print_said()
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
            if self.board is not None and self.board.elapsed() >= self.log_every_s:
                self.console.print(
                    log_line(self.board), highlight=False, markup=False, soft_wrap=True
                )
