"""The two sides of a comparison, read from stores: ``STORE`` (every model in it) or
``STORE:MODEL[:CONDITION]``, each a scored table of one model (and condition) of one pack.

Each side is scored with the judges that judged *it* (not every judge of its store), so the
judges of the two sides can be compared: :func:`.manifest.judge_mismatch` says how they differ,
and the commands refuse to put results of different judges side by side unless asked. This
module imports nothing of :mod:`.manifest` (which reads the sides defined here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.compat.quirks import ReleaseQuirks
from deflectbench.analysis.frames.scored import (
    generation_frame,
    in_benchmark,
    judgment_frame,
    kept,
    scored_from_frames,
    take_counts,
)
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.analysis.summary.packs import pack_of_store, stored_packs
from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.packs import pack_by_key
from deflectbench.errors import ConfigError, did_you_mean
from deflectbench.vocab import FIELDS, Consensus

__all__ = [
    "CompareError",
    "Selector",
    "Side",
    "StoreRead",
    "pair_sides",
    "pairing",
    "parse_selector",
    "read_sides",
    "sides_of",
]


class CompareError(ConfigError):
    """A selector naming no store, model or condition, or sides that cannot be paired."""


@dataclass(frozen=True)
class Selector:
    """``STORE[:MODEL[:CONDITION]]`` as given: the store's path and what follows it."""

    text: str
    store: Path
    model: str | None = None


def parse_selector(text: str) -> Selector:
    """The longest prefix of ``text`` that is an existing file is the store; the rest (after a
    ``:``) names a model, and maybe its condition (model names may hold ``:`` themselves, e.g.
    ``ollama/llama3:8b``, so the rest is matched against the store's models later)."""
    if Path(text).is_file():
        return Selector(text, Path(text))
    cut = [i for i, ch in enumerate(text) if ch == ":"]
    for i in reversed(cut):
        if Path(text[:i]).is_file():
            rest = text[i + 1 :]
            return Selector(text, Path(text[:i]), rest or None)
    raise CompareError(
        f"no results store at {text.split(':', 1)[0]!r} (from {text!r}): give a store file, or "
        "STORE:MODEL[:CONDITION] (e.g. results.db:openai/gpt-5.5:temp1-max256-seed0)"
    )


@dataclass(frozen=True)
class Side:
    """One model (and condition) of one pack of one store, scored."""

    #: As the comparison names it: the model as the scored table has it (``model [condition]``
    #: when the store holds several conditions of it).
    name: str
    store: str
    pack: str
    model: str
    condition: str | None
    scored: pd.DataFrame = field(repr=False)
    judges: tuple[str, ...] = ()
    #: The claims and templates of the pack, for a comparison of packs.
    claims: frozenset[str] = frozenset()
    #: What the store records of how it was made (:mod:`.manifest`); empty until read.
    manifest: Mapping[str, Any] = field(default_factory=dict)
    #: Rates corrected for judge error (None: overall, else a framing -> the calibration's
    #: cell), when the store holds human labels (:mod:`.corrected`); None otherwise.
    corrected: Mapping[str | None, Any] | None = None

    #: Name the pack in the label (a comparison of two packs).
    show_pack: bool = False

    @cached_property
    def label(self) -> str:
        """The side as a reader tells it from the other: store and name (and pack, when the
        comparison is of two packs). Made once (a view asks for it on every row)."""
        pack = f" ({self.pack})" if self.show_pack else ""
        return f"{Path(self.store).name}:{self.name}{pack}"


@dataclass(frozen=True)
class StoreRead:
    """One store read once: its frames, and what the sides of it need."""

    path: str
    gens: pd.DataFrame
    judg: pd.DataFrame
    #: The run ids the manifests are read by (:data:`.manifest.RunIds`), read with the frames:
    #: (gen_id, run_id) of the answers (failed requests left out), (gen_id, judge, run_id) of
    #: the verdicts.
    runs: tuple[pd.DataFrame, pd.DataFrame] | None = None
    #: The generations whose reply named the model that served it: benchmark, model (as the
    #: frames name it), condition, served_model.
    served: pd.DataFrame | None = None


def read_store_frames(store: Any, options: AnalysisOptions) -> StoreRead:
    """The generation and judgment frames of an open store, its run ids and served model ids
    (one read of each table)."""
    gens = generation_frame(store, extra=("run_id", "served_model"))
    judg = judgment_frame(store, values=options.values, extra=("run_id",))
    runs = (gens.loc[gens["error"].isna().to_numpy(), ["gen_id", "run_id"]],
            judg[["gen_id", "judge", "run_id"]])  # fmt: skip
    served = gens.loc[gens["served_model"].notna().to_numpy(),
                      ["benchmark", "model", "condition", "served_model"]]  # fmt: skip
    gens, judg = gens.drop(columns=["run_id", "served_model"]), judg.drop(columns="run_id")
    return StoreRead(str(store.path), gens, judg, runs, served)


