"""Analysis: the scored table, the paper's tables and the machine-readable summary.

For notebooks::

    from deflectbench.analysis import AnalysisOptions, analyze, scored_table, summarize
    from deflectbench.analysis import rates_with_ci
    from deflectbench.benchmark import default_benchmark
    from deflectbench.store import Store

    with Store.open("deflectbench.db", readonly=True) as store:
        b = default_benchmark()
        scored = scored_table(store, b)          # one row per scored generation
        summary = analyze(store, b)              # the JSON of `deflectbench analyze --json`
        typed = summarize(store, b, AnalysisOptions(consensus="all"))  # the same, as a Summary
        release = analyze(store, b, AnalysisOptions(compat="release"))  # the release's script
        moves = audit(store, b).to_json()        # what each of its quirks moves
    rates_with_ci(scored)                        # per model, 8 fields + 5 outcomes with 95% CIs

The default is the paper's definition (the judges' values as they said them); the release's
quirks are in ``compat``. Every table function is pure (DataFrame in, DataFrame out).

The package, bottom up: ``stats`` (pure statistics: arrays in, numbers out), ``options`` (the
one ``AnalysisOptions``), ``consensus`` (the judges' consensus per field), ``compat`` (the
release's quirks, and the audit of what each moves), ``frames`` (the store read into frames:
the scored and verdict tables), ``tables`` (the paper's tables), ``summary`` (the typed
``Summary``, its JSON, and the sections it gathers: counts, packs, turns, examples),
``validity`` (judges against human labels), ``calibration`` (rates corrected for judge error).
This file is the notebook's import; the package's own modules import the module that defines
a name, never this one.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from deflectbench.analysis import stats, tables
from deflectbench.analysis.compat.quirks import ReleaseQuirks
from deflectbench.analysis.consensus import consensus_fields
from deflectbench.analysis.frames.scored import (
    generation_frame,
    judgment_frame,
    outcome_by,
    scored_from_frames,
    scored_table,
    verdict_table,
    verdicts_from_frames,
)
from deflectbench.analysis.jsonable import jsonable
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.analysis.tables import *  # noqa: F403 (the paper's tables, tables.__all__)

if TYPE_CHECKING:
    from deflectbench.analysis.compat.audit import Audit, audit
    from deflectbench.analysis.summary.build import (
        Summary,
        analyze,
        analyze_frames,
        summarize,
        summarize_frames,
    )

#: Names loaded on first use, with the module that defines each: ``compare`` and the other
#: commands that read one part of the analysis need not load the summary and the audit.
_LAZY = {
    "Audit": "compat.audit",
    "audit": "compat.audit",
    "Summary": "summary.build",
    "analyze": "summary.build",
    "analyze_frames": "summary.build",
    "summarize": "summary.build",
    "summarize_frames": "summary.build",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"deflectbench.analysis.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'deflectbench.analysis' has no attribute {name!r}")


__all__ = [
    "AnalysisOptions",
    "Audit",
    "ReleaseQuirks",
    "Summary",
    "analyze",
    "analyze_frames",
    "audit",
    "consensus_fields",
    "generation_frame",
    "jsonable",
    "judgment_frame",
    "outcome_by",
    "scored_from_frames",
    "scored_table",
    "stats",
    "summarize",
    "summarize_frames",
    "verdict_table",
    "verdicts_from_frames",
    *tables.__all__,
]
