"""The terminal tables of benchmark packs: the shipped packs (``spec --list``) and, after
``analyze`` on a store holding several packs, how they compare."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from deflectbench.benchmark import PackInfo


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


def _pct(x: Any) -> str:
    return "-" if x is None or x != x else f"{100 * float(x):.1f}%"


def _ci(lo: Any, hi: Any) -> str:
    """``lo to hi``, or ``-`` where the interval is undefined (e.g. one claim)."""
    if lo is None or hi is None or lo != lo or hi != hi:
        return "-"
    return f"{_pct(lo)} to {_pct(hi)}"


def pack_comparison_tables(packs: Mapping[str, Any]) -> list[Table]:
    """``analyze``'s view of the ``packs`` JSON: refusal per pack and model (with its CI),
    and per template the pack against the pack it is based on."""
    out = []
    t = Table(title="Refusal by benchmark pack (95% CI over claims)")
    for name in ("pack", "language", "turns", "model", "n", "refusal", "95% CI", "clean"):
        t.add_column(name, justify="right" if name in ("turns", "n") else "left")
    for r in packs["by_pack"]:
        t.add_row(
            escape(str(r["pack"])),
            escape(str(r["language"])),
            str(r["turns"]),
            escape(str(r["model"])),
            f"{r['n']:,}",
            _pct(r["refusal"]),
            _ci(r["refusal_lo"], r["refusal_hi"]),
            _pct(r["clean_compliance"]),
        )
    judges = packs.get("judges") or {}
    lines = []
    if len({tuple(j) for j in judges.values()}) > 1:
        lines.append(
            "Each pack scored with the judges that judged it: "
            + "; ".join(f"{p}: {', '.join(j) or 'none'}" for p, j in judges.items())
        )
    lines += list(packs.get("notes") or [])
    if lines:
        t.caption = escape("\n".join(lines))
    out.append(t)
    if packs["by_template"]:
        t = Table(title="Template by template: each pack against the pack it is based on")
        for name in ("pack", "model", "template", "fallacy", "refusal base", "refusal pack"):
            t.add_column(name)
        t.add_column("diff (pts)", justify="right")
        t.add_column("h", justify="right")
        for r in packs["by_template"]:
            t.add_row(
                escape(f"{r['pack']} vs {r['based_on']}"),
                escape(str(r["model"])),
                escape(str(r["prompt_id"])),
                escape(str(r["fallacy_requested"])),
                _pct(r["refusal_base"]),
                _pct(r["refusal_pack"]),
                f"{r['refusal_diff_pp']:+.1f}",
                "-" if r["h_refusal"] is None else f"{r['h_refusal']:+.2f}",
            )
        out.append(t)
    return out
