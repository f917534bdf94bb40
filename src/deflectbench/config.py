"""Run configuration: presets, claim selection, the TOML run file, and the one precedence
(flags over the run file over the defaults) that turns them into the plan stored with each run.
"""

from __future__ import annotations

import difflib
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deflectbench.benchmark import Benchmark, Claim
from deflectbench.conditions import check_label
from deflectbench.cost import Price
from deflectbench.errors import ConfigError

if TYPE_CHECKING:
    from deflectbench.models.base import Model

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
        """(claim_id, prompt_id, sample) for every cell, sample 1-based, claims outer."""
        return [
            (c, p, s)
            for c in self.claim_ids
            for p in self.prompt_ids
            for s in range(1, self.runs + 1)
        ]

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


def within(name: str, value: float, low: float, high: float) -> float:
    """``value`` if ``low <= value <= high`` (and a real number); else a one-line ConfigError."""
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        raise ConfigError(f"{name} must be from {low:g} to {high:g}, got {value!r}")
    return value


def check_budget(max_cost: float | None) -> float | None:
    """A budget is a finite amount of USD above zero (nan, inf, 0 and negatives are refused)."""
    if max_cost is None:
        return None
    if not math.isfinite(max_cost) or max_cost <= 0:
        raise ConfigError(
            f"--max-cost must be a positive number of USD, got {max_cost!r} (leave it out for no "
            "budget)"
        )
    return within("--max-cost", max_cost, 0.0, MAX_COST_USD)


