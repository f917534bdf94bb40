"""Results side by side from Python: ``compare`` (two sides, paired over claims, with the
regression gate) and ``leaderboard`` (every model x condition x pack of some stores, ranked).
``deflectbench compare`` and ``deflectbench leaderboard`` are these functions and a view.

    import deflectbench as db

    c = db.compare("old.db", "new.db")                     # the same models in two runs
    c = db.compare("new.db", baseline="old.db", fail_if=["refusal < -5pp"])
    c.table, c.flips, c.exit_code                          # DataFrames; 6 when a rule failed
    board = db.leaderboard(["run1.db", "run2.db"], by="clean_compliance").board
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from deflectbench.api._common import DbPath, OnBusy, analysis_options, open_store

if TYPE_CHECKING:
    from deflectbench.analysis.compare.api import Comparison
    from deflectbench.analysis.compare.leaderboard import Leaderboard
    from deflectbench.analysis.compare.select import Side
    from deflectbench.analysis.options import AnalysisOptions
    from deflectbench.benchmark import Benchmark

__all__ = ["compare", "leaderboard"]


def compare(
    a: DbPath,
    b: DbPath | None = None,
    *,
    baseline: DbPath | None = None,
    fail_if: Sequence[str] = (),
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
    the new side and the differences are A minus ``baseline``; ``fail_if`` rules (``"refusal <
    -5pp"``, ``"clean_compliance > +3pp@coach"``) make the gate: ``exit_code`` is 6 when a
    difference's whole 95% CI lies beyond one. ``benchmark_b`` reads the second side from
    another pack of the same claims. Sides judged by different judges raise
    :class:`~deflectbench.analysis.compare.select.CompareError` unless ``allow_judge_change``."""
    from deflectbench.analysis.calibration.corrected import check_correction
    from deflectbench.analysis.compare.api import compare_sides
    from deflectbench.analysis.compare.select import CompareError, pair_sides
    from deflectbench.analysis.compare.thresholds import parse_threshold
    from deflectbench.analysis.compat.quirks import check_compat
    from deflectbench.benchmark import resolve_benchmark

    if baseline is not None and b is not None:
        raise CompareError(
            "give B or --baseline OLD, not both (with --baseline, A is the new side)"
        )
    if baseline is None and b is None:
        raise CompareError("compare needs two sides: A B, or NEW --baseline OLD")
    rules = [parse_threshold(t) for t in fail_if]
    old, new = (str(baseline), str(a)) if baseline is not None else (str(a), str(b))
    options = replace(
        analysis_options(consensus, judges, judge_values, resamples, seed),
        compat=check_compat(compat),
        correction=check_correction(correction),
    )
    pack = resolve_benchmark(benchmark) if benchmark else None
    packs = (pack, resolve_benchmark(benchmark_b) if benchmark_b else pack)
    sides, texts = [], {}
    for text, of in zip((old, new), packs, strict=True):
        found, (path, replies) = _read_side(text, of, options, on_busy)
        sides.append(found)
        texts[path] = replies
    result = compare_sides(
        pair_sides(sides[0], sides[1]), options, allow_judge_change=allow_judge_change, texts=texts
    )
    title = f"{new} vs {old}" if baseline is not None else f"{old} vs {new}"
    return replace(result.with_gate(rules), baseline=baseline is not None, title=title)


def _read_side(
    text: str, pack: Benchmark | None, options: AnalysisOptions, on_busy: OnBusy | None
) -> tuple[list[Side], tuple[str, dict[str, str]]]:
    """The sides ``text`` names, with their manifests and (where the store holds human labels)
    corrected rates; and the store's replies by gen_id (the flips' examples)."""
    from deflectbench.analysis.compare.corrected import with_corrected
    from deflectbench.analysis.compare.manifest import with_manifest
    from deflectbench.analysis.compare.select import parse_selector, read_sides
    from deflectbench.benchmark.packs import pack_by_key

    selector = parse_selector(text)
    with open_store(selector.store, must_exist=True, on_busy=on_busy) as store:
        found = [with_manifest(store, s) for s in read_sides(store, selector, options, pack)]
        of = pack or (pack_by_key(found[0].pack) if found else None)
        sides = [with_corrected(store, s, of, options) if of else s for s in found]
        rows = store.generation_rows(include_errors=False, columns=["gen_id", "response"])
        return sides, (str(store.path), {r["gen_id"]: r["response"] for r in rows})


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
