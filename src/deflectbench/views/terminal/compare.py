"""The terminal's view of a comparison (:class:`~deflectbench.analysis.compare.api.Comparison`):
what was compared, the runs' manifests, per pair the overall differences (judged, then corrected for judge error), the outcomes
by framing (each table's caption names its Holm families and their sizes), and the flipped
cells. Read from the typed rows; text from a store or a reply is shown without markup or
control codes. Each cell is a ``Text`` made once (what its markup would read as), so rich
neither parses nor re-reads markup for the hundreds of cells a comparison has."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.markup import escape, render
from rich.table import Table
from rich.text import Text

from deflectbench.views.format import interval, num, pct, points, pval

if TYPE_CHECKING:
    from deflectbench.analysis.compare.api import Comparison
    from deflectbench.analysis.compare.rows import DiffRow

__all__ = ["FLIP_LIMIT", "comparison_view", "safe"]

FLIP_LIMIT = 10
MISSING = "-"


def _shown(text: Any) -> str:
    from deflectbench.escaping import terminal_safe
    from deflectbench.views.format import isnan

    return terminal_safe("" if isnan(text) else str(text))


def safe(text: Any) -> str:
    """Text from a store or a reply as the terminal shows it: no markup, no control codes
    (nothing for a missing value)."""
    return escape(_shown(text))


def cell(text: Any) -> Text:
    """:func:`safe` as a table's cell, read as the console reads that markup: the text itself
    when it holds no ``[`` or backslash (nearly every cell: nothing to parse), else rich's own
    reading of it (which shows a lone trailing backslash doubled, as the table always did)."""
    shown = _shown(text)
    if "[" in shown or "\\" in shown:
        return render(escape(shown), emoji=False)
    return Text(shown)


def _rate(x: Any) -> Text:
    return Text(pct(x, missing=MISSING))


def _diff(r: DiffRow) -> Text:
    """The difference in points over its CI on a second, dimmed line (80 columns)."""
    ci = interval(r.ci_lo, r.ci_hi, sep=", ", signed=True, missing="")
    text = Text(f"{points(r.diff, missing=MISSING)}\n")
    text.append(f"[{ci}]" if ci else MISSING, style="dim")
    return text


def _p(r: DiffRow) -> Text:
    return Text(pval(r.p_holm, missing=MISSING))


def _sides_table(c: Comparison) -> Table:
    t = Table(title="What was compared (as the stores record it)")
    for col in ("side", "condition", "served as", "deflectbench", "judges (verdicts)"):
        t.add_column(col, overflow="fold")
    for s in c.side_rows:
        t.add_row(
            cell(s.label), cell(s.condition or MISSING), cell(s.served), cell(s.versions),
            cell(s.judges),
        )  # fmt: skip
    return t


def _recorded_table(c: Comparison) -> Table:
    from deflectbench.analysis.compare.recorded import RECORDED_HEADER

    t = Table(title="Run manifests (as each run's clients recorded them)")
    for col in RECORDED_HEADER:
        t.add_column(col, overflow="fold")
    for row in c.recorded_rows:
        t.add_row(*(cell(v) for v in row))  # served ids, fingerprints: untrusted text
    return t


def families(rows: list[DiffRow]) -> str:
    """The Holm families of ``rows`` and their sizes, in order: ``outcomes overall (5 tests),
    fields overall (8 tests)``; families alike but for their measure as one item (``each
    measure by framing (7 tests each)``)."""
    seen = list(dict.fromkeys((r.holm_family, r.holm_m) for r in rows if r.holm_family))
    if not seen:
        return ""
    if len(seen) > 2:
        tails = {str(name).rsplit(" by ", 1)[-1] for name, _ in seen if " by " in str(name)}
        sizes = {m for _, m in seen}
        if len(tails) == 1 and len(sizes) == 1 and all(" by " in str(n) for n, _ in seen):
            fixed = "corrected " if str(seen[0][0]).startswith("corrected ") else ""
            return f"{fixed}each measure by {tails.pop()} ({sizes.pop()} tests each)"
    return ", ".join(f"{name} ({m} test{'s' if m != 1 else ''})" for name, m in seen)


def _caption(rows: list[DiffRow]) -> str | None:
    text = families(rows)
    return f"p (Holm) within: {escape(text)}" if text else None


def _pair_tables(rows: list[DiffRow], title: str, a_word: str, b_word: str) -> list[Table]:
    """The overall differences, the corrected ones (if any) and the outcomes by framing."""
    from deflectbench.views.terminal.tables import SHORT_FRAMING

    judged = [r for r in rows if not r.corrected]
    overall = Table(title=f"Overall: {title}")
    for col in ("measure", a_word, b_word, "diff [95% CI]", "p (Holm)", "h"):
        overall.add_column(col, justify="left" if col == "measure" else "right")
    overall.caption = _caption([r for r in judged if r.scope == "overall"])
    for r in judged:
        if r.scope == "overall":
            overall.add_row(
                cell(r.name), _rate(r.rate_a), _rate(r.rate_b), _diff(r), _p(r),
                Text(num(r.h, "+.2f", missing=MISSING)),
            )  # fmt: skip
    out = [overall]
    fixed = [r for r in rows if r.corrected and r.scope == "overall"]
    if fixed:
        ct = Table(
            title="Corrected for judge error, overall (unpaired CI: conservative)",
            caption=_caption(fixed),
        )
        for col in ("measure", a_word, b_word, "diff [95% CI]", "p (Holm)"):
            ct.add_column(col, justify="left" if col == "measure" else "right")
        for r in fixed:
            ct.add_row(cell(r.name), _rate(r.rate_a), _rate(r.rate_b), _diff(r), _p(r))
        out.append(ct)
    shown = [r for r in judged if r.scope == "framing" and r.kind == "outcome"]
    framed = Table(title=f"Outcomes by framing: {title}", caption=_caption(shown))
    for col in ("framing", "outcome", a_word, b_word, "diff [95% CI]", "p (Holm)"):
        framed.add_column(col, justify="left" if col in ("framing", "outcome") else "right")
    for r in judged:
        if r.scope == "framing" and r.kind == "outcome":
            framing = str(r.framing)
            framed.add_row(
                cell(SHORT_FRAMING.get(framing, framing)), cell(r.measure), _rate(r.rate_a),
                _rate(r.rate_b), _diff(r), _p(r),
            )  # fmt: skip
    out.append(framed)
    return out


def _flips(c: Comparison, a_word: str, b_word: str) -> RenderableType:
    flips = c.flip_rows
    if not flips:
        return "no cell (claim x template) changed its majority outcome"
    t = Table(title=f"Cells whose majority outcome changed: {len(flips)} (first {FLIP_LIMIT})")
    for col in ("claim", "template", a_word, b_word, f"{b_word} example"):
        t.add_column(col, overflow="fold")
    for f in flips[:FLIP_LIMIT]:
        t.add_row(
            cell(f.claim_id),
            cell(f.prompt_id),
            cell(f"{f.outcome_a} ({_rate(f.share_a)})"),
            cell(f"{f.outcome_b} ({_rate(f.share_b)})"),
            cell(f.example_b),
        )
    return t


def comparison_view(c: Comparison) -> list[RenderableType]:
    """Everything ``deflectbench compare`` prints on standard output, in order."""
    a_word, b_word = ("baseline", "new") if c.baseline else ("A", "B")
    out: list[RenderableType] = [_sides_table(c), _recorded_table(c)]
    for a, b in c.pairs:
        mine = [r for r in c.rows if r.model_a == a.label and r.model_b == b.label]
        title = f"{safe(b.label)} minus {safe(a.label)} ({b_word} - {a_word}, points)"
        out += _pair_tables(mine, title, a_word, b_word)
    out.append(_flips(c, a_word, b_word))
    out.append(
        f"[dim]p (Holm): adjusted within families (--holm-family {escape(c.holm_family)}); "
        "per-template rows and the fields by framing: --json, --csv or --html[/]"
    )
    return out
