"""What two sides hold, and the cells both hold: a paired difference is only a difference of
the same cells.

A side lacking 6 of 15 templates, or the claims a model refused most, has another rate than
its baseline on byte-identical answers: the difference would be a difference of coverage, not
of behaviour. So both sides of a pair are restricted to their *common cells* (claim x template
x sample present, scored, on both sides) before any rate, interval, p-value or flip is computed;
what each side held (claims, templates, samples, cells), what they share and what was left out
of each is kept as a :class:`Coverage`, and one line says so when the two differ. Sides that
hold the same cells are left exactly as they are (the same numbers, byte for byte). Sides that
share no cell are refused (:class:`~.select.CompareError`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.compare.select import CompareError, Side

__all__ = ["CELL", "Coverage", "Held", "cell_keys", "common_cells", "held", "on_common_cells"]

#: A cell: one answer's place in the design.
CELL: tuple[str, ...] = ("claim_id", "prompt_id", "sample")
#: How many ids a coverage line names before "+N more".
SHOWN = 3


@dataclass(frozen=True)
class Held:
    """What a scored table holds: distinct claims, templates and sample numbers, and cells."""

    claims: int
    templates: int
    samples: int
    cells: int

    def text(self) -> str:
        return (
            f"{self.claims:,} claims x {self.templates:,} templates x {self.samples:,} samples "
            f"({self.cells:,} cells)"
        )

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def cell_keys(scored: pd.DataFrame) -> pd.MultiIndex:
    """Each row's cell (claim, template, sample), in row order."""
    return _keys(scored)


def _keys(scored: pd.DataFrame) -> pd.MultiIndex:
    if scored.empty:
        return pd.MultiIndex.from_tuples([], names=list(CELL))
    return pd.MultiIndex.from_frame(scored[list(CELL)].astype({"sample": "int64"}))


def held(scored: pd.DataFrame) -> Held:
    """What ``scored`` holds (its distinct claims, templates, samples and cells)."""
    if scored.empty:
        return Held(0, 0, 0, 0)
    keys = _keys(scored).unique()
    return Held(
        int(scored["claim_id"].nunique()),
        int(scored["prompt_id"].nunique()),
        int(scored["sample"].nunique()),
        len(keys),
    )


def _only(mine: pd.Series, other: pd.Series) -> tuple[str, ...]:
    distinct = (set(x.dropna().unique().tolist()) for x in (mine, other))  # not every row
    return tuple(sorted(str(x) for x in next(distinct) - next(distinct)))


@dataclass(frozen=True)
class Coverage:
    """One pair's coverage: what each side held, what both hold (the cells compared), and the
    claims, templates and samples only one side has."""

    label_a: str
    label_b: str
    held_a: Held
    held_b: Held
    common: Held
    only_a: dict[str, tuple[str, ...]]
    only_b: dict[str, tuple[str, ...]]

    @property
    def equal(self) -> bool:
        """Both sides held the same cells (nothing was left out)."""
        return self.dropped_a == 0 and self.dropped_b == 0

    @property
    def dropped_a(self) -> int:
        """A's cells left out (B lacks them)."""
        return self.held_a.cells - self.common.cells

    @property
    def dropped_b(self) -> int:
        return self.held_b.cells - self.common.cells

    def line(self, a_word: str = "A", b_word: str = "B") -> str | None:
        """One line saying the sides' coverage differs and what was compared, or None when
        they hold the same cells."""
        if self.equal:
            return None
        lacks = []
        for word, only in ((b_word, self.only_a), (a_word, self.only_b)):
            for what in ("claims", "templates", "samples"):
                ids = only.get(what, ())
                if ids:
                    shown = ", ".join(ids[:SHOWN]) + (
                        f", +{len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
                    )
                    lacks.append(f"{word} lacks {len(ids)} {what} ({shown})")
        return (
            f"coverage differs: {a_word} {self.label_a} holds {self.held_a.text()}, "
            f"{b_word} {self.label_b} {self.held_b.text()}; compared on the "
            f"{self.common.cells:,} cells both hold (left out: {self.dropped_a:,} of "
            f"{a_word}'s, {self.dropped_b:,} of {b_word}'s"
            + (f"; {'; '.join(lacks)}" if lacks else "")
            + ")"
        )

    def to_json(self, a_word: str = "A", b_word: str = "B") -> dict[str, Any]:
        return {
            "model_a": self.label_a,
            "model_b": self.label_b,
            "a": self.held_a.to_json(),
            "b": self.held_b.to_json(),
            "common": self.common.to_json(),
            "dropped_a": self.dropped_a,
            "dropped_b": self.dropped_b,
            "only_a": {k: list(v) for k, v in self.only_a.items() if v},
            "only_b": {k: list(v) for k, v in self.only_b.items() if v},
            "line": self.line(a_word, b_word),
        }


