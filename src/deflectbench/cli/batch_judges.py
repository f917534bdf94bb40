"""``deflectbench status``'s follow-through for judges without a batch API.

A run in batch mode names its judges once; the answers its batches bring come back to
``status``, not to the run. Batch judges get judge batches and the lexical judge is scored in
:class:`~deflectbench.pipeline.batches.BatchMode`; every other model judge (a ``vllm/`` or
other OpenAI-compatible section, ``local/``) judges them here through the normal engine
(:func:`~deflectbench.run.judge_all`: the run's budget, the request cache, one-line errors),
so no answer waits unseen for the next ``run``. Each such judge ends as one line: what it
judged now, and what still awaits it and why (answers awaiting make ``status`` exit 5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from deflectbench.cli.console import err
from deflectbench.cost import CostMeter, Price
from deflectbench.errors import ConfigError
from deflectbench.pipeline import StageResult
from deflectbench.run import judge_all, refuse_unpriced

if TYPE_CHECKING:
    from deflectbench.benchmark import Benchmark
    from deflectbench.models.base import Model
    from deflectbench.store import Store

#: What a failed request becomes in the line: the next status sends it again.
_AGAIN = "the next `deflectbench status` sends them again"


@dataclass
class EngineJudges:
    """The judges of batch runs that have no batch API, judged through the engine.

    ``unreachable``: judge -> why this command cannot build it (a provider section stored by
    name only, a missing key); such a judge is never tried, and its answers are said to await
    it. A judge whose requests all failed in one round is not tried again by this command
    (``status --wait`` would otherwise hammer a server that is down every poll)."""

    store: Store
    benchmark: Benchmark
    models: Mapping[str, Model]
    run_id: str | None
    budget_usd: float | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    allow_unpriced: bool = False
    use_cache: bool = True
    #: True once the user asked to stop (Ctrl-C, SIGTERM): requests in flight finish, no more
    #: are sent.
    should_stop: Callable[[], bool] = lambda: False
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
        meter = CostMeter(  # what open batches hold reserved counts as spent, as in a run
            self.budget_usd,
            self.prices,
            spent_before=self.store.spent_usd() + self.store.batch_reserved_usd(),
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
        for models, names in groups.items():
            out = await judge_all(
                self.store,
                self.benchmark,
                names,
                self.models,
                self.run_id,
                only_models=list(models),
                retry_errors=retry,
                use_cache=self.use_cache,
                meter=meter,
                should_stop=self.should_stop,
            )
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

    def report(self) -> bool:
        """One line per judge that judged now or has answers awaiting it; True if any await."""
        waiting = False
        for judge, models in sorted(self.seen.items()):
            left = len(
                self.store.pending_judgments(
                    judge, benchmark=self.benchmark.key, models=models, retry_errors=True
                )
            )
            res = self.done.get(judge, StageResult())
            if not res.ok and not left:
                continue
            parts = []
            if res.ok:
                parts.append(f"{res.ok} answers judged now (no batch API: through the engine)")
                if res.parse_errors:
                    parts[0] += f", {res.parse_errors} replies without a verdict"
            if left:
                waiting = True
                what = "await it" if res.ok else "answers await it"
                parts.append(f"{left} {what}: {self._why(judge, res)}")
            line = f"{judge}: " + "; ".join(parts)
            err.print(line, style="yellow" if left else None, highlight=False, markup=False)
        return waiting

    def _why(self, judge: str, res: StageResult) -> str:
        if judge in self.unreachable:
            return self.unreachable[judge]
        failures = res.failures()
        if res.withheld:
            return (
                "not sent: over the run's --max-cost budget; "
                f"`deflectbench judge -j {judge} -c RUN.toml --max-cost USD` judges them with "
                "a larger one"
            )
        if failures:
            ranked = sorted(failures.items(), key=lambda kv: -kv[1])
            causes = ", ".join(f"{k} x{n}" for k, n in ranked)
            return f"its requests failed ({causes}); {_AGAIN}"
        return f"not judged yet; {_AGAIN}"
