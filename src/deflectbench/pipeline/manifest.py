"""A run's manifest: for each model (in its condition) and each judge, what was really run, as
the client measured it: the model id asked for and the ids (and system fingerprints) the
replies named, the parameters the request bodies held, a self-hosted server's own report
(:mod:`deflectbench.models.server_report`), requests, failures, tokens, the time from the
first request to the last reply, throughput (items/s, output tokens/s) and spend. A run's
models are built for it and closed after it, so their wire logs are the run's alone.

It is written with the run at its end, and when a run is stopped (Ctrl-C, the budget), from
what the clients saw so far. What was not measured is said ("not recorded"), never guessed: a
model that keeps no wire log (in-process, a plugin) has its tokens from the stored results and
its throughput over the run's wall time.

Batch mode: the client sends no request itself, but the lines are ours and so are the results,
so a batch model's or judge's row says what they say (:mod:`deflectbench.pipeline.batches.manifests`,
:func:`with_batch`): the parameters of the request bodies written into the batch input, the
ids, fingerprints and tokens of the result lines (each bounded by :func:`deflectbench.gate.served_id`),
requests = lines submitted, replies and failed items from what was collected, and the time from
the first submit to the last collect (the provider's queue, not the model's speed). Collecting
may be a later command (``status``, ``import-batch``, ``run --batch`` again): its results are
recorded in the row of the run the results are stored under (the run id on the verdicts and
answers, which is what ``compare``'s judge-manifest check reads), with the sent parameters of
the run that submitted the lines merged in once, so that row names both what was sent and who
served it. The log is kept in the row (``batch``) and merged at each write; recording never
fails a submit or a collect (a failure is a note in the row).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from deflectbench.models.server_report import probe, public_url, self_hosted
from deflectbench.models.wire_log import WireLog, log_of, merged

__all__ = [
    "NOT_RECORDED",
    "Clock",
    "JudgingRun",
    "end_judging",
    "probe_servers",
    "record",
    "run_manifests",
    "start_judging",
    "with_batch",
]

NOT_RECORDED = "not recorded"
#: The SDK each wire speaks through, whose version a manifest names.
_SDKS = {"openai": "openai", "anthropic": "anthropic"}


class Clock:
    """The run's wall time, from its start (monotonic)."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def _members(model: Any) -> list[Any]:
    """The model, or a multi-endpoint model's endpoints' models."""
    inner = [getattr(e, "model", None) for e in getattr(model, "endpoints", None) or []]
    return [m for m in inner if m is not None] or [model]


