"""``deflectbench validate``: each judge, the consensus and the ``lexical`` judge against the
human labels, the annotators against each other, and the monitor against the consensus."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.cli.console import UserError, console, err
from deflectbench.cli.options import (
    DEFAULT_DB,
    AnalysisJudgesOption,
    BenchmarkOption,
    ConsensusOption,
    DbOption,
    ProgressOption,
    ResamplesOption,
    analysis_options,
    fit_resamples,
    open_store,
    split,
    stored_benchmark,
    write_json,
)
from deflectbench.cli.results import JudgeValuesOption

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.analysis.validity.load import ValidityInputs
    from deflectbench.benchmark import Benchmark
    from deflectbench.store import Store

#: Metric columns of the terminal tables: (column in the frame, header).
_METRICS = (
    ("accuracy", "acc"),
    ("kappa", "kappa"),
    ("ac1", "AC1"),
    ("precision", "prec"),
    ("recall", "recall"),
    ("f1", "F1"),
)


#: Outcome names narrow enough for the monitor's table.
_OUTCOME_SHORT = {"soft_refusal": "soft refusal", "labeled_compliance": "labeled"}


def _cell(row: Mapping[str, Any], metric: str) -> str:
    """A statistic over its 95% CI on a second, dimmed line ("–" where undefined)."""
    v = row.get(metric)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    lo, hi = row.get(f"{metric}_lo"), row.get(f"{metric}_hi")
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return f"{v:.2f}"
    return f"{v:.2f}\n[dim]{lo:.2f}–{hi:.2f}[/]"


def _table(title: str) -> Table:
    """A table narrow enough for 80 columns with six statistics over their CIs."""
    return Table(
        title=title,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        title_justify="left",
    )


def _short(field: str) -> str:
    """A field's short name, as the report writes it (imported on use: the report loads pandas,
    which ``--help`` must not)."""
    from deflectbench.views.report.tables import FIELD_SHORT

    return FIELD_SHORT.get(field, field)


def _rater_tables(frame: pd.DataFrame) -> list[Table]:
    out = []
    for rater, part in frame.groupby("rater", sort=False):
        t = _table(f"{escape(str(rater))} against the human labels")
        t.add_column("field", no_wrap=True, min_width=5)
        t.add_column("n", justify="right", no_wrap=True, min_width=3)
        for _, header in _METRICS:
            t.add_column(header, justify="right", no_wrap=True)
        for row in part.to_dict(orient="records"):
            name = _short(row["field"])
            t.add_row(name, str(row["n"]), *(_cell(row, m) for m, _ in _METRICS))
        out.append(t)
    return out


def _annotator_table(frame: pd.DataFrame) -> Table:
    t = _table("Inter-annotator agreement (pairs of annotators, generations both labeled)")
    for c in ("annotators", "field"):
        t.add_column(c, overflow="fold")
    t.add_column("n", justify="right", no_wrap=True)
    for header in ("agreement", "kappa", "AC1"):
        t.add_column(header, justify="right", no_wrap=True)
    for row in frame.to_dict(orient="records"):
        pair = f"{escape(row['annotator_a'])} / {escape(row['annotator_b'])}"
        cells = (_cell(row, m) for m in ("accuracy", "kappa", "ac1"))
        t.add_row(pair, _short(row["field"]), str(row["n"]), *cells)
    return t


def _monitor_table(frame: pd.DataFrame) -> Table:
    t = _table("The monitor (`deflectbench monitor`) against the consensus and the humans")
    t.add_column("reference", overflow="fold")
    t.add_column("outcome", no_wrap=True)
    t.add_column("n", justify="right", no_wrap=True)
    t.add_column("share", justify="right", no_wrap=True)
    for header in ("prec", "recall", "F1"):
        t.add_column(header, justify="right", no_wrap=True)
    for row in frame.to_dict(orient="records"):
        share = "–" if math.isnan(row["prevalence"]) else f"{100 * row['prevalence']:.1f}%"
        cells = (_cell(row, m) for m in ("precision", "recall", "f1"))
        outcome = _OUTCOME_SHORT.get(row["outcome"], row["outcome"])
        t.add_row(escape(row["reference"]), outcome, str(row["n"]), share, *cells)
    return t


def english_only(benchmark: Benchmark) -> str | None:
    """Why the lexical judge and the monitor (built on it) are left out for this pack: they
    match English phrases, so on answers in another language they would score nearly every
    answer 0 (the same rule ``run`` and ``judge`` apply); None for an English pack."""
    from deflectbench.errors import ConfigError
    from deflectbench.judging import lexical
    from deflectbench.judging.judges import check_judge_language

    try:
        check_judge_language([lexical.NAME], benchmark.language, benchmark.pack)
    except ConfigError:
        return (
            f"note: the {lexical.NAME} judge and the monitor are left out: they read English "
            f"only and pack {benchmark.pack} is in {benchmark.language!r} (they would score "
            "nearly every answer 0)"
        )
    return None


def _lexical_now(store: Store, benchmark: Benchmark, inputs: ValidityInputs) -> pd.DataFrame:
    """The lexical judge on the labeled generations, when the store has no lexical verdicts."""
    import pandas as pd

    from deflectbench.analysis.validity.load import LEXICAL, generation_texts
    from deflectbench.judging import lexical
    from deflectbench.vocab import FIELDS

    if LEXICAL in inputs.judges or not inputs.has_labels:
        return pd.DataFrame()
    texts = generation_texts(store, benchmark, inputs.reference.index.tolist())
    rows = [
        {"gen_id": int(g), "rater": lexical.NAME, **lexical.score(c, r).scores}
        for g, c, r in zip(texts["gen_id"], texts["claim"], texts["response"], strict=True)
    ]
    return pd.DataFrame(rows, columns=["gen_id", "rater", *FIELDS])


def _monitor_outcomes(
    store: Store, benchmark: Benchmark, inputs: ValidityInputs, progress: bool
) -> dict[int, str]:
    """The monitor's outcome for every scored or labeled generation."""
    from deflectbench.analysis.validity.load import generation_texts
    from deflectbench.cli.progress import StageBars
    from deflectbench.judging.monitor import monitor

    wanted = {*inputs.consensus["gen_id"].astype(int), *inputs.reference.index.astype(int)}
    texts = generation_texts(store, benchmark, sorted(wanted))
    ids = texts["gen_id"].astype(int).tolist()
    out: dict[int, str] = {}
    with StageBars(enabled=progress) as bars:
        advance = bars.stage("monitor", len(ids))
        workers = 2 if len(ids) >= 5000 else 1
        for g, flags in zip(ids, monitor(texts["response"], workers=workers), strict=True):
            out[g] = flags.outcome
            advance(True)
    return out


