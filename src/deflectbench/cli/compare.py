"""``deflectbench compare A B`` (and ``compare NEW --baseline OLD --fail-if ...``): two results
side by side, paired over claims, with a regression gate that exits 6."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from deflectbench.cli.calibrate import CorrectionOption
from deflectbench.cli.compare_page import (
    clean,
    html_page,
    html_table,
    interval,
    note,
    p_text,
    pct,
    write_csv_rows,
    write_json_rows,
    write_text,
)
from deflectbench.cli.console import UserError, console, err
from deflectbench.cli.options import (
    AnalysisJudgesOption,
    BenchmarkOption,
    ConsensusOption,
    ResamplesOption,
    analysis_options,
    open_store,
)

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.analysis.compare.api import Comparison

#: The exit code of a failed gate (README: exit codes).
GATE_FAILED = 6
#: The columns of ``--csv`` and of each ``--json`` row (``ci95`` is [lo, hi] in JSON).
ROW_COLUMNS = (
    "model_a",
    "model_b",
    "kind",
    "measure",
    "scope",
    "framing",
    "template",
    "corrected",
    "judges_differ",
    "rate_a",
    "rate_b",
    "diff",
    "ci95",
    "p",
    "p_holm",
    "h",
    "n_a",
    "n_b",
    "n_claims",
)
FLIP_LIMIT = 10

AllowJudgeChangeOption = Annotated[
    bool,
    typer.Option(
        "--allow-judge-change",
        help="Put side by side results judged by different judges, or by the same judges under "
        "another recorded manifest (another served model id or other parameters sent; refused "
        "by default: judges score differently, so a difference could be the judges'); the rows "
        "are marked. A judge's system fingerprint changing alone is only a note.",
    ),
]
FileOption = Annotated[Path | None, typer.Option(metavar="FILE", show_default=False)]


def table_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The comparison's rows as JSON has them (fractions; None where undefined)."""
    out = []
    for r in table.to_dict("records"):
        row = {c: clean(r.get(c)) for c in ROW_COLUMNS if c != "ci95"}
        row["ci95"] = [clean(r.get("ci_lo")), clean(r.get("ci_hi"))]
        out.append({c: row[c] for c in ROW_COLUMNS})
    return out


def flip_rows(flips: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: clean(v) for k, v in r.items()} for r in flips.to_dict("records")]


def _sides_json(result: Comparison) -> list[dict[str, Any]]:
    """Each pair's two manifests (what the store records of how each side was made)."""
    return [{"a": dict(a.manifest), "b": dict(b.manifest)} for a, b in result.pairs]


def _safe(text: str) -> str:
    """Text from a store or a reply as the terminal shows it: no markup, no control codes."""
    return escape(_terminal_text(text))


def _manifest_table(result: Comparison) -> Table:
    t = Table(title="What was compared (as the stores record it)")
    for c in ("side", "condition", "served as", "deflectbench", "judges (verdicts)"):
        t.add_column(c, overflow="fold")
    seen = set()
    for pair in result.pairs:
        for s in pair:
            if s.label in seen:
                continue
            seen.add(s.label)
            m = s.manifest or {}
            served = ", ".join(m.get("served_models") or {}) or "not recorded"
            versions = sorted(
                {
                    str(v.get("deflectbench"))
                    for v in m.get("versions") or []
                    if v.get("deflectbench")
                }
            )
            judges = ", ".join(f"{j} ({n:,})" for j, n in (m.get("judges") or {}).items())
            t.add_row(
                _safe(s.label),
                _safe(s.condition or "-"),
                _safe(served),  # the ids replies reported: untrusted text
                _safe(", ".join(versions) or "not recorded"),
                _safe(judges or ", ".join(s.judges)),
            )
    return t


def _recorded_rows(result: Comparison) -> list[list[str]]:
    """Each side's recorded run manifests (its model's, its judges'), one row each: side, role,
    name, run, served as, fingerprint, sent, items/s, output tokens/s. Provider text."""
    from deflectbench.analysis.manifests import cells

    out, seen = [], set()
    for pair in result.pairs:
        for s in pair:
            if s.label in seen:
                continue
            seen.add(s.label)
            recorded = (s.manifest or {}).get("recorded") or {}
            entries = [("model", s.model, r) for r in recorded.get("model") or []]
            for judge, rows in (recorded.get("judges") or {}).items():
                entries += [("judge", judge, r) for r in rows]
            if not entries:
                out.append([s.label, "-", "-", "-", *(["not recorded"] * 3), "-", "-"])
            for role, name, r in entries:
                c = cells(r)
                out.append(
                    [s.label, role, name, str(r.get("run_id", "")), c["served as"],
                     c["fingerprint"], c["sent"], c["items/s"], c["out tok/s"]]
                )  # fmt: skip
    return out


