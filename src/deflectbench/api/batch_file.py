"""``run --batch-file OUT.jsonl`` and ``import-batch RESULTS.jsonl``: a run's pending cells
handed to the user's own batch engine as OpenAI batch JSONL, and its output taken back exactly
once.

The cells go through batch mode (:mod:`deflectbench.pipeline.batches`) with a file for a batch
API (:mod:`deflectbench.models.file_batch`): each cell is stored as submitted, under its cell
id, before its line is written; the engine's output is collected as a batch's results are
(typed non-answers, errors, a missing line an error row, the gate before the store); a results
line whose cell is in no open batch file (already imported) is counted, never stored twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.api._common import stored_benchmark
from deflectbench.errors import ConfigError
from deflectbench.results.batches import Imported, Written

if TYPE_CHECKING:  # models load numpy (through vocab): imported where used
    from deflectbench.benchmark import Benchmark
    from deflectbench.config import RunPlan
    from deflectbench.execute import RunOptions
    from deflectbench.models.base import Model
    from deflectbench.models.file_batch import BatchFileModel, FileBatches
    from deflectbench.store import Store


def _file_model(model: Model, **where: Any) -> BatchFileModel:
    """``model`` answering through a batch file; only OpenAI-compatible models write one."""
    from deflectbench.models.file_batch import BatchFileModel, FileBatches
    from deflectbench.models.openai_compat import OpenAICompatModel

    if not isinstance(model, OpenAICompatModel):
        raise ConfigError(
            f"--batch-file writes OpenAI batch JSONL: {model.name} is not an OpenAI-compatible "
            "model (use openai-compatible/NAME or a [providers.NAME] section with a base_url)"
        )
    return BatchFileModel(model, FileBatches(model, **where))


def write_batch_file(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    options: RunOptions,
    out: Path,
) -> Written:
    """The plan's pending cells (no result, in no open batch file) as OpenAI batch JSONL at
    ``out`` (replaced), each stored as submitted first; cache hits are stored, not written."""
    from deflectbench.cost import CostMeter
    from deflectbench.execute import open_run
    from deflectbench.models.file_batch import FILE_WIRE
    from deflectbench.pipeline import RunContext
    from deflectbench.pipeline.batches import BatchMode
    from deflectbench.pipeline.requests import generation_params
    from deflectbench.records import Cell

    if len(plan.models) != 1:
        raise ConfigError(
            f"--batch-file takes one model (a batch engine serves one), got {len(plan.models)}: "
            "write one file per model"
        )
    name = plan.models[0]
    wrapped = _file_model(models[name], out=out)
    try:
        out.write_bytes(b"")
    except OSError as exc:
        raise ConfigError(f"--batch-file {out}: cannot write ({exc.strerror or exc})") from None
    run_id, conditions = open_run(store, benchmark, plan, models, options)
    ctx = RunContext(
        store,
        benchmark,
        run_id,
        CostMeter(options.max_cost, options.prices),
        use_cache=options.cache,
        retry_errors=options.retry_errors,
    )
    mode = BatchMode(ctx, {name: wrapped})
    base = generation_params(
        benchmark,
        models[name],
        seed=plan.seed,
        max_tokens=plan.max_tokens,
        temperature=plan.temperature,
    )
    settings = {
        "seed": plan.seed,
        "temperature": base.temperature,
        "max_tokens": base.max_tokens,
        "judges": list(plan.judges),
        "batch_file": str(out),
    }
    cells = [Cell(*c) for c in plan.cells]
    held = [
        r
        for r in store.batch_list(open_only=True)
        if r.wire == FILE_WIRE and r.model == name and r.condition == conditions[name]
    ]

    async def go() -> None:
        try:
            await mode.submit_generations(
                name, cells, conditions[name], settings, retry_errors=options.retry_errors
            )
        finally:
            await mode.aclose()

    asyncio.run(go())
    again = _write_again(mode, wrapped.api, held, out)
    s = mode.summary
    return Written(
        name,
        written=s.submitted.get(name, 0),
        cached=s.cached.get(name, 0),
        held=again,
        withheld=s.withheld.get(name, 0),
    )


def _write_again(mode: Any, api: FileBatches, rows: list[Any], out: Path) -> int:
    """The lines of cells already stored as written to a batch file and not imported yet,
    appended to ``out`` (a lost file costs nothing; importing either output takes each cell
    once)."""
    n = 0
    with out.open("ab") as fh:
        for row in rows:
            job = mode.submitter.job(row)
            for item in mode.ctx.store.batch_items(row.batch_key, "open"):
                req = job.request(item)
                fh.write(api.encode(item.custom_id, req.messages, req.params))
                n += 1
    return n


def import_batch_file(
    store: Store,
    results: Path,
    providers: Mapping[str, Any],
    *,
    accept_models: Sequence[str] = (),
) -> Imported:
    """The engine's output into the store: each line matched to a cell of this store's batch
    files (:mod:`deflectbench.pipeline.batches.file_import`); open batch files with lines
    collected as a batch's results are (a cell with no line an error row), lines for cells
    whose row is that "no result line" error stored now; every other line counted by why it
    was not taken. ``accept_models``: model ids a reply may name besides its cell's model."""
    from deflectbench.config import build_models
    from deflectbench.cost import CostMeter
    from deflectbench.models.base import ModelError
    from deflectbench.models.file_batch import FILE_WIRE, FileLine, read_file_lines
    from deflectbench.pipeline import RunContext
    from deflectbench.pipeline.batches import BatchMode
    from deflectbench.pipeline.batches.file_import import candidates, match

    try:
        lines = list(read_file_lines(results))
    except ModelError as exc:
        raise ConfigError(f"import-batch {exc}") from None
    items = store.wire_items(FILE_WIRE)
    rows = {r.batch_key: r for r in store.batch_list() if r.wire == FILE_WIRE}
    ids = {x.custom_id for x in lines if isinstance(x, FileLine)}
    names = sorted({rows[w.batch_key].model for w in candidates(items, ids)})
    built = build_models(names, [], providers) if names else {}
    served = {n: _file_model(built[n]).api.served_id for n in names}
    m = match(lines, items, rows, served, accept_models)
    report = Imported(
        lines=len(lines),
        other_cells=m.other_cells,
        duplicates=m.duplicates,
        ambiguous=m.ambiguous,
        other_model=dict(m.other_model.most_common()),
        unreadable=len(m.unreadable),
        unreadable_lines=[f"line {u.number}: {u.why}" for u in m.unreadable[:5]],
        models={n: served[n] for n in sorted({t.row.model for t, _ in m.taken})},
    )
    if not m.taken:
        report.expected = sorted(set(served.values()))
        return report
    wanted = sorted({t.row.model for t, _ in m.taken})
    ended = frozenset(m.open)
    wrapped = {
        n: _file_model(built[n], results=results, ended=ended, assigned=m.open) for n in wanted
    }
    newest = max((t.row for t, _ in m.taken), key=lambda r: r.created_at)
    ctx = RunContext(store, stored_benchmark(store, None), newest.run_id, CostMeter(None))
    mode = BatchMode(ctx, wrapped, max_attempts=1)  # a missing line is an error row, not resent
    open_items = {
        remote: len(store.batch_items(_batch_key(remote, rows), "open")) for remote in m.open
    }

    async def go() -> None:
        try:
            lost: dict[str, list[Any]] = {}
            for target, line in m.lost:
                lost.setdefault(target.row.batch_key, []).append((target.item, line))
            for key, pairs in lost.items():
                api = wrapped[rows[key].model].api
                mode.collector.replace_lost(rows[key], [(i, api.outcome(x)) for i, x in pairs])
            await mode.collect(only_known=True)
        finally:
            await mode.aclose()

    asyncio.run(go())
    _count(store, report, m, open_items)
    report.judged = dict(mode.summary.judged)
    report.problems = list(mode.summary.problems)
    return report


