"""``deflectbench status``'s lines for the judges of batch runs that have no batch API.

The library judges them through the normal engine
(:class:`~deflectbench.pipeline.batches.engine_judges.EngineJudges`); each such judge ends here
as one line: what it judged now, and what still awaits it and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from deflectbench.cli.console import err

if TYPE_CHECKING:
    from deflectbench.pipeline.batches.engine_judges import Standing

#: What a failed request becomes in the line: the next status sends it again.
_AGAIN = "the next `deflectbench status` sends them again"


def report_judges(standings: Sequence[Standing]) -> None:
    """One line per judge that judged now or has answers awaiting it."""
    for s in standings:
        res = s.result
        parts = []
        if res.ok:
            parts.append(f"{res.ok} answers judged now (no batch API: through the engine)")
            if res.parse_errors:
                parts[0] += f", {res.parse_errors} replies without a verdict"
        if s.awaiting:
            what = "await it" if res.ok else "answers await it"
            parts.append(f"{s.awaiting} {what}: {_why(s)}")
        line = f"{s.judge}: " + "; ".join(parts)
        err.print(line, style="yellow" if s.awaiting else None, highlight=False, markup=False)


def _why(s: Standing) -> str:
    if s.unreachable is not None:
        return s.unreachable
    failures = s.result.failures()
    if s.result.withheld:
        return (
            "not sent: over the run's --max-cost budget; "
            f"`deflectbench judge -j {s.judge} -c RUN.toml --max-cost USD` judges them with "
            "a larger one"
        )
    if failures:
        ranked = sorted(failures.items(), key=lambda kv: -kv[1])
        causes = ", ".join(f"{k} x{n}" for k, n in ranked)
        return f"its requests failed ({causes}); {_AGAIN}"
    return f"not judged yet; {_AGAIN}"
