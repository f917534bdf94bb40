"""The compare and leaderboard pages: one self-contained HTML page each, rendered by Jinja with
autoescape on (the one escaping rule of every HTML view), in the report's stylesheet (the
report's ``style.css``, included), with no script and nothing fetched.

The Python side formats every number (:mod:`deflectbench.views.format`) into :class:`Grid`
cells; the templates (``templates/``) only lay them out and escape them. Modules:
:mod:`.compare` and :mod:`.leaderboard`, one page each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined

__all__ = ["Grid", "render"]


@dataclass(frozen=True)
class Grid:
    """A table of formatted cells: its header, which columns are numbers (right-aligned) and
    which rows are marked (highlighted)."""

    header: Sequence[str]
    rows: Sequence[Sequence[Any]]
    numeric: Sequence[bool] = ()
    marked: Sequence[bool] = ()

    def __post_init__(self) -> None:
        if not self.numeric:
            object.__setattr__(self, "numeric", [False] * len(self.header))


@cache
def _environment() -> Environment:
    return Environment(
        loader=ChoiceLoader(
            [
                PackageLoader("deflectbench.views.pages", "templates"),
                PackageLoader("deflectbench.views.report", "templates"),  # style.css
            ]
        ),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, **context: Any) -> str:
    """One page: ``template`` with ``context`` (every value escaped)."""
    return _environment().get_template(template).render(**context)
