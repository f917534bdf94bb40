"""Presets, claim selection, bounds and the plan: what a run will ask for."""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from deflectbench.benchmark import Benchmark, Claim
from deflectbench.config.shard import SCHEME, Shard
from deflectbench.cost import check_max_cost
from deflectbench.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    pass


PRESETS: dict[str, str] = {
    "quick": "2 claims per controversy level (1 US, 1 international) x 15 templates x 1 sample",
    "full": "every claim x every template x the benchmark's 5 samples (the paper's 24,000 for 4 models)",
}


def quick_claims(benchmark: Benchmark) -> list[Claim]:
    """Per level, the first US and the first international claim (file order); where a level
    has only one context, its first two claims."""
    chosen: list[Claim] = []
    for level in sorted({c.level for c in benchmark.claims}):
        at_level = [c for c in benchmark.claims if c.level == level]
        picks = [
            next((c for c in at_level if c.context == ctx), None) for ctx in ("us", "international")
        ]
        picked = [c for c in picks if c is not None]
        for c in at_level:
            if len(picked) >= 2:
                break
            if c not in picked:
                picked.append(c)
        chosen.extend(picked)
    return chosen


@dataclass(frozen=True)
class RunPlan:
    """Everything a run will do, resolved; stored with the run as JSON."""

    models: tuple[str, ...]
    judges: tuple[str, ...]
    preset: str | None
    claim_ids: tuple[str, ...]
    prompt_ids: tuple[str, ...]
    #: Samples per cell (the paper's "runs"; the name is kept for the runs stored as JSON).
    runs: int
    seed: int = 0
    max_tokens: int | None = None
    temperature: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cells(self) -> list[tuple[str, str, int]]:
        """(claim_id, prompt_id, sample) for every cell, sample 1-based, claims outer; a part
        (``--shard``) holds the run ``extra["shard_span"]`` of its claims' cells."""
        cells = [
            (c, p, s)
            for c in self.claim_ids
            for p in self.prompt_ids
            for s in range(1, self.runs + 1)
        ]
        span = self.extra.get("shard_span")
        return cells[span[0] : span[1]] if span else cells

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["n_cells_per_model"] = len(self.cells)
        return d


#: Bounds on what a flag or the run file may ask for, so no value can exhaust memory or hang.
MAX_RUNS = 100
MAX_TOKENS = 200_000
MAX_SEED = 2**63 - 1
MAX_NAMES = 64
MAX_COST_USD = 1_000_000.0
MAX_CONFIG_BYTES = 1_000_000
#: Most requests in flight for one provider section (or endpoint, or model): far above any
#: account's limit, far below what would exhaust the machine's sockets and memory.
MAX_CONCURRENCY = 1024


def within(name: str, value: float, low: float, high: float) -> float:
    """``value`` if ``low <= value <= high`` (and a real number); else a one-line ConfigError."""
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        raise ConfigError(f"{name} must be from {low:g} to {high:g}, got {value!r}")
    return value


#: Bytes one bootstrap resample holds per claim at its peak (the draws, their flat index, the
#: counts and the float weights: four 8-byte matrices of resamples x claims).
RESAMPLE_BYTES_PER_CLAIM = 32
#: Claims a resample is sized for when the pack is not known yet (the paper's 80).
RESAMPLE_CLAIMS = 80


