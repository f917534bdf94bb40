"""Run configuration: one model of a run's settings (:class:`RunConfig`, what the run file,
the flags and Python keywords all build), presets, claim selection, and the one precedence
(flags over the run file over the defaults) that turns it into the plan stored with each run.

``run_config`` (the settings), ``plan`` (what a run asks for, and the bounds on it), ``file``
(the TOML run file), ``prices``, ``resolve`` (the defaults applied, the stored configuration,
the models).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from deflectbench.errors import ConfigError

if TYPE_CHECKING:
    from deflectbench.config.file import RunFile, load_config, load_run_file
    from deflectbench.config.plan import (
        MAX_CONFIG_BYTES,
        MAX_COST_USD,
        MAX_NAMES,
        MAX_RUNS,
        MAX_SEED,
        MAX_TOKENS,
        PRESETS,
        RunPlan,
        check_budget,
        quick_claims,
        resolve_plan,
        within,
    )
    from deflectbench.config.prices import PriceEntry, file_prices
    from deflectbench.config.resolve import ResolvedRun, build_models, redacted, resolve_run
    from deflectbench.config.run_config import RunConfig

#: Where each name lives, loaded on first use: a command that only checks an analysis option
#: (``config.plan``) need not build the run file's pydantic models (analyze, compare, report:
#: about 50 ms of start-up).
_HOMES = {
    **dict.fromkeys(("RunFile", "load_config", "load_run_file"), "file"),
    **dict.fromkeys(
        (
            "MAX_CONFIG_BYTES",
            "MAX_COST_USD",
            "MAX_NAMES",
            "MAX_RUNS",
            "MAX_SEED",
            "MAX_TOKENS",
            "PRESETS",
            "RunPlan",
            "check_budget",
            "quick_claims",
            "resolve_plan",
            "within",
        ),
        "plan",
    ),
    **dict.fromkeys(("PriceEntry", "file_prices"), "prices"),
    **dict.fromkeys(("ResolvedRun", "build_models", "redacted", "resolve_run"), "resolve"),
    "RunConfig": "run_config",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"deflectbench.config.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'deflectbench.config' has no attribute {name!r}")


__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_COST_USD",
    "MAX_NAMES",
    "MAX_RUNS",
    "MAX_SEED",
    "MAX_TOKENS",
    "PRESETS",
    "ConfigError",
    "PriceEntry",
    "ResolvedRun",
    "RunConfig",
    "RunFile",
    "RunPlan",
    "build_models",
    "check_budget",
    "file_prices",
    "load_config",
    "load_run_file",
    "quick_claims",
    "redacted",
    "resolve_plan",
    "resolve_run",
    "within",
]
