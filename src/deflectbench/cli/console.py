"""Where the CLI prints: results to stdout, progress and errors to stderr."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

import rich.text
import typer
from rich._wrap import divide_line as _rich_divide_line
from rich._wrap import words
from rich.cells import cell_len, chop_cells
from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from deflectbench.escaping import json_line_safe, terminal_safe

#: A name's pieces, each ending after its separators: "openai/gpt-5.4-mini" is "openai/",
#: "gpt-", "5.4-", "mini"; "docs/open-models.md" is "docs/", "open-", "models.md".
_PIECE = re.compile(r"[^/_\-]*[/_\-]+\s*|[^/_\-]+\s*")


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Where rich breaks a line of ``text`` to fit ``width`` cells, except that a word longer
    than a line (a model name, a file's path in a narrow column) breaks after a ``/``, ``-``
    or ``_`` of its own before it is cut: "openai/gpt-5.4-mini" in a 12-cell column reads
    "openai/" then "gpt-5.4-mini", not "openai/gpt-5" then ".4-mini" or "openai/gpt-…". A line
    whose every word fits is broken exactly as rich breaks it."""
    if all(cell_len(w.rstrip()) <= width for _, _, w in words(text)):
        return _rich_divide_line(text, width, fold)
    breaks: list[int] = []
    used = 0  # cells taken on the current line
    for start, _end, word in words(text):
        length = cell_len(word.rstrip())
        if width - used >= length:
            used += cell_len(word)
            continue
        if length <= width:  # on to the next line, as rich does
            if used and start:
                breaks.append(start)
            used = cell_len(word)
            continue
        if used and start:  # a long word starts a line of its own
            breaks.append(start)
            used = 0
        at = start
        for piece in _PIECE.findall(word):
            size = cell_len(piece.rstrip())
            if used and width - used < size:
                breaks.append(at)
                used = 0
            if size > width and fold:  # a piece longer than a line: cut, as rich cuts
                chunks = chop_cells(piece, width)
                for chunk in chunks[:-1]:
                    at += len(chunk)
                    breaks.append(at)
                used = cell_len(chunks[-1])
                at += len(chunks[-1])
                continue
            used += cell_len(piece)
            at += len(piece)
    return breaks


#: Every wrapped text of this process (tables, help, notes) breaks long names at their
#: separators: rich.text looks its divide_line up when it wraps.
rich.text.divide_line = divide_line


class SafeConsole(Console):
    """A console that never lets printed text act on the terminal: model, judge and file text
    (a reply, a reasoning, a model id, a path, a quoted line) reaches it through tables, plain
    strings, ``Text`` and JSON alike, so the one rule (:func:`deflectbench.escaping.terminal_safe`)
    is applied where text becomes a renderable (widths stay right) and again on what is written
    (every other way in); rich's own style and cursor codes are not text and pass."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_safe(text), **kwargs)

    def print_json(self, json: str | None = None, *, data: Any = None, **kw: Any) -> None:
        """Rich's JSON (valid JSON, highlighted on a terminal) with DEL, C1 controls and bidi
        overrides as ``\\uXXXX`` escapes (the JSON encoder leaves them raw): the same value,
        still valid JSON, which the escaping below would not keep."""
        from rich.highlighter import JSONHighlighter
        from rich.json import JSON

        made = JSON.from_data(data, **kw) if json is None else JSON(json, **kw)
        safe = json_line_safe(made.text.plain)
        text = JSONHighlighter()(safe) if kw.get("highlight", True) else Text(safe)
        text.no_wrap, text.overflow = True, None
        self.print(text, soft_wrap=True)

    def busy(self, text: str) -> AbstractContextManager[object]:
        """A spinner saying ``text`` while the work runs, on a terminal; elsewhere (a pipe, a
        file, CI) nothing: rich draws no spinner there, and its live display would still load
        and run its refresh thread."""
        return self.status(text) if self.is_terminal else nullcontext()

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control or not seg.text else Segment(terminal_safe(seg.text), seg.style)
            for seg in buffer
        )


console = SafeConsole(soft_wrap=True, emoji=False)
err = SafeConsole(stderr=True, soft_wrap=True, emoji=False)


class UserError(Exception):
    """An error the user can fix; printed as one line."""


#: How many refused rows a report prints before it counts the rest.
PROBLEMS_SHOWN = 20


class Outcome(Protocol):
    """What an import or a merge says when it is done."""

    @property
    def notes(self) -> Sequence[str]: ...
    @property
    def problems(self) -> Sequence[str]: ...
    def summary(self) -> str: ...


def print_outcome(report: Outcome, verb: str) -> None:
    """The summary on stdout, each note and the first problems (``VERB: problem``) on stderr;
    exit 1 when anything was refused, so a script sees that rows were left out."""
    console.print(report.summary(), highlight=False, markup=False)
    for note in report.notes:
        err.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    if not report.problems:
        return
    for problem in report.problems[:PROBLEMS_SHOWN]:
        err.print(f"{verb}: {problem}", highlight=False, markup=False, soft_wrap=True)
    if len(report.problems) > PROBLEMS_SHOWN:
        err.print(f"... and {len(report.problems) - PROBLEMS_SHOWN} more problems", highlight=False)
    raise typer.Exit(1)
