"""``analyze``'s cascade section: what a cascaded store's numbers estimate, and the estimates.

A pack judged in cascade (``judge --cheap-judge``, the design stored by
:mod:`deflectbench.store.cascade`) has the cheap judge's verdict on every answer and the
expensive judges' on a seeded sample only. The analysis' usual tables score an answer when
every judge in the consensus scored it, so by default they hold the sample alone, all judges
together; this section says so and gives, per model and per model x framing, the estimate of
the **expensive judges' consensus rate** over every answer: PPI++ with the cheap judge as the
prediction in the claim bootstrap (:mod:`.estimate`), beside the cheap judge's own rate and the
expensive judges' rate on the sample alone, and how many calls each judge made.

When people's labels exist too (on sampled answers), each model also gets the **truth** (the
people's rate): the consensus corrected by the labels in turn (:mod:`.layers`); the corrected
section (``calibration``) goes on as before. docs/cascade.md says how the layers combine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from deflectbench.analysis.calibration.load import (
    MEASURES,
    has_labels,
    judged_matrix,
    read_calibration_inputs,
)
from deflectbench.analysis.frames.scored import in_benchmark, scored_as
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.benchmark import Benchmark
from deflectbench.store.cascade import CascadeDesign, cascade_sample, load_cascade
from deflectbench.vocab import Consensus

#: The estimators are imported by a pack judged in cascade only: every other store's analyze
#: reads that it has no design and stops there.
if TYPE_CHECKING:
    from deflectbench.analysis.calibration.estimate import Estimate
    from deflectbench.analysis.cascade.estimate import GroupEstimate

__all__ = ["Cascaded", "cascade_section"]

#: What each method's number is, in the words the JSON and the views use.
ROLES = {"judged": "cheap", "labels": "sample", "ppi++": "cascaded"}


@dataclass(frozen=True)
class Cascaded:
    """The cascade section: the design, the estimand in words, per judge its calls, and per
    model and per model x framing the estimates."""

    design: CascadeDesign
    estimand: str
    calls: Mapping[str, int]
    answers: int
    sampled: int
    by_model: tuple[GroupEstimate, ...]
    by_framing: tuple[GroupEstimate, ...]
    notes: tuple[str, ...] = ()
    #: With people's labels: per model (as ``by_model``), the truth through both layers.
    truth: tuple[list[Estimate], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "estimand": self.estimand,
            "design": self.design.to_json(),
            "calls": dict(sorted(self.calls.items())),
            "answers": self.answers,
            "sampled": self.sampled,
            "by_model": [
                _group_json(g, self.truth[i] if self.truth else None)
                for i, g in enumerate(self.by_model)
            ],
            "by_model_framing": [_group_json(g) for g in self.by_framing],
            "notes": list(self.notes),
        }


def _estimate_json(e: Estimate) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rate": e.rate,
        "ci95": None if e.ci95 is None else list(e.ci95),
    }
    if "lam" in e.details:
        out["lambda"] = e.details["lam"]
    if e.note is not None:
        out["note"] = e.note
    if e.flag is not None:
        out["flag"] = e.flag
    return out


def _group_json(g: GroupEstimate, truth: list[Estimate] | None = None) -> dict[str, Any]:
    from deflectbench.analysis.cascade.estimate import METHODS

    measures = {}
    for k, (kind, name) in enumerate(MEASURES):
        measures[f"{kind}:{name}"] = {ROLES[m]: _estimate_json(g.estimates[m][k]) for m in METHODS}
        if truth is not None:
            measures[f"{kind}:{name}"]["truth"] = {
                **_estimate_json(truth[k]),
                "lambda_consensus": truth[k].details.get("lam_consensus"),
                "labels": truth[k].n_labels,
            }
    return {
        "group": list(g.group),
        "answers": g.answers,
        "sampled": g.sampled,
        "with_consensus": g.labelled,
        "measures": measures,
        "notes": list(g.notes),
    }


def _expensive_rule(options: AnalysisOptions, expensive: Sequence[str]) -> str:
    """The consensus rule of the estimand: the analysis' own, unless it names a judge that
    is not an expensive one (then the paper's mean)."""
    name = Consensus.parse(options.consensus).judge
    return options.consensus if name is None or name in expensive else "mean"


def _calls(judg: pd.DataFrame, gen_ids: pd.Series) -> dict[str, int]:
    """Per judge, the requests it made for the pack's answers (verdicts and failures)."""
    mine = judg[judg["gen_id"].isin(gen_ids)]
    return {str(k): int(v) for k, v in mine.groupby("judge").size().items()}


def cascade_section(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions,
    gens: pd.DataFrame,
    judg: pd.DataFrame,
) -> Cascaded | None:
    """The section for a pack judged in cascade (None: the pack has no cascade design)."""
    conn = getattr(store, "conn", None)
    design = load_cascade(store, benchmark.key) if conn is not None else None
    if design is None:
        return None
    from deflectbench.analysis.cascade.estimate import cascade_rates

    pack = in_benchmark(gens, benchmark)
    sample = cascade_sample(store, benchmark.key, design, lambda p: _framing(benchmark, p))
    rule = _expensive_rule(options, design.expensive)
    estimand = (
        f"the consensus ({rule}) of the expensive judges {', '.join(design.expensive)} over "
        f"every answer, estimated from the cheap judge {design.cheap} on every answer and the "
        "expensive judges on the seeded sample (PPI++, claim bootstrap)"
    )
    calls = _calls(judg, pack["gen_id"])
    judges = set(judg["judge"].unique().tolist())
    if design.cheap not in judges or not set(design.expensive) <= judges:
        missing = [j for j in (design.cheap, *design.expensive) if j not in judges]
        note = f"no verdict of {', '.join(missing)} yet: nothing to estimate"
        return Cascaded(design, estimand, calls, len(pack), 0, (), (), (note,))
    cheap_opts = replace(options, consensus="mean", judges=(design.cheap,))
    cheap = scored_as(pack, judg, benchmark, cheap_opts)
    exp = scored_as(
        pack, judg, benchmark, replace(options, consensus=rule, judges=tuple(design.expensive))
    )
    cheap.attrs, exp.attrs = {}, {}
    f = judged_matrix(cheap)
    y = np.full(f.shape, np.nan)
    pos = pd.Series(np.arange(len(cheap)), index=cheap["gen_id"].astype(int).to_numpy())
    ids = exp["gen_id"].astype(int)
    known = ids.isin(pos.index).to_numpy()
    y[pos.loc[ids[known]].to_numpy()] = judged_matrix(exp)[known]
    gen_ids = cheap["gen_id"].astype(int).tolist()
    strata = [sample.get(g, ("?", False))[0] for g in gen_ids]
    sampled = np.array([sample.get(g, ("?", False))[1] for g in gen_ids], dtype=bool)
    y[~sampled] = np.nan  # an answer outside the sample (judged fully before) is not in it
    models = cheap["model"].astype(str).tolist()
    framings = cheap["framing"].fillna("?").astype(str).tolist()
    claims = cheap["claim_id"].astype(str).to_numpy()
    common = {
        "resamples": options.n_resamples,
        "seed": options.seed,
    }
    by_model = cascade_rates(f, claims, [(m,) for m in models], strata, sampled, y, **common)
    by_framing = cascade_rates(
        f, claims, list(zip(models, framings, strict=True)), strata, sampled, y, **common
    )
    notes = (
        "the other tables score an answer only when every judge in the consensus scored it: "
        "with a cascade, that is the expensive judges' sample; this section estimates the "
        "expensive judges' consensus over every answer",
    )
    truth: tuple[list[Estimate], ...] = ()
    human = _human(store, benchmark, options, pack, judg, gen_ids, f.shape)
    if human is not None:
        estimand += (
            "; with people's labels on sampled answers, truth is the people's rate: the "
            "consensus corrected by them in turn (two PPI++ layers)"
        )
        truth = tuple(
            _truth(f, y, human, claims, strata, sampled, [x == g.group[0] for x in models], common)
            for g in by_model
        )
    return Cascaded(
        design,
        estimand,
        calls,
        len(cheap),
        int(sampled.sum()),
        tuple(by_model),
        tuple(by_framing),
        notes,
        truth,
    )


def _human(
    store: Any,
    benchmark: Benchmark,
    options: AnalysisOptions,
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    gen_ids: Sequence[int],
    shape: tuple[int, ...],
) -> np.ndarray | None:
    """People's reference per answer (rows of ``gen_ids``, NaN where unlabelled), or None when
    the pack has no label."""
    if not has_labels(store):
        return None
    inputs = read_calibration_inputs(store, benchmark, options, frames=(gens, judg))
    if not inputs.has_labels:
        return None
    out = np.full(shape, np.nan)
    where = {g: i for i, g in enumerate(gen_ids)}
    cols = [f"human_{kind}_{name}" for kind, name in MEASURES]
    values = inputs.labelled[cols].to_numpy(dtype=np.float64)
    for row, g in zip(values, inputs.labelled["gen_id"], strict=True):
        if int(g) in where:
            out[where[int(g)]] = row
    return out


def _truth(
    f: np.ndarray,
    y: np.ndarray,
    human: np.ndarray,
    claims: np.ndarray,
    strata: Sequence[str],
    sampled: np.ndarray,
    mine: Sequence[bool],
    common: Mapping[str, int],
) -> list[Estimate]:
    """One model's truth through both layers (its sample weighed N_h / n_h)."""
    from deflectbench.analysis.cascade.estimate import stratum_weights
    from deflectbench.analysis.cascade.layers import truth_rates

    rows = np.asarray(mine, dtype=bool)
    lab = sampled[rows] & ~np.isnan(y[rows]).all(axis=1)
    weight = np.ones(int(rows.sum()))
    weight[lab] = stratum_weights(np.asarray(strata, dtype=object)[rows], lab)
    return truth_rates(
        f[rows],
        y[rows],
        human[rows],
        claims[rows],
        weight,
        resamples=common["resamples"],
        seed=common["seed"],
    )


def _framing(benchmark: Benchmark, prompt_id: str) -> str | None:
    try:
        return benchmark.template(prompt_id).framing
    except (KeyError, ValueError):
        return None
