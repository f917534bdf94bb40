"""Everything the report shows, gathered in one pass over the store.

The store is read once (generations and judgments with their texts); the summary comes from
:mod:`deflectbench.analysis.summary` on those frames, and the few views the summary does not
spell out (coach x requested fallacy, per-claim refusal, tokens by outcome, counts at each step,
cost, examples, metadata) are computed here from the scored table, so the report depends only on
the summary's stable keys. Model text stays plain ``str``: escaping is the templates' job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from deflectbench import __version__
from deflectbench.analysis.scored import (
    GEN_COLUMNS,
    JUDGMENT_COLUMNS,
    check_values,
    scored_from_frames,
    use_said_values,
)
from deflectbench.benchmark import Benchmark
from deflectbench.cost import price_for
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, FRAMINGS, LEVEL_NAMES, OUTCOMES

__all__ = [
    "EXAMPLES_PER_CELL",
    "SNIPPET_CHARS",
    "ReportData",
    "collect",
]

#: Responses shown per model and outcome.
EXAMPLES_PER_CELL = 2
#: Characters of a response shown before the fold.
SNIPPET_CHARS = 600
#: Longest response text put in the page at all (the rest is cut, and the cut is said).
MAX_RESPONSE_CHARS = 20_000


@dataclass
class ReportData:
    """The numbers, tables and texts of one report. Rates are fractions in [0, 1]."""

    benchmark: Benchmark
    consensus: str
    n_resamples: int
    seed: int
    summary: dict[str, Any]
    scored: pd.DataFrame
    models: list[str]
    judges: list[str]
    framings: list[str]
    counts: dict[str, Any]
    cost: list[dict[str, Any]]
    examples: list[dict[str, Any]]
    meta: dict[str, Any]
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.scored.empty


# --------------------------------------------------------------------------- loading


def _frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    df = pd.DataFrame.from_records(rows)
    for c in columns:
        if c not in df:
            df[c] = None
    return df


def _in_benchmark(gens: pd.DataFrame, b: Benchmark) -> pd.DataFrame:
    keep = (
        (gens["benchmark"] == b.key)
        & gens["claim_id"].isin([c.claim_id for c in b.claims])
        & gens["prompt_id"].isin([t.prompt_id for t in b.templates])
    )
    return gens[keep.to_numpy(dtype=bool)]


def _summarize(
    store: Store,
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    b: Benchmark,
    *,
    consensus: str,
    judges: Sequence[str] | None,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The analysis summary, on the frames already loaded when the summary module offers that."""
    from deflectbench.analysis import summary as summary_module

    kw: dict[str, Any] = {"consensus": consensus, "n_resamples": n_resamples, "seed": seed}
    if judges:
        kw["judges"] = list(judges)
    on_frames = getattr(summary_module, "analyze_frames", None)
    if on_frames is not None:
        return on_frames(gens[GEN_COLUMNS], judg[JUDGMENT_COLUMNS], b, **kw)
    return summary_module.analyze(store, b, **kw)


# --------------------------------------------------------------------------- derived views


def _present_framings(scored: pd.DataFrame) -> list[str]:
    seen = set(scored["framing"].dropna().unique().tolist()) if len(scored) else set()
    return [f for f in FRAMINGS if f in seen] + sorted(seen - set(FRAMINGS))