def common_cells(
    a: pd.DataFrame, b: pd.DataFrame, *, label_a: str = "A", label_b: str = "B"
) -> tuple[pd.DataFrame, pd.DataFrame, Coverage]:
    """Both scored tables restricted to the cells both hold (row order kept; a table holding
    only common cells is returned as it is), and the pair's :class:`Coverage`."""
    if a.empty or b.empty:
        nothing = Held(0, 0, 0, 0)
        return (
            a if a.empty else a.iloc[:0],
            b if b.empty else b.iloc[:0],
            Coverage(label_a, label_b, held(a), held(b), nothing, {}, {}),
        )
    ids_a, ids_b = _cell_ids(a, b)
    in_a, in_b = np.isin(ids_a[-1], ids_b[-1]), np.isin(ids_b[-1], ids_a[-1])
    ra = a if bool(in_a.all()) else a[in_a]
    rb = b if bool(in_b.all()) else b[in_b]
    names = {"claims": "claim_id", "templates": "prompt_id", "samples": "sample"}
    only_a = {k: _only(a[c], b[c]) for k, c in names.items()}
    only_b = {k: _only(b[c], a[c]) for k, c in names.items()}
    common = _held([x[in_a] for x in ids_a])
    coverage = Coverage(label_a, label_b, _held(ids_a), _held(ids_b), common, only_a, only_b)
    return ra, rb, coverage


def _cell_ids(a: pd.DataFrame, b: pd.DataFrame) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each row's claim, template and sample as integer codes shared by both tables, and its
    cell (the three as one integer), for A's rows and B's."""
    codes, key = [], np.zeros(len(a) + len(b), dtype=np.int64)
    for column in CELL:
        values = pd.concat([a[column], b[column]], ignore_index=True)
        found, distinct = pd.factorize(values.astype("int64") if column == "sample" else values)
        codes.append(found.astype(np.int64))
        key = key * (len(distinct) + 1) + found + 1
    codes.append(key)
    return [x[: len(a)] for x in codes], [x[len(a) :] for x in codes]


def _held(ids: list[np.ndarray]) -> Held:
    """:func:`held` from :func:`_cell_ids`' codes of one table's rows."""
    claims, templates, samples, cells = (int(np.unique(x).size) for x in ids)
    return Held(claims, templates, samples, cells)


def on_common_cells(
    pairs: Sequence[tuple[Side, Side]],
) -> tuple[list[tuple[Side, Side]], list[Coverage]]:
    """Each pair's sides restricted to their common cells, and each pair's coverage. A pair
    sharing no cell is refused: there is nothing to pair."""
    out, coverage = [], []
    for a, b in pairs:
        if a.scored.empty or b.scored.empty:
            out.append((a, b))  # nothing scored: compare_sides says so
            coverage.append(common_cells(a.scored, b.scored, label_a=a.label, label_b=b.label)[2])
            continue
        sa, sb, cov = common_cells(a.scored, b.scored, label_a=a.label, label_b=b.label)
        if cov.common.cells == 0:
            raise CompareError(
                f"{a.label} ({cov.held_a.text()}) and {b.label} ({cov.held_b.text()}) share "
                "no cell (claim x template x sample): nothing to pair; compare runs of the same "
                "claims and templates"
            )
        out.append((a if sa is a.scored else replace(a, scored=sa),
                    b if sb is b.scored else replace(b, scored=sb)))  # fmt: skip
        coverage.append(cov)
    return out, coverage
