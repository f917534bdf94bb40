"""The judges of batch runs that have no batch API, judged through the normal engine.

A run in batch mode names its judges once; the answers its batches bring come back to
``status``, not to the run. Batch judges get judge batches and the lexical judge is scored by
the collector; every other model judge (a ``vllm/`` or other OpenAI-compatible section,
``local/``) judges them here through the normal engine (the pipeline's
:func:`~deflectbench.pipeline.stages.judge_pending`: the run's budget, the request cache,
one-line errors), so no answer waits unseen for the next ``run``. What each judge did and what still awaits it is
:meth:`EngineJudges.standing` (answers awaiting make ``status`` exit 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from deflectbench.cost import CostMeter, refuse_unpriced
from deflectbench.errors import ConfigError
from deflectbench.judging.judges import ModelJudge, check_judge_language
from deflectbench.models.base import Model
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.results import StageResult
from deflectbench.pipeline.stages import judge_pending


@dataclass(frozen=True)
class Standing:
    """One engine judge after this command: what it judged, what still awaits it, and why."""

    judge: str
    result: StageResult
    #: Answers still awaiting this judge (failed verdicts included).
    awaiting: int
    #: Why this command could not build or price the judge (never tried), if so.
    unreachable: str | None = None


@dataclass
class EngineJudges:
    """The judges of batch runs that have no batch API, judged through the engine.

    The context's meter holds the run's budget and prices; ``models`` the judges built by
    name; ``unreachable``: judge -> why this
    command cannot build it (a provider section stored by name only, a missing key); such a
    judge is never tried, and its answers are said to await it. A judge whose requests all
    failed in one round is not tried again by this command (``status --wait`` would otherwise
    hammer a server that is down every poll)."""

    ctx: RunContext
    models: Mapping[str, Model]
    allow_unpriced: bool = False
    unreachable: dict[str, str] = field(default_factory=dict)
    #: judge -> what the engine did for it, over every round of this command.
    done: dict[str, StageResult] = field(default_factory=dict)
    #: judge -> the batch models whose answers it judges (every judge seen in any round).
    seen: dict[str, list[str]] = field(default_factory=dict)
    #: Judges not tried again in this command, and why.
    down: dict[str, str] = field(default_factory=dict)
    rounds: int = 0

    async def judge(self, judges: Mapping[str, Sequence[str]]) -> None:
        """One round: every reachable judge over the answers awaiting it. The first round of
        a command also sends again the requests that failed before (an earlier status whose
        server was down); later ones take only the answers that came since."""
        retry = self.rounds == 0
        self.rounds += 1
        self.seen.update({j: list(m) for j, m in judges.items()})
        run = self.ctx.meter or CostMeter(None)
        meter = CostMeter(  # what open batches hold reserved counts as spent, as in a run
            run.budget_usd, run.overrides, spent_before=self.ctx.store.committed_usd()
        )
        groups: dict[tuple[str, ...], list[str]] = {}
        for judge, models in judges.items():
            if judge in self.unreachable or judge in self.down:
                continue
            try:
                refuse_unpriced(meter, [judge], self.allow_unpriced)
            except ConfigError as exc:
                self.unreachable[judge] = str(exc)
                continue
            groups.setdefault(tuple(sorted(models)), []).append(judge)
        ctx = replace(self.ctx, meter=meter, retry_errors=retry)
        for models, names in groups.items():
            check_judge_language(names, ctx.benchmark.language, ctx.benchmark.pack)
            group = {n: ModelJudge(self.models[n], ctx.benchmark.rubric) for n in names}
            out = await judge_pending(ctx, group, list(models))
            for judge, res in out.items():
                self._add(judge, res)

    def _add(self, judge: str, res: StageResult) -> None:
        total = self.done.setdefault(judge, StageResult())
        total.ok += res.ok
        total.parse_errors += res.parse_errors
        total.withheld = res.withheld  # the last round's: each round offers them again
        for cause, n in res.errors_by_cause.items():
            total.errors_by_cause[cause] = total.errors_by_cause.get(cause, 0) + n
        total.aborted = res.aborted or total.aborted
        if res.aborted or (res.errors and not res.ok):
            self.down[judge] = res.aborted or "every request failed"

    def standing(self) -> list[Standing]:
        """Each judge that judged now or has answers awaiting it, by name."""
        out = []
        for judge, models in sorted(self.seen.items()):
            left = len(
                self.ctx.store.pending_judgments(
                    judge, benchmark=self.ctx.benchmark.key, models=models, retry_errors=True
                )
            )
            res = self.done.get(judge, StageResult())
            if res.ok or left:
                out.append(Standing(judge, res, left, self.unreachable.get(judge)))
        return out
