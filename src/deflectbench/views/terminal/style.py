"""The look the terminal's statistics tables share, said once: a left-justified title over a
header rule and no frame, and the rubric's fields by their short names (a column stays narrow)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from deflectbench.vocab import FIELD_SHORT


def titled_table(title: str, **layout: Any) -> Table:
    """An empty table under ``title`` (left-justified, a rule under the header, no frame);
    ``layout`` adds rich's options (``pad_edge=False`` ...)."""
    return Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, title_justify="left", **layout)


def short_field(field: str) -> str:
    """A rubric field's short name (``WA_present`` -> its :data:`FIELD_SHORT`), else as given."""
    return FIELD_SHORT.get(field, field)
