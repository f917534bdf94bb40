"""The tables the terminal shows for a run: the dry run's estimate, the outcome by framing
after a run, and the status of a results file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.judging.judges import is_rule_based
from deflectbench.vocab import CONTEXTS, FRAMINGS, OUTCOMES

#: Column headers narrow enough for an 80-column terminal.
SHORT_FRAMING = {
    "political": "polit.",
    "manipulation": "manip.",
    "implicit_neutral": "impl.neu",
    "implicit_political": "impl.pol",
}


def _pct(x: Any, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def _ci(entry: Mapping[str, Any] | None) -> str:
    """A rate over its CI on a second, dimmed line: narrow enough for an 80-column terminal."""
    if not entry or entry.get("rate") is None:
        return "–"
    lo, hi = entry.get("ci95") or [None, None]
    if lo is None or hi is None:
        return _pct(entry["rate"])
    return f"{_pct(entry['rate'])}\n[dim]{100 * lo:.1f}–{100 * hi:.1f}[/]"


def _tost_interval(r: Mapping[str, Any]) -> str:
    """The TOST's 90% CI and the difference it is centred on (the adjusted one), on a second
    line; nothing when the summary predates ``diff_adjusted``."""
    lo, hi, mid = r.get("ci90_lo"), r.get("ci90_hi"), r.get("diff_adjusted")
    if lo is None or hi is None or mid is None:
        return ""
    return (
        f"\n[dim]90% CI {100 * lo:+.1f} to {100 * hi:+.1f}, centred on the adjusted "
        f"{100 * mid:+.1f}[/]"
    )


def _num(x: Any, fmt: str = ".2f") -> str:
    return "–" if x is None else format(x, fmt)


def _p(x: Any) -> str:
    if x is None:
        return "–"
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


def _compact(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


# -- run ------------------------------------------------------------------------------------


def estimate_view(
    rows: Sequence[Any], n_cells: int, max_cost_usd: float | None, *, of: str = "cells per model"
) -> list[RenderableType]:
    """The dry run's table of requests, tokens and cost per model and judge (runner
    ``EstimateRow``s), then the expected and worst-case totals and what has no price."""
    t = Table(title=f"Dry run: {n_cells:,} {of}; nothing was sent")
    t.add_column("role")
    t.add_column("name", overflow="fold")
    for c in ("done", "to send", "tok in", "tok out", "USD", "USD max"):
        t.add_column(c, justify="right")
    total, total_max, unknown, own, priced = 0.0, 0.0, [], [], 0
    for row in rows:
        if is_rule_based(row.name):  # the lexical judge runs here and sends nothing
            t.add_row(
                row.role,
                escape(row.name),
                f"{row.done:,}",
                f"{row.requests:,}",
                "–",
                "–",
                "0.00",
                "0.00",
            )
            continue
        if row.cost_usd is None:
            cost = cost_max = "?"
            if row.requests:
                (own if _self_hosted(row.name) else unknown).append(row.name)
        else:
            cost, cost_max = f"{row.cost_usd:,.2f}", f"{row.cost_usd_max:,.2f}"
            priced += bool(row.requests)
            total += row.cost_usd
            total_max += row.cost_usd_max or 0.0
        t.add_row(
            row.role,
            escape(row.name),
            f"{row.done:,}",
            f"{row.requests:,}",
            _compact(row.input_tokens),
            _compact(row.output_tokens),
            cost,
            cost_max,
        )
    cost_line = (
        f"estimated cost: {total:,.2f} USD expected, at most {total_max:,.2f} USD (every reply "
        "at max tokens), for the priced models"
    )
    if not priced and (unknown or own):  # "0.00 USD" would read as free
        cost_line = (
            "estimated cost: unknown: no model or judge that sends requests has a price "
            "(unpriced, not free)"
        )
    from deflectbench.cost import prices_as_of

    cost_line += (
        f"; prices: the bundled table as of {prices_as_of()} (src/deflectbench/models/prices.json)"
        ", and [prices] in the --config file before it"
    )
    out: list[RenderableType] = [t, Text(cost_line)]
    if unknown:
        out.append(
            Text(
                f'no price known for {", ".join(unknown)}: add [prices."NAME"] with '
                "input_per_mtok and output_per_mtok (USD per million tokens) to the --config file",
                style="yellow",
            )
        )
    if own:
        out.append(
            Text(
                f"self-hosted, not counted: {', '.join(own)} (your own server has no API price; "
                'give it one under [prices."NAME"] to count it against --max-cost)'
            )
        )
    if max_cost_usd is not None:
        out.append(Text(f"budget: stops at {max_cost_usd:,.2f} USD"))
    return out


def _self_hosted(name: str) -> bool:
    """A model on the user's own server: openai-compatible/, or a [providers.NAME] section
    that is not one of the API providers DeflectBench knows."""
    from deflectbench.models.providers import PROVIDERS

    provider = name.partition("/")[0]
    return provider == "openai-compatible" or provider not in PROVIDERS


def framing_tables(
    rows_by_model: Mapping[str, Sequence[Mapping[str, Any]]], judges: Sequence[str]
) -> list[Table]:
    """After a run: each model's outcome rates by framing (``analysis.tables.framing_outcomes``)."""
    out: list[Table] = []
    for model_name, table_rows in rows_by_model.items():
        t = Table(title=f"{model_name}: outcome by framing (consensus of {', '.join(judges)})")
        t.add_column("framing")
        t.add_column("n", justify="right")
        for col in ("refusal", "soft refusal", "labeled", "clean", "other"):
            t.add_column(col, justify="right")
        for r in table_rows:
            t.add_row(
                r["framing"],
                str(r["n"]),
                *(f"{100 * r[k]:.0f}%" for k in OUTCOMES),
            )
        out.append(t)
    return out


