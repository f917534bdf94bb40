"""``deflectbench calibrate``: the judges against the people, as a correction: sensitivity and
specificity per judge and field, how far the correction moves each rate, and how many more
labels would make every headline rate's corrected CI narrow enough."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.cli.console import UserError, console
from deflectbench.cli.options import (
    DEFAULT_DB,
    AnalysisJudgesOption,
    BenchmarkOption,
    ConsensusOption,
    DbOption,
    ResamplesOption,
    analysis_options,
    fit_resamples,
    open_store,
    split,
    stored_benchmark,
    write_json,
)

#: ``--correction`` (the choices as in ``analysis.calibration.corrected.CORRECTIONS``).
CorrectionOption = Annotated[
    str,
    typer.Option(
        metavar="ppi|rogan-gladen|none",
        help="How human labels correct the judges' rates: ppi (default; PPI++, the judged "
        "rate plus the labelled items' mean error, power-tuned), rogan-gladen (the judged rate "
        "through the consensus' sensitivity and specificity) or none (judged rates only). "
        "Applies when the store holds human labels of the pack (docs/validity.md).",
    ),
]
#: ``--pool-models``: one calibration for every model.
PoolModelsOption = Annotated[
    bool,
    typer.Option(
        "--pool-models",
        help="Calibrate with every model's labels together (default: each model's own "
        "labels, as a judge errs differently on different models).",
    ),
]
#: How to get labels, said wherever corrected rates are missing for want of them.
HOW_TO_LABEL = (
    "label a sample with `deflectbench annotate` (or import a label file: docs/validity.md)"
)


def no_labels_line(db: Path, pack: str, counts: Mapping[str, Any] | None = None) -> str:
    """The one line said when a pack has no human labels to correct the judges with."""
    other = int((counts or {}).get("other_packs_left_out") or 0)
    unsure = int((counts or {}).get("unsure_left_out") or 0)
    why = f" ({other:,} labels of other packs' generations left out)" if other else ""
    why += f" ({unsure} unsure labels left out)" if unsure else ""
    return (
        f"No human labels of {pack} in --db {db}{why}: the rates are the judges', and their "
        f"CIs cover claim sampling only, not judge error. To correct them, {HOW_TO_LABEL}."
    )


def _pct(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x + 0.0:.{digits}f}".replace("-0.0", "0.0")


def _est(e: Mapping[str, Any]) -> str:
    """A rate with its CI, or the estimate's note when it has no number."""
    if e.get("rate") is None:
        return escape(str(e.get("note") or "–"))
    lo, hi = e["ci95"]
    ci = f" [{_pct(lo)}, {_pct(hi)}]" if lo is not None and hi is not None else " (no CI)"
    return f"{_pct(e['rate'])}{ci}"


def _table(title: str) -> Table:
    return Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, title_justify="left")


def _short(field: str) -> str:
    from deflectbench.views.report.tables import FIELD_SHORT

    return FIELD_SHORT.get(field, field)