RECORDED_HEADER = ["side", "role", "name", "run", "served as", "fingerprint", "sent",
                   "items/s", "out tok/s"]  # fmt: skip


def _recorded_table(result: Comparison) -> Table:
    t = Table(title="Run manifests (as each run's clients recorded them)")
    for c in RECORDED_HEADER:
        t.add_column(c, overflow="fold")
    for row in _recorded_rows(result):
        t.add_row(*(_safe(v) for v in row))  # served ids, fingerprints: untrusted text
    return t


def _terminal(result: Comparison, baseline: bool) -> list[Any]:
    from deflectbench.views.terminal.tables import SHORT_FRAMING

    t = result.table
    out: list[Any] = []
    b_word = "B" if not baseline else "new"
    a_word = "A" if not baseline else "baseline"
    out.append(_manifest_table(result))
    out.append(_recorded_table(result))
    for a, b in result.pairs:
        mine = t[(t.model_a == a.label) & (t.model_b == b.label)]
        title = f"{_safe(b.label)} minus {_safe(a.label)} ({b_word} - {a_word}, points)"
        overall = Table(title=f"Overall: {title}")
        for c in ("measure", a_word, b_word, "diff [95% CI]", "p (Holm)", "h"):
            overall.add_column(c, justify="left" if c == "measure" else "right")
        judged = mine[~mine.corrected.astype(bool)]
        for r in judged[judged.scope == "overall"].itertuples(index=False):
            name = r.measure if r.kind == "outcome" else f"field {r.measure}"
            overall.add_row(
                escape(name),
                pct(r.rate_a),
                pct(r.rate_b),
                _diff(r.diff, r.ci_lo, r.ci_hi),
                p_text(r.p_holm),
                "-" if clean(r.h) is None else f"{r.h:+.2f}",
            )
        out.append(overall)
        fixed = mine[(mine.scope == "overall") & mine.corrected.astype(bool)]
        if len(fixed):
            ct = Table(title="Corrected for judge error, overall (unpaired CI: conservative)")
            for c in ("measure", a_word, b_word, "diff [95% CI]", "p (Holm)"):
                ct.add_column(c, justify="left" if c == "measure" else "right")
            for r in fixed.itertuples(index=False):
                ct.add_row(
                    escape(r.measure if r.kind == "outcome" else f"field {r.measure}"),
                    pct(r.rate_a),
                    pct(r.rate_b),
                    _diff(r.diff, r.ci_lo, r.ci_hi),
                    p_text(r.p_holm),
                )
            out.append(ct)
        framed = Table(title=f"Outcomes by framing: {title}")
        for c in ("framing", "outcome", a_word, b_word, "diff [95% CI]", "p (Holm)"):
            framed.add_column(c, justify="left" if c in ("framing", "outcome") else "right")
        rows = judged[(judged.scope == "framing") & (judged.kind == "outcome")]
        for r in rows.itertuples(index=False):
            framed.add_row(
                escape(SHORT_FRAMING.get(str(r.framing), str(r.framing))),
                escape(r.measure),
                pct(r.rate_a),
                pct(r.rate_b),
                _diff(r.diff, r.ci_lo, r.ci_hi),
                p_text(r.p_holm),
            )
        out.append(framed)
    flips = result.flips
    if len(flips):
        ft = Table(title=f"Cells whose majority outcome changed: {len(flips)} (first {FLIP_LIMIT})")
        for c in ("claim", "template", a_word, b_word, f"{b_word} example"):
            ft.add_column(c, overflow="fold")
        for r in flips.head(FLIP_LIMIT).itertuples(index=False):
            ft.add_row(
                escape(str(r.claim_id)),
                escape(str(r.prompt_id)),
                f"{escape(str(r.outcome_a))} ({pct(r.share_a)})",
                f"{escape(str(r.outcome_b))} ({pct(r.share_b)})",
                escape(_terminal_text(r.example_b)),
            )
        out.append(ft)
    else:
        out.append("no cell (claim x template) changed its majority outcome")
    out.append(
        "[dim]p (Holm): adjusted over every row of the comparison; per-template rows and the "
        "fields by framing: --json, --csv or --html[/]"
    )
    return out


def _diff(diff: Any, lo: Any, hi: Any) -> str:
    """The difference in points over its CI on a second, dimmed line (80 columns)."""
    lo, hi = clean(lo), clean(hi)
    ci = "-" if lo is None or hi is None else f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"
    return f"{pct(diff, signed=True)}\n[dim]{ci}[/]"


def _terminal_text(value: Any) -> str:
    from deflectbench.escaping import terminal_safe

    return terminal_safe("" if clean(value) is None else str(value))


