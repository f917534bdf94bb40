"""``run --batch-file OUT.jsonl`` and ``deflectbench import-batch RESULTS.jsonl``: a run's
pending cells handed to the user's own batch engine as OpenAI batch JSONL, and its output taken
back exactly once.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deflectbench.cli.console import console, err
from deflectbench.cli.options import DEFAULT_DB, DbOption, open_store, stored_benchmark
from deflectbench.errors import ConfigError

if TYPE_CHECKING:  # models load numpy (through vocab): imported where used, so --help stays light
    from deflectbench.benchmark import Benchmark
    from deflectbench.config import RunPlan
    from deflectbench.models.base import Model
    from deflectbench.models.file_batch import BatchFileModel, FileBatches
    from deflectbench.execute import RunOptions
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


@dataclass
class Written:
    model: str
    written: int = 0
    cached: int = 0
    held: int = 0
    withheld: int = 0


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
    from deflectbench.models.file_batch import FILE_WIRE
    from deflectbench.pipeline import RunContext
    from deflectbench.pipeline.batches import BatchMode
    from deflectbench.pipeline.requests import generation_params
    from deflectbench.records import Cell
    from deflectbench.execute import record_run, register_conditions

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
        CostMeter(options.max_cost_usd, options.prices),
        use_cache=options.use_cache,
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


def print_written(w: Written, out: Path) -> None:
    console.print(
        f"{out}: {w.written + w.held} cells of {w.model} as OpenAI batch JSONL"
        + (f" ({w.held} written before and not imported yet)" if w.held else "")
        + (f"; {w.cached} answered from the request cache" if w.cached else "")
        + (f"; {w.withheld} withheld by --max-cost" if w.withheld else ""),
        highlight=False,
        markup=False,
    )
    if w.written or w.held:
        console.print(
            "run it with your engine (docs/open-models.md), then: deflectbench import-batch "
            "RESULTS.jsonl --db ...",
            highlight=False,
            markup=False,
        )


# -- import-batch -------------------------------------------------------------------------


@dataclass
class Imported:
    lines: int = 0
    garbled: int = 0
    #: Lines whose cell is in no open batch file (imported before, or not this store's).
    not_open: int = 0
    collected: int = 0
    problems: list[str] = field(default_factory=list)


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


def import_batch(
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS.jsonl",
            help="The output file of your batch engine (OpenAI batch output JSONL) for a file "
            "written by `run --batch-file`.",
            show_default=False,
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="The run configuration `run --batch-file` used."),
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Take a batch engine's output back: each cell of a `run --batch-file` file once.

    Answers, non-answers (length, content filter) and per-line errors are stored as batch
    mode stores them; a cell with no line in the output is stored as an error row (`run
    --batch-file --retry-errors` writes it again). Importing the same output again adds
    nothing. Then judge: `deflectbench judge`, or the same `run` without --batch-file.

    Example:

        deflectbench import-batch results.jsonl --db results.db
    """
    from deflectbench.config import RunFile, load_run_file

    file = load_run_file(config) if config is not None else RunFile()
    store = open_store(db, must_exist=True)
    try:
        report = import_batch_file(store, results, file.providers)
    finally:
        store.close()
    console.print(
        f"{results}: {report.lines} lines, {report.collected} cells answered"
        + (
            f", {report.not_open} already imported or in no open batch file"
            if report.not_open
            else ""
        )
        + (f", {report.garbled} unreadable lines" if report.garbled else ""),
        highlight=False,
        markup=False,
    )
    for problem in report.problems:
        err.print(f"note: {problem}", highlight=False, markup=False, soft_wrap=True)
    if report.garbled:
        raise typer.Exit(1)
