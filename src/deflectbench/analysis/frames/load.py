"""Reading a store once: the generation and judgment frames every view of the results starts
from, and (for the report) the run records shown beside the numbers. Texts are never read for
every row (at ten times the paper they cost more than everything else): the few the report
shows are fetched by id afterwards (:class:`StoreTexts`).

Callers above the analysis (the report) never touch the store themselves; they hand it to
:func:`read_store` (typed by :class:`StoreReader`, the few methods the analysis uses).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from deflectbench.analysis.frames.scored import RowReader, generation_frame, judgment_frame
from deflectbench.analysis.options import DEFAULT_VALUES

__all__ = [
    "DETAIL_GEN_COLUMNS",
    "DETAIL_JUDGMENT_COLUMNS",
    "StoreFrames",
    "StoreReader",
    "StoreTexts",
    "read_store",
]

#: Judgment columns the cost needs (every summary has the cost).
TOKEN_COLUMNS = ("input_tokens", "output_tokens")
#: Generation columns the run metadata needs (the responses: :class:`StoreTexts`).
DETAIL_GEN_COLUMNS = ("created_at", "source", "served_model")
#: Judgment columns the run metadata needs (the reasonings: :class:`StoreTexts`).
DETAIL_JUDGMENT_COLUMNS = ("created_at",)


class StoreReader(RowReader, Protocol):
    """What the analysis reads from a results store (``deflectbench.store.Store``): its rows
    (:class:`~deflectbench.analysis.frames.scored.RowReader`) and these."""

    @property
    def path(self) -> Any: ...

    @property
    def schema_version(self) -> int: ...

    def runs(self) -> list[dict[str, Any]]: ...

    def turn_links(self) -> list[dict[str, Any]]: ...


class StoreTexts:
    """The texts of a few generations, read when they are shown (examples, the control)."""

    def __init__(self, store: StoreReader) -> None:
        self.store = store

    def _rows(self, table: str, columns: list[str], gen_ids: Sequence[int]) -> list[tuple]:
        column_lists = getattr(self.store, "column_lists", None)
        if column_lists is not None:
            data = column_lists(table, columns, gen_ids=gen_ids)
            return list(zip(*(data[c] for c in columns), strict=True))
        wanted = set(gen_ids)  # a reader with rows only
        rows = (
            self.store.generation_rows(columns=columns)
            if table == "generations"
            else self.store.judgment_rows(columns=columns)
        )
        return [tuple(r[c] for c in columns) for r in rows if r["gen_id"] in wanted]

    def responses(self, gen_ids: Sequence[int]) -> dict[int, str | None]:
        """gen_id -> response, for these generations."""
        rows = self._rows("generations", ["gen_id", "response"], gen_ids)
        return {int(gid): text for gid, text in rows}

    def reasonings(self, gen_ids: Sequence[int]) -> dict[tuple[int, str], str | None]:
        """(gen_id, judge) -> the judge's reasoning, for these generations' judgments."""
        rows = self._rows("judgments", ["gen_id", "judge", "reasoning"], gen_ids)
        return {(int(gid), str(judge)): text for gid, judge, text in rows}


@dataclass(frozen=True)
class StoreFrames:
    """One read of a store: every generation and every judgment (``values`` already applied).

    With ``detail``, the frames also hold the dates and sources (:data:`DETAIL_GEN_COLUMNS`,
    :data:`DETAIL_JUDGMENT_COLUMNS`), the store's path, schema version and runs are kept, and
    ``texts`` reads the texts shown.
    """

    generations: pd.DataFrame
    judgments: pd.DataFrame
    values: str = DEFAULT_VALUES
    detail: bool = False
    store: str = ""
    schema_version: int | None = None
    runs: tuple[Mapping[str, Any], ...] = ()
    #: Later turns of multi-turn packs and their links to turn 1 (``Store.turn_links``).
    turn_links: tuple[Mapping[str, Any], ...] = ()
    texts: StoreTexts | None = None


def read_store(
    store: StoreReader, *, values: str = DEFAULT_VALUES, detail: bool = False
) -> StoreFrames:
    """Read the store once; ``detail`` adds what the report shows beside the numbers."""
    gens = generation_frame(store, extra=DETAIL_GEN_COLUMNS if detail else ())
    extra = (*TOKEN_COLUMNS, *DETAIL_JUDGMENT_COLUMNS) if detail else TOKEN_COLUMNS
    judg = judgment_frame(store, values=values, extra=extra)
    links = tuple(store.turn_links())
    if not detail:
        return StoreFrames(gens, judg, values, turn_links=links)
    return StoreFrames(
        gens,
        judg,
        values,
        detail=True,
        store=str(store.path),
        schema_version=store.schema_version,
        runs=tuple(store.runs()),
        turn_links=links,
        texts=StoreTexts(store),
    )
