"""Results side by side from Python: ``compare`` (two sides, paired over claims, with the
regression gate) and ``leaderboard`` (every model x condition x pack of some stores, ranked).
``deflectbench compare`` and ``deflectbench leaderboard`` are these functions and a view.

    import deflectbench as db

    c = db.compare("old.db", "new.db")                     # the same models in two runs
    c = db.compare("new.db", baseline="old.db", fail_if=["refusal drop > 5pp"])
    c.table, c.flips, c.coverage, c.exit_code              # 6 when the gate did not pass
    board = db.leaderboard(["run1.db", "run2.db"], by="clean_compliance").board
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.api._common import DbPath, OnBusy, analysis_options, open_store

if TYPE_CHECKING:
    from deflectbench.analysis.compare.api import Comparison
    from deflectbench.analysis.compare.leaderboard import Leaderboard
    from deflectbench.analysis.compare.select import Selector, Side
    from deflectbench.analysis.compare.thresholds import Threshold
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.benchmark import Benchmark
    from deflectbench.store import Store

__all__ = ["compare", "leaderboard"]


def compare(
    a: DbPath,
    b: DbPath | None = None,
    *,
    baseline: DbPath | None = None,
    fail_if: Sequence[str] = (),
    require: Sequence[str] = (),
    allow_missing: Sequence[str] = (),
    allow_untested: bool = False,
    holm_family: str = "measure",
    allow_judge_change: bool = False,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    judge_values: str = "said",
    compat: str = "paper",
    correction: str = "ppi",
    resamples: int = 1000,
    seed: int = 0,
    benchmark: str | None = None,
    benchmark_b: str | None = None,
    on_busy: OnBusy | None = None,
) -> Comparison:
    """Two results side by side, B minus A: each side a store (every model in it, paired with
    the other side's models by name), or ``STORE:MODEL[:CONDITION]``. With ``baseline``, A is
    the new side and the differences are A minus ``baseline``. Each pair is compared on the
    cells (claim x template x sample) both sides hold; ``coverage`` says what each held.

    The gate: ``fail_if`` rules say when to fail (``"refusal < -5pp"``, ``"refusal drop >
    5pp"``, ``"clean_compliance > +3pp@coach"``), ``require`` rules what must hold
    (``"|refusal| < 5pp"``); ``exit_code`` is 6 when a difference's whole 95% CI lies on a
    rule's fail side, when a rule could not be tested (unless ``allow_untested``), or when a
    model or condition of the baseline is absent from the new side (unless named in
    ``allow_missing``). ``holm_family`` chooses Holm's families (measure, scope, all, none).
    ``benchmark_b`` reads the second side from another pack of the same claims. Sides judged
    by different judges raise :class:`~deflectbench.analysis.compare.select.CompareError` unless
    ``allow_judge_change``."""
    from deflectbench.analysis.calibration.corrected import check_correction
    from deflectbench.analysis.compare.select import CompareError
    from deflectbench.analysis.compare.table import HOLM_FAMILIES
    from deflectbench.analysis.compare.thresholds import FAIL_IF, REQUIRE, parse_threshold
    from deflectbench.analysis.compat.quirks import check_compat
    from deflectbench.benchmark import resolve_benchmark

    if baseline is not None and b is not None:
        raise CompareError(
            "give B or --baseline OLD, not both (with --baseline, A is the new side)"
        )
    if baseline is None and b is None:
        raise CompareError("compare needs two sides: A B, or NEW --baseline OLD")
    if holm_family not in HOLM_FAMILIES:
        raise CompareError(
            f"unknown --holm-family {holm_family!r}; valid: {', '.join(HOLM_FAMILIES)}"
        )
    rules = [parse_threshold(t, FAIL_IF) for t in fail_if]
    rules += [parse_threshold(t, REQUIRE) for t in require]
    old, new = (str(baseline), str(a)) if baseline is not None else (str(a), str(b))
    options = replace(
        analysis_options(consensus, judges, judge_values, resamples, seed),
        compat=check_compat(compat),
        correction=check_correction(correction),
    )
    pack = resolve_benchmark(benchmark) if benchmark else None
    packs = (pack, resolve_benchmark(benchmark_b) if benchmark_b else pack)
    with _Stores(on_busy) as stores:
        return _compare(
            stores, old, new, packs, options, rules, allow_missing, allow_untested,
            holm_family, allow_judge_change, baseline=baseline is not None,
        )  # fmt: skip


def _compare(
    stores: _Stores,
    old: str,
    new: str,
    packs: tuple[Benchmark | None, Benchmark | None],
    options: AnalysisOptions,
    rules: list[Threshold],
    allow_missing: Sequence[str],
    allow_untested: bool,
    holm_family: str,
    allow_judge_change: bool,
    *,
    baseline: bool,
) -> Comparison:
    """:func:`compare` on its parsed arguments, each store open once (``stores``) from the
    first read to the flips' examples."""
    from deflectbench.analysis.compare.api import Absent, compare_sides
    from deflectbench.analysis.compare.coverage import on_common_cells
    from deflectbench.analysis.compare.select import CompareError, pairing, parse_selector

    sides, texts = [], {}
    for text, of in zip((old, new), packs, strict=True):
        selector = parse_selector(text)
        store = stores.open(selector.store)
        sides.append(_read_side(store, selector, of, options))
        texts[str(store.path)] = _Replies(store)
    whole = [parse_selector(t).model is None for t in (old, new)]
    pairs, only_a, only_b = pairing(sides[0], sides[1], whole_a=whole[0], whole_b=whole[1])
    allowed = set(allow_missing)
    unknown = allowed - {n for s in only_a for n in _names_of(s)}
    if unknown:
        raise CompareError(
            f"--allow-missing {sorted(unknown)[0]!r}: no model or condition of the baseline "
            "is absent from the new side under that name"
            + (f" (absent: {', '.join(s.name for s in only_a)})" if only_a else "")
        )
    absent = [Absent("a", s.name, s.store, bool(allowed & set(_names_of(s)))) for s in only_a]
    absent += [Absent("b", s.name, s.store) for s in only_b]
    pairs, coverage = on_common_cells(pairs)
    pairs = _with_corrected(pairs, packs, options, stores)
    result = compare_sides(
        pairs, options, allow_judge_change=allow_judge_change, texts=texts,
        holm_family=holm_family, coverage=coverage,
    )  # fmt: skip
    title = f"{new} vs {old}" if baseline else f"{old} vs {new}"
    result = replace(result, baseline=baseline, title=title, absent=tuple(absent))
    return result.with_gate(rules, allow_untested=allow_untested)


class _Stores:
    """The stores a comparison reads, each opened once (by path) and closed at the end."""

    def __init__(self, on_busy: OnBusy | None) -> None:
        self.on_busy = on_busy
        self.opened: dict[str, Store] = {}

    def open(self, path: str | Path) -> Store:
        key = str(path)
        if key not in self.opened:
            store = open_store(path, must_exist=True, on_busy=self.on_busy)
            self.opened[key] = self.opened[str(store.path)] = store
        return self.opened[key]

    def __enter__(self) -> _Stores:
        return self

    def __exit__(self, *_: object) -> None:
        for store in {id(s): s for s in self.opened.values()}.values():
            store.close()


class _Replies:
    """A store's responses, read for the generations asked (the flips' examples), not all of
    them (:class:`~deflectbench.analysis.compare.flips.Replies`)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def of(self, gen_ids: Sequence[Any]) -> dict[Any, str]:
        got = self.store.column_lists(
            "generations", ["gen_id", "response", "error"], gen_ids=gen_ids
        )
        rows = zip(got["gen_id"], got["response"], got["error"], strict=True)
        return {g: text for g, text, error in rows if error is None}


def _names_of(side: Side) -> tuple[str, ...]:
    """The names ``--allow-missing`` may give a side by: its name, its model, and
    ``MODEL:CONDITION``."""
    cond = (f"{side.model}:{side.condition}",) if side.condition else ()
    return (side.name, side.model, *cond)


def _read_side(
    store: Store, selector: Selector, pack: Benchmark | None, options: AnalysisOptions
) -> list[Side]:
    """The sides ``selector`` names, with their manifests (the store's frames and run ids read
    once)."""
    from deflectbench.analysis.compare.manifest import with_manifests
    from deflectbench.analysis.compare.select import read_store_frames, sides_of

    read = read_store_frames(store, options)
    return with_manifests(store, sides_of(read, selector, options, pack), read.runs, read.served)


def _with_corrected(
    pairs: list[tuple[Side, Side]],
    packs: tuple[Benchmark | None, Benchmark | None],
    options: AnalysisOptions,
    stores: _Stores,
) -> list[tuple[Side, Side]]:
    """Each side (already on its pair's common cells) with its rates corrected for judge
    error, where its store holds human labels (so the corrected rows compare the same cells
    too)."""
    from deflectbench.analysis.calibration.load import has_labels
    from deflectbench.analysis.compare.corrected import with_corrected
    from deflectbench.benchmark.packs import pack_by_key

    if options.correction == "none":
        return pairs
    out: list[list[Side]] = [list(p) for p in pairs]
    for i, given in enumerate(packs):
        by_store: dict[str, list[int]] = {}
        for k, pair in enumerate(pairs):
            by_store.setdefault(pair[i].store, []).append(k)
        for path, members in by_store.items():
            store = stores.open(path)
            if not has_labels(store):
                continue
            for k in members:
                side = out[k][i]
                of = given or pack_by_key(side.pack)
                if of is not None:
                    out[k][i] = with_corrected(store, side, of, options)
    return [(x[0], x[1]) for x in out]


def leaderboard(
    stores: Sequence[DbPath],
    *,
    by: str = "refusal",
    ascending: bool = False,
    allow_judge_change: bool = False,
    consensus: str = "mean",
    judges: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    benchmark: str | None = None,
    on_busy: OnBusy | None = None,
) -> Leaderboard:
    """Every model x condition x pack of the stores ranked by one rate (``by``: an outcome, a
    field, or ``field:NAME``; highest first unless ``ascending``), with 95% CIs and letter
    groups of rows not significantly different (paired tests within a pack, Holm-adjusted).
    Rows judged by other judges than most rows are marked and left unranked unless
    ``allow_judge_change``."""
    from deflectbench.analysis.compare.board import leaderboard as board_of
    from deflectbench.analysis.compare.board import parse_measure
    from deflectbench.analysis.compare.leaderboard import Leaderboard
    from deflectbench.analysis.compare.manifest import with_manifest
    from deflectbench.analysis.compare.select import (
        Selector,
        packs_of,
        read_store_frames,
        sides_of,
    )
    from deflectbench.benchmark import resolve_benchmark

    kind, measure = parse_measure(by)
    options = analysis_options(consensus, judges, "said", resamples, seed)
    given = resolve_benchmark(benchmark) if benchmark else None
    sides: list[Side] = []
    for path in stores:
        with open_store(path, must_exist=True, on_busy=on_busy) as store:
            read = read_store_frames(store, options)
            for pack in [given] if given else packs_of(read):
                found = sides_of(read, Selector(str(path), Path(path)), options, pack)
                sides += [with_manifest(store, s) for s in found]  # the judges' manifests
    board = board_of(
        sides,
        measure=measure,
        kind=kind,
        descending=not ascending,
        allow_judge_change=allow_judge_change,
        n_resamples=resamples,
        seed=seed,
    )
    return Leaderboard(board, kind, measure, ascending, allow_judge_change)
