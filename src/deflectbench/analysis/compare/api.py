"""A comparison as one typed result: every difference and flipped cell of one or more pairs of
sides (:func:`compare_sides`), each pair's coverage, the regression gate's rules, failures and
rules not tested, the models one side lacks, and how it was computed. :func:`deflectbench.compare`
returns it; the terminal, the page and the files render it, and ``to_json()`` is exactly what
``deflectbench compare --json`` writes.

The gate passes only when it tested what it was asked to: with rules, a rule that fails, a
rule that could not be tested on some pair (unless ``allow_untested``) and a model or condition
of the baseline (A) that the new side (B) lacks (unless named in ``allow_missing``) each make
:attr:`Comparison.exit_code` 6. Without rules there is no gate: those are said, exit 0."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pandas as pd

from deflectbench.analysis.compare.corrected import corrected_rows
from deflectbench.analysis.compare.coverage import Coverage, on_common_cells
from deflectbench.analysis.compare.flips import FLIP_COLUMNS, Texts, flip_table
from deflectbench.analysis.compare.manifest import judge_mismatch, manifest_notes
from deflectbench.analysis.compare.recorded import RecordedRow, SideRow, recorded_rows, side_rows
from deflectbench.analysis.compare.rows import DiffRow, FlipRow, rows_of
from deflectbench.analysis.compare.select import CompareError, Side
from deflectbench.analysis.compare.table import COLUMNS, HOLM_FAMILIES, compare_scored, with_holm
from deflectbench.analysis.compare.thresholds import (
    GATE_FAILED,
    Failure,
    NotTested,
    Threshold,
    check_rules,
)
from deflectbench.analysis.options import AnalysisOptions

__all__ = ["Absent", "Comparison", "compare_sides"]

#: What each Holm family choice means, as the JSON's ``method`` says it.
HOLM_METHOD = {
    "measure": "Holm within families by measure and scope, per pair: the outcomes overall, the "
    "fields overall, each measure across the framings, each measure across the templates",
    "scope": "Holm within families by scope, per pair: the outcomes (or the fields) overall, by "
    "framing, by template",
    "all": "Holm over every row (judged rates one family, corrected ones another)",
    "none": "no adjustment (p_holm is p)",
}


@dataclass(frozen=True)
class Absent:
    """A side one result holds and the other lacks: ``side`` ``a`` (the baseline's, or A's:
    the new side lacks it; fails a gate unless allowed) or ``b`` (only the new side has it)."""

    side: str
    name: str
    store: str
    allowed: bool = False

    def line(self, a_word: str = "A", b_word: str = "B") -> str:
        from pathlib import Path

        if self.side == "b":
            return (
                f"absent: {b_word} {Path(self.store).name}:{self.name} has no counterpart on "
                f"the {a_word} side: not compared"
            )
        tail = (
            " (allowed: --allow-missing)"
            if self.allowed
            else f"; a gate does not pass (--allow-missing {self.name!r} allows it)"
        )
        return (
            f"absent: {a_word} {Path(self.store).name}:{self.name} has no counterpart on the "
            f"{b_word} side: not compared{tail}"
        )

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, "name": self.name, "store": self.store, "allowed": self.allowed}


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
    #: The gate's rules (``--fail-if``, ``--require``), each (rule, pair) that failed, and
    #: each that could not be tested.
    rules: tuple[Threshold, ...] = ()
    failures: tuple[Failure, ...] = ()
    untested: tuple[NotTested, ...] = ()
    #: Rules not tested do not fail the gate (``--allow-untested``; still said).
    allow_untested: bool = False
    #: Each pair's coverage (what each side held, the common cells compared).
    coverage: tuple[Coverage, ...] = ()
    #: Sides one result holds and the other lacks.
    absent: tuple[Absent, ...] = ()
    #: How ``p_holm`` was adjusted (:data:`~.table.HOLM_FAMILIES`).
    holm_family: str = "measure"
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
    def words(self) -> tuple[str, str]:
        """What the two sides are called: ("baseline", "new") or ("A", "B")."""
        return ("baseline", "new") if self.baseline else ("A", "B")

    @property
    def coverage_notes(self) -> list[str]:
        """One line per pair whose sides hold different cells (nothing when they hold the
        same), then one per side the other result lacks."""
        a, b = self.words
        lines = [line for c in self.coverage if (line := c.line(a, b))]
        return lines + [x.line(a, b) for x in self.absent]

    @property
    def missing(self) -> list[Absent]:
        """The baseline's (A's) sides the new side lacks that were not allowed to be absent."""
        return [x for x in self.absent if x.side == "a" and not x.allowed]

    @property
    def passed(self) -> bool:
        """The gate passed: no rule failed; with rules, every rule was tested on every pair
        (or ``allow_untested``) and no baseline side was absent (or it was allowed). True
        without rules."""
        if not self.rules:
            return True
        untested = bool(self.untested) and not self.allow_untested
        return not self.failures and not untested and not self.missing

    @property
    def exit_code(self) -> int:
        """The command's exit code: 6 when the gate did not pass, else 0."""
        return 0 if self.passed else GATE_FAILED

    def gate_lines(self) -> list[str]:
        """What the gate says, one line each: failures, rules not tested, absent sides (for a
        gate), then ``gate passed`` or ``gate did not pass`` (nothing without rules)."""
        if not self.rules:
            return []
        a, b = self.words
        lines = [f.line() for f in self.failures]
        lines += [u.line() + (" (allowed: --allow-untested)" if self.allow_untested else "")
                  for u in self.untested]  # fmt: skip
        lines += [f"fail: {x.line(a, b)}" for x in self.missing]
        n = len(self.rules)
        if self.passed:
            tested = "" if not self.untested else f" ({len(self.untested)} not tested, allowed)"
            lines.append(f"gate passed: no difference's 95% CI lies wholly beyond {n} rule(s)"
                         f"{tested}")  # fmt: skip
        else:
            why = [f"{len(self.failures)} failed" if self.failures else "",
                   f"{len(self.untested)} not tested (--allow-untested)"
                   if self.untested and not self.allow_untested else "",
                   f"{len(self.missing)} baseline side(s) absent (--allow-missing)"
                   if self.missing else ""]  # fmt: skip
            lines.append(f"gate did not pass: {', '.join(w for w in why if w)}")
        return lines

    def with_gate(self, rules: Sequence[Threshold], *, allow_untested: bool = False) -> Comparison:
        """This comparison checked against ``rules`` (a rule naming nothing compared is a
        :class:`~.thresholds.ThresholdError`)."""
        from deflectbench.benchmark.packs import pack_by_key

        pairs = [(a.label, b.label) for a, b in self.pairs]
        templates: set[str] = set()
        for key in {s.pack for pair in self.pairs for s in pair}:
            pack = pack_by_key(key)
            templates |= {t.prompt_id for t in pack.templates} if pack is not None else set()
        failures, untested = check_rules(self.table, rules, pairs=pairs, templates=templates)
        return replace(
            self,
            rules=tuple(rules),
            failures=tuple(failures),
            untested=tuple(untested),
            allow_untested=allow_untested,
        )

    def to_json(self) -> dict[str, Any]:
        """Exactly what ``deflectbench compare --json`` writes."""
        return {
            "rows": [r.to_json() for r in self.rows],
            "flips": [f.to_json() for f in self.flip_rows],
            "sides": [{"a": dict(a.manifest), "b": dict(b.manifest)} for a, b in self.pairs],
            "judge_notes": list(self.judge_notes),
            "manifest_notes": list(self.manifest_notes),
            "coverage": [c.to_json(*self.words) for c in self.coverage],
            "coverage_notes": self.coverage_notes,
            "absent": [x.to_json() for x in self.absent],
            "gate": {
                "rules": [t.text for t in self.rules],
                "checks": [
                    {"rule": t.text, "flag": t.flag, "meaning": t.meaning()} for t in self.rules
                ],
                "failures": [f.line() for f in self.failures],
                "not_tested": [u.line() for u in self.untested],
                "absent": [x.line(*self.words) for x in self.missing] if self.rules else [],
                "passed": self.passed,
                "exit_code": self.exit_code,
            },
            "method": {
                "bootstrap": "paired claim-block (same claim draws for both sides)",
                "cells": "each pair compared on the cells (claim x template x sample) both "
                "sides hold",
                "resamples": self.n_resamples,
                "seed": self.seed,
                "p": "two-sided, from the bootstrap standard error",
                "holm_family": self.holm_family,
                "p_holm": HOLM_METHOD[self.holm_family],
                "diff": "new minus baseline" if self.baseline else "B minus A",
            },
        }


