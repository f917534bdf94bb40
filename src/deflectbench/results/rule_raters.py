"""The rule-based raters scored now on a store's answers: the ``lexical`` judge's fields and the
monitor's outcome, for ``validate`` and ``calibrate`` to set beside the LLM judges.

Both are fast and deterministic, so they are scored on the fly rather than stored; both read
English only, so a pack in another language is validated without them (:func:`english_only`).
Here because they join the judging room's raters with the analysis' reading of a store.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.benchmark import Benchmark

__all__ = ["ProgressBars", "Stages", "english_only", "lexical_fields", "monitor_outcomes"]


class Stages(Protocol):
    """A progress display with one bar per stage (the CLI's ``StageBars``)."""

    def stage(self, description: str, total: int) -> Callable[[bool], None]: ...


#: Opens the progress display a long stage (the monitor over every answer) is shown in.
ProgressBars = Callable[[], AbstractContextManager[Stages]]


def english_only(benchmark: Benchmark) -> str | None:
    """Why the lexical judge and the monitor (built on it) are left out for this pack: they
    match English phrases, so on answers in another language they would score nearly every
    answer 0 (the same rule ``run`` and ``judge`` apply); None for an English pack."""
    from deflectbench.errors import ConfigError
    from deflectbench.judging import lexical
    from deflectbench.judging.judges import check_judge_language

    try:
        check_judge_language([lexical.NAME], benchmark.language, benchmark.pack)
    except ConfigError:
        return (
            f"note: the {lexical.NAME} judge and the monitor are left out: they read English "
            f"only and pack {benchmark.pack} is in {benchmark.language!r} (they would score "
            "nearly every answer 0)"
        )
    return None


def lexical_fields(store: Any, benchmark: Benchmark, gen_ids: Collection[int]) -> pd.DataFrame:
    """The lexical judge's fields on ``gen_ids`` (gen_id and the 8 fields)."""
    import pandas as pd

    from deflectbench.analysis.validity.load import generation_texts
    from deflectbench.judging import lexical
    from deflectbench.vocab import FIELDS

    texts = generation_texts(store, benchmark, list(gen_ids))
    rows = [
        {"gen_id": int(g), **lexical.score(c, r).scores}
        for g, c, r in zip(texts["gen_id"], texts["claim"], texts["response"], strict=True)
    ]
    return pd.DataFrame(rows, columns=["gen_id", *FIELDS])


@contextmanager
def _no_bars() -> Iterator[None]:
    yield None


def monitor_outcomes(
    store: Any, benchmark: Benchmark, gen_ids: Collection[int], bars: ProgressBars | None = None
) -> dict[int, str]:
    """The monitor's outcome for each of ``gen_ids`` that has an answer (a ``monitor`` stage
    in ``bars`` while it reads them)."""
    from deflectbench.analysis.validity.load import generation_texts
    from deflectbench.judging.monitor import monitor

    texts = generation_texts(store, benchmark, sorted(gen_ids))
    ids = texts["gen_id"].astype(int).tolist()
    out: dict[int, str] = {}
    with bars() if bars is not None else _no_bars() as shown:
        advance = shown.stage("monitor", len(ids)) if shown is not None else None
        workers = 2 if len(ids) >= 5000 else 1
        for g, flags in zip(ids, monitor(texts["response"], workers=workers), strict=True):
            out[g] = flags.outcome
            if advance is not None:
                advance(True)
    return out
