"""The machine-readable summary of a store (``deflectbench analyze --json``) and its terminal view.

:func:`analyze` loads the store once, builds the scored and verdict tables, runs every table of
:mod:`.tables` and returns plain JSON data: rates are fractions in [0, 1], NaN becomes null, no
numpy types; the CLI renders its headline tables from that dict alone (``cli.tables``), so the
terminal and the JSON can never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis import tables
from deflectbench.analysis.scored import (
    generation_frame,
    judgment_frame,
    scored_from_frames,
    verdicts_from_frames,
)
from deflectbench.benchmark import Benchmark
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, OUTCOMES

__all__ = ["SCHEMA_VERSION", "analyze", "analyze_frames", "jsonable"]

#: Bumped when a key of the summary changes meaning or disappears (adding keys does not).
SCHEMA_VERSION = 1
LEVEL = 0.95


def jsonable(value: Any) -> Any:
    """Plain JSON data: numpy scalars to Python, NaN/inf to None, tuples to lists, keys to str."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [jsonable(r) for r in df.to_dict(orient="records")]


def _nested(df: pd.DataFrame, key: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """{row[key]: {column: value}} for the rows of ``df``."""
    return {str(r[key]): {c: r[c] for c in columns} for r in df.to_dict(orient="records")}


def _model_section(
    model: str,
    sub: pd.DataFrame,
    ci: pd.DataFrame,
    framing: pd.DataFrame,
    prompt: pd.DataFrame,
    runs: pd.DataFrame,
    tokens: pd.DataFrame,
    density: pd.DataFrame,
    h: pd.DataFrame,
    runs_per_cell: int,
) -> dict[str, Any]:
    mine = ci[ci["model"] == model]
    rates = {
        r["measure"]: {"rate": r["rate"], "ci95": [r["ci_lo"], r["ci_hi"]], "n": r["n"]}
        for r in mine[mine["kind"] == "field"].to_dict(orient="records")
    }
    outcomes = {
        r["measure"]: {"rate": r["rate"], "ci95": [r["ci_lo"], r["ci_hi"]], "n": r["n"]}
        for r in mine[mine["kind"] == "outcome"].to_dict(orient="records")
    }
    out_cols = list(tables.OUTCOME_COLUMNS)
    fr = framing[framing["model"] == model]
    pr = prompt[prompt["model"] == model]
    run_row = runs[runs["model"] == model]
    tok = tokens[tokens["model"] == model]
    cohens: dict[str, dict[str, Any]] = {}
    for r in h[h["model"] == model].to_dict(orient="records"):
        cohens.setdefault(r["comparison"], {})[r["measure"]] = r["h"]
    labels = [str(i) for i in range(runs_per_cell + 1)]
    return {
        "n": len(sub),
        "n_claims": int(sub["claim_id"].nunique()),
        "rates": rates,
        "outcomes": outcomes,
        "by_framing": _nested(fr, "framing", FIELDS),
        "by_framing_outcomes": {
            k: {o: v[c] for o, c in zip(OUTCOMES, out_cols, strict=True)}
            for k, v in _nested(fr, "framing", out_cols).items()
        },
        "n_by_framing": {str(r["framing"]): r["n"] for r in fr.to_dict(orient="records")},
        "by_prompt": _nested(pr, "prompt_id", FIELDS),
        "by_prompt_outcomes": {
            k: {o: v[c] for o, c in zip(OUTCOMES, out_cols, strict=True)}
            for k, v in _nested(pr, "prompt_id", out_cols).items()
        },
        "run_refusal_counts": {k: run_row[k].iloc[0] for k in labels} if len(run_row) else {},
        "incomplete_cells": run_row["incomplete_cells"].iloc[0] if len(run_row) else 0,
        "mean_output_tokens": tok["all"].iloc[0] if len(tok) else math.nan,
        "mean_output_tokens_by_outcome": (
            {o: tok[o].iloc[0] for o in OUTCOMES} if len(tok) else {}
        ),
        "fallacy_density": (
            density.loc[density["model"] == model, "fallacy_density"].iloc[0]
            if (density["model"] == model).any()
            else math.nan
        ),
        "cohens_h": cohens,
    }


def _agreement_section(agree: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per field; with 3+ judges, the mean over pairs (Light's kappa), n the smallest pair's."""
    out: dict[str, dict[str, Any]] = {}
    for f in FIELDS:
        rows = agree[agree["field"] == f]
        if rows.empty:
            continue
        out[f] = {
            "kappa": float(rows["kappa"].mean()),
            "ac1": float(rows["ac1"].mean()),
            "disagreement": float(rows["disagreement"].mean()),
            "n": int(rows["n"].min()),
        }
    return out


def analyze_frames(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    *,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """:func:`analyze` on frames already loaded (``generation_frame``, ``judgment_frame``)."""
    scored = scored_from_frames(gens, judg, benchmark, consensus=consensus, judges=judges)
    verdicts = verdicts_from_frames(gens, judg, benchmark)
    counts = scored.attrs["counts"]
    models = sorted(scored["model"].unique().tolist()) if len(scored) else []

    ci = tables.rates_with_ci(scored, by="model", n_resamples=n_resamples, seed=seed, level=LEVEL)
    framing = tables.rates_by(scored, ["model", "framing"])
    prompt = tables.rates_by(scored, ["model", "prompt_id"])
    runs = tables.run_refusal_counts(scored, benchmark.runs_per_cell)
    tokens = tables.output_tokens_by_outcome(scored)
    density = tables.fallacy_density_by_model(scored)
    h = tables.cohens_h_table(scored)
    agree = tables.agreement_table(verdicts)
    agree_model = tables.agreement_table(verdicts, by="model")
    spread = tables.claim_spread_table(scored)
    chi2 = tables.chi2_model_outcome(scored)
    tost = tables.level_tost(scored)

    by_model = {
        m: _model_section(
            m, sub, ci, framing, prompt, runs, tokens, density, h, benchmark.runs_per_cell
        )
        for m, sub in scored.groupby("model", sort=True)
    }
    judge_names = sorted(verdicts["judge"].unique().tolist()) if len(verdicts) else []
    s = spread.to_dict(orient="records")[0] if len(spread) else None
    chi = chi2.to_dict(orient="records")[0]
    summary: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": {"key": benchmark.key, "sha256": benchmark.sha256},
        "consensus": consensus,
        "n_resamples": n_resamples,
        "seed": seed,
        "ci_level": LEVEL,
        "counts": {
            "attempted": counts["attempted"],
            "errors": counts["errors"],
            "valid_generations": counts["valid_generations"],
            "scored": counts["scored"],
            "unscored": counts["unscored"],
            "missing_field_values": counts["missing_field_values"],
            "models": models,
            "judges": counts["judges"],
            "judges_in_store": judge_names,
            "by_model": counts["by_model"],
            "by_judge": counts["by_judge"],
        },
        "models": by_model,
        "agreement": _agreement_section(agree),
        "agreement_pairs": _records(agree),
        "agreement_by_model": {
            str(m): _agreement_section(part) for m, part in agree_model.groupby("model", sort=True)
        },
        "claims": {
            "refusal_min": s["min"] if s is not None else None,
            "refusal_max": s["max"] if s is not None else None,
            "refusal_spread_pp": s["spread_pp"] if s is not None else None,
            "claim_min": s["claim_min"] if s is not None else None,
            "claim_max": s["claim_max"] if s is not None else None,
            "n_claims": s["n_claims"] if s is not None else 0,
        },
        "tests": {
            "chi2_model_by_outcome": {
                "statistic": chi["statistic"],
                "dof": chi["dof"],
                "p_value": chi["p_value"],
                "n": chi["n"],
                "cramers_v": chi["cramers_v"],
            },
            "tost_levels": _records(tost),
            "tost_method": (
                "TOST, two one-sided z-tests, margin +-5 points, alpha 0.05, refusal pooled over "
                "models; p_value/equivalent use the unpooled SE on Agresti-Caffo adjusted counts "
                "(+1 success, +1 failure per level), *_clustered a claim-clustered (CR1) SE"
            ),
        },
        "appendix": {
            "templates": _records(tables.template_table(scored)),
            "fallacy_by_framing": _records(tables.fallacy_by_framing(scored)),
            "coach_labeling": _records(tables.coach_labeling(scored)),
            "free_choice_preferences": _records(tables.free_choice_preferences(scored)),
            "requested_match": _records(tables.requested_match(scored)),
            "output_tokens_by_outcome": _records(tokens),
            "by_level": _records(tables.rates_by(scored, "level")),
            "claim_refusal": _records(tables.claim_rates(scored)),
            "framing_h_refusal": {
                str(m): {
                    str(r): dict(row)
                    for r, row in tables.framing_h_matrix(sub, "refusal").iterrows()
                }
                for m, sub in scored.groupby("model", sort=True)
            },
        },
    }
    return jsonable(summary)


def analyze(
    store: Store,
    benchmark: Benchmark,
    *,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    values: str = "rules",
) -> dict[str, Any]:
    """Everything the paper reports, from one store, as JSON-ready data.

    ``consensus`` is ``mean`` (the release's rule), ``all`` or ``judge:NAME``; ``judges``
    (default: every judge in the store) are the judges a generation needs to be scored. CIs are
    95% block-bootstrap percentile intervals over claims with ``n_resamples`` draws from
    ``seed``, so the same store and arguments give the same numbers. Agreement is always
    between every pair of judges in the store, whatever the rule (it needs each judge's own
    verdicts). ``values``: ``rules`` (each verdict after the rubric's rules, the default) or
    ``said`` (what each judge said, as the release's own analysis combined them). Raises
    ConsensusError for an unknown rule, judge or values.
    """
    summary = analyze_frames(
        generation_frame(store),
        judgment_frame(store, values=values),
        benchmark,
        consensus=consensus,
        judges=judges,
        n_resamples=n_resamples,
        seed=seed,
    )
    summary["judge_values"] = values
    return summary
