"""A comparison as one typed result: every difference and flipped cell of one or more pairs of
sides (:func:`compare_sides`), the regression gate's rules and failures, and how it was computed.
:func:`deflectbench.compare` returns it; the terminal, the page and the files render it, and
``to_json()`` is exactly what ``deflectbench compare --json`` writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pandas as pd

from deflectbench.analysis.compare.corrected import corrected_rows
from deflectbench.analysis.compare.flips import FLIP_COLUMNS, flip_table
from deflectbench.analysis.compare.manifest import judge_mismatch, manifest_notes
from deflectbench.analysis.compare.recorded import RecordedRow, SideRow, recorded_rows, side_rows
from deflectbench.analysis.compare.rows import DiffRow, FlipRow, rows_of
from deflectbench.analysis.compare.select import CompareError, Side
from deflectbench.analysis.compare.table import COLUMNS, compare_scored, with_holm
from deflectbench.analysis.compare.thresholds import (
    GATE_FAILED,
    Failure,
    Threshold,
    check_thresholds,
)
from deflectbench.analysis.options import AnalysisOptions

__all__ = ["Comparison", "compare_sides"]


@dataclass(frozen=True)
class Comparison:
    """Every difference (``table``, long format, B minus A; ``corrected`` rows where both sides
    have rates corrected for judge error) and every flipped cell (``flips``) of one or more
    pairs of sides; ``judge_notes`` says where the judges differed (allowed). With a gate
    (:meth:`with_gate`), the rules and the differences whose whole CI lies beyond one."""

    table: pd.DataFrame
    flips: pd.DataFrame
    pairs: tuple[tuple[Side, Side], ...] = ()
    judge_notes: tuple[str, ...] = field(default=())
    #: Where the sides' manifests differ beyond the model (served ids, settings, versions).
    manifest_notes: tuple[str, ...] = field(default=())
    #: The gate's rules (``--fail-if``) and each (rule, pair) that failed.
    rules: tuple[Threshold, ...] = ()
    failures: tuple[Failure, ...] = ()
    #: The sides were given as NEW and ``baseline`` OLD (differences: new minus baseline).
    baseline: bool = False
    #: The page's title: the two sides as given.
    title: str = ""
    n_resamples: int = 1000
    seed: int = 0

    @cached_property
    def rows(self) -> list[DiffRow]:
        """The table's rows, typed (what the views and the files read)."""
        return rows_of(DiffRow, self.table)

    @cached_property
    def flip_rows(self) -> list[FlipRow]:
        return rows_of(FlipRow, self.flips)

    @cached_property
    def side_rows(self) -> list[SideRow]:
        """Each side once, as its manifest says it was made."""
        return side_rows(self.pairs)

    @cached_property
    def recorded_rows(self) -> list[RecordedRow]:
        """Each side's recorded run manifests, one row each."""
        return recorded_rows(self.pairs)

    @property
    def passed(self) -> bool:
        """No difference lies wholly beyond a rule (True without rules)."""
        return not self.failures

    @property
    def exit_code(self) -> int:
        """The command's exit code: 6 when a rule failed, else 0."""
        return 0 if self.passed else GATE_FAILED

    def with_gate(self, rules: Sequence[Threshold]) -> Comparison:
        """This comparison checked against ``rules`` (a rule naming nothing compared is a
        :class:`~.thresholds.ThresholdError`)."""
        failures = check_thresholds(self.table, rules)
        return replace(self, rules=tuple(rules), failures=tuple(failures))

    def to_json(self) -> dict[str, Any]:
        """Exactly what ``deflectbench compare --json`` writes."""
        return {
            "rows": [r.to_json() for r in self.rows],
            "flips": [f.to_json() for f in self.flip_rows],
            "sides": [{"a": dict(a.manifest), "b": dict(b.manifest)} for a, b in self.pairs],
            "judge_notes": list(self.judge_notes),
            "manifest_notes": list(self.manifest_notes),
            "gate": {
                "rules": [t.text for t in self.rules],
                "failures": [f.line() for f in self.failures],
            },
            "method": {
                "bootstrap": "paired claim-block (same claim draws for both sides)",
                "resamples": self.n_resamples,
                "seed": self.seed,
                "p": "two-sided, from the bootstrap standard error",
                "p_holm": "Holm over every row (judged rates one family)",
                "diff": "new minus baseline" if self.baseline else "B minus A",
            },
        }


def compare_sides(
    pairs: Sequence[tuple[Side, Side]],
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen)
    *,
    allow_judge_change: bool = False,
    texts: dict[str, dict] | None = None,
) -> Comparison:
    """The comparison of each (A, B) pair, Holm-adjusted over all of them together.

    Sides judged by different judges are refused (:class:`CompareError`) unless
    ``allow_judge_change``; then their rows carry ``judges_differ`` True. ``texts`` (store
    path -> gen_id -> response) turns the flips' examples into the responses' first words.
    """
    tables, flips, notes, others = [], [], [], []
    for a, b in pairs:
        others += manifest_notes(a, b)
        note = judge_mismatch(a, b)
        if note and not allow_judge_change:
            raise CompareError(
                f"{note}: different judges score differently, so their rates are not "
                "comparable; pass --allow-judge-change to compare them anyway (marked)"
            )
        if note:
            notes.append(note)
        if a.scored.empty or b.scored.empty:
            empty = a if a.scored.empty else b
            raise CompareError(
                f"{empty.label}: nothing scored (no generation judged by every judge of it); "
                "run `deflectbench judge` first"
            )
        t = compare_scored(
            a.scored,
            b.scored,
            model_a=a.label,
            model_b=b.label,
            n_resamples=options.n_resamples,
            seed=options.seed,
        )
        extra = corrected_rows(a, b)
        if len(extra):
            t = pd.concat([t, extra], ignore_index=True)
        t["judges_differ"] = note is not None
        tables.append(t)
        flips.append(
            flip_table(
                a.scored,
                b.scored,
                model_a=a.label,
                model_b=b.label,
                texts_a=(texts or {}).get(a.store),
                texts_b=(texts or {}).get(b.store),
            )
        )
    table = (
        with_holm(pd.concat(tables, ignore_index=True))
        if tables
        else pd.DataFrame(columns=[*COLUMNS, "judges_differ"])
    )
    flips_df = (
        pd.concat([f for f in flips if not f.empty], ignore_index=True)
        if any(not f.empty for f in flips)
        else pd.DataFrame(columns=list(FLIP_COLUMNS))
    )
    return Comparison(
        table,
        flips_df,
        tuple(pairs),
        tuple(notes),
        tuple(others),
        n_resamples=options.n_resamples,
        seed=options.seed,
    )
