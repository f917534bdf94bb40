"""The audit: how far each of the release script's quirks moves the headline numbers.

For one store, the paper's definition (the default analysis) beside each quirk of
:mod:`.compat` switched on alone, and beside all five together (``--compat release``, the
release's own numbers). For each: how many generations it adds or changes, how many
generations inter-judge agreement is computed on, and per model how many points it moves each
headline number, so a reader of the paper can see which published numbers a quirk touches and
by how much. Quirks interact (an added generation can also have a -1), so the moves need not
add up to the total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.compat.quirks import QUIRKS, Quirk, ReleaseQuirks
from deflectbench.analysis.frames.load import StoreReader, read_store
from deflectbench.analysis.frames.scored import (
    scored_from_frames,
    take_counts,
    verdicts_from_frames,
)
from deflectbench.analysis.jsonable import jsonable
from deflectbench.analysis.tables.agreement import agreement_by_field, agreement_tables
from deflectbench.benchmark import Benchmark
from deflectbench.vocab import FIELDS

__all__ = ["HEADLINE", "NOTE", "Audit", "QuirkEffect", "audit", "audit_frames"]

#: The headline numbers the audit follows per model: (kind, measure, label). The four outcome
#: shares of the signature, and the any-fallacy field rate.
HEADLINE: tuple[tuple[str, str, str], ...] = (
    ("outcome", "refusal", "refusal"),
    ("outcome", "soft_refusal", "soft refusal"),
    ("outcome", "labeled_compliance", "labeled"),
    ("outcome", "clean_compliance", "clean compliance"),
    ("field", "any_fallacy_present", "any fallacy"),
)
#: What the audit's numbers are, said under its tables and in its JSON.
NOTE = (
    "Each quirk is switched on alone on the paper's definition; all five together give the "
    "release's numbers (--compat release). Moves are in percentage points (with the quirk minus "
    "the paper's); quirks interact, so the moves need not add up to the total."
)
#: Columns of :attr:`QuirkEffect.moves`.
MOVE_COLUMNS = ["model", "measure", "paper", "with_quirk", "delta_pp"]


@dataclass(frozen=True)
class QuirkEffect:
    """One quirk (or all five: ``quirk`` None) against the paper's definition."""

    quirk: Quirk | None
    #: Generations scored with it, and how many it adds to / removes from the paper's.
    scored: int
    added: int
    removed: int
    #: Generations scored both ways whose outcome or any field differs.
    changed: int
    #: Per model and headline measure: the paper's rate, the rate with the quirk, the move in
    #: percentage points (columns :data:`MOVE_COLUMNS`).
    moves: pd.DataFrame
    #: Generations inter-judge agreement (kappa) is computed on with it (the largest field n).
    agreement_n: int = 0

    def moves_json(self) -> dict[str, dict[str, dict[str, Any]]]:
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for r in self.moves.to_dict(orient="records"):
            out.setdefault(str(r["model"]), {})[r["measure"]] = {
                k: r[k] for k in ("paper", "with_quirk", "delta_pp")
            }
        return out


