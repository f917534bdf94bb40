"""The tables the terminal shows for a run: the dry run's estimate, the outcome by framing
after a run, the status of a results file, its batches and its manifests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.judging.judges import is_rule_based
from deflectbench.views.format import compact
from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.dry_run import Estimate
    from deflectbench.results.status import Counts, ManifestRow, StatusResult


# -- run ------------------------------------------------------------------------------------


def estimate_view(est: Estimate) -> list[RenderableType]:
    """The dry run's table of requests, tokens and cost per model and judge, then the expected
    and worst-case totals and what has no price."""
    t = Table(title=f"Dry run: {est.units:,} {est.of}; nothing was sent")
    t.add_column("role")
    t.add_column("name", overflow="fold")
    for c in ("done", "to send", "tok in", "tok out", "USD", "USD max"):
        t.add_column(c, justify="right")
    total, total_max, priced = 0.0, 0.0, 0
    unknown: list[str] = []
    own: list[str] = []
    self_hosted = est.self_hosted
    for row in est.rows:
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
                (own if row.name in self_hosted else unknown).append(row.name)
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
            compact(row.input_tokens),
            compact(row.output_tokens),
            cost,
            cost_max,
        )
    lines = _estimate_lines(total, total_max, priced, unknown, own, est.max_cost)
    notes = [Text(x) for x in (*est.sources, *est.limits)]
    notes += [Text(x, style="yellow") for x in est.warnings]
    return [t, *lines, *notes]


def _estimate_lines(
    total: float,
    total_max: float,
    priced: int,
    unknown: list[str],
    own: list[str],
    max_cost: float | None,
) -> list[RenderableType]:
    from deflectbench.cost import prices_as_of

    cost_line = (
        f"estimated cost: {total:,.2f} USD expected, at most {total_max:,.2f} USD (every reply "
        "at max tokens), for the priced models"
    )
    if not priced and (unknown or own):  # "0.00 USD" would read as free
        cost_line = (
            "estimated cost: unknown: no model or judge that sends requests has a price "
            "(unpriced, not free)"
        )
    cost_line += (
        f"; prices: the bundled table as of {prices_as_of()} (src/deflectbench/models/prices.json)"
        ", and [prices] in the --config file before it"
    )
    out: list[RenderableType] = [Text(cost_line)]
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
    if max_cost is not None:
        out.append(Text(f"budget: stops at {max_cost:,.2f} USD"))
    return out


def framing_tables(framing: pd.DataFrame, judges: Sequence[str]) -> list[Table]:
    """After a run: each model's outcome rates by framing (:attr:`RunResult.framing`)."""
    out: list[Table] = []
    if framing.empty:
        return out
    for model_name, rows in framing.groupby("model", sort=False):
        t = Table(title=f"{model_name}: outcome by framing (consensus of {', '.join(judges)})")
        t.add_column("framing")
        t.add_column("n", justify="right")
        for col in ("refusal", "soft refusal", "labeled", "clean", "other"):
            t.add_column(col, justify="right")
        for r in rows[["framing", "n", *OUTCOMES]].itertuples(index=False):
            t.add_row(r[0], str(r[1]), *(f"{100 * x:.0f}%" for x in r[2:]))
        out.append(t)
    return out


# -- status ---------------------------------------------------------------------------------


def status_tables(st: StatusResult) -> list[RenderableType]:
    """What a results file holds, as the README says: per model and condition cells planned /
    generated / errors / no answer / missing; per judge judged / parse errors / errors; spent."""
    # a model name is kept whole (it is typed after -m) or, longer than the column, broken
    # after a / - or _ of its own; its condition on the line below, and no rules between
    # columns: the table fits 80 columns with the longest API names
    t = Table(
        title=f"Generations in {st.db}", box=None, pad_edge=False, header_style="bold underline"
    )
    longest = max((len(m) for m in st.models), default=5)
    t.add_column("model / condition", overflow="fold", min_width=min(longest, 40))
    for c in ("planned", "ok", "errors", "no answer", "missing"):
        t.add_column(c, justify="right", no_wrap=True)

    def row(name: str, condition: str, s: Counts) -> None:
        t.add_row(
            Text(name + "\n") + Text(condition, style="dim"),
            f"{s.planned:,}",
            f"{s.ok:,}",
            f"{s.errors:,}",
            f"{s.no_answer:,}",
            f"{s.missing:,}",
        )

    for m, ms in st.models.items():
        if len(ms.conditions) <= 1:
            row(m, next(iter(ms.conditions), "-"), ms)
            continue
        for cond, counts in ms.conditions.items():
            row(m, cond, counts)
    judgments = Table(title="Judgments", box=None, pad_edge=False, header_style="bold underline")
    judgments.add_column("judge", overflow="fold")
    for c in ("judged", "parse errors", "errors"):
        judgments.add_column(c, justify="right")
    for j, js in st.judges.items():
        judgments.add_row(escape(j), f"{js.judged:,}", f"{js.parse_errors:,}", f"{js.errors:,}")
    out: list[RenderableType] = [t, judgments]
    if st.spent_usd is not None:
        out.append(Text(f"spent: {st.spent_usd:,.2f} USD (priced requests of every run)"))
    return out