def _html(result: Comparison, title: str) -> str:
    rows = table_rows(result.table)
    header = ["A", "B", "measure", "scope", "framing", "template", "rate A", "rate B", "diff",
              "95% CI", "p", "p (Holm)", "h", "other judges"]  # fmt: skip
    numeric = [False] * 6 + [True] * 7 + [False]
    body = [
        [
            r["model_a"], r["model_b"],
            r["measure"] if r["kind"] == "outcome" else f"field {r['measure']}",
            r["scope"], r["framing"] or "-", r["template"] or "-",
            pct(r["rate_a"]), pct(r["rate_b"]), pct(r["diff"], signed=True),
            interval(*r["ci95"]), p_text(r["p"]), p_text(r["p_holm"]),
            "-" if r["h"] is None else f"{r['h']:+.2f}",
            "yes" if r["judges_differ"] else "",
        ]
        for r in rows
    ]  # fmt: skip
    flips = flip_rows(result.flips)
    fbody = [
        [f["model_a"], f["model_b"], f["claim_id"], f["prompt_id"], f["framing"],
         f"{f['outcome_a']} ({pct(f['share_a'])})", f"{f['outcome_b']} ({pct(f['share_b'])})",
         f["example_a"] or "", f["example_b"] or ""]
        for f in flips
    ]  # fmt: skip
    fheader = ["A", "B", "claim", "template", "framing", "A's majority", "B's majority",
               "A example", "B example"]  # fmt: skip
    sections = [
        (
            "Differences (B minus A)",
            note(
                "Paired claim-block bootstrap: each resample draws the same claims for both "
                "sides; 95% percentile CI in points; p from the bootstrap's standard error, "
                "Holm-adjusted over every row."
            )
            + html_table(header, body, numeric, [bool(r["judges_differ"]) for r in rows]),
        ),
        (
            f"Cells whose majority outcome changed ({len(flips)})",
            html_table(fheader, fbody) if flips else note("none"),
        ),
        ("Run manifests", html_table(RECORDED_HEADER, _recorded_rows(result))),
    ]
    return html_page(
        title, "deflectbench compare", sections, [*result.judge_notes, *result.manifest_notes]
    )


def _flag_pairs(result: Comparison) -> None:
    for line in result.judge_notes:
        err.print(f"flagged: {line} (--allow-judge-change)", style="yellow", markup=False)
    for line in result.manifest_notes:
        err.print(f"note: {line}", style="yellow", markup=False, highlight=False)


