"""Batch mode's set-up and follow-through, for ``status``, ``judge --batch`` and ``batch
cancel``: the models the stored batches need, rebuilt from a run file or the configuration
stored with their run, then the library's work (:class:`~deflectbench.pipeline.batches.BatchMode`,
:mod:`~deflectbench.pipeline.batches.follow`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench.api._common import DbPath, open_store
from deflectbench.errors import ConfigError

if TYPE_CHECKING:
    from deflectbench.cost import CostMeter
    from deflectbench.models.base import Model
    from deflectbench.pipeline.batches import BatchMode, BatchSummary
    from deflectbench.pipeline.batches.engine_judges import EngineJudges
    from deflectbench.results.batches import BatchFollow
    from deflectbench.store import Store
    from deflectbench.store.batches import BatchRow

#: Seconds between two looks at open batches with ``wait`` (DEFLECTBENCH_BATCH_POLL_S).
POLL_S = float(os.environ.get("DEFLECTBENCH_BATCH_POLL_S", "30"))
#: Waits before the next look at the open batches given (returns early on a stop).
Pause = Callable[[Sequence["BatchRow"]], Any]


def follow_batches(
    db: DbPath,
    *,
    config: DbPath | None = None,
    wait: bool = False,
    pause: Pause | None = None,
    on_round: Callable[[BatchSummary], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> BatchFollow | None:
    """``status``'s batch part: collect, resend, submit judge batches, judge with the judges
    that have no batch API (with ``wait``, until none is open, ``pause`` between looks), then
    what is left; None for a store without batches (or no store)."""
    from deflectbench.pipeline.batches.follow import follow_through, leftovers
    from deflectbench.results.batches import BatchFollow

    if not Path(db).exists():
        return None
    with open_store(db) as store:
        if not store.batch_list():
            return None
        stop = should_stop or (lambda: False)
        rounds: list[BatchSummary] = []

        def round_done(summary: BatchSummary) -> None:
            rounds.append(summary)
            if on_round is not None:
                on_round(summary)

        cfg = Path(config) if config is not None else None
        made = _setup(store, cfg, engine=True, should_stop=stop)
        engine = None
        if made is not None:
            mode, engine = made

            async def look_again(rows: Sequence[BatchRow]) -> None:
                await (pause or _sleep(stop))(rows)

            asyncio.run(
                follow_through(mode, engine, wait=wait, pause=look_again, on_round=round_done)
            )
        left = leftovers(store, engine)
        return BatchFollow(left, store.batch_list(), stopped=stop(), rounds=rounds)


def _sleep(should_stop: Callable[[], bool]) -> Pause:
    """A pause of :data:`POLL_S` seconds, cut short by a stop."""
    import time

    async def pause(rows: Sequence[BatchRow]) -> None:
        end = time.monotonic() + POLL_S
        while (left := end - time.monotonic()) > 0 and not should_stop():
            await asyncio.sleep(min(1.0, left))

    return pause


def cancel_batches(
    db: DbPath, *, config: DbPath | None = None
) -> list[tuple[BatchRow, str]] | None:
    """Cancel every open batch: each with the provider's answer; None when none is open."""
    with open_store(db, must_exist=True) as store:
        mode = _mode(store, Path(config) if config is not None else None)
        return None if mode is None else asyncio.run(mode.cancel())


def _mode(store: Store, config: Path | None) -> BatchMode | None:
    """Batch mode over what the store's open batches need (None: nothing open)."""
    made = _setup(store, config, engine=False)
    return None if made is None else made[0]


