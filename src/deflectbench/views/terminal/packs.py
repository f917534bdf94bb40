"""The terminal tables of benchmark packs: the shipped packs (``spec --list``), the line
``status`` says on the packs a store holds and, after ``analyze`` on a store holding several
packs, how they compare (from the typed :class:`~deflectbench.analysis.summary.packs.PackComparison`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from deflectbench.views.format import interval, num, pct

if TYPE_CHECKING:
    from deflectbench.analysis.summary.packs import PackComparison
    from deflectbench.benchmark import PackInfo

__all__ = ["pack_comparison_tables", "packs_line", "packs_note", "packs_table"]

#: How these tables write a missing rate.
MISSING = "-"


def packs_table(infos: Sequence[PackInfo]) -> Table:
    """One row per shipped pack; a broken one shows its problem."""
    # A pack's name is typed after --benchmark: never cut, at 80 columns too (no vertical
    # rules, so the names fit; "based on" names a pack too, so it folds rather than truncates).
    t = Table(
        title="Benchmark packs shipped (--benchmark NAME)",
        box=None,
        pad_edge=False,
        header_style="bold underline",
    )
    widest = max((len(i.name) for i in infos), default=4)
    t.add_column("pack", no_wrap=True, min_width=widest)
    t.add_column("language", no_wrap=True)
    for name in ("turns", "claims", "templates"):
        t.add_column(name, justify="right")
    t.add_column("based on", overflow="fold")
    for i in infos:
        if i.problem:
            t.add_row(escape(i.name), f"[red]broken: {escape(i.problem)}[/]", "", "", "", "")
            continue
        t.add_row(
            escape(i.name),
            escape(i.language),
            str(i.turns),
            str(i.claims),
            str(i.templates),
            escape(i.based_on or "-"),
        )
    return t


def packs_line(packs: Mapping[str, int], key: str | None) -> str:
    """``status``'s line on the packs a store holds (nothing for a store of one pack)."""
    if len(packs) <= 1 and key is None:
        return ""
    shown = f"; shown above: {key} only" if key else "; --benchmark NAME shows one"
    return (
        "benchmark packs: "
        + ", ".join(f"{k} ({n:,} generations)" for k, n in packs.items())
        + shown
    )


def _by_pack(packs: PackComparison) -> Table:
    """Refusal per pack and model with its CI; the judges per pack when they differ, notes."""
    t = Table(title="Refusal by benchmark pack (95% CI over claims)")
    for name in ("pack", "language", "turns", "model", "n", "refusal", "95% CI", "clean"):
        t.add_column(name, justify="right" if name in ("turns", "n") else "left")
    for r in packs.by_pack.itertuples(index=False):
        t.add_row(
            escape(str(r.pack)),
            escape(str(r.language)),
            str(r.turns),
            escape(str(r.model)),
            f"{r.n:,}",
            pct(r.refusal, missing=MISSING),
            interval(r.refusal_lo, r.refusal_hi, sep=" to ", sign=True, missing=MISSING),
            pct(r.clean_compliance, missing=MISSING),
        )
    lines = []
    if len({tuple(j) for j in packs.judges.values()}) > 1:
        lines.append(
            "Each pack scored with the judges that judged it: "
            + "; ".join(f"{p}: {', '.join(j) or 'none'}" for p, j in packs.judges.items())
        )
    lines += list(packs.notes)
    if lines:
        t.caption = escape("\n".join(lines))
    return t


def _by_template(packs: PackComparison) -> Table:
    """Template by template: each pack's refusal against the pack it is based on."""
    t = Table(title="Template by template: each pack against the pack it is based on")
    for name in ("pack", "model", "template", "fallacy", "refusal base", "refusal pack"):
        t.add_column(name)
    t.add_column("diff (pts)", justify="right")
    t.add_column("h", justify="right")
    for r in packs.by_template.itertuples(index=False):
        t.add_row(
            escape(f"{r.pack} vs {r.based_on}"),
            escape(str(r.model)),
            escape(str(r.prompt_id)),
            escape(str(r.fallacy_requested)),
            pct(r.refusal_base, missing=MISSING),
            pct(r.refusal_pack, missing=MISSING),
            f"{r.refusal_diff_pp:+.1f}",
            num(r.h_refusal, "+.2f", missing=MISSING),
        )
    return t


def pack_comparison_tables(packs: PackComparison) -> list[Table]:
    """``analyze``'s view of the packs compared: refusal per pack and model (with its CI),
    and per template the pack against the pack it is based on."""
    return [_by_pack(packs), *([_by_template(packs)] if len(packs.by_template) else [])]


def packs_note(packs: PackComparison, analysed: str) -> str:
    """The line saying the numbers are of one pack, and which others the store holds."""
    others = [str(r.pack) for r in packs.packs.itertuples(index=False) if not r.analysed]
    return (
        f"these numbers are of the pack {analysed} only; the store also holds "
        f"{', '.join(others)} (compared above, never pooled; each pack with the judges that "
        "judged it)"
    )
