"""The tables the terminal shows for the benchmark, an import and the analysis, rendered with
rich from the library's results."""

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


# -- spec -----------------------------------------------------------------------------------


def spec_tables(summary: Mapping[str, Any]) -> list[Table]:
    """The benchmark at a glance: claims by level and context, by domain; templates by framing."""
    t = Table(title="Claims by controversy level and context")
    t.add_column("level")
    for ctx in ("us", "international"):
        t.add_column(ctx, justify="right")
    t.add_column("total", justify="right")
    for level, row in summary["claims_by_level_context"].items():
        t.add_row(
            level, *(str(row.get(c, 0)) for c in ("us", "international")), str(sum(row.values()))
        )
    by_domain = Table(title="Claims by domain")
    by_domain.add_column("domain")
    by_domain.add_column("claims", justify="right")
    for domain, n in summary["claims_by_domain"].items():
        by_domain.add_row(domain, str(n))
    templates = Table(title="Templates by framing and requested fallacy")
    templates.add_column("framing")
    templates.add_column("#", justify="right")
    templates.add_column("templates (requested fallacy)")
    for framing, items in summary["templates_by_framing"].items():
        templates.add_row(
            framing, str(len(items)), ", ".join(f"{i['prompt_id']} ({i['fallacy']})" for i in items)
        )
    return [t, by_domain, templates]


def claims_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """``spec --claims``: every claim id with its level, context, domain and text."""
    from deflectbench.vocab import LEVEL_NAMES

    levels = ", ".join(f"{n} {name.replace('_', ' ')}" for n, name in LEVEL_NAMES.items())
    t = Table(title=f"Claims ({len(rows)})", caption=f"levels: {levels}")
    t.add_column("id", no_wrap=True)
    t.add_column("level", justify="right")
    t.add_column("context")
    t.add_column("domain")
    t.add_column("text", overflow="fold")
    for r in rows:
        t.add_row(
            escape(r["claim_id"]),
            str(r["level"]),
            escape(r["context"]),
            escape(r["domain"]),
            escape(r["text"]),
        )
    return t


def templates_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """``spec --templates``: every template id with its framing, requested fallacy and
    explicitness (``spec --framings`` shows the texts)."""
    t = Table(title=f"Templates ({len(rows)})", caption="texts: deflectbench spec --framings")
    t.add_column("id", no_wrap=True)
    t.add_column("framing")
    t.add_column("fallacy")
    t.add_column("explicitness")
    for r in rows:
        t.add_row(
            escape(r["prompt_id"]),
            escape(r["framing"]),
            escape(r["fallacy"]),
            escape(r["explicitness"]),
        )
    return t


def framings_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """``spec --framings``: each framing, its templates and the text each one sends."""
    t = Table(
        title=f"Framings ({len(rows)})",
        caption="{claim}, {speaker}, {fallacy_def} and {all_definitions} are filled per prompt",
    )
    t.add_column("framing", no_wrap=True)
    t.add_column("template", no_wrap=True)
    t.add_column("text", overflow="fold")
    for r in rows:
        members = r["templates"]
        for i, x in enumerate(members):
            label = ""
            if i == 0:
                label = f"{escape(r['framing'])}\n[dim]{escape(', '.join(r['explicitness']))}[/]"
            t.add_row(
                label,
                escape(x["prompt_id"]),
                escape(x["template"]),
                end_section=i == len(members) - 1,
            )
    return t


def fallacies_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """``spec --fallacies``: each fallacy, its definition and the templates that request it."""
    t = Table(
        title=f"Fallacies ({len(rows)})",
        caption="model_choice and any templates let the model pick",
        show_lines=True,
    )
    t.add_column("id", no_wrap=True)
    t.add_column("definition", overflow="fold")
    t.add_column("templates", overflow="fold")
    for r in rows:
        t.add_row(
            escape(r["fallacy_id"]),
            escape(r["definition"]),
            "\n".join(escape(x) for x in r["templates"]),
        )
    return t


# -- import ---------------------------------------------------------------------------------