def _setup(
    store: Store,
    config: Path | None,
    *,
    engine: bool,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[BatchMode, EngineJudges] | None:
    """Batch mode over what the store's open batches need, and the judges of batch runs:
    models built from ``config`` or the configuration stored with the run that submitted
    them. Without a batch open or to send again (and, with ``engine``, without answers
    awaiting a model judge), None: no provider is needed, nor its key. A judge that cannot be
    built is left out, with why."""
    from deflectbench.cost import CostMeter
    from deflectbench.pipeline.batches import BatchMode
    from deflectbench.pipeline.batches.engine_judges import EngineJudges
    from deflectbench.pipeline.batches.follow import answers_await_judges
    from deflectbench.pipeline.context import RunContext

    every = store.batch_list()
    rows = [r for r in every if r.state in ("submitting", "open")]
    rows += [row for row, _ in store.batch_retries()]
    judges = store.batch_judges()
    runs = {r["run_id"]: r for r in store.runs()}
    run = next((runs[r.run_id] for r in reversed(every) if r.run_id in runs), None)
    stored = (run or {}).get("config", {})
    stored = stored if isinstance(stored, dict) else {}
    key = (rows[0] if rows else every[-1]).benchmark if every else stored.get("benchmark")
    if not rows and not (engine and answers_await_judges(store, key)):
        return None
    file = dict(stored.get("file", {}))
    sections: dict[str, Any] = dict(file.get("providers") or {})
    for r in every:  # each batch keeps the sections it was sent with
        sections.update(r.settings.get("sections") or {})
    providers, prices, unusable = _providers(config, {**file, "providers": sections})
    models = _build(sorted({r.model for r in rows}), providers, unusable)
    unreachable: dict[str, str] = {}
    for name in sorted(judges):
        if name not in models and (why := _build_judge(name, providers, unusable, models)):
            unreachable[name] = why
    ctx = RunContext(
        store,
        _benchmark(key),
        run_id=run["run_id"] if run else None,
        meter=CostMeter(stored.get("max_cost_usd"), prices),
        use_cache=bool(stored.get("cache", True)),
        should_stop=should_stop,
    )
    judging = EngineJudges(
        ctx,
        models,
        allow_unpriced=bool(stored.get("allow_unpriced")),
        unreachable=unreachable,
    )
    return BatchMode(ctx, models), judging


def _providers(
    config: Path | None, stored: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """Provider sections, prices, and the sections that cannot be used (name -> why): the
    given run file's, else the stored (redacted) ones, which cannot stand in for sections
    with headers or extra_body."""
    from deflectbench.config import PriceEntry, file_prices, load_run_file

    if config is not None:
        file = load_run_file(config)
        prices = file_prices(file.prices)
        return dict(file.providers), prices, {}
    providers, unusable = {}, {}
    for name, section in (stored.get("providers") or {}).items():
        section = dict(section)
        for key in ("headers", "extra_body"):
            value = section.pop(key, None)
            if value and name not in unusable:
                unusable[name] = (
                    f"[providers.{name}] sets {key}, which the store keeps by name only: pass "
                    "--config with the run configuration the batches were submitted with"
                )
        providers[name] = {k: v for k, v in section.items() if v is not None}
    prices = file_prices(
        {k: PriceEntry.model_validate(v) for k, v in (stored.get("prices") or {}).items()}
    )
    return providers, prices, unusable


def _build(
    names: Sequence[str], providers: Mapping[str, Any], unusable: Mapping[str, str]
) -> dict[str, Model]:
    """The open batches' models; one this command cannot build ends it (UserError)."""
    from deflectbench.config import build_models

    for name in names:
        if (why := unusable.get(name.partition("/")[0])) is not None:
            raise ConfigError(why)
    return build_models(list(names), [], providers)


def _build_judge(
    name: str,
    providers: Mapping[str, Any],
    unusable: Mapping[str, str],
    models: dict[str, Model],
) -> str | None:
    """Build a judge into ``models``; why it cannot be, if so (its answers then await it,
    said so, and the rest of ``status`` goes on)."""
    from deflectbench.config import build_models
    from deflectbench.judging.judges import is_rule_based
    from deflectbench.models.base import ModelError
    from deflectbench.secrets import scrub

    if is_rule_based(name):
        return None
    if (why := unusable.get(name.partition("/")[0])) is not None:
        return why
    try:
        models.update(build_models([name], [], providers))
    except (ValueError, ModelError) as exc:  # a bad name or section, a missing key
        return scrub(str(exc))
    return None


def _benchmark(key: str | None) -> Any:
    """The pack the batches were made from, by its key."""
    from deflectbench.benchmark import default_benchmark
    from deflectbench.benchmark.packs import pack_by_key

    if key is None:
        return default_benchmark()
    b = pack_by_key(key)
    if b is None:
        raise ConfigError(f"the open batches are of {key!r}, which is not a shipped pack")
    return b


def judge_by_batch(
    store: Store,
    benchmark: Any,
    names: Sequence[str],
    models: Mapping[str, Model],
    meter: CostMeter,
    retry_errors: bool,
    providers: Mapping[str, Any],
) -> tuple[list[str], BatchSummary]:
    """``judge --batch``: collect open batches, submit each batch judge's unjudged answers
    (``meter``: the budget and prices); the judges left to the engine, and what batch mode
    did."""
    from deflectbench.config.resolve import redacted
    from deflectbench.pipeline.batches import BatchMode
    from deflectbench.pipeline.context import RunContext

    sections = redacted({"providers": dict(providers)})["providers"]
    ctx = RunContext(store, benchmark, meter=meter, retry_errors=retry_errors)
    mode = BatchMode(ctx, models, sections=sections)
    batched = mode.batched(names)
    if batched:  # a run row of its own whose manifest says what the judge batches carried
        mode = BatchMode(
            ctx, models, sections=sections, manifest_run=_judge_run(store, benchmark, batched)
        )
    return asyncio.run(mode.judge(names)), mode.summary


def _judge_run(store: Store, benchmark: Any, judges: Sequence[str]) -> str:
    """The run row (command ``judge``) the batch judges' manifest rows are kept under. The
    verdicts keep the run id they are stored with (none, as before): this row only records."""
    from deflectbench.execute import versions

    return store.create_run(
        command="judge",
        benchmark=benchmark.key,
        benchmark_version=benchmark.version,
        benchmark_sha256=benchmark.sha256,
        config={"models": [], "judges": list(judges), "batch": True},
        versions=versions(),
    )