def batch_table(rows: Sequence[Any]) -> Table | None:
    """Each batch: provider, id, state, counts, age (the newest 20 collected ones)."""
    from deflectbench.results.status import batch_state

    if not rows:
        return None
    open_rows = [r for r in rows if r.state in ("submitting", "open")]
    shown = open_rows + [r for r in rows if r not in open_rows][-20:]
    table = Table(title="batches", title_justify="left")
    for col in ("provider", "model", "kind", "batch id", "state", "items", "counts", "age"):
        table.add_column(col, justify="right" if col in ("items", "age") else "left")
    for r in shown:
        counts = ", ".join(f"{k} {v}" for k, v in r.counts.items() if v)
        table.add_row(
            r.wire,
            r.model,
            r.kind,
            r.remote_id or "(not yet known)",
            batch_state(r),
            str(r.items),
            counts,
            _age(r.created_at),
            style="yellow" if r.error else None,
        )
    return table


def _age(created_at: str) -> str:
    created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    seconds = int((datetime.now(UTC) - created).total_seconds())
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def manifest_tables(rows: Sequence[ManifestRow]) -> list[Any]:
    """The latest run's manifest of each model (and condition) and judge, as two tables (what
    was run; throughput at the client); none for a store without a manifest. Every cell is
    provider text made safe for the terminal."""
    from deflectbench.analysis.manifests import cells
    from deflectbench.escaping import terminal_safe

    latest: dict[tuple[str, str, str | None], ManifestRow] = {}
    for r in rows:  # oldest run first: the last one wins
        latest[(r.role, r.name, r.condition)] = r
    if not latest:
        return []
    what = Table(title="Manifest: what the latest run of each ran (status --json: every run)")
    speed = Table(title="Throughput measured at the client (latest run of each)")
    heads = (
        ("served as", "fingerprint", "sent", "server"),
        ("requests", "tokens in / out", "wall s", "items/s", "out tok/s", "spent USD"),
    )
    for t, names in zip((what, speed), heads, strict=True):
        t.add_column("model / judge", overflow="fold")
        for c in names:
            t.add_column(c, overflow="fold", justify="left" if t is what else "right")
    for (role, name, condition), r in latest.items():
        label = ("judge " if role == "judge" else "") + name
        label += f" [{condition}]" if condition else ""
        shown = cells(r.to_json())
        for t, names in zip((what, speed), heads, strict=True):
            values = [label, *(shown[c] for c in names)]
            t.add_row(*(escape(terminal_safe(str(v))) for v in values))
    return [what, speed, *_endpoint_table(latest)]


def _endpoint_table(latest: Mapping[tuple[str, str, str | None], ManifestRow]) -> list[Any]:
    """Per endpoint of a model served by several (``endpoints = [...]``): requests, failures
    and the claims moved away from it while it was down; none when no model has endpoints."""
    from deflectbench.escaping import terminal_safe

    t = Table(title="Endpoints: what each replica did (latest run of each)")
    for c in ("model / judge", "endpoint", "requests", "failures", "moved claims", "now"):
        t.add_column(
            c,
            overflow="fold",
            justify="left" if c in ("model / judge", "endpoint", "now") else "right",
        )
    for (role, name, _), r in latest.items():
        for e in r.manifest.get("endpoints") or []:
            if not isinstance(e, Mapping):
                continue
            label = ("judge " if role == "judge" else "") + name
            now = "set aside" if e.get("set_aside") else "up"
            values = [
                label,
                e.get("endpoint"),
                e.get("requests"),
                e.get("failures"),
                e.get("moved"),
                now,
            ]
            t.add_row(*(escape(terminal_safe(str(v))) for v in values))
    return [t] if t.row_count else []
