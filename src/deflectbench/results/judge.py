"""What ``judge`` made: each judge's stage, what is left unjudged (and in open batches), the
self-consistency pass, and the one line and exit code it ends with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deflectbench.results.run import any_aborted, exit_code

if TYPE_CHECKING:
    from deflectbench.dry_run import Estimate
    from deflectbench.pipeline import StageResult
    from deflectbench.pipeline.batches import BatchSummary
    from deflectbench.pipeline.self_consistency import Rejudged


@dataclass(frozen=True)
class JudgeResult:
    """One ``judge``: per judge its stage (judged now), answers left, answers in open
    batches; the self-consistency pass; whether a stop interrupted it."""

    judges: list[str]
    results: dict[str, StageResult] = field(default_factory=dict)
    #: Per judge, the answers (of the part, with ``shard``) it has no verdict for.
    left: dict[str, int] = field(default_factory=dict)
    #: Per judge, the answers open batches hold for it.
    in_batches: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    #: ``self_consistency``: per judge, its pass; and the seed of the sample.
    rejudged: dict[str, Rejudged] = field(default_factory=dict)
    seed: int = 0
    #: Judges without a price (rule-based ones): their pass has no cost to say.
    free: frozenset[str] = frozenset()
    #: ``batch``: what batch mode did.
    batches: BatchSummary | None = None
    #: ``dry_run``: the estimate, and nothing else was done.
    estimate: Estimate | None = None
    #: Cascaded judging: how many answers the expensive judges' sample holds (None: no
    #: cascade, or stopped before the sample was drawn).
    cascade: int | None = None

    @property
    def not_rejudged(self) -> int:
        """Re-judgments the budget withheld."""
        return sum(r.withheld for r in self.rejudged.values())

    @property
    def complete(self) -> bool:
        return (
            not self.interrupted
            and all(self.left.get(j, 0) <= self.in_batches.get(j, 0) for j in self.judges)
            and not any(r.parse_errors for r in self.results.values())
            and not self.not_rejudged
        )

    @property
    def stop_reason(self) -> str | None:
        if self.interrupted:
            return "interrupted"
        if any(r.withheld for r in self.results.values()) or self.not_rejudged:
            return "budget"
        return None

    @property
    def account(self) -> str:
        """The line judging ends with: done, or what is left unjudged and why."""
        parts = [self._judge_part(j) for j in self.judges]
        if self.not_rejudged:
            parts.append(f"self-consistency: {self.not_rejudged} re-judgments not sent (budget)")
        return ("complete: " if self.complete else "incomplete: ") + "; ".join(parts)

    def _judge_part(self, j: str) -> str:
        left, held = self.left.get(j, 0), self.in_batches.get(j, 0)
        text = f"judge {j}: " + (f"{left - held} not judged" if left > held else "done")
        if held:
            text += f", {held} in open batches (`deflectbench status`)"
        if j in self.results and self.results[j].parse_errors:
            text += f", {self.results[j].parse_errors} replies without a verdict"
        return text

    @property
    def exit_code(self) -> int:
        if self.estimate is not None:
            return 0
        aborted = any_aborted(self.results.values())
        return exit_code(stop_reason=self.stop_reason, aborted=aborted, complete=self.complete)

    def to_json(self) -> dict[str, Any]:
        return {
            "judges": list(self.judges),
            "complete": self.complete,
            "stop_reason": self.stop_reason,
            "exit_code": self.exit_code,
            "account": self.account,
            "left": dict(self.left),
            "in_batches": dict(self.in_batches),
            **({} if self.cascade is None else {"cascade_sample": self.cascade}),
        }