async def probe_servers(models: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """Each self-hosted server of ``names`` asked once, all at once (a short timeout each):
    name -> the server's report, or a list of them for a model of several endpoints."""
    jobs: dict[str, list[Any]] = {}
    for name in dict.fromkeys(names):
        model = models.get(name)
        if model is None:
            continue
        members = [m for m in _members(model) if self_hosted(m)]
        if members:
            jobs[name] = members
    flat = [(name, m) for name, ms in jobs.items() for m in ms]
    answers = await asyncio.gather(*(probe(m) for _, m in flat))
    out: dict[str, Any] = {}
    for (name, m), answer in zip(flat, answers, strict=True):
        answer = {"base_url": public_url(m.base_url), **answer}
        if len(jobs[name]) == 1:
            out[name] = answer
        else:
            out.setdefault(name, []).append(answer)
    return out


def _sdk(model: Any) -> dict[str, str]:
    from deflectbench.models.anthropic_api import AnthropicModel
    from deflectbench.models.openai_compat import OpenAICompatModel

    member = _members(model)[0]
    wire = (
        "openai"
        if isinstance(member, OpenAICompatModel)
        else "anthropic"
        if isinstance(member, AnthropicModel)
        else None
    )
    if wire is None:
        return {}
    try:
        return {"wire": wire, "sdk": f"{_SDKS[wire]} {importlib.metadata.version(_SDKS[wire])}"}
    except importlib.metadata.PackageNotFoundError:
        return {"wire": wire}


def _stage_sum(results: Sequence[Any]) -> dict[str, Any] | None:
    """The stored results' counts of one model or judge over the run's stages (None: none)."""
    if not results:
        return None
    return {
        "results": sum(r.ok + r.errors for r in results),
        "cached": sum(r.cached for r in results),
        "input_tokens": sum(r.input_tokens for r in results),
        "output_tokens": sum(r.output_tokens for r in results),
        "spent_usd": round(sum(r.cost_usd for r in results), 6),
    }


def _rate(n: float, seconds: float | None) -> float | None:
    return round(n / seconds, 3) if seconds and seconds > 0 else None


def logged(log: WireLog, measured: str, wall: float | None, *, sent: bool) -> dict[str, Any]:
    """What a wire log says, said once for the client's log and the batch lines' log: served
    ids, fingerprints, parameters sent (when any were seen), counts, and the rates over
    ``wall`` (unrounded; stored to the millisecond)."""
    return {
        "measured": measured,
        "served_models": dict(log.served.most_common()),
        "system_fingerprints": dict(log.fingerprints.most_common()),
        "sent": log.sent_summary() if sent else NOT_RECORDED,
        "requests": log.requests,
        "failed_requests": log.failed,
        "replies": log.replies,
        "input_tokens": log.input_tokens,
        "output_tokens": log.output_tokens,
        "wall_s": None if wall is None else round(wall, 3),
        "items_per_s": _rate(log.replies, wall),
        "output_tokens_per_s": _rate(log.output_tokens, wall),
    }


def one_manifest(
    model: Any,
    stages: Sequence[Any],
    *,
    server: Any,
    run_wall_s: float,
    stop_reason: str | None,
    batched: bool,
    shared: bool,
) -> dict[str, Any]:
    """One model's or judge's manifest (see the module's docstring)."""
    log: WireLog | None = merged(log_of(model)) if model is not None else None
    stored = _stage_sum(stages)
    out: dict[str, Any] = {
        "asked": getattr(_members(model)[0], "api_model", None) if model is not None else None,
        **(_sdk(model) if model is not None else {}),
        "run_wall_s": round(run_wall_s, 3),
        "stopped": stop_reason,
    }
    notes = []
    if log is not None:
        out |= logged(log, "client", log.wall_s(), sent=bool(log.requests))
    else:
        done = stored or {}
        out |= {
            "measured": "stored results" if stored else NOT_RECORDED,
            "served_models": NOT_RECORDED,
            "system_fingerprints": NOT_RECORDED,
            "sent": NOT_RECORDED,
            "requests": NOT_RECORDED,
            "input_tokens": done.get("input_tokens", NOT_RECORDED),
            "output_tokens": done.get("output_tokens", NOT_RECORDED),
            "wall_s": round(run_wall_s, 3),
            "items_per_s": _rate(done.get("results", 0) - done.get("cached", 0), run_wall_s),
            "output_tokens_per_s": _rate(done.get("output_tokens", 0), run_wall_s),
        }
        if stored:
            notes.append("no wire log: tokens from the stored results, over the run's wall time")
    out["cached"] = stored["cached"] if stored else NOT_RECORDED
    out["spent_usd"] = stored["spent_usd"] if stored else NOT_RECORDED
    out["server"] = server if server is not None else "not asked (not a self-hosted server)"
    counts = getattr(model, "endpoint_counts", None)
    if callable(counts):  # endpoints = [...]: what each replica did (its URL, no credentials)
        out["endpoints"] = counts()
    if batched:
        notes.append(BATCH_NONE)
    if shared:
        notes.append("one client served as both a model and a judge: its wire figures are both's")
    if notes:
        out["notes"] = notes
    return out


#: What a batch row's figures are (said in its notes).
BATCH_NOTE = (
    "batch mode: requests, parameters, ids and tokens are the batch lines' (the request lines "
    "written, the result lines collected); wall time is from the first submit to the last "
    "collect, so throughput is the provider's queue, not the model's speed"
)


#: A batch model's or judge's row before any batch line was recorded under its run.
BATCH_NONE = "batch mode: no batch line was recorded under this run (yet)"


def with_batch(manifest: Mapping[str, Any], batch: Mapping[str, Any] | None) -> dict[str, Any]:
    """``manifest`` with its wire figures replaced by a batch log's (``batch``: the ``batch``
    value a batch row keeps, see the module's docstring); unchanged when there is none."""
    out = dict(manifest)
    if not isinstance(batch, Mapping) or not isinstance(batch.get("log"), Mapping):
        return out
    log = WireLog()
    log.merge_state(batch["log"])
    first, last = batch.get("first_submit"), batch.get("last_collect")
    wall = (
        round(max(last - first, 0.0), 3)
        if isinstance(first, int | float) and isinstance(last, int | float)
        else None
    )
    out |= logged(log, "batch lines", wall, sent=bool(log.sent)) | {"batch": dict(batch)}
    notes = [n for n in out.get("notes") or [] if n not in (BATCH_NOTE, BATCH_NONE)]
    out["notes"] = [BATCH_NOTE, *notes, *(batch.get("errors") or [])]
    return out


def run_manifests(
    models: Mapping[str, Any],
    plan_models: Sequence[str],
    plan_judges: Sequence[str],
    report: Any,
    *,
    servers: Mapping[str, Any],
    run_wall_s: float,
    batched: set[str] | frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """The run's manifest rows (``role``, ``name``, ``condition``, ``manifest``), one per
    model in its condition and one per judge, from the models' wire logs and the report."""
    rows = []
    turns = getattr(report, "turns", None)
    for role, names in (("model", plan_models), ("judge", plan_judges)):
        for name in names:
            if role == "model":
                stages = [report.generation.get(name), getattr(turns, "generation", {}).get(name)]
            else:
                stages = [report.judging.get(name), getattr(turns, "judging", {}).get(name)]
            rows.append(
                {
                    "role": role,
                    "name": name,
                    "condition": report.conditions.get(name) if role == "model" else None,
                    "manifest": one_manifest(
                        models.get(name),
                        [s for s in stages if s is not None],
                        server=servers.get(name),
                        run_wall_s=run_wall_s,
                        stop_reason=report.stop_reason,
                        batched=name in batched,
                        shared=name in plan_models and name in plan_judges,
                    ),
                }
            )
    return rows


def record(
    store: Any,
    report: Any,
    plan: Any,
    models: Mapping[str, Any],
    servers: Mapping[str, Any],
    clock: Clock,
    *,
    batch: bool = False,
) -> None:
    """Write (replace) the run's manifest rows. Called at the end of every run, a stopped one
    included: when the run is ending by an exception (a second Ctrl-C, a store that cannot
    write), a failure here is dropped so the run's own error is the one reported."""
    import sys

    from deflectbench.store.manifests import put_manifests

    failing = sys.exc_info()[1] is not None
    try:
        batched = (
            {n for n in [*plan.models, *plan.judges] if n in models and models[n].batch_api()}
            if batch
            else set()
        )
        rows = run_manifests(
            models,
            plan.models,
            plan.judges,
            report,
            servers=servers,
            run_wall_s=clock.elapsed(),
            batched=batched,
        )
        if batched:  # what batch mode recorded in the rows so far (lines, results)
            from deflectbench.store.manifests import manifest_rows

            kept = {
                (r["role"], r["name"], r["condition"]): r["manifest"].get("batch")
                for r in manifest_rows(store, [report.run_id])
            }
            for row in rows:
                if row["name"] in batched:
                    key = (row["role"], row["name"], row["condition"] or None)
                    row["manifest"] = with_batch(row["manifest"], kept.get(key))
        keys = [k for m in models.values() for k in _keys(m)]
        for row in rows:
            row["manifest"] = _scrubbed(row["manifest"], keys)
        put_manifests(store, report.run_id, rows)
    except Exception:
        if not failing:
            raise


def _keys(model: Any) -> list[str]:
    """The keys a model's clients hold (its endpoints' too)."""
    found = [getattr(m, "_secret", None) for m in _members(model)]
    return [k for k in found if isinstance(k, str) and len(k) >= 8]


def _scrubbed(value: Any, keys: Sequence[str]) -> Any:
    """Every text of a manifest (keys of mappings too) without a credential: the models' own
    keys and every credential registered or in the environment (a server may echo what it was
    sent). Bounded like any untrusted JSON (a server's report in it was bounded when asked):
    past the bounds, what is recorded says so instead of failing the run at its end."""
    from deflectbench.secrets import REDACTED, Untrusted, scrub_json

    def clean(v: Any) -> Any:
        if isinstance(v, str):
            for key in keys:
                v = v.replace(key, REDACTED)
            return v
        if isinstance(v, Mapping):
            return {clean(k): clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        return v

    try:
        return scrub_json(
            clean(value) if _depth(value) <= _MAX_MANIFEST_DEPTH else value,
            max_depth=_MAX_MANIFEST_DEPTH,
            max_nodes=1_000_000,
            max_items=1_000_000,
            max_text=1_000_000,
        )
    except Untrusted as exc:
        return {"manifest": str(exc)} if isinstance(value, Mapping) else str(exc)


#: A manifest's own structure is a few levels deep, a server's report in it at most 32 more.
_MAX_MANIFEST_DEPTH = 48


def _depth(value: Any, limit: int = _MAX_MANIFEST_DEPTH + 1) -> int:
    """How deep ``value`` nests, counted without recursion and only up to ``limit``."""
    level, deepest = [value], 0
    while level and deepest < limit:
        deepest += 1
        nxt: list[Any] = []
        for v in level:
            if isinstance(v, Mapping):
                nxt.extend(v.values())
            elif isinstance(v, list | tuple):
                nxt.extend(v)
        level = nxt
    return deepest


@dataclass
class JudgingRun:
    """The ``judge`` command's run: its row's id, the judges it sends to, its clock and what
    their servers said (asked before the first request)."""

    run_id: str
    judges: list[str]
    clock: Clock
    servers: dict[str, Any]


def start_judging(
    store: Any, benchmark: Any, judges: Sequence[str], models: Mapping[str, Any], versions: Any
) -> JudgingRun:
    """A run row for the ``judge`` command (command "judge"), so its verdicts carry a run whose
    manifest says which judges really judged them; its servers asked once."""
    run_id = store.create_run(
        command="judge",
        benchmark=benchmark.key,
        benchmark_version=benchmark.version,
        benchmark_sha256=benchmark.sha256,
        config={"models": [], "judges": list(judges)},
        versions=dict(versions),
    )
    servers = asyncio.run(probe_servers(models, judges))
    return JudgingRun(run_id, list(judges), Clock(), servers)


def end_judging(
    store: Any, run: JudgingRun, models: Mapping[str, Any], results: Any, interrupted: bool
) -> None:
    """Write the ``judge`` command's manifest rows, one per judge (as :func:`record`)."""
    budget = any(getattr(r, "withheld", 0) for r in results.values())
    report = SimpleNamespace(
        run_id=run.run_id,
        generation={},
        judging=dict(results),
        conditions={},
        turns=None,
        stop_reason="interrupted" if interrupted else ("budget" if budget else None),
    )
    plan = SimpleNamespace(models=[], judges=run.judges)
    record(store, report, plan, models, run.servers, run.clock)
