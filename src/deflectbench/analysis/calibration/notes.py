"""The line said when a pack has no human labels, and how to get some: what ``analyze`` prints
for most stores, so it lives apart from the values :mod:`.shown` types (re-exported there)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["HOW_TO_LABEL", "no_labels_note"]

#: How to get labels, said wherever corrected rates are missing for want of them.
HOW_TO_LABEL = (
    "label a sample with `deflectbench annotate` (or import a label file: docs/validity.md)"
)


def no_labels_note(db: str | Path, pack: str, *, other_packs: int = 0, unsure: int = 0) -> str:
    """The one line said when a pack has no human labels to correct the judges with."""
    why = f" ({other_packs:,} labels of other packs' generations left out)" if other_packs else ""
    why += f" ({unsure} unsure labels left out)" if unsure else ""
    return (
        f"No human labels of {pack} in --db {db}{why}: the rates are the judges', and their "
        f"CIs cover claim sampling only, not judge error. To correct them, {HOW_TO_LABEL}."
    )