def import_table(report: Any, db: Any) -> Table:
    """One row per file read by an import: its kind, lines, new, already present, skipped."""
    t = Table(title=f"Imported into {db}")
    t.add_column("file", overflow="fold")
    for c in ("kind", "lines", "new", "already present", "skipped"):
        t.add_column(c, justify="left" if c == "kind" else "right")
    for f in report.files:
        t.add_row(
            escape(str(f.path)),
            f.kind,
            str(f.read),
            str(f.imported),
            str(f.already_present),
            str(f.skipped),
        )
    return t


# -- analyze --------------------------------------------------------------------------------


def _definition(summary: Mapping[str, Any]) -> str:
    """Which definition the numbers follow, in a few words."""
    if summary.get("compat") == "release":
        return "the release script's computation (--compat release; see `deflectbench audit`)"
    values = summary.get("judge_values", "said")
    return "the paper's definition" + (
        "" if values == "said" else f" with judge values '{escape(str(values))}'"
    )


def breakdown_tables(summary: Mapping[str, Any]) -> list[Table]:
    """The paper's breakdowns: refusal by level and context, the fallacy-type swing, coach
    framing as field rates (E.3), and fallacy density by outcome (G)."""
    out: list[Table] = []
    a = summary["appendix"]
    by_level = {(r["model"], str(r["level"])): r for r in a.get("by_model_level", [])}
    by_ctx = {(r["model"], r["context"]): r for r in a.get("by_model_context", [])}
    levels = sorted({lv for _, lv in by_level})
    contexts = [x for x in CONTEXTS if any(k[1] == x for k in by_ctx)]
    if levels or contexts:
        t = Table(title="Refusal rate by controversy level and by context")
        t.add_column("model", overflow="fold")
        for lv in levels:
            t.add_column(f"L{lv}", justify="right")
        for x in contexts:
            t.add_column("US" if x == "us" else "intl", justify="right")
        for model in summary["models"]:
            cells = [_pct((by_level.get((model, lv)) or {}).get("refusal")) for lv in levels]
            cells += [_pct((by_ctx.get((model, x)) or {}).get("refusal")) for x in contexts]
            t.add_row(escape(model), *cells)
        out.append(t)
    swings = a.get("fallacy_swing") or []
    if swings:
        t = Table(
            title="Refusal swing between requested fallacies, within an explicit framing",
            caption="per model, the framing where the requested fallacy alone moves refusal most",
        )
        for col in ("model", "framing", "highest", "lowest", "swing"):
            t.add_column(col, justify="right" if col == "swing" else "left", overflow="fold")
        for r in swings:
            t.add_row(
                escape(r["model"]),
                escape(r["framing"]),
                f"{escape(r['template_high'])} {_pct(r['rate_high'])}",
                f"{escape(r['template_low'])} {_pct(r['rate_low'])}",
                f"{100 * r['swing']:.1f} pts",
            )
        out.append(t)
    coach = a.get("coach_field_rates") or []
    if coach:
        t = Table(
            title="Coach framing (E.3): labeled / clean rate by requested fallacy",
            caption="field rates (each field's consensus = 1), not outcome shares",
        )
        fallacies = sorted({r["fallacy_requested"] for r in coach})
        t.add_column("model", overflow="fold")
        for f in fallacies:
            t.add_column(escape(f.replace("_", " ")), justify="right")
        cells = {(r["model"], r["fallacy_requested"]): r for r in coach}
        for model in dict.fromkeys(r["model"] for r in coach):
            row = [cells.get((model, f)) for f in fallacies]
            t.add_row(
                escape(model),
                *(
                    f"{_pct(r['fallacy_labeled'])} / {_pct(r['compliance_clean'])}" if r else "–"
                    for r in row
                ),
            )
        out.append(t)
    density = a.get("fallacy_density_by_outcome") or []
    if density:
        t = Table(title="Fallacies per 100 output tokens, by outcome (G)")
        t.add_column("model", overflow="fold")
        for label in ("refusal", "soft refusal", "labeled", "clean", "other"):
            t.add_column(label, justify="right")
        cells = {(r["model"], r["outcome"]): r["fallacy_density"] for r in density}
        for model in summary["models"]:
            t.add_row(escape(model), *(_num(cells.get((model, o))) for o in OUTCOMES))
        out.append(t)
    return out


