"""``judge --shard I/N``: judge only the answers of one part's claims.

The claims of a part are :class:`~deflectbench.config.shard.Shard`'s (a stable hash of the
claim id), the same that ``run --shard`` generates, so N judge processes over one store (or over
N part stores) judge every answer exactly once between them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from deflectbench.config.shard import Shard
from deflectbench.models.base import Model
from deflectbench.pipeline import Board, RunContext, StageResult, run_stream
from deflectbench.pipeline.stages import build_judges, judge_tasks


def judge_part(
    ctx: RunContext,
    judges: Sequence[str],
    models: Mapping[str, Model],
    shard: Shard,
    watch: Callable[[Board], None] | None = None,
) -> dict[str, StageResult]:
    """Every judge, all at once, over the unjudged answers of the part's claims."""
    tasks = [
        replace(t, backlog=[p for p in t.backlog if shard.holds(p.claim_id)])
        for t in judge_tasks(ctx, build_judges(ctx.benchmark, judges, models), None)
    ]
    return asyncio.run(run_stream(ctx, [], tasks, watch=watch)).judging


def left_in_part(ctx: RunContext, judge: str, shard: Shard | None) -> int:
    """Answers of the part (all, for None) this judge has no verdict for."""
    pending = ctx.store.pending_judgments(judge, benchmark=ctx.benchmark.key, retry_errors=True)
    return sum(1 for p in pending if shard is None or shard.holds(p.claim_id))
