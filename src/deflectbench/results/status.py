"""``status``: what a results file holds, gathered from the store, its batches, its manifests
and the analysis' tie rule. :meth:`StatusResult.to_json` is ``status --json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.secrets import Untrusted, scrub, scrub_json

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.pipeline.batches.turns_due import TurnsDue
    from deflectbench.results.batches import BatchFollow
    from deflectbench.store.batches import BatchRow


@dataclass(frozen=True)
class Counts:
    """Cells of one model (or one condition of it): planned, answered, failed, no answer by
    type, cut at max_tokens."""

    planned: int = 0
    ok: int = 0
    errors: int = 0
    non_answers: dict[str, int] = field(default_factory=dict)
    truncated: int = 0

    @property
    def no_answer(self) -> int:
        return sum(self.non_answers.values())

    @property
    def missing(self) -> int:
        return max(0, self.planned - self.ok - self.errors - self.no_answer)

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> Counts:
        return cls(d["planned"], d["ok"], d["errors"], dict(d["non_answers"]), d["truncated"])


@dataclass(frozen=True)
class ModelStatus(Counts):
    """A model's cells in all, and per condition."""

    conditions: dict[str, Counts] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeStatus:
    judged: int = 0
    parse_errors: int = 0
    errors: int = 0


@dataclass(frozen=True)
class ServedBy:
    """A model and condition whose replies say another model served them."""

    model: str
    condition: str
    replies: int
    #: The other served ids, with their counts.
    served: dict[str, int]
    #: The warning shown.
    line: str

    def __post_init__(self) -> None:
        # served ids come from servers: scrubbed again here, for stores written before they
        # were scrubbed on the way in (the credentials of this process's environment)
        object.__setattr__(self, "served", {scrub(k): n for k, n in self.served.items()})
        object.__setattr__(self, "line", scrub(self.line))


@dataclass(frozen=True)
class ManifestRow:
    """One run's manifest of one model (and condition) or judge."""

    run_id: str
    role: str
    name: str
    condition: str | None
    updated_at: str | None
    manifest: dict[str, Any]

    def __post_init__(self) -> None:
        # what servers said, scrubbed again (see ServedBy) and bounded as untrusted JSON
        try:
            kept = scrub_json(
                self.manifest, max_depth=48, max_nodes=10**6, max_items=10**6, max_text=10**6
            )
        except Untrusted as exc:
            kept = {"manifest": str(exc)}
        object.__setattr__(self, "manifest", kept if isinstance(kept, dict) else {})

    def to_json(self) -> dict[str, Any]:
        keys = {k: getattr(self, k) for k in ("run_id", "role", "name", "condition", "updated_at")}
        return keys | self.manifest


@dataclass(frozen=True)
class StatusResult:
    """What ``status`` shows: per model and condition the cells, per judge the verdicts, the
    spending, the packs, replies served by another model, batches, turn-2 cells due in batch
    mode, the tie rule and every run's manifest; with batches, what the follow-through did."""

    db: Path
    #: The pack shown (None: every pack).
    benchmark: str | None
    models: dict[str, ModelStatus]
    judges: dict[str, JudgeStatus]
    spent_usd: float | None
    #: Generations per pack (its key), most first.
    benchmarks: dict[str, int]
    served_by: list[ServedBy]
    batches: list[BatchRow]
    turn2: list[TurnsDue]
    tie_rule: str | None
    manifest: list[ManifestRow]
    #: The batch follow-through (None: the store has no batch).
    follow: BatchFollow | None = None

    @classmethod
    def of(cls, db: Path, counts: Mapping[str, Any], **rest: Any) -> StatusResult:
        """A status from the store's counts (``Store.status``: models, judges, spent_usd) and
        the rest of the fields (each empty unless given)."""
        models = {
            m: ModelStatus(
                **vars(Counts.of(s)),
                conditions={c: Counts.of(v) for c, v in s["conditions"].items()},
            )
            for m, s in counts["models"].items()
        }
        empty: dict[str, Any] = {
            "benchmark": None,
            "benchmarks": {},
            "served_by": [],
            "tie_rule": None,
        }
        empty |= {"batches": [], "turn2": [], "manifest": []}
        return cls(
            db=Path(db),
            models=models,
            judges={j: JudgeStatus(**s) for j, s in counts["judges"].items()},
            spent_usd=counts["spent_usd"],
            **(empty | rest),
        )

    @property
    def exit_code(self) -> int:
        """0; with batches, 5 while something is left and 130 when stopped."""
        return 0 if self.follow is None else self.follow.exit_code

    @property
    def generations(self) -> pd.DataFrame:
        """One row per model and condition: planned, ok, errors, no answer, truncated, missing."""
        import pandas as pd

        rows = [
            {"model": m, "condition": cond, **_counts(c)}
            for m, s in self.models.items()
            for cond, c in s.conditions.items()
        ]
        columns = ["model", "condition", "planned", "ok", "errors", "no_answer", "truncated"]
        return pd.DataFrame(rows, columns=[*columns, "missing"])

    def to_json(self) -> dict[str, Any]:
        """``status --json``."""
        return {
            "models": {m: _model_json(s) for m, s in self.models.items()},
            "judges": {j: asdict(s) for j, s in self.judges.items()},
            "spent_usd": self.spent_usd,
            "benchmarks": dict(self.benchmarks),
            "served_by": [asdict(s) for s in self.served_by],
            "batches": [_batch_json(r) for r in self.batches],
            "turn2": [asdict(t) for t in self.turn2],
            "tie_rule": self.tie_rule,
            "manifest": [r.to_json() for r in self.manifest],
        }


#: A model's counts as the JSON gives them (attributes of :class:`Counts`), in this order.
COUNT_KEYS = ("planned", "ok", "errors", "no_answer", "truncated", "missing")


def _counts(c: Counts) -> dict[str, int]:
    return {key: getattr(c, key) for key in COUNT_KEYS}


def _model_json(s: ModelStatus) -> dict[str, Any]:
    out = asdict(s)
    out["conditions"] = {k: asdict(c) for k, c in s.conditions.items()}
    return out


def _batch_json(r: BatchRow) -> dict[str, Any]:
    return {
        "provider": r.wire,
        "model": r.model,
        "kind": r.kind,
        "id": r.remote_id,
        "state": batch_state(r),
        "items": r.items,
        "counts": r.counts,
        "created_at": r.created_at,
        "error": r.error,
    }


def batch_state(r: BatchRow) -> str:
    """A batch's state, the provider's word for an open one."""
    return r.state if r.state != "open" else (r.remote_status or "open")
