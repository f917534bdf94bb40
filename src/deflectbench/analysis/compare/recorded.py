"""What the compare views show of how each side was made, as typed rows read once from the
sides' manifests (:mod:`.manifest`): one row per side (its condition, the ids its replies named,
the package versions, its judges and their verdicts), and one per recorded run manifest of its
model and of its judges (the cells of :func:`deflectbench.analysis.manifests.cells`).

Every text here came from a store or a provider's reply: the views escape it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from deflectbench.analysis.compare.select import Side

__all__ = ["RECORDED_HEADER", "RecordedRow", "SideRow", "recorded_rows", "side_rows"]

NOT_RECORDED = "not recorded"
#: The header of the run-manifest table (terminal and HTML).
RECORDED_HEADER = ("side", "role", "name", "run", "served as", "fingerprint", "sent",
                   "items/s", "out tok/s")  # fmt: skip


@dataclass(frozen=True)
class SideRow:
    """One side as the "what was compared" table shows it."""

    label: str
    condition: str | None
    #: The model ids its replies named ("not recorded" when none did).
    served: str
    #: The deflectbench versions of the runs that made its answers.
    versions: str
    #: ``judge (verdicts)`` of each judge, else the side's judges' names.
    judges: str


class RecordedRow(NamedTuple):
    """One recorded run manifest of a side's model or judge (its cells as text)."""

    side: str
    role: str
    name: str
    run: str
    served_as: str
    fingerprint: str
    sent: str
    items_per_s: str
    out_tok_per_s: str


def _distinct(pairs: Sequence[tuple[Side, Side]]) -> Iterator[Side]:
    """Each side once (a side may be in several pairs), in order."""
    seen: set[str] = set()
    for pair in pairs:
        for side in pair:
            if side.label not in seen:
                seen.add(side.label)
                yield side


def side_rows(pairs: Sequence[tuple[Side, Side]]) -> list[SideRow]:
    out = []
    for s in _distinct(pairs):
        m = s.manifest or {}
        served = ", ".join(m.get("served_models") or {}) or NOT_RECORDED
        versions = sorted(
            {str(v.get("deflectbench")) for v in m.get("versions") or [] if v.get("deflectbench")}
        )
        judges = ", ".join(f"{j} ({n:,})" for j, n in (m.get("judges") or {}).items())
        out.append(
            SideRow(
                s.label,
                s.condition,
                served,
                ", ".join(versions) or NOT_RECORDED,
                judges or ", ".join(s.judges),
            )
        )
    return out


def recorded_rows(pairs: Sequence[tuple[Side, Side]]) -> list[RecordedRow]:
    """Each side's recorded run manifests (its model's, its judges'), one row each; a side
    with none gets one row saying so."""
    from deflectbench.analysis.manifests import cells

    out = []
    for s in _distinct(pairs):
        recorded = (s.manifest or {}).get("recorded") or {}
        entries: list[tuple[str, str, Mapping[str, Any]]]
        entries = [("model", s.model, r) for r in recorded.get("model") or []]
        for judge, rows in (recorded.get("judges") or {}).items():
            entries += [("judge", judge, r) for r in rows]
        if not entries:
            none = NOT_RECORDED
            out.append(RecordedRow(s.label, "-", "-", "-", none, none, none, "-", "-"))
        for role, name, r in entries:
            c = cells(r)
            out.append(
                RecordedRow(s.label, role, name, str(r.get("run_id", "")), c["served as"],
                            c["fingerprint"], c["sent"], c["items/s"], c["out tok/s"])
            )  # fmt: skip
    return out
