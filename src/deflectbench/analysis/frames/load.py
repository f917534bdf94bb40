"""Reading a store once: the generation and judgment frames every view of the results starts
from, and (for the report) the texts and run records shown beside the numbers.

Callers above the analysis (the report) never touch the store themselves; they hand it to
:func:`read_store` (typed by :class:`StoreReader`, the few methods the analysis uses).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from deflectbench.analysis.frames.scored import generation_frame, judgment_frame
from deflectbench.analysis.options import DEFAULT_VALUES

__all__ = [
    "DETAIL_GEN_COLUMNS",
    "DETAIL_JUDGMENT_COLUMNS",
    "StoreFrames",
    "StoreReader",
    "read_store",
]

#: Judgment columns the cost needs (every summary has the cost).
TOKEN_COLUMNS = ("input_tokens", "output_tokens")
#: Generation columns the example responses and the run metadata need.
DETAIL_GEN_COLUMNS = ("response", "created_at", "source", "served_model")
#: Judgment columns the example responses and the run metadata need.
DETAIL_JUDGMENT_COLUMNS = ("reasoning", "created_at")


class StoreReader(Protocol):
    """What the analysis reads from a results store (``deflectbench.store.Store``)."""

    @property
    def path(self) -> Any: ...

    @property
    def schema_version(self) -> int: ...

    def generation_rows(
        self, *, include_errors: bool = True, columns: Sequence[str] | None = None
    ) -> list[dict[str, Any]]: ...

    def judgment_rows(self, *, columns: Sequence[str] | None = None) -> list[dict[str, Any]]: ...

    def runs(self) -> list[dict[str, Any]]: ...

    def turn_links(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class StoreFrames:
    """One read of a store: every generation and every judgment (``values`` already applied).

    With ``detail``, the frames also hold the texts and dates (:data:`DETAIL_GEN_COLUMNS`,
    :data:`DETAIL_JUDGMENT_COLUMNS`) and the store's path, schema version and runs are kept.
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
    )
