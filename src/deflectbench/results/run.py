"""What a run made: the run's report (each stage, what is missing and why), the table of its
models scored by its judges, the control's outcome, and the exit code the command ends with.

The exit codes are a contract (the README's table): 0 done; 2 bad input (raised, never
returned); 3 the budget was reached; 4 a model or judge failed every request or gave up; 5
finished but incomplete; 7 ``--control`` and the judges missed the control's deflections;
130 interrupted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.analysis.summary.validity_checks import ControlResult
    from deflectbench.config import RunConfig, RunPlan
    from deflectbench.execute import RunReport
    from deflectbench.pipeline import StageResult
    from deflectbench.results.judge import JudgeResult
    from deflectbench.results.until import UntilOutcome

#: Exit codes (the README's table says the same): done; an import skipped lines (results.py);
#: bad input; budget reached; a model or judge failed every request; finished but incomplete;
#: interrupted.
EXIT_OK, EXIT_BAD_INPUT, EXIT_BUDGET, EXIT_ABORTED, EXIT_INCOMPLETE, EXIT_INTERRUPTED = (
    0,
    2,
    3,
    4,
    5,
    130,
)
#: ``run --control``: the judges missed the control's known deflections (6 is compare's gate).
EXIT_CONTROL_FAILED = 7


def exit_code(*, stop_reason: str | None, aborted: bool, complete: bool) -> int:
    """The exit code of a run or a judging: why it stopped, else whether anything gave up,
    else whether everything planned is done."""
    if stop_reason == "interrupted":
        return EXIT_INTERRUPTED
    if stop_reason == "budget":
        return EXIT_BUDGET
    if aborted:
        return EXIT_ABORTED
    return EXIT_OK if complete else EXIT_INCOMPLETE


def any_aborted(results: Iterable[StageResult]) -> bool:
    """A model or judge gave up (the engine aborted it), or failed every request it sent
    (e.g. a one-cell run whose only request failed: too few failures for the engine to abort,
    but nothing to show, so exit 4 as the README says, not 5)."""
    return any(r.aborted or (r.errors > 0 and not r.ok and not r.non_answers) for r in results)


@dataclass(frozen=True)
class RunResult:
    """One ``run``: its settings, what each stage did, the scored table and the outcome."""

    #: The run's configuration with every default applied.
    config: RunConfig
    #: The cells it planned (this part's, with ``shard``).
    plan: RunPlan
    #: Each stage's counts, what is missing or unjudged, spending, batches.
    report: RunReport
    #: The run's models scored by its judges (the analysis' scored table).
    scored: pd.DataFrame
    #: The results file.
    db: Path
    #: ``control``: whether the judges found the control's deflections, per judge.
    control: ControlResult | None = None
    #: The HTML report written after the run (None: not asked for, or nothing to show).
    report_path: Path | None = None
    #: A run in cascade (``cheap_judge``): the judges' pass over the sample after the run.
    cascade: JudgeResult | None = None
    #: ``run --until``: the rule, the looks made and why the rounds ended (None: no rule).
    until: UntilOutcome | None = None

    @property
    def run_id(self) -> str:
        return self.report.run_id

    @property
    def complete(self) -> bool:
        """Everything planned has a result and a verdict, or open batches hold what is missing
        (batch mode: ``status`` collects it)."""
        done = self.cascade is None or self.cascade.complete
        return (self.report.complete or self.report.waiting) and done

    @property
    def stop_reason(self) -> str | None:
        """Why the run stopped early ("interrupted" or "budget"); None when it did not."""
        if self.report.stopped_early:
            return self.report.stop_reason
        return None if self.cascade is None else self.cascade.stop_reason

    @property
    def account(self) -> str:
        """The line the run ends with: complete, or what is missing and why."""
        said = self.report.account()
        said = said if self.until is None else f"{said}; {self.until.line()}"
        return said if self.cascade is None else f"{said}; cascade: {self.cascade.account}"

    @property
    def aborted(self) -> bool:
        cascade = [] if self.cascade is None else list(self.cascade.results.values())
        stages = [*self.report.generation.values(), *self.report.judging.values(), *cascade]
        return any_aborted(stages)

    @property
    def framing(self) -> pd.DataFrame:
        """Per model and framing (then "all"): n and the share of each outcome."""
        import pandas as pd

        from deflectbench.analysis.tables.rates import framing_outcomes

        rows = [
            {"model": m, **r} for m, table in framing_outcomes(self.scored).items() for r in table
        ]
        return pd.DataFrame(rows)

    @property
    def exit_code(self) -> int:
        code = exit_code(stop_reason=self.stop_reason, aborted=self.aborted, complete=self.complete)
        failed = self.control is not None and not self.control.passed
        return EXIT_CONTROL_FAILED if code in (EXIT_OK, EXIT_INCOMPLETE) and failed else code

    def to_json(self) -> dict[str, Any]:
        """The run in JSON: its id, plan, outcome and per-stage counts."""
        r = self.report
        return {
            "run_id": r.run_id,
            "plan": self.plan.to_json(),
            "complete": self.complete,
            "stop_reason": self.stop_reason,
            "exit_code": self.exit_code,
            "account": self.account,
            "spent_usd": r.spent_usd,
            "conditions": dict(r.conditions),
            "missing": dict(r.missing),
            "unjudged": dict(r.unjudged),
            "control": self.control.to_json() if self.control is not None else None,
            **({"until": self.until.to_json()} if self.until is not None else {}),
        }
