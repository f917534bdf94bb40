"""The terminal view of ``deflectbench plan``: the cheapest design beside the paper's, the price
per provider, each cell's variance components, and what the plan assumed."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.analysis.plan import CellSpread, Design
from deflectbench.results.plan import PlanResult
from deflectbench.views.format import count, num, pct, usd
from deflectbench.views.terminal.style import titled_table

__all__ = ["plan_terminal"]


def _hw(x: float) -> str:
    return f"±{pct(x, sign=False)} pp"


def _templates(d: Design) -> str:
    return "each framing's own" if d.templates is None else str(d.templates)


def _rows(d: Design, providers: list[str], judges: tuple[str, ...]) -> list[str]:
    rows = [
        count(d.claims),
        _templates(d),
        str(d.samples),
        pct(d.share, 0),
        _hw(d.halfwidth),
        _hw(d.worst_halfwidth),
        escape(" x ".join(d.worst_cell)),
        count(d.generations),
        *(count(d.judge_calls.get(j, 0)) for j in judges),
        *(usd(d.price_by_provider.get(p)) for p in providers),
        usd(d.price) if d.price is not None else f"{usd(d.known_price)} + unknown",
    ]
    return rows


def _designs(r: PlanResult) -> Table:
    p = r.plan
    first = p.best if p.best is not None else p.narrowest
    heading = "cheapest reaching it" if p.best is not None else "narrowest possible"
    table = titled_table(f"Designs for {escape(str(p.target))}")
    table.add_column("")
    table.add_column(heading, justify="right")
    table.add_column("paper's full design", justify="right")
    providers = list(dict.fromkeys([*first.price_by_provider, *p.paper.price_by_provider]))
    cells = "cells" if p.quantile >= 1.0 else f"the {pct(p.quantile, 0)} quantile of cells"
    labels = [
        "claims",
        "templates per cell",
        "samples per cell",
        "answers the expensive judges see",
        f"95% half-width ({'worst cell' if p.quantile >= 1.0 else cells})",
        "worst cell's half-width",
        "worst cell",
        "generations",
        *(f"calls by {escape(j)}" for j in p.judges),
        *(f"price, {escape(pr)}" for pr in providers),
        "price, total",
    ]
    for label, a, b in zip(
        labels,
        _rows(first, providers, p.judges),
        _rows(p.paper, providers, p.judges),
        strict=True,
    ):
        table.add_row(label, a, b)
    return table


def _cells(r: PlanResult) -> Table:
    table = titled_table("Variance components per cell")
    for name in ("cell", "rate", "σ² claim", "σ² claim×tpl", "σ² within", "T", "ρ cheap"):
        table.add_column(name, justify="left" if name == "cell" else "right")
    groups: dict[tuple[object, ...], list[str]] = {}
    shown: dict[tuple[object, ...], CellSpread] = {}
    for c in r.plan.cells:  # cells of one set of components (the assumed ones) in one row
        same = (c.components, c.templates, c.rho, c.rho_measured)
        groups.setdefault(same, []).append(" x ".join(c.key))
        shown.setdefault(same, c)
    for key, names in groups.items():
        c = shown[key]
        comp = c.components
        label = names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more alike"
        table.add_row(
            escape(label),
            pct(comp.rate),
            num(comp.claim, ".4f"),
            num(comp.claim_template, ".4f"),
            num(comp.within, ".4f"),
            str(c.templates),
            num(c.rho, ".2f") + ("" if c.rho_measured else "*"),
        )
    return table


def plan_terminal(r: PlanResult) -> list[Table | Text]:
    """The plan as the terminal shows it."""
    p = r.plan
    out: list[Table | Text] = [
        Text(f"components from {p.source}; prices as of {r.prices_as_of}", style="dim")
    ]
    if p.best is None:
        out.append(
            Text(
                f"no design within the bounds reaches {p.target}: the narrowest "
                f"(every claim and template, 10 samples, all judged) gives "
                f"{_hw(p.narrowest.halfwidth)}; widen the target or ask per model",
                style="bold red",
            )
        )
    elif r.saving is not None:
        out.append(
            Text(
                f"the cheapest design reaching {p.target} costs {pct(r.saving)} of the "
                "paper's (priced parts)"
                + (
                    ""
                    if p.paper.halfwidth <= p.target.halfwidth
                    else f"; the paper's design gives {_hw(p.paper.halfwidth)}, short of it"
                ),
                style="bold",
            )
        )
    out.append(_designs(r))
    out.append(_cells(r))
    if not all(c.rho_measured for c in p.cells):
        out.append(Text("* ρ assumed or given, not measured on the pilot", style="dim"))
    out.extend(Text(n, style="yellow") for n in p.notes)
    return out