def packs_of(read: StoreRead) -> list[Benchmark]:
    """The shipped packs a store holds results of (a pack not shipped is left out)."""
    found = [pack_by_key(k) for k in stored_packs(read.gens)]
    return [b for b in found if b is not None]


def _scored_each(
    read: StoreRead, gens: pd.DataFrame, pack: Benchmark, names: list[str], options: AnalysisOptions
) -> dict[str, tuple[pd.DataFrame, tuple[str, ...]]]:
    """Each named model's scored table and the judges it was scored with. When every model
    is scored with the same judges (the usual store: given ones, one judge's word, or every
    model judged by the same judges), one scoring of all their generations, split by model:
    each row is scored on its own verdicts alike, and the table is sorted by model first, so
    a model's rows are its own table (its fields made integers again where it has no
    missing value, as its own scoring does). Otherwise each model is scored alone."""
    mine = kept(gens, gens["model"].isin(names).to_numpy())
    judg = read.judg
    if Consensus.parse(options.consensus).kind != "judge":  # only judge:NAME reads them all
        judg = kept(judg, judg["gen_id"].isin(mine["gen_id"]).to_numpy())  # the rows scored
    if len(names) > 1 and not options.judges and not _same_judges(mine, judg, names):
        return {n: _scored_each(read, gens, pack, [n], options)[n] for n in names}
    scored = scored_from_frames(
        mine,
        judg,
        pack,
        consensus=options.consensus,
        judges=options.judges,
        quirks=ReleaseQuirks.of(options.compat),
    )
    judges = tuple(take_counts(scored).get("judges", ()))  # not in attrs: deep-copied by pandas
    if len(names) == 1:
        return {names[0]: (scored, judges)}
    out = {}
    for name in names:
        at = np.flatnonzero((scored["model"] == name).to_numpy())
        whole = len(at) and at[-1] - at[0] + 1 == len(at)  # sorted by model: one run of rows
        part = (scored.iloc[at[0] : at[-1] + 1] if whole else scored.iloc[at]).reset_index(
            drop=True
        )
        for f in FIELDS:
            if part[f].dtype.kind == "f" and not part[f].isna().any():
                part[f] = part[f].astype(np.int64)
        out[name] = (part, judges)
    return out


