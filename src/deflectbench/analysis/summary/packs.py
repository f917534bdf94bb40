"""Benchmark packs in one store: which pack an analysis is of, and how the packs compare.

An analysis is of one pack: its rows are told apart by the pack's key and never pooled with
another pack's. A store holding several packs with no ``--benchmark`` given is an error that
names them (:func:`pack_of_store`), never a silent choice. Across the packs present,
:func:`compare_packs` gives:

- ``packs``: each pack present (language, turns, what it is based on, counts);
- ``by_pack``: each model's signature per pack (refusal with a block-bootstrap CI over claims);
- ``by_language``: the language factor: the paper's pack and its translations (single-turn
  packs based on another in a different language), with Cohen's h of refusal against the base;
- ``by_template``: each pack against the pack it is ``based_on``, template by template (the
  same prompt_id), e.g. the controlled pack against v1;
- ``by_fallacy``: refusal per requested fallacy on the explicit templates, per pack (the
  controlled pack asks for all three under the same structure, so its swing is prompt-fair).

Each pack is scored with the judges that judged it (:func:`..frames.scored.judges_of`): a judge
that sat out a pack (the rule-based judge is refused for a pack not in English) does not leave
that pack unscored. A comparison across two packs (template by template, Cohen's h of the
language table) is made on the judges common to both, rescoring whichever pack had more; when
they have none in common it is not made, and ``notes`` says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.frames.scored import scored_as, take_counts
from deflectbench.analysis.options import CI_LEVEL, AnalysisOptions
from deflectbench.analysis.tables.grouping import cohens_h
from deflectbench.analysis.tables.rates import rates_by, rates_with_ci
from deflectbench.benchmark import (
    Benchmark,
    BenchmarkError,
    default_benchmark,
    load_pack,
    pack_by_key,
    shipped_packs,
)
from deflectbench.vocab import OUTCOMES

__all__ = ["PackComparison", "compare_packs", "pack_of_store", "stored_packs"]

#: The requested fallacies of the explicit templates (the fallacy-type comparison).
REQUESTED = ("whataboutism", "ad_hominem", "red_herring")


def stored_packs(gens: pd.DataFrame) -> dict[str, int]:
    """Generations per stored benchmark key, most first."""
    if gens.empty or "benchmark" not in gens:
        return {}
    counts = gens["benchmark"].value_counts()
    return {str(k): int(v) for k, v in counts.items()}


def _describe(keys: Mapping[str, int]) -> str:
    parts = []
    for key, n in keys.items():
        b = pack_by_key(key)
        parts.append(f"{b.pack if b else key} ({n:,} generations)")
    return ", ".join(parts)


def pack_of_store(store: Any, given: Benchmark | None) -> Benchmark:
    """The pack to analyse: ``given`` (``--benchmark``), else the one pack the store holds
    (the paper's for an empty store). Several packs and none given: a one-line error listing
    them, because pooling them or picking one silently would both mislead."""
    if given is not None:
        return given
    pack_counts = getattr(store, "pack_counts", None)
    if pack_counts is not None:  # one GROUP BY, not every row
        keys = pack_counts()
    else:
        rows = store.generation_rows(columns=["benchmark"])
        keys = stored_packs(pd.DataFrame(rows, columns=["benchmark"]))
    if not keys:
        return default_benchmark()
    if len(keys) == 1:
        key = next(iter(keys))
        b = pack_by_key(key)
        if b is None:
            raise BenchmarkError(
                f"--db {store.path} holds generations of {key!r}, which is not a shipped pack: "
                "pass its pack file with --benchmark FILE"
            )
        return b
    raise BenchmarkError(
        f"--db {store.path} holds results of {len(keys)} benchmark packs: {_describe(keys)}; "
        "choose one with --benchmark NAME (its report compares it with the others)"
    )


@dataclass(frozen=True)
class PackComparison:
    """The packs in a store side by side (see the module's docstring); rates are fractions."""

    packs: pd.DataFrame
    by_pack: pd.DataFrame
    by_language: pd.DataFrame
    by_template: pd.DataFrame
    by_fallacy: pd.DataFrame
    #: Stored keys that are neither a shipped pack nor the one analysed (not compared).
    unknown: tuple[str, ...] = ()
    #: Per pack, the judges it was scored with (each pack with the judges that judged it).
    judges: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Sentences on comparisons made on fewer judges, or not made (no judge in common).
    notes: tuple[str, ...] = ()

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.by_language["language"])) if len(self.by_language) else ()

    def to_json(self) -> dict[str, Any]:
        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            clean = df.astype(object).where(df.notna(), None)
            return clean.to_dict(orient="records")

        return {
            "packs": records(self.packs),
            "by_pack": records(self.by_pack),
            "by_language": records(self.by_language),
            "by_template": records(self.by_template),
            "by_fallacy": records(self.by_fallacy),
            "unknown_keys": list(self.unknown),
            "judges": {k: list(v) for k, v in self.judges.items()},
            "notes": list(self.notes),
        }