def render_terminal(summary: Mapping[str, Any]) -> list[Table]:
    """The headline tables of an :func:`analyze` summary, for a rich Console.

    Signature per model (outcome rates with 95% CIs, and a note when a CI rests on fewer than
    10 claims), judge agreement (kappa beside AC1), refusal by framing, the breakdowns
    (:func:`breakdown_tables`), and the tests (chi-square, TOST by controversy level).
    """
    c = summary["counts"]
    out: list[Table] = []
    caption = (
        f"{c['attempted']:,} attempted, {c['valid_generations']:,} valid, {c['scored']:,} scored "
        f"by {escape(', '.join(c['judges'])) or 'no judge'} (consensus: {escape(summary['consensus'])}); 95% CIs "
        f"from {summary['n_resamples']:,} block-bootstrap resamples of claims; "
        + _definition(summary)
    )
    note = (summary.get("small_sample") or {}).get("note")
    if note:
        caption += f"\n[yellow]{escape(note)}[/]"
    t = Table(title="Signature: outcome rates per model, 95% CI below", caption=caption)
    t.add_column("model", overflow="fold")
    t.add_column("n", justify="right")
    for label in ("refusal", "soft refusal", "labeled", "clean", "other"):
        t.add_column(label, justify="right")
    for model, m in summary["models"].items():
        t.add_row(escape(model), f"{m['n']:,}", *(_ci(m["outcomes"].get(k)) for k in OUTCOMES))
    out.append(t)

    agreement = summary.get("agreement") or {}
    if agreement:
        pairs = {(p["judge_a"], p["judge_b"]) for p in summary.get("agreement_pairs", [])}
        who = (
            escape(" vs ".join(next(iter(pairs))))
            if len(pairs) == 1
            else f"mean of {len(pairs)} judge pairs"
        )
        t = Table(
            title=f"Judge agreement per field ({who})",
            caption=(
                "kappa drops when a label is rare or near-universal (prevalence skew) even if the "
                "judges rarely disagree; AC1 does not: low kappa + high AC1 + low disagreement = skew"
            ),
        )
        for col in ("field", "kappa", "AC1", "disagreement", "n"):
            t.add_column(col, justify="left" if col == "field" else "right")
        for f, a in agreement.items():
            row = (_num(a["kappa"]), _num(a["ac1"]), _pct(a["disagreement"]), f"{a['n']:,}")
            t.add_row(f, *row)
        out.append(t)

    framings = [
        f for f in FRAMINGS if any(f in m["by_framing"] for m in summary["models"].values())
    ]
    if framings:
        t = Table(title="Refusal rate by framing")
        t.add_column("model", overflow="fold")
        for f in framings:
            t.add_column(SHORT_FRAMING.get(f, f), justify="right")
        for model, m in summary["models"].items():
            cells = (_pct((m["by_framing"].get(f) or {}).get("refusal")) for f in framings)
            t.add_row(escape(model), *cells)
        out.append(t)

    out += breakdown_tables(summary)

    tests = summary["tests"]
    t = Table(title="Tests")
    t.add_column("test")
    t.add_column("result", justify="right")
    t.add_column("p", justify="right")
    t.add_column("conclusion")
    chi = tests["chi2_model_by_outcome"]
    if len(summary["counts"]["models"]) < 2 or not chi["dof"]:
        t.add_row("chi-square, model x outcome", "n/a", "", "needs two or more models")
    else:
        t.add_row(
            "chi-square, model x outcome",
            f"X2 = {_num(chi['statistic'], ',.1f')}, dof {chi['dof']}, "
            f"V = {_num(chi.get('cramers_v'))}",
            _p(chi["p_value"]),
            "outcomes differ by model"
            if chi["p_value"] is not None and chi["p_value"] < 0.05
            else "no evidence of a difference",
        )
    for r in tests["tost_levels"]:
        margin = 100 * (r.get("margin") or 0.05)
        verdict = f"equivalent (±{margin:g} pp)" if r["equivalent"] else "not shown equivalent"
        clustered = r.get("equivalent_clustered")
        if clustered is not None:
            verdict += f"; claim-clustered: {'yes' if clustered else 'no'}"
        t.add_row(
            f"TOST refusal, level {r['level_a']} vs {r['level_b']}",
            f"diff {100 * r['diff']:+.1f} pp" + _tost_interval(r),
            _p(r["p_value"]),
            verdict,
        )
    out.append(t)
    return out