def compare_sides(
    pairs: Sequence[tuple[Side, Side]],
    options: AnalysisOptions = AnalysisOptions(),  # noqa: B008 (frozen)
    *,
    allow_judge_change: bool = False,
    texts: Mapping[str, Texts] | None = None,
    holm_family: str = "measure",
    coverage: Sequence[Coverage] | None = None,
) -> Comparison:
    """The comparison of each (A, B) pair on the cells both sides hold, Holm-adjusted within
    ``holm_family``'s families (:data:`~.table.HOLM_FAMILIES`).

    Each pair's sides are restricted to their common cells first
    (:func:`~.coverage.on_common_cells`), unless ``coverage`` says the caller did so already.
    Sides judged by different judges are refused (:class:`CompareError`) unless
    ``allow_judge_change``; then their rows carry ``judges_differ`` True. ``texts`` (store
    path -> gen_id -> response, or a :class:`~.flips.Replies` reader of the store) turns the
    flips' examples into the responses' first words.
    """
    if holm_family not in HOLM_FAMILIES:
        raise CompareError(
            f"unknown --holm-family {holm_family!r}; valid: {', '.join(HOLM_FAMILIES)}"
        )
    if coverage is None:
        pairs, coverage = on_common_cells(pairs)
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
            holm_family=None,  # adjusted below, over every pair's rows
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
        with_holm(pd.concat(tables, ignore_index=True), holm_family)
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
        coverage=tuple(coverage),
        holm_family=holm_family,
    )
