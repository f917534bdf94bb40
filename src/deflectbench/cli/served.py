"""``status``'s word on replies another model served: a proxy or replica serving another
checkpoint than the one asked for leaves its id beside each reply (``generations.served_model``);
a mismatch is a warning here and in the report, never a silent change."""

from __future__ import annotations

from typing import Any

from deflectbench.cli.console import console
from deflectbench.escaping import terminal_safe
from deflectbench.gate import served_line, served_mismatch


def served_by(store: Any, key: str | None) -> list[dict[str, Any]]:
    """Per model and condition whose replies say another model served them: the model, the
    condition, its replies, the other served ids with their counts, and the line to show."""
    out = []
    for (model, condition), entry in store.served_counts(key).items():
        other = served_mismatch(model, entry["served"])
        if not other:
            continue
        line = served_line(model, entry["served"], entry["replies"])
        out.append(
            {
                "model": model,
                "condition": condition,
                "replies": entry["replies"],
                "served": other,
                "line": f"warning: {line} (condition {condition})",
            }
        )
    return out


def print_served(entries: list[dict[str, Any]]) -> None:
    """Each mismatch on one line, its ids escaped (model text never acts on the terminal)."""
    for entry in entries:
        console.print(terminal_safe(entry["line"]), style="yellow", highlight=False, markup=False)