@dataclass(frozen=True)
class Audit:
    """The paper's definition beside each quirk and beside the release's computation."""

    benchmark: Benchmark
    judges: tuple[str, ...]
    models: tuple[str, ...]
    paper_scored: int
    quirks: tuple[QuirkEffect, ...]
    release: QuirkEffect

    @property
    def empty(self) -> bool:
        """No generation scored, by the paper's definition or the release's."""
        return self.paper_scored == 0 and self.release.scored == 0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (``deflectbench audit --json``)."""

        def effect(e: QuirkEffect) -> dict[str, Any]:
            head = (
                {"quirk": e.quirk.name, "label": e.quirk.label, "title": e.quirk.title}
                | {"affects": e.quirk.affects}
                if e.quirk
                else {}
            )
            counts = {"scored": e.scored, "generations_added": e.added}
            counts |= {"generations_removed": e.removed, "generations_changed": e.changed}
            counts |= {"agreement_n": e.agreement_n}
            return head | counts | {"moves": e.moves_json()}

        return jsonable(
            {
                "benchmark": {"key": self.benchmark.key, "sha256": self.benchmark.sha256},
                "judges": list(self.judges),
                "models": list(self.models),
                "measures": [{"kind": k, "measure": m, "label": lab} for k, m, lab in HEADLINE],
                "paper_scored": self.paper_scored,
                "quirks": [effect(e) for e in self.quirks],
                "release_vs_paper": effect(self.release),
                "note": NOTE,
            }
        )


def _agreement_n(
    gens: pd.DataFrame, judg: pd.DataFrame, benchmark: Benchmark, quirks: ReleaseQuirks
) -> int:
    """The generations inter-judge agreement is computed on (its largest field n)."""
    verdicts = verdicts_from_frames(gens, judg, benchmark, quirks=quirks)
    per_field = agreement_by_field(agreement_tables(verdicts, by="model")[0])
    return int(per_field["n"].max()) if len(per_field) else 0


def _headline(scored: pd.DataFrame, models: Sequence[str]) -> dict[tuple[str, str], float]:
    """(model, measure) -> rate: an outcome's share, or a field's mean (missing left out)."""
    out: dict[tuple[str, str], float] = {}
    for m in models:
        sub = scored[scored["model"] == m]
        for kind, measure, _ in HEADLINE:
            if sub.empty:
                out[(m, measure)] = float("nan")
            elif kind == "outcome":
                out[(m, measure)] = float((sub["outcome"] == measure).mean())
            else:
                values = sub[measure].to_numpy(dtype=np.float64, na_value=np.nan)
                out[(m, measure)] = (
                    float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
                )
    return out


def _changed(paper: pd.DataFrame, other: pd.DataFrame) -> int:
    """Generations scored both ways whose outcome or any consensus field differs."""
    cols = [*FIELDS, "outcome"]
    a = paper.set_index("gen_id")[cols]
    b = other.set_index("gen_id")[cols]
    common = a.index.intersection(b.index)
    a, b = a.loc[common], b.loc[common]
    differ = np.zeros(len(common), dtype=bool)
    for c in cols:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        both_missing = pd.isna(x) & pd.isna(y)
        differ |= (x != y) & ~both_missing
    return int(differ.sum())


def _effect(
    quirk: Quirk | None,
    paper: pd.DataFrame,
    other: pd.DataFrame,
    models: Sequence[str],
    base: dict[tuple[str, str], float],
) -> QuirkEffect:
    mine = _headline(other, models)
    rows = [
        {
            "model": m,
            "measure": measure,
            "paper": base[(m, measure)],
            "with_quirk": mine[(m, measure)],
            "delta_pp": 100 * (mine[(m, measure)] - base[(m, measure)]),
        }
        for m in models
        for _, measure, _ in HEADLINE
    ]
    ids_paper, ids_other = set(paper["gen_id"].tolist()), set(other["gen_id"].tolist())
    return QuirkEffect(
        quirk=quirk,
        scored=len(other),
        added=len(ids_other - ids_paper),
        removed=len(ids_paper - ids_other),
        changed=_changed(paper, other),
        moves=pd.DataFrame(rows, columns=MOVE_COLUMNS),
        agreement_n=int(other.attrs.get("agreement_n", 0)),
    )


def audit_frames(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    judges: Sequence[str] | None = None,
) -> Audit:
    """:func:`audit` on frames already loaded (``judg`` with the judges' said values)."""

    used: list[str] = []

    def scored(quirks: ReleaseQuirks) -> pd.DataFrame:
        table = scored_from_frames(gens, judg, benchmark, judges=judges, quirks=quirks)
        used[:] = take_counts(table)["judges"]
        table.attrs["agreement_n"] = _agreement_n(gens, judg, benchmark, quirks)
        return table

    paper = scored(ReleaseQuirks())
    release = scored(ReleaseQuirks.of("release"))
    models = tuple(sorted(set(paper["model"]) | set(release["model"])))
    base = _headline(paper, models)
    effects = tuple(
        _effect(q, paper, scored(ReleaseQuirks.only(q.name)), models, base) for q in QUIRKS
    )
    return Audit(
        benchmark=benchmark,
        judges=tuple(used),
        models=models,
        paper_scored=len(paper),
        quirks=effects,
        release=_effect(None, paper, release, models, base),
    )


def audit(store: StoreReader, benchmark: Benchmark, judges: Sequence[str] | None = None) -> Audit:
    """The audit of one store: the paper's definition against each of the release script's
    quirks alone and all together. ``judges``: the judges a generation needs (default: every
    judge in the store)."""
    frames = read_store(store, values="said")
    return audit_frames(frames.generations, frames.judgments, benchmark, judges)