def _outcome_shares(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group: n and each outcome's share (columns named by the outcomes)."""
    if df.empty:
        return pd.DataFrame(columns=[*keys, "n", *OUTCOMES])
    counts = pd.crosstab([df[k] for k in keys], df["outcome"])
    counts = counts.reindex(columns=list(OUTCOMES), fill_value=0)
    n = counts.sum(axis=1)
    shares = counts.div(n, axis=0)
    shares.insert(0, "n", n)
    shares.columns.name = None
    return shares.reset_index()


def coach_by_fallacy(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix E.3: coach framing, per model and requested fallacy, the outcome shares."""
    coach = scored[scored["framing"] == "coach"] if len(scored) else scored
    out = _outcome_shares(coach, ["model", "fallacy_requested"])
    return out.sort_values(["model", "fallacy_requested"], kind="stable").reset_index(drop=True)


def claim_refusal(scored: pd.DataFrame) -> pd.DataFrame:
    """Per claim, refusal pooled over models, templates and samples (every generation once)."""
    columns = ["claim_id", "level", "context", "domain", "n", "refusal"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    df = scored[["claim_id", "level", "context", "domain", "refusal"]]
    grouped = df.groupby(["claim_id", "level", "context", "domain"], sort=True, dropna=False)
    out = grouped["refusal"].agg(n="count", refusal="mean").reset_index()
    return out[columns]


def tokens_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix G: per model and outcome, n and the mean and median output tokens."""
    columns = ["model", "outcome", "n", "mean_tokens", "median_tokens"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    tokens = scored["output_tokens"].astype(np.float64)
    g = tokens.groupby([scored["model"], scored["outcome"]], sort=True)
    out = g.agg(n="size", mean_tokens="mean", median_tokens="median").reset_index()
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    out = out.sort_values(
        ["model", "outcome"], key=lambda c: c.map(rank) if c.name == "outcome" else c
    )
    return out[columns].reset_index(drop=True)


def framing_matrix(
    summary: Mapping[str, Any], models: Sequence[str], framings: Sequence[str], measure: str
) -> pd.DataFrame:
    """Model x framing rate of one field, from the summary's ``by_framing`` (NaN where absent)."""
    data = {
        f: [
            _num((summary["models"].get(m, {}).get("by_framing", {}).get(f) or {}).get(measure))
            for m in models
        ]
        for f in framings
    }
    return pd.DataFrame(data, index=pd.Index(list(models), name="model"), dtype=float)


def largest_swing(matrix: pd.DataFrame) -> dict[str, Any] | None:
    """The model whose rate moves most between two framings (max minus min), or None."""
    best: dict[str, Any] | None = None
    for model, row in matrix.iterrows():
        row = row.dropna()
        if len(row) < 2:
            continue
        hi, lo = str(row.idxmax()), str(row.idxmin())
        swing = float(row[hi] - row[lo])
        if best is None or swing > best["swing"]:
            best = {
                "model": str(model),
                "high": hi,
                "low": lo,
                "rate_high": float(row[hi]),
                "rate_low": float(row[lo]),
                "swing": swing,
            }
    return best


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)


# --------------------------------------------------------------------------- counts and cost


def _step_counts(
    attempted: pd.DataFrame, judg: pd.DataFrame, scored: pd.DataFrame, judges: Sequence[str]
) -> dict[str, Any]:
    """What became of the generations at each step, overall, per model and per judge."""
    valid = attempted[attempted["error"].isna().to_numpy()]
    on_valid = judg[judg["gen_id"].isin(valid["gen_id"])]
    models = sorted(attempted["model"].dropna().unique().tolist())
    per_model = []
    for m in models:
        mine = attempted[attempted["model"] == m]
        n_valid = int(mine["error"].isna().sum())
        per_model.append(
            {
                "model": m,
                "attempted": len(mine),
                "errors": len(mine) - n_valid,
                "valid": n_valid,
                "scored": int((scored["model"] == m).sum()) if len(scored) else 0,
            }
        )
    per_judge = []
    for j in sorted(set(judges) | set(on_valid["judge"].dropna().unique().tolist())):
        mine = on_valid[on_valid["judge"] == j]
        failed = mine["error"].notna()
        parse = ~failed & (mine["parse_error"].fillna(1).astype(int) != 0)
        per_judge.append(
            {
                "judge": j,
                "used": j in judges,
                "judged": len(mine),
                "parsed": int((~failed & ~parse).sum()),
                "parse_errors": int(parse.sum()),
                "errors": int(failed.sum()),
                "missing": len(valid) - len(mine),
            }
        )
    n_scored = len(scored)
    steps = [
        ("attempted", "generations of this benchmark in the store", len(attempted)),
        ("errors", "requests that failed (no response)", len(attempted) - len(valid)),
        ("valid", "generations with a response", len(valid)),
        (
            "parse_errors",
            "judge replies that did not parse (all judges)",
            sum(r["parse_errors"] for r in per_judge if r["used"]),
        ),
        (
            "judge_errors",
            "judge requests that failed (all judges)",
            sum(r["errors"] for r in per_judge if r["used"]),
        ),
        ("scored", "valid generations parsed by every judge used", n_scored),
        (
            "unscored",
            "valid generations left out (a judge failed, did not parse, or is missing)",
            len(valid) - n_scored,
        ),
    ]
    return {
        "steps": [{"step": s, "meaning": m, "n": int(n)} for s, m, n in steps],
        "by_model": per_model,
        "by_judge": per_judge,
        **{s: int(n) for s, _, n in steps},
    }


def _cost_rows(attempted: pd.DataFrame, judg: pd.DataFrame) -> list[dict[str, Any]]:
    """Tokens the store recorded per model and judge, and their cost where a price is known."""
    rows: list[dict[str, Any]] = []
    on_bench = judg[judg["gen_id"].isin(attempted["gen_id"])]
    for role, df, key in (("model", attempted, "model"), ("judge", on_bench, "judge")):
        if df.empty:
            continue
        sums = df.groupby(key, sort=True)[["input_tokens", "output_tokens"]].sum()
        for name, r in sums.iterrows():
            tin, tout = int(r["input_tokens"] or 0), int(r["output_tokens"] or 0)
            price = price_for(str(name))
            known = price is not None and (tin or tout)
            rows.append(
                {
                    "role": role,
                    "name": str(name),
                    "input_tokens": tin,
                    "output_tokens": tout,
                    "cost_usd": price.cost(tin, tout) if known and price else None,
                    "price_known": price is not None,
                }
            )
    return rows


# --------------------------------------------------------------------------- examples


def _judge_verdicts(
    judg: pd.DataFrame, gen_ids: Sequence[int], judges: Sequence[str]
) -> dict[int, list[dict[str, Any]]]:
    """Every judge's own fields on the given generations (``used``: part of the consensus)."""
    mine = judg[judg["gen_id"].isin(list(gen_ids))]
    out: dict[int, list[dict[str, Any]]] = {}
    for r in mine.sort_values(["gen_id", "judge"]).to_dict(orient="records"):
        fields = {f: _verdict(r.get(f)) for f in FIELDS}
        out.setdefault(int(r["gen_id"]), []).append(
            {
                "judge": str(r["judge"]),
                "used": r["judge"] in judges,
                "fields": fields,
                "parse_error": bool(r.get("parse_error") or 0),
                "error": r.get("error"),
                "reasoning": r.get("reasoning") or "",
            }
        )
    return out


def _examples(
    scored: pd.DataFrame,
    texts: pd.DataFrame,
    judg: pd.DataFrame,
    b: Benchmark,
    judges: Sequence[str],
    seed: int,
    per_cell: int,
) -> list[dict[str, Any]]:
    """A few responses per model and outcome, drawn with the report's seed (so reruns agree)."""
    if scored.empty:
        return []
    rng = np.random.default_rng(seed)
    picked: list[pd.Series] = []
    for (_model, _outcome), sub in scored.groupby(["model", "outcome"], sort=True):
        k = min(per_cell, len(sub))
        rows = np.sort(rng.choice(len(sub), size=k, replace=False))
        picked.extend(sub.iloc[i] for i in rows)
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    picked.sort(key=lambda r: (r["model"], rank.get(r["outcome"], 9)))
    ids = [int(r["gen_id"]) for r in picked]
    by_id = texts.set_index("gen_id")
    verdicts = _judge_verdicts(judg, ids, judges)
    out = []
    for r in picked:
        gid = int(r["gen_id"])
        response = str(by_id.at[gid, "response"] or "") if gid in by_id.index else ""
        claim = b.claim(r["claim_id"])
        template = b.template(r["prompt_id"])
        cut = len(response) > MAX_RESPONSE_CHARS
        out.append(
            {
                "gen_id": gid,
                "model": str(r["model"]),
                "outcome": str(r["outcome"]),
                "claim_id": claim.claim_id,
                "claim_text": claim.text,
                "level": claim.level,
                "level_name": LEVEL_NAMES.get(claim.level, claim.level_name),
                "prompt_id": template.prompt_id,
                "framing": template.framing,
                "fallacy_requested": template.fallacy,
                "sample": int(r["sample"]),
                "output_tokens": int(r["output_tokens"] or 0),
                "consensus": {f: _cell(r[f]) for f in FIELDS},
                "judges": verdicts.get(gid, []),
                "snippet": response[:SNIPPET_CHARS],
                "response": response[:MAX_RESPONSE_CHARS],
                "n_chars": len(response),
                "folded": len(response) > SNIPPET_CHARS,
                "cut": cut,
            }
        )
    return out


def _verdict(v: Any) -> int | None:
    """A judge's stored field: 0/1, or None for missing (NULL, NaN, the release's -1)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or int(v) < 0:
        return None
    return int(v)


def _cell(v: Any) -> int | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return int(v)


# --------------------------------------------------------------------------- metadata


def _meta(
    store: Store,
    b: Benchmark,
    attempted: pd.DataFrame,
    judg: pd.DataFrame,
    summary: Mapping[str, Any],
) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    runs = []
    for r in store.runs():
        config = r.get("config") or {}
        runs.append(
            {
                "run_id": r["run_id"],
                "created_at": r["created_at"],
                "command": r["command"],
                "benchmark": r["benchmark"],
                "benchmark_sha256": r["benchmark_sha256"],
                "seed": config.get("seed"),
                "models": ", ".join(config.get("models") or []),
                "judges": ", ".join(config.get("judges") or []),
            }
        )
    other = sorted({r["benchmark_sha256"] for r in runs if r["benchmark"] == b.key} - {b.sha256})
    if other:
        notes.append(
            f"The store's runs used benchmark file(s) with sha256 {', '.join(x[:12] for x in other)}"
            f", not this report's ({b.sha256[:12]}): check that the claims and templates match."
        )
    times = attempted["created_at"].dropna().astype(str) if len(attempted) else pd.Series([])
    on_bench = judg[judg["gen_id"].isin(attempted["gen_id"])] if len(judg) else judg
    jtimes = on_bench["created_at"].dropna().astype(str) if len(on_bench) else pd.Series([])
    sources = sorted(attempted["source"].dropna().unique().tolist()) if len(attempted) else []
    meta = {
        "package_version": __version__,
        "benchmark_name": b.name,
        "benchmark_version": b.version,
        "benchmark_key": b.key,
        "benchmark_sha256": b.sha256,
        "store": str(store.path),
        "schema_version": store.schema_version,
        "first_generation": times.min() if len(times) else None,
        "last_generation": times.max() if len(times) else None,
        "first_judgment": jtimes.min() if len(jtimes) else None,
        "last_judgment": jtimes.max() if len(jtimes) else None,
        "sources": ", ".join(sources),
        "runs": runs,
        "run_seeds": sorted({r["seed"] for r in runs if r["seed"] is not None}),
        "ci_level": summary.get("ci_level", 0.95),
    }
    return meta, notes


# --------------------------------------------------------------------------- collect


def collect(
    store: Store,
    benchmark: Benchmark,
    *,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    examples_per_cell: int = EXAMPLES_PER_CELL,
    values: str = "rules",
) -> ReportData:
    """Read the store once and compute everything the report shows.

    ``judges`` (default: every judge in the store) are those a generation needs to be scored;
    ``values`` which judge values are combined (``rules`` or ``said``, see
    :func:`deflectbench.analysis.scored.use_said_values`).
    """
    check_values(values)
    wanted = list(judges) if judges else None
    gens_all = _frame(store.generation_rows(), [*GEN_COLUMNS, "response", "created_at", "source"])
    judg = _frame(
        store.judgment_rows(),
        [
            *JUDGMENT_COLUMNS,
            "reasoning",
            "created_at",
            "input_tokens",
            "output_tokens",
            "said_json",
        ],
    )
    if values == "said":
        judg = use_said_values(judg)
    attempted = _in_benchmark(gens_all, benchmark)
    scored = scored_from_frames(
        gens_all[GEN_COLUMNS],
        judg[JUDGMENT_COLUMNS],
        benchmark,
        consensus=consensus,
        judges=wanted,
    )
    judges = list(scored.attrs.get("counts", {}).get("judges", []))
    summary: dict[str, Any]
    if scored.empty:
        summary = {
            "counts": {"models": [], "judges": judges},
            "models": {},
            "agreement": {},
            "claims": {},
            "tests": {},
        }
    else:
        summary = _summarize(
            store,
            gens_all,
            judg,
            benchmark,
            consensus=consensus,
            judges=wanted,
            n_resamples=n_resamples,
            seed=seed,
        )
        judges = list(summary["counts"]["judges"])
    models = list(summary["counts"]["models"])
    framings = _present_framings(scored)
    counts = _step_counts(attempted, judg, scored, judges)
    meta, notes = _meta(store, benchmark, attempted, judg, summary)
    frames = {
        "coach": coach_by_fallacy(scored),
        "claims": claim_refusal(scored),
        "tokens": tokens_by_outcome(scored),
        "refusal_by_framing": framing_matrix(summary, models, framings, "refusal"),
        "fallacy_by_framing": framing_matrix(summary, models, framings, "any_fallacy_present"),
    }
    examples = _examples(
        scored,
        attempted[["gen_id", "response"]],
        judg,
        benchmark,
        judges,
        seed,
        examples_per_cell,
    )
    return ReportData(
        benchmark=benchmark,
        consensus=consensus,
        n_resamples=n_resamples,
        seed=seed,
        summary=summary,
        scored=scored,
        models=models,
        judges=judges,
        framings=framings,
        counts=counts,
        cost=_cost_rows(attempted, judg),
        examples=examples,
        meta=meta,
        frames=frames,
        notes=notes,
    )