def compare(
    a: Annotated[
        str,
        typer.Argument(
            metavar="A",
            help="A results store, or STORE:MODEL[:CONDITION]; with --baseline, the new side.",
            show_default=False,
        ),
    ],
    b: Annotated[
        str | None,
        typer.Argument(
            metavar="B",
            help="The other side, as A (differences are B minus A).",
            show_default=False,
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="OLD",
            help="Compare A against this baseline (differences are A minus OLD).",
            show_default=False,
        ),
    ] = None,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            metavar="RULE",
            help="Exit 6 when a difference's whole 95% CI lies beyond RULE: 'refusal < -5pp', "
            "'clean_compliance > +3pp@coach' (@FRAMING or @TEMPLATE; field:NAME for a field). "
            "Repeatable.",
            show_default=False,
        ),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help='Write every row as JSON ({"rows": [...]}); `-` prints only the JSON.',
            show_default=False,
        ),
    ] = None,
    csv_out: Annotated[
        Path | None,
        typer.Option("--csv", metavar="FILE", help="Write every row as CSV.", show_default=False),
    ] = None,
    html_out: Annotated[
        Path | None,
        typer.Option(
            "--html", metavar="FILE", help="Write a self-contained HTML page.", show_default=False
        ),
    ] = None,
    allow_judge_change: AllowJudgeChangeOption = False,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    judge_values: Annotated[
        str, typer.Option(metavar="rules|said", help="Judge values to combine (as analyze).")
    ] = "said",
    compat: Annotated[
        str, typer.Option(metavar="paper|release", help="The definition (as analyze).")
    ] = "paper",
    correction: CorrectionOption = "ppi",
    resamples: ResamplesOption = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the shared claim draws.")] = 0,
    benchmark: BenchmarkOption = None,
    benchmark_b: Annotated[
        str | None,
        typer.Option(
            "--benchmark-b",
            metavar="NAME|FILE",
            help="Another pack for the second side (B, or A with --baseline), to compare one "
            "pack with another of the same claims (e.g. deflectbench-v1-controlled).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Two results side by side: two stores (the same models in two runs), two models of one
    store, or two conditions of one model (`STORE:MODEL[:CONDITION]`). For every outcome and
    each of the 8 fields, overall, per framing and per template: both rates, the difference
    with a 95% CI from a paired claim-block bootstrap (the same claim draws for both sides), a
    p-value Holm-adjusted across the table, Cohen's h; and the cells (claim x template) whose
    majority outcome changed. Results judged by different judges are refused unless
    `--allow-judge-change`. Where both sides' stores hold human labels, the rates corrected for
    judge error are compared too (rows with `corrected` true; an unpaired, conservative CI).

    As a regression gate: `compare NEW --baseline OLD --fail-if "refusal < -5pp"` exits 6 when
    a difference's whole CI lies beyond a rule (one line per failure), 0 otherwise.

    Examples:

        deflectbench compare deflectbench.db:gpt-5.5 deflectbench.db:grok-4.3 --html cmp.html

        deflectbench compare old.db new.db --json diff.json

        deflectbench compare new.db --baseline old.db --fail-if "refusal < -5pp" --fail-if "clean_compliance > +3pp@coach"
    """
    from dataclasses import replace

    from deflectbench.analysis.calibration.corrected import check_correction
    from deflectbench.analysis.compare.api import compare_sides
    from deflectbench.analysis.compare.corrected import with_corrected
    from deflectbench.analysis.compare.manifest import with_manifest
    from deflectbench.analysis.compare.select import pair_sides, parse_selector, read_sides
    from deflectbench.analysis.compare.thresholds import check_thresholds, parse_threshold
    from deflectbench.analysis.compat.quirks import check_compat
    from deflectbench.benchmark import resolve_benchmark
    from deflectbench.benchmark.packs import pack_by_key

    if baseline is not None and b is not None:
        raise UserError("give B or --baseline OLD, not both (with --baseline, A is the new side)")
    if baseline is None and b is None:
        raise UserError("compare needs two sides: A B, or NEW --baseline OLD")
    rules = [parse_threshold(t) for t in fail_if or []]
    old, new = (baseline, a) if baseline is not None else (a, b)
    assert old is not None and new is not None
    options = replace(
        analysis_options(consensus, judge, judge_values, resamples, seed),
        compat=check_compat(compat),
        correction=check_correction(correction),
    )
    pack = resolve_benchmark(benchmark) if benchmark else None
    packs = (pack, resolve_benchmark(benchmark_b) if benchmark_b else pack)
    sides, texts = [], {}
    for text, pack in zip((old, new), packs, strict=True):
        selector = parse_selector(text)
        store = open_store(selector.store, must_exist=True)
        try:
            found = [with_manifest(store, s) for s in read_sides(store, selector, options, pack)]
            of = pack or (pack_by_key(found[0].pack) if found else None)
            sides.append([with_corrected(store, s, of, options) if of else s for s in found])
            texts[str(store.path)] = {
                r["gen_id"]: r["response"]
                for r in store.generation_rows(include_errors=False, columns=["gen_id", "response"])
            }
        finally:
            store.close()
    result = compare_sides(
        pair_sides(sides[0], sides[1]), options, allow_judge_change=allow_judge_change, texts=texts
    )
    failures = check_thresholds(result.table, rules)
    _flag_pairs(result)
    rows = table_rows(result.table)
    if json_out is not None:
        write_json_rows(
            json_out,
            {
                "rows": rows,
                "flips": flip_rows(result.flips),
                "sides": _sides_json(result),
                "judge_notes": list(result.judge_notes),
                "manifest_notes": list(result.manifest_notes),
                "gate": {
                    "rules": [t.text for t in rules],
                    "failures": [f.line() for f in failures],
                },
                "method": {
                    "bootstrap": "paired claim-block (same claim draws for both sides)",
                    "resamples": resamples,
                    "seed": seed,
                    "p": "two-sided, from the bootstrap standard error",
                    "p_holm": "Holm over every row (judged rates one family)",
                    "diff": "B minus A" if baseline is None else "new minus baseline",
                },
            },
        )
    if csv_out is not None:
        write_csv_rows(csv_out, rows, ROW_COLUMNS)
    if html_out is not None:
        title = f"{new} vs {old}" if baseline is not None else f"{old} vs {new}"
        write_text(html_out, _html(result, title), "--html")
    if str(json_out) != "-":
        for part in _terminal(result, baseline is not None):
            console.print(part)
    for f in failures:
        err.print(f.line(), markup=False, highlight=False, soft_wrap=True)
    if rules:
        if failures:
            raise typer.Exit(GATE_FAILED)
        err.print(
            f"gate passed: no difference's 95% CI lies wholly beyond {len(rules)} rule(s)",
            markup=False,
            highlight=False,
        )