def available_memory() -> int:
    """Bytes of memory free for this process to use now (MemAvailable; else all physical)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 * 1024**3


def check_seed(seed: int) -> int:
    """An analysis ``--seed``: a whole number from 0 to :data:`MAX_SEED` (numpy's generator
    refuses negative seeds with an internal error)."""
    return int(within("--seed", seed, 0, MAX_SEED))


def check_resamples(
    resamples: int, claims: int = RESAMPLE_CLAIMS, available: int | None = None
) -> int:
    """``--resamples`` that fit in half the free memory (the bootstrap holds every resample at
    once); the message names the largest that fits."""
    free = available_memory() if available is None else available
    largest = max(1, free // 2 // (RESAMPLE_BYTES_PER_CLAIM * max(claims, 1) + 64))
    if resamples < 1:
        raise ConfigError(f"--resamples must be at least 1, got {resamples}")
    if resamples > largest:
        need = resamples * (RESAMPLE_BYTES_PER_CLAIM * max(claims, 1) + 64) / 1024**3
        raise ConfigError(
            f"--resamples {resamples:,} needs about {need:,.1f} GiB, more than half of the "
            f"{free / 1024**3:,.1f} GiB free; the largest that fits is {largest:,}"
        )
    return resamples


def check_budget(max_cost: float | None) -> float | None:
    """A budget is a finite amount of USD above zero (the rule is :func:`cost.check_max_cost`),
    and no more than :data:`MAX_COST_USD`."""
    budget = check_max_cost(max_cost)
    return None if budget is None else within("--max-cost", budget, 0.0, MAX_COST_USD)


def resolve_plan(
    benchmark: Benchmark,
    *,
    models: list[str],
    judges: list[str],
    preset: str | None = "quick",
    claims: list[str] | None = None,
    templates: list[str] | None = None,
    runs: int | None = None,
    seed: int = 0,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> RunPlan:
    """Turn user choices into a plan; explicit claims/runs override the preset's."""
    if preset is not None and preset not in PRESETS:
        raise ConfigError(
            f"unknown preset {preset!r}{did_you_mean(preset, list(PRESETS))}; valid: "
            f"{', '.join(PRESETS)} (see `deflectbench run --help`)"
        )
    if preset == "full":
        claim_list = [c.claim_id for c in benchmark.claims]
        default_runs = benchmark.runs_per_cell
    else:
        claim_list = [c.claim_id for c in quick_claims(benchmark)]
        default_runs = 1
    if claims:
        known_c = [c.claim_id for c in benchmark.claims]
        bad = [c for c in claims if c not in set(known_c)]
        if bad:
            raise ConfigError(
                f"unknown claim {bad[0]!r}{did_you_mean(bad[0], known_c)}; claim ids look like "
                "L1_US_01 (see `deflectbench spec --claims`)"
            )
        claim_list = list(dict.fromkeys(claims))
    prompt_list = [t.prompt_id for t in benchmark.templates]
    if templates:
        known_t = set(prompt_list)
        bad = [t for t in templates if t not in known_t]
        if bad:
            raise ConfigError(
                f"unknown template {bad[0]!r}{did_you_mean(bad[0], prompt_list)}; template ids "
                "look like explicit_coach_WA (see `deflectbench spec --templates`)"
            )
        prompt_list = list(dict.fromkeys(templates))
    n_runs = default_runs if runs is None else runs
    if n_runs < 1:
        raise ConfigError(f"runs must be at least 1, got {n_runs}")
    within("runs", n_runs, 1, MAX_RUNS)
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}")
    if max_tokens is not None:
        within("max_tokens", max_tokens, 1, MAX_TOKENS)
    within("seed", seed, 0, MAX_SEED)
    if temperature is not None:
        within("temperature", temperature, 0.0, 2.0)
    within("models", len(models), 0, MAX_NAMES)
    within("judges", len(judges), 0, MAX_NAMES)
    if not models:
        raise ConfigError("no model given: pass --model, e.g. --model local/smollm2")
    return RunPlan(
        models=tuple(dict.fromkeys(models)),
        judges=tuple(dict.fromkeys(judges)),
        preset=preset,
        claim_ids=tuple(claim_list),
        prompt_ids=tuple(prompt_list),
        runs=n_runs,
        seed=seed,
        max_tokens=max_tokens,
        temperature=temperature,
    )


def shard_plan(plan: RunPlan, shard: Shard | None) -> RunPlan:
    """The plan's part ``shard`` (its cells by :meth:`Shard.cells`: its claims in hash order,
    the run of their cells it holds as ``extra["shard_span"]``, the rest unchanged; the part,
    its scheme and the whole plan's cells are kept with the run in ``extra``); the whole plan
    for None. An empty part (more parts than cells) is a ConfigError."""
    if shard is None:
        return plan
    whole = plan.cells
    part = shard.cells(whole)
    claims = tuple(dict.fromkeys(c for c, _, _ in part))
    first = plan.prompt_ids.index(part[0][1]) * plan.runs + part[0][2] - 1
    return replace(
        plan,
        claim_ids=claims,
        extra={
            **plan.extra,
            "shard": str(shard),
            "shard_scheme": SCHEME,
            "shard_span": [first, first + len(part)],
            "shard_of_cells": len(whole),
        },
    )


# -- the run configuration file (TOML) -----------------------------------------------------
