"""The rows of a comparison and of a leaderboard as typed records: what every view reads (the
terminal tables, the HTML pages, the CSV and JSON files) instead of the DataFrames' dicts.

Each row holds plain Python values (numpy scalars made Python, NaN made None), and
``to_json()`` is the row exactly as ``compare --json`` and ``leaderboard --json`` write it (the
CI as one ``ci95`` pair, keys in the files' order).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

import pandas as pd

from deflectbench.analysis.jsonable import jsonable
from deflectbench.vocab import OUTCOMES

__all__ = ["BOARD_JSON_COLUMNS", "DIFF_JSON_COLUMNS", "BoardRow", "DiffRow", "FlipRow", "rows_of"]

Row = TypeVar("Row", "DiffRow", "FlipRow", "BoardRow")


def rows_of(kind: type[Row], frame: pd.DataFrame) -> list[Row]:
    """The frame's rows as ``kind`` records (the columns ``kind`` names, None for one it
    lacks; plain values), read column by column (not a dict per row)."""
    names = _names(kind)
    none = [None] * len(frame)
    values = [frame[n].tolist() if n in frame.columns else none for n in names]
    return [kind(*(jsonable(v) for v in row)) for row in zip(*values, strict=True)]


def _names(kind: type) -> tuple[str, ...]:
    """The record's field names, in order."""
    return tuple(f.name for f in fields(kind))


def _json_columns(kind: type) -> tuple[str, ...]:
    """The record's fields as its JSON names them: ``ci_lo`` and ``ci_hi`` as one ``ci95``."""
    names = [f.name for f in fields(kind) if f.name != "ci_hi"]
    return tuple("ci95" if n == "ci_lo" else n for n in names)


def _plain(row: Any) -> dict[str, Any]:
    """The record's fields by name (``asdict`` without its deep copy: every value is plain)."""
    return dict(zip(_NAMES[type(row)], _values(row), strict=True))


def _values(row: Any) -> tuple[Any, ...]:
    """The record's values in field order, as they are."""
    return tuple(getattr(row, n) for n in _NAMES[type(row)])


def _with_ci(row: Any, columns: tuple[str, ...]) -> dict[str, Any]:
    values = _plain(row)
    values["ci95"] = [values.pop("ci_lo"), values.pop("ci_hi")]
    return {c: values[c] for c in columns}


@dataclass(frozen=True)
class DiffRow:
    """One difference of a comparison: a measure at a scope (overall, a framing, a template),
    both rates, B minus A with its 95% CI, p (raw and Holm-adjusted, with the Holm family and
    its size), Cohen's h, the counts (on the cells both sides hold)."""

    model_a: str
    model_b: str
    kind: str
    measure: str
    scope: str
    framing: str | None
    template: str | None
    corrected: bool
    judges_differ: bool
    rate_a: float | None
    rate_b: float | None
    diff: float | None
    ci_lo: float | None
    ci_hi: float | None
    p: float | None
    p_holm: float | None
    #: The Holm family the row was adjusted in, and its size (tests with a p-value).
    holm_family: str | None
    holm_m: int | None
    h: float | None
    n_a: int | None
    n_b: int | None
    n_claims: int | None

    @property
    def name(self) -> str:
        """The measure as the tables name it: an outcome, or ``field NAME``."""
        return self.measure if self.kind == "outcome" else f"field {self.measure}"

    def to_json(self) -> dict[str, Any]:
        return _with_ci(self, DIFF_JSON_COLUMNS)


@dataclass(frozen=True)
class FlipRow:
    """A cell (claim x template) whose majority outcome changed, with each side's share and
    the first words of one response each (model text: untrusted)."""

    model_a: str
    model_b: str
    claim_id: str
    prompt_id: str
    framing: str | None
    outcome_a: str
    outcome_b: str
    share_a: float | None
    share_b: float | None
    n_a: int | None
    n_b: int | None
    example_a: str | None
    example_b: str | None

    def to_json(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True)
class BoardRow:
    """One model x condition x pack of a leaderboard: its rank (None: unranked) and letters,
    its rate with the 95% CI, counts, judges, and its compliance signature."""

    rank: int | None
    group: str
    pack: str
    store: str
    model: str
    condition: str | None
    measure: str
    kind: str
    rate: float | None
    ci_lo: float | None
    ci_hi: float | None
    n: int
    n_claims: int
    #: The cells (claim x template x sample) the row was ranked on, and how many of its own
    #: were left out so that every ranked row of its pack is ranked on the same cells.
    cells: int
    dropped: int
    judges: str
    judges_match: bool
    share_refusal: float | None
    share_soft_refusal: float | None
    share_labeled_compliance: float | None
    share_clean_compliance: float | None
    share_other: float | None

    @property
    def shares(self) -> dict[str, float | None]:
        """Outcome -> its share of the row's scored generations, in the ladder's order."""
        return {o: getattr(self, f"share_{o}") for o in OUTCOMES}

    def to_json(self) -> dict[str, Any]:
        return _with_ci(self, BOARD_JSON_COLUMNS)


#: The columns of ``compare --csv`` and of each ``--json`` row (``ci95`` is [lo, hi] in JSON).
DIFF_JSON_COLUMNS = _json_columns(DiffRow)
#: The columns of ``leaderboard --csv`` and of each ``--json`` row.
BOARD_JSON_COLUMNS = _json_columns(BoardRow)
#: Each record's field names, read once.
_NAMES: dict[type, tuple[str, ...]] = {k: _names(k) for k in (DiffRow, FlipRow, BoardRow)}