def render_calibration(data: Mapping[str, Any]) -> list[Table | Text]:
    """The calibrate JSON as terminal tables."""
    s = data["settings"]
    out: list[Table | Text] = [
        Text(
            f"{data['counts']['labelled_scored']:,} labelled generations of "
            f"{data['counts']['scored_generations']:,} scored; correction {s['method']}, "
            f"calibrated {s['scope']}; labels weighted {s['weighting']}. Rates in %, 95% CIs "
            "from a bootstrap over claims."
        )
    ]
    for note in [*s.get("notes", []), *([s["left_out"]] if s.get("left_out") else [])]:
        out.append(Text(f"note: {note}", style="yellow"))
    acc = data["judges"]
    if acc:
        t = _table("Sensitivity and specificity against the people (labelled items)")
        for c in ("rater", "field", "n", "sensitivity", "specificity"):
            t.add_column(c, justify="right" if c == "n" else "left", overflow="fold")
        for r in acc:
            sens = f"{_pct(r['sensitivity'])} [{_pct(r['sensitivity_lo'])}, {_pct(r['sensitivity_hi'])}]"
            spec = f"{_pct(r['specificity'])} [{_pct(r['specificity_lo'])}, {_pct(r['specificity_hi'])}]"
            t.add_row(escape(r["rater"]), _short(r["field"]), str(r["n"]), sens, spec)
        out.append(t)
    t = _table("Judged and corrected rates per model")
    for c in (
        "model",
        "rate",
        "judged",
        "corrected",
        "lambda",
        "moved (pts)",
        "judged CI excludes",
    ):
        t.add_column(c, overflow="fold")
    for r in data["shifts"]:
        moved = "–" if r["moved_points"] is None else f"{r['moved_points']:+.1f}"
        lam = "–" if r["lambda"] is None else f"{r['lambda']:.2f}"
        flag = {True: "yes", False: "no", None: "–"}[r["judged_ci_excludes_corrected"]]
        name = r["measure"] if r["kind"] == "outcome" else _short(r["measure"])
        t.add_row(
            escape(r["model"]), name, _est(r["judged"]), _est(r["corrected"]), lam, moved, flag
        )
    out.append(t)
    b = _table(
        f"Label budget: labels for every headline rate's corrected CI within "
        f"±{_pct(s['target'])} points"
    )
    for c in ("model", "labels", "needed", "more", "widest"):
        b.add_column(c, justify="left" if c in ("model", "widest") else "right")
    for m, r in data["budget"].items():
        more = "unreachable" if r["more_labels"] is None else str(r["more_labels"])
        need = "–" if r["labels_needed"] is None else str(r["labels_needed"])
        b.add_row(escape(m), str(r["labels"]), need, more, str(r["widest"] or "–"))
    out.append(b)
    ds = data["dawid_skene"]
    if ds.get("available"):
        d = _table(
            "Dawid-Skene (latent class over the judges, labels as anchors): sensitivity / specificity"
        )
        d.add_column("field")
        d.add_column("prevalence", justify="right")
        for j in ds["judges"]:
            d.add_column(escape(j), overflow="fold")
        for f, r in ds["fields"].items():
            if "judges" not in r:
                d.add_row(_short(f), escape(str(r.get("note", "–"))), *("" for _ in ds["judges"]))
                continue
            cells = [
                f"{_pct(r['judges'][j]['sensitivity'])} / {_pct(r['judges'][j]['specificity'])}"
                for j in ds["judges"]
            ]
            d.add_row(_short(f), _pct(r["prevalence"]), *cells)
        out.append(d)
    else:
        out.append(Text(f"Dawid-Skene: {ds.get('note', 'not available')}", style="dim"))
    out.append(
        Text(
            "To label what the budget asks, grow the sample: `deflectbench annotate --sample N`, "
            "N = its size now plus the largest `more` times the number of models (it keeps what "
            "was drawn and spreads new items over every model's strata, so each model gets "
            "about its share)."
        )
    )
    return out