def render_validity(data: Mapping[str, Any], db: Path, pack: str = "") -> list[Table | Text]:
    """The validity JSON as terminal tables, saying plainly what is missing; ``pack`` names
    the pack the numbers are of (its title; see :func:`deflectbench.benchmark.title`)."""
    import pandas as pd

    from deflectbench.views.report.tables import FIELD_SHORT

    c, s = data["counts"], data["settings"]
    of = f" of {pack}" if pack else ""
    for_pack = f" for {pack}" if pack else ""
    out: list[Table | Text] = []
    if not c.get("used"):
        why = (
            f" ({c['unsure_left_out']} unsure left out: --include-unsure keeps them)"
            if c.get("unsure_left_out")
            else ""
        )
        if c.get("other_packs_left_out"):
            why += f" ({c['other_packs_left_out']:,} labels of other packs' generations)"
        out.append(
            Text(
                f"No human labels in --db {db}{for_pack}{why}: judge validity needs some. Label a "
                "sample with `deflectbench annotate`, then run `deflectbench validate` again.",
                style="bold yellow",
            )
        )
    else:
        other = c.get("other_packs_left_out") or 0
        out.append(
            Text(
                f"{c['used']:,} human labels of {c['labeled_generations']:,} generations{of} by "
                f"{c['annotators']} annotator(s) ({c['unsure_left_out']} unsure left out, "
                f"{c['ties']} tied fields left out"
                + (f", {other:,} labels of other packs left out" if other else "")
                + f"); consensus {s['consensus']}, judge values "
                f"{s['judge_values']}; 95% CIs from {s['n_resamples']:,} bootstrap resamples of "
                f"claims (seed {s['seed']}). Statistics over their CI; `–` where undefined. Fields: "
                + ", ".join(f"{v} {k}" for k, v in FIELD_SHORT.items())
                + "."
            )
        )
        raters = pd.DataFrame(data["judges_vs_humans"]).fillna(math.nan)
        if len(raters):
            out.extend(_rater_tables(raters))
        else:
            out.append(
                Text("No judge has scored the labeled generations: run `deflectbench judge`.")
            )
        pairs = pd.DataFrame(data["inter_annotator"]).fillna(math.nan)
        if len(pairs):
            out.append(_annotator_table(pairs))
        else:
            out.append(Text("Inter-annotator agreement: no generation labeled by two people."))
    mon = pd.DataFrame(data["monitor"]).fillna(math.nan)
    if len(mon):
        out.append(_monitor_table(mon))
    if note := (data.get("small_sample") or {}).get("note"):
        out.append(Text(note, style="yellow"))
    return out