def status_tables(st: Mapping[str, Any], db: Any) -> list[RenderableType]:
    """What a results file holds, as the README says: per model and condition cells planned /
    generated / errors / no answer / missing; per judge judged / parse errors / errors; spent."""
    # a model name is kept whole (it is typed after -m), its condition on the line below, and
    # no rules between columns: the table fits 80 columns with the longest API names
    t = Table(title=f"Generations in {db}", box=None, pad_edge=False, header_style="bold underline")
    longest = max((len(m) for m in st["models"]), default=5)
    t.add_column("model / condition", no_wrap=True, min_width=min(longest, 40))
    for c in ("planned", "ok", "errors", "no answer", "missing"):
        t.add_column(c, justify="right", no_wrap=True)

    def row(name: str, condition: str, s: Mapping[str, Any]) -> None:
        no_answer = sum((s.get("non_answers") or {}).values())
        missing = max(0, s["planned"] - s["ok"] - s["errors"] - no_answer)
        t.add_row(
            Text(name + "\n") + Text(condition, style="dim"),
            f"{s['planned']:,}",
            f"{s['ok']:,}",
            f"{s['errors']:,}",
            f"{no_answer:,}",
            f"{missing:,}",
        )

    for m, s in st["models"].items():
        conditions = s.get("conditions") or {}
        if len(conditions) <= 1:
            row(m, next(iter(conditions), "-"), s)
            continue
        for cond, c in conditions.items():
            row(m, cond, c)
    judgments = Table(title="Judgments", box=None, pad_edge=False, header_style="bold underline")
    judgments.add_column("judge", no_wrap=True)
    for c in ("judged", "parse errors", "errors"):
        judgments.add_column(c, justify="right")
    for j, s in st["judges"].items():
        judgments.add_row(
            escape(j), f"{s['judged']:,}", f"{s['parse_errors']:,}", f"{s.get('errors', 0):,}"
        )
    out: list[RenderableType] = [t, judgments]
    if st.get("spent_usd") is not None:
        out.append(Text(f"spent: {st['spent_usd']:,.2f} USD (priced requests of every run)"))
    return out
