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
import json
from collections.abc import Mapping
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
    from deflectbench.execute import record_run, register_conditions
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
    conditions = register_conditions(store, benchmark, plan, models, options.label)
    run_id = record_run(store, benchmark, plan, models, options, conditions)
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


def _custom_ids(data: bytes) -> tuple[list[str], int]:
    ids: list[str] = []
    garbled = 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            cid = json.loads(raw).get("custom_id")
        except (ValueError, AttributeError):
            cid = None
        if isinstance(cid, str):
            ids.append(cid)
        else:
            garbled += 1
    return ids, garbled


def import_batch_file(store: Store, results: Path, providers: Mapping[str, Any]) -> Imported:
    """The engine's output into the store, through the open batch files' items."""
    from deflectbench.config import build_models
    from deflectbench.cost import CostMeter
    from deflectbench.models.file_batch import FILE_WIRE, read_results
    from deflectbench.pipeline import RunContext
    from deflectbench.pipeline.batches import BatchMode

    ids, garbled = _custom_ids(read_results(results))
    report = Imported(lines=len(ids) + garbled, garbled=garbled)
    rows = [r for r in store.batch_list(open_only=True) if r.wire == FILE_WIRE]
    found = set(ids)
    ended: set[str] = set()
    claimed: set[str] = set()
    for row in rows:
        mine = {i.custom_id for i in store.batch_items(row.batch_key, "open")}
        if mine & found and row.remote_id is not None:
            ended.add(row.remote_id)
            claimed |= mine & found
    report.not_open = sum(1 for i in ids if i not in claimed)
    if not ended:
        return report
    names = sorted({r.model for r in rows if r.remote_id in ended})
    benchmark = stored_benchmark(store, None)
    built = build_models(names, [], providers)
    wrapped = {n: _file_model(built[n], results=results, ended=frozenset(ended)) for n in names}
    run_id = next((r.run_id for r in reversed(rows) if r.remote_id in ended), None)
    ctx = RunContext(store, benchmark, run_id, CostMeter(None))
    mode = BatchMode(ctx, wrapped, max_attempts=1)  # a missing line is an error row, not resent

    async def go() -> None:
        try:
            await mode.collect(only_known=True)
        finally:
            await mode.aclose()

    asyncio.run(go())
    report.collected = sum(mode.summary.collected.values())
    report.problems = list(mode.summary.problems)
    return report
