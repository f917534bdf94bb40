"""The lines a command prints around its tables, as values: what a line says, on which stream
and in which style. The command line prints them as they come (:func:`deflectbench.cli.console`
is the only writer); a view only says what to write."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType


@dataclass(frozen=True)
class Line:
    """One line of text: to stdout, or with ``err`` to stderr; ``markup`` when its text
    holds rich markup of ours (never model text)."""

    text: str
    style: str | None = None
    err: bool = False
    markup: bool = False


def out(text: str, style: str | None = None) -> Line:
    return Line(text, style)


def warn(text: str, style: str | None = "yellow") -> Line:
    """A line to stderr (yellow unless told)."""
    return Line(text, style, err=True)


#: What a view returns: tables and lines, in the order they are shown.
Shown = list[RenderableType | Line]