def _present(gens: pd.DataFrame, benchmark: Benchmark) -> tuple[list[Benchmark], list[str]]:
    """The packs with stored generations (the analysed one first), and keys of unknown packs."""
    packs = {benchmark.key: benchmark}
    unknown = []
    for key in stored_packs(gens):
        if key in packs:
            continue
        b = pack_by_key(key)
        if b is None:
            unknown.append(key)
        else:
            packs[key] = b
    return list(packs.values()), sorted(unknown)


def _base(pack: Benchmark, present: Mapping[str, Benchmark]) -> Benchmark | None:
    """The pack ``pack`` is based on, when known (present in the store, or shipped)."""
    if pack.based_on is None:
        return None
    if pack.based_on in present:
        return present[pack.based_on]
    if pack.based_on in shipped_packs():
        try:
            return load_pack(pack.based_on)
        except BenchmarkError:
            return None
    return None


def _signature(scored: pd.DataFrame, pack: Benchmark, options: AnalysisOptions) -> pd.DataFrame:
    """One row per model: n, claims, refusal with its CI, every outcome's share, any fallacy."""
    columns = ["pack", "language", "turns", "model", "n", "n_claims", "refusal", "refusal_lo"]
    columns += ["refusal_hi", *OUTCOMES[1:], "any_fallacy_present"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    ci = rates_with_ci(
        scored, by="model", n_resamples=options.n_resamples, seed=options.seed, level=CI_LEVEL
    )
    rows = []
    for model, sub in ci.groupby("model", sort=True):
        rate = dict(zip(sub["measure"], sub["rate"], strict=True))
        ref = sub[(sub["kind"] == "outcome") & (sub["measure"] == "refusal")].iloc[0]
        rows.append(
            {
                "pack": pack.pack,
                "language": pack.language,
                "turns": pack.turns,
                "model": model,
                "n": int(ref["n"]),
                "n_claims": int(ref["n_clusters"]),
                "refusal": float(ref["rate"]),
                "refusal_lo": float(ref["ci_lo"]),
                "refusal_hi": float(ref["ci_hi"]),
                **{o: _outcome_rate(sub, o) for o in OUTCOMES[1:]},
                "any_fallacy_present": float(rate["any_fallacy_present"]),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def _outcome_rate(ci: pd.DataFrame, outcome: str) -> float:
    row = ci[(ci["kind"] == "outcome") & (ci["measure"] == outcome)]
    return float(row["rate"].iloc[0])


def _by_template(
    pack: Benchmark, base: Benchmark, scored: pd.DataFrame, base_scored: pd.DataFrame
) -> pd.DataFrame:
    """Template by template (same prompt_id), per model: refusal and clean compliance in the
    base pack and in ``pack``, the difference in points and Cohen's h of refusal."""
    cols = ["model", "prompt_id", "n", "outcome_refusal", "outcome_clean_compliance"]
    mine = rates_by(scored, ["model", "prompt_id"])[cols] if len(scored) else None
    theirs = rates_by(base_scored, ["model", "prompt_id"])[cols] if len(base_scored) else None
    out_cols = ["pack", "based_on", "model", "prompt_id", "framing", "fallacy_requested"]
    out_cols += ["n_base", "n_pack", "refusal_base", "refusal_pack", "refusal_diff_pp"]
    out_cols += ["h_refusal", "clean_base", "clean_pack"]
    if mine is None or theirs is None:
        return pd.DataFrame(columns=out_cols)
    both = theirs.merge(mine, on=["model", "prompt_id"], suffixes=("_base", "_pack"))
    if both.empty:
        return pd.DataFrame(columns=out_cols)
    t = {x.prompt_id: x for x in pack.templates}
    both["pack"] = pack.pack
    both["based_on"] = base.pack
    both["framing"] = [t[p].framing for p in both["prompt_id"]]
    both["fallacy_requested"] = [t[p].fallacy for p in both["prompt_id"]]
    both = both.rename(
        columns={
            "outcome_refusal_base": "refusal_base",
            "outcome_refusal_pack": "refusal_pack",
            "outcome_clean_compliance_base": "clean_base",
            "outcome_clean_compliance_pack": "clean_pack",
        }
    )
    both["refusal_diff_pp"] = 100.0 * (both["refusal_pack"] - both["refusal_base"])
    both["h_refusal"] = [
        cohens_h(a, b) for a, b in zip(both["refusal_pack"], both["refusal_base"], strict=True)
    ]
    order = {p.prompt_id: i for i, p in enumerate(pack.templates)}
    both["_order"] = both["prompt_id"].map(order)
    both = both.sort_values(["model", "_order"], kind="stable")
    return both[out_cols].reset_index(drop=True)


def _by_fallacy(pack: Benchmark, scored: pd.DataFrame) -> pd.DataFrame:
    """Per model, refusal per requested fallacy on the explicit templates, and the swing
    (largest minus smallest, in points)."""
    cols = ["pack", "model", "fallacy_requested", "n", "refusal", "swing_pp"]
    sub = scored[scored["fallacy_requested"].isin(REQUESTED)] if len(scored) else scored
    if sub.empty:
        return pd.DataFrame(columns=cols)
    table = rates_by(sub, ["model", "fallacy_requested"])
    table = table[["model", "fallacy_requested", "n", "outcome_refusal"]]
    table = table.rename(columns={"outcome_refusal": "refusal"})
    spread = table.groupby("model")["refusal"].agg(lambda r: 100.0 * (r.max() - r.min()))
    table["swing_pp"] = table["model"].map(spread)
    table["pack"] = pack.pack
    return table[cols].reset_index(drop=True)


def _score(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    pack: Benchmark,
    options: AnalysisOptions,
    judges: tuple[str, ...] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``pack``'s scored table and counts: with ``judges``, else the options' judges, else the
    judges that judged the pack."""
    s = scored_as(gens, judg, pack, options, judges)
    return s, take_counts(s)


@dataclass(frozen=True)
class _Pair:
    """Two packs scored on the same judges, for a comparison across them."""

    pack: pd.DataFrame
    base: pd.DataFrame
    judges: tuple[str, ...]


def _common(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    options: AnalysisOptions,
    packs: tuple[Benchmark, Benchmark],
    scored: Mapping[str, pd.DataFrame],
    judges: Mapping[str, tuple[str, ...]],
) -> _Pair | str:
    """``pack`` and ``base`` scored on the judges they have in common (each rescored only when
    it had others too), or the sentence saying why they cannot be compared."""
    pack, base = packs
    mine, theirs = judges[pack.pack], judges[base.pack]
    if mine == theirs:
        return _Pair(scored[pack.pack], scored[base.pack], mine)
    common = tuple(j for j in mine if j in theirs)
    if not common:
        return (
            f"{pack.pack} is not compared with {base.pack}: no judge judged both "
            f"({pack.pack}: {', '.join(mine) or 'none'}; {base.pack}: "
            f"{', '.join(theirs) or 'none'})."
        )

    def on_common(p: Benchmark) -> pd.DataFrame:
        if judges[p.pack] == common:
            return scored[p.pack]
        return _score(gens, judg, p, options, common)[0]

    return _Pair(on_common(pack), on_common(base), common)


def compare_packs(
    gens: pd.DataFrame,
    judg: pd.DataFrame,
    benchmark: Benchmark,
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen, so shared safely)
) -> PackComparison | None:
    """The packs with generations in ``gens`` side by side, or None when there is only
    ``benchmark``'s (nothing to compare). Every pack is scored with the same options and the
    judges that judged it; a comparison across packs uses the judges common to both."""
    packs, unknown = _present(gens, benchmark)
    if len(packs) < 2:
        return None
    present = {p.pack: p for p in packs}
    scored: dict[str, pd.DataFrame] = {}
    judges: dict[str, tuple[str, ...]] = {}
    rows = []
    for p in packs:
        s, counts = _score(gens, judg, p, options)
        scored[p.pack] = s
        judges[p.pack] = tuple(counts.get("judges", ()))
        rows.append(
            {
                "pack": p.pack,
                "key": p.key,
                "language": p.language,
                "turns": p.turns,
                "based_on": p.based_on,
                "judges": ", ".join(judges[p.pack]),
                "attempted": int(counts.get("attempted", 0)),
                "scored": len(s),
                "models": int(s["model"].nunique()) if len(s) else 0,
                "analysed": p.key == benchmark.key,
            }
        )
    by_pack = pd.concat([_signature(scored[p.pack], p, options) for p in packs], ignore_index=True)
    templates, fallacies, language_packs = [], [], []
    pairs: dict[str, _Pair] = {}
    notes: list[str] = []
    for p in packs:
        base = _base(p, present)
        if base is not None and base.pack in scored:
            pair = _common(gens, judg, options, (p, base), scored, judges)
            if isinstance(pair, str):
                notes.append(pair)
            else:
                pairs[p.pack] = pair
                templates.append(_by_template(p, base, pair.pack, pair.base))
                if pair.judges != judges[p.pack] or pair.judges != judges[base.pack]:
                    notes.append(
                        f"{p.pack} is compared with {base.pack} on the judges both have: "
                        f"{', '.join(pair.judges)}."
                    )
        fallacies.append(_by_fallacy(p, scored[p.pack]))
        if p.turns == 1 and (
            p.based_on is None or (base is not None and base.language != p.language)
        ):
            language_packs.append(p.pack)
    by_language = _language_table(by_pack, language_packs, present, pairs)
    return PackComparison(
        packs=pd.DataFrame(rows),
        by_pack=by_pack,
        by_language=by_language,
        by_template=pd.concat(templates, ignore_index=True) if templates else _empty_templates(),
        by_fallacy=pd.concat(fallacies, ignore_index=True),
        unknown=tuple(unknown),
        judges=judges,
        notes=tuple(notes),
    )


def _empty_templates() -> pd.DataFrame:
    return _by_template(default_benchmark(), default_benchmark(), pd.DataFrame(), pd.DataFrame())


def _refusal(scored: pd.DataFrame) -> dict[str, float]:
    """Each model's refusal rate in a scored table."""
    if scored.empty:
        return {}
    rates = (scored["outcome"] == "refusal").groupby(scored["model"]).mean()
    return {str(m): float(r) for m, r in rates.items()}


def _language_table(
    by_pack: pd.DataFrame,
    language_packs: list[str],
    present: Mapping[str, Benchmark],
    pairs: Mapping[str, _Pair],
) -> pd.DataFrame:
    """The language factor: the signature rows of the original packs and their translations,
    with Cohen's h of refusal against the base pack's (same model, both packs scored on the
    judges they have in common; NaN when they have none). Only when at least two languages are
    present; else empty."""
    table = by_pack[by_pack["pack"].isin(language_packs)].copy()
    if table["language"].nunique() < 2:
        return table.iloc[0:0].assign(based_on=pd.Series(dtype=object), h_refusal_vs_base=np.nan)
    table["based_on"] = [present[p].based_on for p in table["pack"]]
    mine = {p: _refusal(pair.pack) for p, pair in pairs.items()}
    theirs = {p: _refusal(pair.base) for p, pair in pairs.items()}
    table["h_refusal_vs_base"] = [
        cohens_h(mine[r.pack][r.model], theirs[r.pack][r.model])
        if r.based_on in language_packs
        and r.model in mine.get(r.pack, {})
        and r.model in theirs.get(r.pack, {})
        else np.nan
        for r in table.itertuples()
    ]
    return table.sort_values(["model", "language"], kind="stable").reset_index(drop=True)


def packs_note(comparison: PackComparison, benchmark: Benchmark) -> str:
    """The warning a reader sees first: which pack the numbers are of, and which others the
    store holds (compared, never pooled)."""
    others = [p for p in comparison.packs["pack"] if p != benchmark.pack]
    text = (
        f"These numbers are of the pack {benchmark.pack} ({benchmark.language}, "
        f"{benchmark.turns} turn{'s' if benchmark.turns > 1 else ''}) only. The store also holds "
        f"{', '.join(others)}: compared in 'Benchmark packs', never pooled."
    )
    if len(set(comparison.judges.values())) > 1:
        text += (
            " Each pack is scored with the judges that judged it ("
            + "; ".join(f"{p}: {', '.join(j) or 'none'}" for p, j in comparison.judges.items())
            + ")."
        )
    text += "".join(f" {n}" for n in comparison.notes)
    if comparison.unknown:
        text += f" Not compared (not a shipped pack): {', '.join(comparison.unknown)}."
    return text