def validate(
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write every number (with CIs and counts) as JSON to FILE; `-` prints "
            "only the JSON.",
        ),
    ] = None,
    annotator: Annotated[
        list[str] | None,
        typer.Option(
            "--annotator",
            "-a",
            help="Only these annotators' labels (repeat or comma-separate); default: everyone's.",
        ),
    ] = None,
    include_unsure: Annotated[
        bool,
        typer.Option(
            help="Keep labels their annotator marked unsure (left out by default: a validation "
            "set should hold what people are sure of)."
        ),
    ] = False,
    check_monitor: Annotated[
        bool,
        typer.Option(
            "--monitor/--no-monitor",
            help="Also score the monitor's refusal, soft-refusal and labeled-compliance flags "
            "against the consensus and the humans (runs it on every scored generation).",
        ),
    ] = True,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    judge_values: JudgeValuesOption = "said",
    resamples: ResamplesOption = 1000,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap draws (same seed, same CIs).")
    ] = 0,
    progress: ProgressOption = True,
    benchmark_name: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """How well the judges agree with people: judge validity, not just judge reliability.

    For each judge, the consensus and the rule-based `lexical` judge (scored now if the
    store has none of its verdicts), per rubric field against the human labels: accuracy,
    Cohen's kappa, Gwet's AC1, precision, recall, F1 and n, each with a 95% CI from a
    bootstrap that resamples claims (a claim's generations are not independent). Several
    annotators of one generation are combined by majority per field (a tie leaves the field
    out); pairs of annotators get their own agreement. Labels marked unsure are left out
    unless `--include-unsure`; a field left unset leaves only that field's n. The monitor
    (`deflectbench monitor`) is scored against the consensus of every scored generation and
    against the humans. One pack at a time: its generations, its labels (`--benchmark`; a
    store holding several packs needs it). The lexical judge and the monitor read English
    only, so a pack in another language is validated without them. Details: docs/validity.md.

    Examples:

        deflectbench validate

        deflectbench validate --json validity.json --annotator alice,bob

        deflectbench validate --consensus judge:lexical --no-monitor --json - | jq .counts

        deflectbench validate --benchmark deflectbench-v1-es --json validity-es.json
    """
    from deflectbench.analysis.validity.load import (
        read_validity_inputs,
        validity_from_inputs,
    )
    from deflectbench.benchmark.title import pack_title
    from deflectbench.cli.calibrate import render_validity_corrected, validity_corrected

    options = analysis_options(consensus, judge, judge_values, resamples, seed, fitted_later=True)
    store = open_store(db, must_exist=True)
    try:
        benchmark = stored_benchmark(store, benchmark_name)
        fit_resamples(resamples, benchmark)
        _check_annotators(split(annotator), store.annotators())
        inputs = read_validity_inputs(
            store,
            benchmark,
            options,
            include_unsure=include_unsure,
            annotators=split(annotator) or None,
        )
        left_out = english_only(benchmark)
        extra = None if left_out else _lexical_now(store, benchmark, inputs)
        outcomes = (
            _monitor_outcomes(store, benchmark, inputs, progress and json_out is None)
            if check_monitor and not left_out
            else None
        )
        corrected = (
            None
            if left_out or not inputs.has_labels
            else validity_corrected(
                store,
                benchmark,
                options,
                monitor=outcomes,
                include_unsure=include_unsure,
                annotators=split(annotator) or None,
            )
        )
    finally:
        store.close()
    title = pack_title(benchmark)
    if left_out:
        err.print(left_out, style="yellow", highlight=False, markup=False)
    if not inputs.has_labels and str(json_out) == "-":
        err.print(
            f"No human labels in --db {db} for {title}: label a sample with `deflectbench "
            "annotate` first.",
            style="yellow",
            highlight=False,
            markup=False,
        )
    validity = validity_from_inputs(inputs, extra_raters=extra, monitor=outcomes)
    data = validity.to_json()
    if left_out:
        data["settings"]["left_out"] = left_out.removeprefix("note: ")
    if corrected is not None:  # the cheap signals' rates corrected with the human labels
        data["corrected"] = corrected
    if write_json(data, json_out):
        return
    for part in render_validity(data, db, title):
        console.print(part)
    if corrected is not None:
        for table in render_validity_corrected(corrected):
            console.print(table)
    if json_out is not None:
        console.print(f"validity: {json_out.resolve()}", highlight=False, markup=False)


def _check_annotators(wanted: Sequence[str], known: Sequence[str]) -> None:
    from deflectbench.errors import did_you_mean

    for name in wanted:
        if name not in known:
            raise UserError(
                f"no labels by annotator {name!r}{did_you_mean(name, list(known))}; "
                f"annotators: {', '.join(known) or 'none yet'}"
            )
