"""A summary (:class:`~deflectbench.analysis.summary.fields.SummaryFields`) as plain JSON data
(``analyze --json``).

Rates are fractions in [0, 1], NaN becomes null, no numpy types; the CLI renders its headline
tables from the typed summary (``views.terminal.analysis``). Keys keep their order and meaning across versions
(``schema_version`` is bumped when one changes meaning or disappears; new keys are appended).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.jsonable import jsonable
from deflectbench.analysis.options import CI_LEVEL, MIN_CI_CLAIMS
from deflectbench.analysis.summary.fields import SummaryFields
from deflectbench.analysis.tables.agreement import AGREEMENT_COLUMNS
from deflectbench.analysis.tables.grouping import OUTCOME_COLUMNS
from deflectbench.vocab import FIELDS, OUTCOMES

__all__ = ["SCHEMA_VERSION", "TOST_METHOD", "summary_json"]

#: Bumped when a key of the summary changes meaning or disappears (adding keys does not).
SCHEMA_VERSION = 1
TOST_METHOD = (
    "TOST, two one-sided z-tests, margin +-5 points, alpha 0.05, refusal pooled over "
    "models; p_value/equivalent use the unpooled SE on Agresti-Caffo adjusted counts "
    "(+1 success, +1 failure per level), so ci90 is centred on diff_adjusted, not on the raw "
    "diff; *_clustered a claim-clustered (CR1) SE"
)


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """``df.to_dict(orient="records")``, read column by column: ``to_dict`` takes each column
    positionally, which was most of the JSON's cost. Object columns' numpy numbers become
    Python ones, as ``to_dict`` makes them."""
    columns = df.columns.tolist()
    if not columns or df.columns.has_duplicates:
        return df.to_dict(orient="records")
    values = []
    for c in columns:
        col = df[c]
        values.append([_native(v) for v in col] if col.dtype == object else list(col))
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]


def _native(value: Any) -> Any:
    return value.item() if isinstance(value, np.integer | np.floating | np.bool_) else value


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [jsonable(r) for r in _rows(df)]


def _per_model(df: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``df`` as records, bucketed by their model (row order kept)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in _rows(df):
        out.setdefault(r["model"], []).append(r)
    return out


def _nested(rows: Iterable[Mapping[str, Any]], key: str, columns: Sequence[str]) -> dict:
    """{row[key]: {column: value}} for the rows."""
    return {str(r[key]): {c: r[c] for c in columns} for r in rows}


def _rate(r: Mapping[str, Any]) -> dict[str, Any]:
    return {"rate": r["rate"], "ci95": [r["ci_lo"], r["ci_hi"]], "n": r["n"]}


def _model_sections(s: SummaryFields) -> dict[str, dict[str, Any]]:
    ci, fr, pr = _per_model(s.rates), _per_model(s.by_framing), _per_model(s.by_prompt)
    runs, tok = _per_model(s.sample_refusal), _per_model(s.output_tokens)
    density, h = _per_model(s.fallacy_density), _per_model(s.cohens_h)
    labels = [str(i) for i in range(s.benchmark.runs_per_cell + 1)]
    out_cols = list(OUTCOME_COLUMNS)
    few = set(s.small_sample["model"].tolist()) if len(s.small_sample) else set()
    sections = {}
    for m in s.models:
        mine = ci.get(m, [])
        cohens: dict[str, dict[str, Any]] = {}
        for r in h.get(m, []):
            cohens.setdefault(r["comparison"], {})[r["measure"]] = r["h"]
        run_row = runs.get(m, [])
        tok_row = tok.get(m, [])
        dens = density.get(m, [])
        sections[m] = {
            "n": s.model_n[m],
            "n_claims": int(s.model_claims[m]),
            "rates": {r["measure"]: _rate(r) for r in mine if r["kind"] == "field"},
            "outcomes": {r["measure"]: _rate(r) for r in mine if r["kind"] == "outcome"},
            "by_framing": _nested(fr.get(m, []), "framing", FIELDS),
            "by_framing_outcomes": {
                k: {o: v[c] for o, c in zip(OUTCOMES, out_cols, strict=True)}
                for k, v in _nested(fr.get(m, []), "framing", out_cols).items()
            },
            "n_by_framing": {str(r["framing"]): r["n"] for r in fr.get(m, [])},
            "by_prompt": _nested(pr.get(m, []), "prompt_id", FIELDS),
            "by_prompt_outcomes": {
                k: {o: v[c] for o, c in zip(OUTCOMES, out_cols, strict=True)}
                for k, v in _nested(pr.get(m, []), "prompt_id", out_cols).items()
            },
            "run_refusal_counts": {k: run_row[0][k] for k in labels} if run_row else {},
            "incomplete_cells": run_row[0]["incomplete_cells"] if run_row else 0,
            "mean_output_tokens": tok_row[0]["all"] if tok_row else math.nan,
            "mean_output_tokens_by_outcome": {o: tok_row[0][o] for o in OUTCOMES}
            if tok_row
            else {},
            "fallacy_density": dens[0]["fallacy_density"] if dens else math.nan,
            "cohens_h": cohens,
            "ci_few_claims": m in few,
        }
        if s.corrected is not None and m in s.corrected.models:  # appended: only with labels
            sections[m].update(s.corrected.model_json(m))
    return sections


def _agreement(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """{field: kappa, ac1, disagreement, n} (:func:`.agreement.agreement_by_field` rows)."""
    return {r["field"]: {k: r[k] for k in AGREEMENT_COLUMNS} for r in rows}


def _recs(df: pd.DataFrame) -> list[dict[str, Any]]:
    return _rows(df) if len(df) else []


def _report_views(s: SummaryFields) -> dict[str, Any]:
    """What the report shows beyond the sections above (appended: the schema is unchanged)."""
    return {
        "steps": [asdict(x) for x in s.steps.steps],
        "counts_by_model": [asdict(x) for x in s.steps.by_model],
        "counts_by_judge": [asdict(x) for x in s.steps.by_judge],
        "cost": [asdict(x) for x in s.cost.rows],
        "cost_total_usd": s.cost.total_usd,
        "cost_unpriced": list(s.cost.unpriced),
        "coach_outcomes": _records(s.coach_outcomes),
        "tokens_by_outcome": _records(s.tokens_by_outcome),
        "claims_by_level": _records(s.claims_by_level),
        "prevalence": dict(s.prevalence),
        "largest_framing_swing": asdict(s.largest_swing) if s.largest_swing else None,
        "samples_per_cell": s.samples_per_cell,
        "tost_equivalent_pairs": s.tost_equivalent,
    }


def _small_sample(s: SummaryFields) -> dict[str, Any]:
    """The small-sample flag over every CI printed: turn 1's rates per model (``flagged``,
    ``note``) and the multi-turn and other packs' CIs (``elsewhere``, ``elsewhere_note``);
    ``any`` is true when either is."""
    elsewhere = s.small_sample_elsewhere
    return {
        "min_claims": MIN_CI_CLAIMS,
        "any": bool(len(s.small_sample) or len(elsewhere)),
        "flagged": _records(s.small_sample),
        "note": s.small_sample_note,
        "elsewhere": _records(elsewhere),
        "elsewhere_note": s.elsewhere_note,
    }


def summary_json(s: SummaryFields) -> dict[str, Any]:
    """The summary as the JSON of ``deflectbench analyze --json``."""
    c = s.counts
    spread = _recs(s.claim_spread)
    sp = spread[0] if spread else None
    chi = _rows(s.chi2)[0]
    by_model_agreement: dict[str, list[dict[str, Any]]] = {}
    for r in _recs(s.agreement_by_model):
        by_model_agreement.setdefault(str(r["model"]), []).append(r)
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": {
            "key": s.benchmark.key,
            "sha256": s.benchmark.sha256,
            "pack": s.benchmark.pack,
            "language": s.benchmark.language,
            "turns": s.benchmark.turns,
        },
        "consensus": s.options.consensus,
        "n_resamples": s.options.n_resamples,
        "seed": s.options.seed,
        "ci_level": CI_LEVEL,
        "counts": {
            "attempted": c["attempted"],
            "errors": c["errors"],
            **({"non_answers": c["non_answers"]} if c.get("non_answers") else {}),
            "valid_generations": c["valid_generations"],
            "scored": c["scored"],
            "unscored": c["unscored"],
            "missing_field_values": c["missing_field_values"],
            "models": list(s.models),
            "judges": c["judges"],
            "judges_in_store": list(s.judges_in_store),
            "by_model": c["by_model"],
            "by_judge": c["by_judge"],
        },
        "models": _model_sections(s),
        "agreement": _agreement(_recs(s.agreement)),
        "agreement_pairs": _records(s.agreement_pairs),
        "agreement_by_model": {m: _agreement(rows) for m, rows in by_model_agreement.items()},
        "claims": {
            "refusal_min": sp["min"] if sp is not None else None,
            "refusal_max": sp["max"] if sp is not None else None,
            "refusal_spread_pp": sp["spread_pp"] if sp is not None else None,
            "claim_min": sp["claim_min"] if sp is not None else None,
            "claim_max": sp["claim_max"] if sp is not None else None,
            "n_claims": sp["n_claims"] if sp is not None else 0,
        },
        "tests": {
            "chi2_model_by_outcome": {
                k: chi[k] for k in ("statistic", "dof", "p_value", "n", "cramers_v")
            },
            "tost_levels": _records(s.tost),
            "tost_method": TOST_METHOD,
        },
        "appendix": {
            "templates": _records(s.templates),
            "fallacy_by_framing": _records(s.fallacy_by_framing),
            "coach_labeling": _records(s.coach_labeling),
            "free_choice_preferences": _records(s.free_choice),
            "requested_match": _records(s.requested_match),
            "output_tokens_by_outcome": _records(s.output_tokens),
            "by_level": _records(s.by_level),
            "claim_refusal": _records(s.claim_refusal),
            "framing_h_refusal": {
                m: {
                    str(r): dict(zip(matrix.columns, row, strict=True))
                    for r, row in zip(matrix.index, matrix.to_numpy().tolist(), strict=True)
                }
                for m, matrix in s.framing_h_refusal.items()
            },
            "coach_field_rates": _records(s.coach_fields),
            "by_model_level": _records(s.by_model_level),
            "by_model_context": _records(s.by_model_context),
            "fallacy_swing": _records(s.fallacy_swing),
            "fallacy_swing_by_framing": _records(s.fallacy_swing_by_framing),
            "fallacy_density_by_outcome": _records(s.density_by_outcome),
        },
        "judge_values": s.options.values,
        "report": _report_views(s),
        "compat": s.options.compat,
        "small_sample": _small_sample(s),
        "packs": s.packs.to_json() if s.packs is not None else None,
        "turns": s.turns.to_json() if s.turns is not None else None,
        "validity_checks": s.validity.to_json() if s.validity is not None else None,
    }
    if s.corrected is not None:  # appended, and only with human labels: otherwise unchanged
        out["calibration"] = s.corrected.settings_json()
    if s.cascade is not None:  # appended, and only for a pack judged in cascade
        out["cascade"] = s.cascade.to_json()
    if s.sequential is not None:  # appended, and only for answers gathered by run --until
        out["sequential"] = {**s.sequential.to_json(), "note": s.sequential.note()}
    return jsonable(out)
