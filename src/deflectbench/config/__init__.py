"""Run configuration: presets, claim selection, the TOML run file, and the one precedence
(flags over the run file over the defaults) that turns them into the plan stored with each run.

``plan`` (what a run asks for, and the bounds on it), ``file`` (the run file), ``resolve``
(flags over file over defaults, the stored configuration, the models).
"""

from deflectbench.config.file import (
    PriceEntry,
    RunFile,
    RunSection,
    file_prices,
    load_run_file,
)
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
from deflectbench.config.resolve import (
    RunFlags,
    RunSettings,
    build_models,
    redacted,
    resolve_run,
)
from deflectbench.errors import ConfigError

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
    "RunFile",
    "RunFlags",
    "RunPlan",
    "RunSection",
    "RunSettings",
    "build_models",
    "check_budget",
    "file_prices",
    "load_run_file",
    "quick_claims",
    "redacted",
    "resolve_plan",
    "resolve_run",
    "within",
]