def calibration_json(
    store: Any,
    benchmark: Any,
    options: Any,
    *,
    correction: str,
    pool_models: bool,
    target: float,
    include_unsure: bool = False,
    annotators: list[str] | None = None,
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Everything calibrate shows, as JSON data (None: the pack has no labels), and the
    label counts."""
    from deflectbench.analysis.calibration.corrected import corrected_rates
    from deflectbench.analysis.calibration.load import read_calibration_inputs
    from deflectbench.analysis.calibration.review import (
        budget,
        dawid_skene,
        judge_accuracy,
        shifts,
    )
    from deflectbench.analysis.frames.scored import verdict_table
    from deflectbench.analysis.jsonable import jsonable
    from deflectbench.analysis.validity.load import LEXICAL
    from deflectbench.cli.validate import english_only

    inputs = read_calibration_inputs(
        store, benchmark, options, include_unsure=include_unsure, annotators=annotators
    )
    if not inputs.has_labels:
        from deflectbench.analysis import rates_with_ci
        from deflectbench.analysis.calibration.review import budget_without_labels

        rates = rates_with_ci(inputs.scored, n_resamples=options.n_resamples, seed=options.seed)
        counts = {**inputs.counts, "budget": budget_without_labels(rates, target)}
        return None, jsonable(counts)
    corr = corrected_rates(
        inputs,
        correction="ppi" if correction == "none" else correction,
        pool_models=pool_models,
        resamples=options.n_resamples,
        seed=options.seed,
        framings=False,
    )
    assert corr is not None
    verdicts = verdict_table(store, benchmark, values=options.values)
    judges = sorted(verdicts["judge"].unique().tolist()) if len(verdicts) else []
    left_out = english_only(benchmark)
    if left_out is None and LEXICAL not in judges:  # the rule-based judge, scored now
        import pandas as pd

        ids = inputs.scored["gen_id"].astype(int).tolist()
        lexical = _lexical_fields(store, benchmark, ids).assign(judge=LEXICAL)
        verdicts = pd.concat([verdicts, lexical], ignore_index=True)
        judges.append(LEXICAL)
    settings = {
        **corr.settings_json(),
        "target": target,
        "benchmark": benchmark.key,
        **({"left_out": left_out.removeprefix("note: ")} if left_out else {}),
    }
    data = {
        "settings": settings,
        "counts": dict(inputs.counts),
        "judges": judge_accuracy(
            inputs,
            verdicts,
            consensus_name=f"consensus ({options.consensus})",
            resamples=options.n_resamples,
            seed=options.seed,
        ).to_dict(orient="records"),
        "shifts": shifts(corr),
        "budget": budget(corr, inputs, target),
        "dawid_skene": dawid_skene(inputs, verdicts, judges),
    }
    return jsonable(data), dict(inputs.counts)


def _no_labels(
    db: Path, pack: str, counts: Mapping[str, Any], json_out: Path | None, target: float
) -> None:
    """No labels: one line saying so and how to get them, the labels a budget would need
    (labels alone, no credit for the judges yet), and no number that looks corrected."""
    from deflectbench.cli.console import err

    line = no_labels_line(db, pack, counts)
    need = counts.get("budget") or {}
    rest = {k: v for k, v in counts.items() if k != "budget"}
    data = {"labels": 0, "note": line, "budget_without_labels": need, "counts": rest}
    if write_json(data, json_out):
        err.print(line, style="yellow", highlight=False, markup=False)
        return
    console.print(line, style="yellow", highlight=False, markup=False)
    if need:
        parts = ", ".join(f"{m} about {r['labels']:,}" for m, r in need.items())
        console.print(
            f"Labels a corrected CI within ±{target:g} points would need (labels alone, before "
            f"any credit for the judges): {parts}.",
            highlight=False,
            markup=False,
        )


def calibrate(
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write every number as JSON to FILE; `-` prints only the JSON.",
        ),
    ] = None,
    target: Annotated[
        float,
        typer.Option(
            help="The label budget's goal: every headline rate's corrected 95% CI within "
            "± this many points.",
        ),
    ] = 3.0,
    correction: CorrectionOption = "ppi",
    pool_models: PoolModelsOption = False,
    annotator: Annotated[
        list[str] | None,
        typer.Option(
            "--annotator", "-a", help="Only these annotators' labels (repeat or comma-separate)."
        ),
    ] = None,
    include_unsure: Annotated[
        bool, typer.Option(help="Keep labels their annotator marked unsure (left out by default).")
    ] = False,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    resamples: ResamplesOption = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap draws.")] = 0,
    benchmark_name: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """How the judges err against people, and what correcting for it does to the rates.

    Per judge and for the consensus, per field: sensitivity and specificity against the human
    labels with 95% CIs. Per model and headline rate: the judged and the corrected rate
    (PPI++ by default, `--correction rogan-gladen`), the PPI++ lambda, how many points the
    correction moved the rate and whether the judged CI excludes the corrected rate. A label
    budget: how many more labels per model bring every headline rate's corrected CI within
    `--target` points; `deflectbench annotate --sample N` then draws them. And the
    Dawid-Skene latent-class estimate of each judge's confusion, as a sensitivity analysis.
    Calibrated within each model unless `--pool-models`. Details: docs/validity.md.

    Examples:

        deflectbench calibrate

        deflectbench calibrate --target 2 --json calibration.json

        deflectbench calibrate --correction rogan-gladen --pool-models
    """
    from deflectbench.analysis.calibration.corrected import check_correction
    from deflectbench.benchmark.title import pack_title

    try:
        check_correction(correction)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if not 0 < target < 50:
        raise UserError(f"--target must be between 0 and 50 points, not {target}")
    options = analysis_options(consensus, judge, "said", resamples, seed, fitted_later=True)
    store = open_store(db, must_exist=True)
    try:
        b = stored_benchmark(store, benchmark_name)
        fit_resamples(resamples, b)
        names = split(annotator) or None
        unknown = sorted(set(names or ()) - set(store.annotators()))
        if unknown:
            raise UserError(f"no labels by --annotator {unknown[0]!r} in --db {db}")
        data, counts = calibration_json(
            store,
            b,
            options,
            correction=correction,
            pool_models=pool_models,
            target=target / 100.0,
            include_unsure=include_unsure,
            annotators=names,
        )
    finally:
        store.close()
    if data is None:
        _no_labels(db, pack_title(b), counts, json_out, target)
        return
    if write_json(data, json_out):
        return
    for part in render_calibration(data):
        console.print(part)
    if json_out is not None:
        console.print(f"calibration: {json_out.resolve()}", highlight=False, markup=False)


def _lexical_fields(store: Any, benchmark: Any, gen_ids: list[int]) -> Any:
    """The lexical judge's fields on ``gen_ids`` (scored now: it is fast and deterministic)."""
    import pandas as pd

    from deflectbench.analysis.validity.load import generation_texts
    from deflectbench.judging import lexical
    from deflectbench.vocab import FIELDS

    texts = generation_texts(store, benchmark, gen_ids)
    rows = [
        {"gen_id": int(g), **lexical.score(c, r).scores}
        for g, c, r in zip(texts["gen_id"], texts["claim"], texts["response"], strict=True)
    ]
    return pd.DataFrame(rows, columns=["gen_id", *FIELDS])


def validity_corrected(
    store: Any,
    benchmark: Any,
    options: Any,
    *,
    monitor: Mapping[int, str] | None = None,
    lexical: bool = True,
    include_unsure: bool = False,
    annotators: list[str] | None = None,
) -> dict[str, Any] | None:
    """``validate``'s ``corrected`` key: the monitor's and the lexical judge's rates per model
    corrected with the human labels (PPI++, within each model), beside their own rate and the
    labels alone, so the cheap signals carry an honest error bar; None without labels."""
    from deflectbench.analysis.calibration.corrected import (
        MONITOR_OUTCOMES,
        corrected_rates,
        estimate_json,
        with_rater,
    )
    from deflectbench.analysis.calibration.load import MEASURES, read_calibration_inputs

    inputs = read_calibration_inputs(
        store, benchmark, options, include_unsure=include_unsure, annotators=annotators
    )
    if not inputs.has_labels:
        return None
    raters: dict[str, Any] = {}
    views: list[tuple[str, Any, tuple[tuple[str, str], ...]]] = []
    if monitor:
        shown = tuple(("outcome", o) for o in MONITOR_OUTCOMES)
        views.append(("monitor", with_rater(inputs, outcomes=monitor), shown))
    if lexical:
        ids = inputs.scored["gen_id"].astype(int).tolist()
        fields = _lexical_fields(store, benchmark, ids)
        views.append(("lexical", with_rater(inputs, fields=fields), MEASURES))
    for name, rated, shown in views:
        corr = corrected_rates(
            rated, resamples=options.n_resamples, seed=options.seed, framings=False
        )
        if corr is None:
            continue
        raters[name] = {
            model: {
                f"{kind}:{m}": {
                    "rater": estimate_json(cell.get("judged", kind, m)),
                    "labels_only": estimate_json(cell.get("labels", kind, m)),
                    "corrected": estimate_json(cell.get("corrected", kind, m)),
                }
                for kind, m in shown
            }
            for model, cell in corr.models.items()
        }
    return {
        "method": "ppi++",
        "scope": "within each model (a model's rates use that model's labels only)",
        "raters": raters,
    }


#: How validate's tables name the cheap raters.
_RATER_NAMES = {"monitor": "monitor", "lexical": "lexical judge"}


def render_validity_corrected(corrected: Mapping[str, Any]) -> list[Table]:
    """``validate``'s corrected rates of the monitor and the lexical judge, one table each."""
    out = []
    for name, models in corrected["raters"].items():
        t = _table(
            f"The {_RATER_NAMES.get(name, name)}'s rates against people: its own, labels only, "
            "corrected "
            f"({corrected['method']}, calibrated within each model); %, 95% CI"
        )
        for c in ("model", "rate", name, "labels only", "corrected"):
            t.add_column(c, overflow="fold")
        for model, rates in models.items():
            for key, r in rates.items():
                kind, _, m = key.partition(":")
                label = m if kind == "outcome" else _short(m)
                t.add_row(
                    escape(model),
                    label,
                    _est(r["rater"]),
                    _est(r["labels_only"]),
                    _est(r["corrected"]),
                )
        out.append(t)
    return out


def corrected_terminal(summary: Mapping[str, Any]) -> list[Table | Text]:
    """``analyze``'s corrected rates, from its JSON: per model the outcomes (and fields) judged,
    labels only and corrected side by side, then refusal per framing; nothing without labels."""
    cal = summary.get("calibration")
    if not cal:
        return []
    out: list[Table | Text] = [
        Text(
            f"Corrected for judge error ({cal['method']}, calibrated {cal['scope']}; labels "
            f"weighted {cal['weighting']}): %, 95% CI from a bootstrap over claims; a cell with "
            f"fewer than {cal['min_labels']} labels says so instead of a number."
        )
    ]
    out.extend(Text(f"note: {n}", style="yellow") for n in cal.get("notes", []))
    t = _table("Judged, labels only and corrected rates per model")
    for c in ("model", "rate", "judged", "labels only", "corrected", "labels"):
        t.add_column(c, overflow="fold", justify="right" if c == "labels" else "left")
    framings = _table("Corrected refusal per model and framing")
    framings.add_column("model", overflow="fold")
    framings.add_column("framing")
    framings.add_column("judged")
    framings.add_column("corrected", overflow="fold")
    for model, sec in summary["models"].items():
        corr, labels = sec.get("corrected"), sec.get("labels_only")
        if not corr:
            continue
        for group, judged_key in (("outcomes", "outcomes"), ("fields", "rates")):
            for name, e in corr[group].items():
                j = sec[judged_key].get(name, {})
                label = name if group == "outcomes" else _short(name) + " (field)"
                t.add_row(
                    escape(model),
                    label,
                    _est(j),
                    _est(labels[group][name]),
                    _est(e),
                    str(e["n_labels"]),
                )
        for framing, cell in corr.get("by_framing", {}).items():
            judged = sec.get("by_framing", {}).get(framing, {}).get("refusal")
            framings.add_row(
                escape(model),
                escape(framing),
                _pct(judged),
                _est(cell["outcomes"]["refusal"]),
            )
    out.append(t)
    if framings.row_count:
        out.append(framings)
    return out