def _same_judges(gens: pd.DataFrame, judg: pd.DataFrame, names: list[str]) -> bool:
    """Every model of ``names`` has verdicts of the same judges (in ``judg``): the distinct
    (model, judge) pairs of the verdicts, as integer codes."""
    models, model_names = pd.factorize(gens["model"])
    at = pd.Index(gens["gen_id"]).get_indexer(judg["gen_id"])  # -1: not one of ``gens``
    judges, judge_names = pd.factorize(judg["judge"])
    model = np.where(at >= 0, models[at], -1)
    known = (model >= 0) & (judges >= 0)
    pairs = np.unique(model[known] * len(judge_names) + judges[known])
    sets: dict[str, frozenset[str]] = {n: frozenset() for n in names}
    for m in np.unique(pairs // len(judge_names)) if len(pairs) else []:
        mine = pairs[pairs // len(judge_names) == m] % len(judge_names)
        sets[str(model_names[m])] = frozenset(str(judge_names[j]) for j in mine)
    return len(set(sets.values())) == 1


def _side(
    read: StoreRead,
    gens: pd.DataFrame,
    pack: Benchmark,
    name: str,
    scored: tuple[pd.DataFrame, tuple[str, ...]],
) -> Side:
    """The side of one model (``name``) of the pack's generations ``gens``, scored."""
    mine = (gens["model"] == name).to_numpy()  # its condition: one column of its rows read
    conditions = gens["condition"][mine].dropna().unique().tolist() if "condition" in gens else []
    condition = str(conditions[0]) if len(conditions) == 1 else None
    model = name
    if condition is not None and name.endswith(f" [{condition}]"):
        model = name[: -len(f" [{condition}]")]
    return Side(
        name=name,
        store=read.path,
        pack=pack.key,
        model=model,
        condition=condition,
        scored=scored[0],
        judges=scored[1],
        claims=frozenset(c.claim_id for c in pack.claims),
    )


def _names(gens: pd.DataFrame) -> dict[str, tuple[str, str | None]]:
    """Display name -> (model, condition) of each model of a pack's generations."""
    out: dict[str, tuple[str, str | None]] = {}
    for name, cond in gens[["model", "condition"]].drop_duplicates().itertuples(index=False):
        cond = None if pd.isna(cond) else str(cond)
        model = str(name)
        if cond is not None and model.endswith(f" [{cond}]"):
            model = model[: -len(f" [{cond}]")]
        out[str(name)] = (model, cond)
    return out


def _resolve(rest: str, names: dict[str, tuple[str, str | None]], where: str) -> str:
    """The display name a selector's MODEL[:CONDITION] means."""
    if rest in names:
        return rest
    by_model: dict[str, list[str]] = {}
    for display, (model, _) in names.items():
        by_model.setdefault(model, []).append(display)
    if rest in by_model:
        if len(by_model[rest]) == 1:
            return by_model[rest][0]
        conds = sorted(str(names[d][1]) for d in by_model[rest])
        raise CompareError(
            f"{where}: model {rest!r} has {len(conds)} conditions ({', '.join(conds)}): pick one "
            f"as {where.split(':', 1)[0]}:{rest}:CONDITION"
        )
    if ":" in rest:
        model, cond = rest.rsplit(":", 1)
        for display, (m, c) in names.items():
            if m == model and c == cond:
                return display
        if model in by_model:
            conds = sorted(str(names[d][1]) for d in by_model[model])
            raise CompareError(
                f"{where}: model {model!r} has no condition {cond!r}"
                f"{did_you_mean(cond, conds)}; its conditions: {', '.join(conds)}"
            )
    models = sorted(by_model)
    raise CompareError(
        f"{where}: no model {rest!r} in that store{did_you_mean(rest, models)}; it holds "
        f"{', '.join(models) or 'no generations'}"
    )


def sides_of(
    read: StoreRead,
    selector: Selector,
    options: AnalysisOptions,
    benchmark: Benchmark | None = None,
) -> list[Side]:
    """The sides a selector names: one model (and condition), or every model of the store's
    pack (``benchmark``, else the one pack it holds)."""

    class _Rows:  # pack_of_store reads the pack keys through generation_rows
        path = read.path

        @staticmethod
        def generation_rows(columns: Sequence[str] | None = None, **_: Any) -> list[dict]:
            return read.gens[list(columns or ["benchmark"])].to_dict("records")

        @staticmethod
        def pack_counts() -> dict[str, int]:
            return stored_packs(read.gens)  # from the frame already read, not the rows

        @staticmethod
        def column_lists(table: str, columns: Sequence[str], **_: Any) -> dict[str, list[Any]]:
            return {c: read.gens[c].tolist() for c in columns}  # no dict per row

    pack = pack_of_store(_Rows(), benchmark)
    gens = in_benchmark(read.gens, pack)
    names = _names(gens)
    if selector.model is None:
        chosen = sorted(names)
        if not chosen:
            raise CompareError(f"{selector.text}: no generations of {pack.key} in that store")
    else:
        chosen = [_resolve(selector.model, names, selector.text)]
    scored = _scored_each(read, gens, pack, chosen, options)
    return [_side(read, gens, pack, name, scored[name]) for name in chosen]


def read_sides(
    store: Any, selector: Selector, options: AnalysisOptions, benchmark: Benchmark | None = None
) -> list[Side]:
    """:func:`sides_of` on an open store."""
    return sides_of(read_store_frames(store, options), selector, options, benchmark)


def pair_sides(a: Sequence[Side], b: Sequence[Side]) -> list[tuple[Side, Side]]:
    """Which side of A goes with which of B (:func:`pairing`'s pairs)."""
    return pairing(a, b)[0]


def pairing(
    a: Sequence[Side], b: Sequence[Side], *, whole_a: bool = True, whole_b: bool = True
) -> tuple[list[tuple[Side, Side]], list[Side], list[Side]]:
    """Which side of A goes with which of B, and the sides of each left without a partner.

    One side each: that pair. Else the models both hold, by name (the same models in two runs),
    in order; a side whose name the other lacks is paired by model and condition when the
    other side holds that model in that condition under another display name (a store with one
    condition names it ``model``, a store with several ``model [condition]``). No model in
    common is an error. Sides of two packs name their pack in their labels. The unpaired sides
    (A's, B's) are returned so that a model or condition absent from the other side is named,
    never dropped without a word; ``whole_a`` False says A named one model (``STORE:MODEL``),
    so B's other models were not asked about (likewise ``whole_b``)."""
    if {s.pack for s in a} != {s.pack for s in b}:
        a = [replace(s, show_pack=True) for s in a]
        b = [replace(s, show_pack=True) for s in b]
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])], [], []
    by_b = {s.name: s for s in b}
    pairs: list[tuple[Side, Side]] = []
    used: set[str] = set()
    for s in sorted(a, key=lambda x: x.name):
        match = by_b.get(s.name)
        if match is None:
            match = next(
                (o for o in b if (o.model, o.condition) == (s.model, s.condition)
                 and o.name not in used and o.name not in {x.name for x in a}),
                None,
            )  # fmt: skip
        if match is not None and match.name not in used:
            pairs.append((s, match))
            used.add(match.name)
    if not pairs:
        raise CompareError(
            f"the two sides share no model ({', '.join(s.name for s in a)} vs "
            f"{', '.join(s.name for s in b)}): name one on each side as STORE:MODEL"
        )
    paired_a = {x.name for x, _ in pairs}
    only_a = [s for s in a if s.name not in paired_a]
    only_b = [s for s in b if s.name not in used]
    if not whole_a:
        only_b = []  # one model chosen on A's side: B's other models were not asked about
    if not whole_b:
        only_a = []
    return pairs, only_a, only_b