def did_you_mean(value: str, known: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` naming the closest known id, or nothing when none is close."""
    close = difflib.get_close_matches(value, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


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


# -- the run configuration file (TOML) -----------------------------------------------------


class RunSection(BaseModel):
    """``[run]``: what to run. A key given as a flag too (all but temperature) loses to the
    flag; ``deflectbench judge`` reads judges, max_cost and allow_unpriced."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] | None = Field(
        None, description="Models to test, as provider/model (--model). Default: local/smollm2."
    )
    judges: list[str] | None = Field(
        None,
        description="Judges: lexical (rule-based, offline) or a model as provider/model "
        "(--judge). Default: the release's pair when ANTHROPIC_API_KEY and OPENAI_API_KEY are "
        "set, else lexical.",
    )
    preset: str | None = Field(
        None,
        description="Which cells (--preset): "
        + "; ".join(f"{k}: {v}" for k, v in PRESETS.items())
        + ". Default: quick.",
        json_schema_extra={"enum": list(PRESETS)},
    )
    claims: list[str] | None = Field(
        None,
        description="Claim ids instead of the preset's (--claims; `spec --claims` lists them).",
    )
    templates: list[str] | None = Field(
        None,
        description="Template ids instead of all (--templates; `spec --templates` lists them).",
    )
    runs: int | None = Field(
        None,
        ge=1,
        description="Samples per cell (--runs). Default: the preset's (quick 1, full 5 for v1).",
        json_schema_extra={"maximum": MAX_RUNS},
    )
    seed: int | None = Field(
        None,
        description="Base seed; each cell derives its own from it (--seed). Default: 0.",
        json_schema_extra={"minimum": 0, "maximum": MAX_SEED},
    )
    max_tokens: int | None = Field(
        None,
        ge=1,
        description="Output token cap per reply (--max-tokens). Default: 256 for local models, "
        "2048 for APIs, as in the release.",
        json_schema_extra={"maximum": MAX_TOKENS},
    )
    temperature: float | None = Field(
        None,
        ge=0.0,
        le=2.0,
        allow_inf_nan=False,
        description="Sampling temperature of the tested models (no flag). Default: the "
        "benchmark's (1.0 for v1). Judges always use 0.",
    )
    max_cost: float | None = Field(  # checked by check_budget: finite, > 0
        None,
        description="Budget in USD for all the results file has spent, this run included: the "
        "run stops cleanly once it is reached (--max-cost). Default: no budget.",
        json_schema_extra={"exclusiveMinimum": 0, "maximum": MAX_COST_USD},
    )
    label: str | None = Field(
        None,
        description="A name for these settings (a condition), e.g. temp07 (--label): 1-64 "
        "letters, digits and . _ = + -. Default: derived from the settings (temp1-max256-seed0).",
    )
    allow_unpriced: bool | None = Field(
        None,
        description="Run with max_cost even where a model or judge has no known price; its "
        "spending is then not counted (--allow-unpriced). Default: false.",
    )
    cache: bool | None = Field(
        None, description="Reuse identical requests already paid for (--cache). Default: true."
    )


class PriceEntry(BaseModel):
    """``[prices."provider/model"]``: what a model costs; the name may hold ``*`` wildcards."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = Field(
        ge=0.0, le=10_000.0, allow_inf_nan=False, description="USD per million input tokens."
    )
    output_per_mtok: float = Field(
        ge=0.0, le=10_000.0, allow_inf_nan=False, description="USD per million output tokens."
    )


class RunFile(BaseModel):
    """A whole run configuration file: ``[run]``, ``[providers.NAME]``, ``[prices."p/m"]``."""

    model_config = ConfigDict(extra="forbid")

    run: RunSection = Field(default_factory=RunSection)
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    prices: dict[str, PriceEntry] = Field(default_factory=dict)


def _describe(err: dict[str, Any]) -> str:
    loc = ".".join(str(x) for x in err.get("loc", ()))
    if err.get("type") == "extra_forbidden":
        return f"unknown key {loc!r}"
    return f"key {loc!r}: {err.get('msg', 'invalid')}"


def load_run_file(path: str | Path) -> RunFile:
    """Read and validate a TOML run configuration; errors name the key and what is allowed."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"--config {path}: larger than {MAX_CONFIG_BYTES:,} bytes; a run file is a few "
                "lines of TOML"
            )
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read --config {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--config {path}: not valid TOML ({exc})") from None
    try:
        parsed = RunFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        hint = ""
        if first.get("type") == "extra_forbidden":
            loc = first.get("loc", ())
            allowed = {
                "run": RunSection.model_fields,
                (): RunFile.model_fields,
            }.get(loc[0] if len(loc) > 1 else ())
            if allowed:
                hint = f"; allowed: {', '.join(allowed)}"
        raise ConfigError(f"--config {path}: {_describe(first)}{hint}") from None
    if parsed.run.preset is not None and parsed.run.preset not in PRESETS:
        raise ConfigError(
            f"--config {path}: key 'run.preset': {parsed.run.preset!r}"
            f"{did_you_mean(parsed.run.preset, list(PRESETS))} is not one of {', '.join(PRESETS)}"
        )
    from deflectbench.models.providers import ProviderConfig

    for name, section in parsed.providers.items():
        try:
            ProviderConfig.model_validate(section)
        except ValidationError as exc:
            first = exc.errors()[0]
            first["loc"] = ("providers", name, *first.get("loc", ()))
            hint = ""
            if first.get("type") == "extra_forbidden":
                hint = f"; allowed: {', '.join(ProviderConfig.model_fields)}"
                if first["loc"][-1] in ("api_key", "key", "token"):
                    hint = (
                        "; API keys never go in files: set api_key_env to the name of the "
                        "environment variable that holds the key"
                    )
            raise ConfigError(f"--config {path}: {_describe(first)}{hint}") from None
    return parsed


# -- flags over the run file over the defaults ---------------------------------------------


@dataclass(frozen=True)
class RunFlags:
    """What ``deflectbench run`` was told on the command line. ``None`` or empty means the flag
    was not given, so the run file's ``[run]`` value, then the default, decides."""

    models: Sequence[str] = ()
    judges: Sequence[str] = ()
    preset: str | None = None
    claims: Sequence[str] = ()
    templates: Sequence[str] = ()
    #: ``--runs``: samples per cell.
    samples: int | None = None
    seed: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    cache: bool | None = None
    label: str | None = None
    allow_unpriced: bool | None = None


@dataclass(frozen=True)
class RunSettings:
    """A run resolved from flags, run file and defaults: the plan and how to carry it out."""

    plan: RunPlan
    use_cache: bool
    max_cost_usd: float | None
    #: The condition's name (None: derived from the settings).
    label: str | None
    allow_unpriced: bool
    prices: dict[str, Price]
    #: ``[providers.NAME]`` sections, for building the models.
    providers: dict[str, dict[str, Any]]
    #: The run file as JSON, stored with the run (it never holds keys).
    file: dict[str, Any]


def _pick(flag: Any, from_file: Any, default: Any) -> Any:
    """A flag wins when given; else the run file's value; else the default."""
    if flag is None or (isinstance(flag, list | tuple) and not flag):
        return from_file if from_file is not None else default
    return flag


def resolve_run(
    benchmark: Benchmark,
    flags: RunFlags,
    file: RunFile | None = None,
    env: Mapping[str, str] | None = None,
) -> RunSettings:
    """Flags over the run file over the defaults: local/smollm2; the release's judge pair when
    both keys are in ``env`` (default: the environment), else lexical; the quick preset; seed 0;
    the cache on; no budget."""
    from deflectbench.judging.judges import default_judges
    from deflectbench.models.registry import DEFAULT_MODEL

    file = file if file is not None else RunFile()
    r = file.run
    models = _pick(list(flags.models), r.models, [DEFAULT_MODEL])
    judges = _pick(list(flags.judges), r.judges, None) or list(
        default_judges(os.environ if env is None else env)
    )
    plan = resolve_plan(
        benchmark,
        models=models,
        judges=judges,
        preset=_pick(flags.preset, r.preset, "quick"),
        claims=_pick(list(flags.claims), r.claims, None),
        templates=_pick(list(flags.templates), r.templates, None),
        runs=_pick(flags.samples, r.runs, None),
        seed=_pick(flags.seed, r.seed, 0),
        max_tokens=_pick(flags.max_tokens, r.max_tokens, None),
        temperature=r.temperature,
    )
    return RunSettings(
        plan=plan,
        use_cache=_pick(flags.cache, r.cache, True),
        max_cost_usd=check_budget(_pick(flags.max_cost, r.max_cost, None)),
        label=_label(_pick(flags.label, r.label, None)),
        allow_unpriced=bool(_pick(flags.allow_unpriced, r.allow_unpriced, False)),
        prices={k: Price(v.input_per_mtok, v.output_per_mtok) for k, v in file.prices.items()},
        providers=file.providers,
        file=redacted(file.model_dump(mode="json")),
    )


def _label(label: str | None) -> str | None:
    return None if label is None else check_label(label)


def _strip_userinfo(url: str) -> str:
    """A URL without ``user:password@`` (credentials never reach the store)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"[redacted]@{host}"))


def redacted(file: dict[str, Any]) -> dict[str, Any]:
    """The run file as stored with the run: anything that can hold a credential reduced to
    what is safe to keep (URLs without userinfo; header and extra_body names, not values)."""
    out = dict(file)
    providers = {}
    for name, section in (file.get("providers") or {}).items():
        section = dict(section)
        for key in ("base_url",):
            if isinstance(section.get(key), str):
                section[key] = _strip_userinfo(section[key])
        for key in ("headers", "extra_body"):
            if isinstance(section.get(key), dict):
                section[key] = sorted(section[key])
        providers[name] = section
    out["providers"] = providers
    return out


def build_models(
    models: Sequence[str],
    judges: Sequence[str],
    providers: Mapping[str, Any] | None = None,
    *,
    dry_run: bool = False,
) -> dict[str, Model]:
    """Resolve every model and judge name up front, so a typo or a missing key fails before
    any work. A dry run needs no keys: it sends nothing."""
    from deflectbench.judging.judges import check_judge_name, is_rule_based
    from deflectbench.models.providers import MissingKeyError
    from deflectbench.models.registry import get_model

    def build(name: str) -> Model:
        try:
            return get_model(name, providers)
        except MissingKeyError:
            if not dry_run:
                raise
            return get_model(name, providers, env=_KeyPlaceholders(os.environ))

    built = {name: build(name) for name in models}
    for j in judges:
        check_judge_name(j)
        if not is_rule_based(j) and j not in built:
            built[j] = build(j)
    return built


class _KeyPlaceholders(dict):  # type: ignore[type-arg]
    """The environment, with a placeholder for any unset *_API_KEY (dry runs send nothing)."""

    def get(self, key: str, default: Any = None) -> Any:
        value = super().get(key, default)
        if not value and key.endswith("_API_KEY"):
            return "dry-run-placeholder"
        return value
