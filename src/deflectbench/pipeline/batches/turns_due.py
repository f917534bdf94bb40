"""A multi-turn pack's turn 2 in batch mode: what is due and not sent.

With ``run --batch``, turn 1 of a batch model goes out in batches, and ``status`` collects and
judges it; turn 2 is only ever asked by a ``run`` (through ordinary requests, once the turn-1
verdicts are in: :func:`~deflectbench.pipeline.turns.run_turns`). So after ``status`` brings
the verdicts, turn-2 cells are due that nothing has sent; ``status`` says so rather than end as
if the pack were done. What is due is the pipeline's own rule
(:func:`~deflectbench.pipeline.turns.followup_cells`, under the judges the run named), so this
count and the next run's turn 2 cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.packs import pack_by_key
from deflectbench.pipeline.turns import followup_cells
from deflectbench.store import Store


@dataclass(frozen=True)
class TurnsDue:
    """One model's turn 2 under one condition of a multi-turn pack run in batch mode."""

    benchmark: str
    model: str
    condition: str
    #: Turn-2 cells the judged turn-1 answers call for.
    due: int
    #: Of those, the ones with no stored row at all (sent by the next ``run``).
    not_sent: int


def turns_due(store: Store) -> list[TurnsDue]:
    """Every model of a batch run (one that submitted batches) of a multi-turn pack, with its
    turn-2 cells due and not sent; a model several runs named, with the union of their cells
    (a turn-2 cell is its turn-1 cell's, whichever run's judges called for it)."""
    batch_runs = {r.run_id for r in store.batch_list() if r.run_id}
    wanted: dict[tuple[str, str, str], set[tuple[str, ...]]] = {}
    for run in store.runs():
        config = run.get("config")
        if run["run_id"] not in batch_runs or not isinstance(config, dict):
            continue
        conditions = config.get("conditions") or {}
        judges = tuple(config.get("judges") or ())
        for model in config.get("models") or ():
            slot = (run["benchmark"], model, conditions.get(model, "default"))
            wanted.setdefault(slot, set()).add(judges)
    packs: dict[str, Benchmark | None] = {}
    out = []
    for (key, model, condition), judge_sets in sorted(wanted.items()):
        if key not in packs:
            packs[key] = _multiturn(key)
        pack = packs[key]
        if pack is None:
            continue
        cells = {
            c.key: c
            for judges in sorted(judge_sets)
            for c in followup_cells(store, pack, model, condition, judges)
        }
        missing = store.missing_cells(key, model, list(cells), condition=condition)
        out.append(TurnsDue(key, model, condition, len(cells), len(missing)))
    return out


def not_sent_by_model(due: list[TurnsDue]) -> dict[str, int]:
    """Turn-2 cells due and not sent, per model (every condition together)."""
    per_model: dict[str, int] = {}
    for t in due:
        if t.not_sent:
            per_model[t.model] = per_model.get(t.model, 0) + t.not_sent
    return dict(sorted(per_model.items()))


def _multiturn(key: str) -> Benchmark | None:
    """The shipped pack stored under ``key`` if it has a second turn."""
    pack = pack_by_key(key)
    return pack if pack is not None and pack.followups else None