def _batch_key(remote: str, rows: Mapping[str, Any]) -> str:
    """The store key of a batch file by its id (``file-<key>``)."""
    for key, row in rows.items():
        if row.remote_id == remote or f"file-{key}" == remote:
            return key
    raise KeyError(remote)


def _count(store: Store, report: Imported, m: Any, open_items: Mapping[str, int]) -> None:
    """What the cells the lines went to hold now, read back from the store: answered (of them
    replacing a "no result line" error row), an error row with the engine's message; and the
    cells of the collected files that had no line."""
    from collections import Counter

    from deflectbench.records import Cell

    by_batch: dict[tuple[str, str, str], list[Any]] = {}
    for target, _ in m.taken:
        row = target.row
        by_batch.setdefault((row.benchmark, row.model, row.condition or ""), []).append(target)
    messages: Counter[str] = Counter()
    for (benchmark, model, condition), targets in by_batch.items():
        stored = store.cell_errors(benchmark, model, condition, (t.item.cell for t in targets))
        for t in targets:
            cell = Cell(*t.item.cell)
            if cell not in stored:
                continue
            error = stored[cell]
            if error is None:
                report.answered += 1
                report.replaced += int(t.lost)
            else:
                report.errors += 1
                messages[error] += 1
    report.error_messages = dict(messages.most_common())
    report.missing = sum(open_items.values()) - sum(len(v) for v in m.open.values())
