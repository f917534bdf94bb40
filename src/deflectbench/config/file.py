"""The TOML run file: its sections as pydantic models, read and validated with one-line errors."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deflectbench.config.plan import (
    MAX_CONCURRENCY,
    MAX_CONFIG_BYTES,
    MAX_COST_USD,
    MAX_RUNS,
    MAX_SEED,
    MAX_TOKENS,
    PRESETS,
    within,
)
from deflectbench.cost import Price, default_batch_discount
from deflectbench.errors import ConfigError, did_you_mean


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
    benchmark: str | None = Field(
        None,
        description="The benchmark pack (--benchmark): a shipped pack's name (`deflectbench "
        "spec --list`) or a pack file, relative to this run file. Default: deflectbench-v1, "
        "the paper's.",
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
    batch_discount: float | None = Field(
        None,
        ge=0.0,
        lt=1.0,
        allow_inf_nan=False,
        description="The share taken off a request sent in a provider batch (run --batch). "
        "Default: 0.5 for openai/ and anthropic/ models (their batch APIs' rate), else 0.",
    )

    def price(self, name: str) -> Price:
        """The entry as a :class:`~deflectbench.cost.Price` (the provider's batch discount
        unless the entry states one)."""
        discount = self.batch_discount
        return Price(
            self.input_per_mtok,
            self.output_per_mtok,
            default_batch_discount(name) if discount is None else discount,
        )


def file_prices(entries: Mapping[str, PriceEntry]) -> dict[str, Price]:
    """A run file's ``[prices]`` table as prices, by model name (or wildcard)."""
    return {name: entry.price(name) for name, entry in entries.items()}


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
    from deflectbench.models.providers import EndpointConfig, ProviderConfig

    for name, section in parsed.providers.items():
        try:
            ProviderConfig.model_validate(section)
        except ValidationError as exc:
            first = exc.errors()[0]
            first["loc"] = ("providers", name, *first.get("loc", ()))
            hint = ""
            if first.get("type") == "extra_forbidden":
                fields = (
                    EndpointConfig.model_fields
                    if "endpoints" in first["loc"]
                    else ProviderConfig.model_fields
                )
                hint = f"; allowed: {', '.join(fields)}"
                if first["loc"][-1] in ("api_key", "key", "token"):
                    hint = (
                        "; API keys never go in files: set api_key_env to the name of the "
                        "environment variable that holds the key"
                    )
            raise ConfigError(f"--config {path}: {_describe(first)}{hint}") from None
        _check_concurrency(path, name, section)
    return parsed


def _check_concurrency(path: Path, name: str, section: Mapping[str, Any]) -> None:
    """Every concurrency of a ``[providers.NAME]`` section a whole number from 1 to
    :data:`MAX_CONCURRENCY` (``1e9`` would open a billion request slots and never finish)."""
    found: list[tuple[str, Any]] = [("max_concurrency", section.get("max_concurrency"))]
    caps = section.get("model_max_concurrency")
    if isinstance(caps, Mapping):
        found += [(f"model_max_concurrency.{k}", v) for k, v in caps.items()]
    for i, endpoint in enumerate(section.get("endpoints") or []):
        if isinstance(endpoint, Mapping):
            found.append((f"endpoints[{i}].max_concurrency", endpoint.get("max_concurrency")))
    for key, value in found:
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(
                f"--config {path}: key 'providers.{name}.{key}': a whole number from 1 to "
                f"{MAX_CONCURRENCY}, got {value!r}"
            )
        within(f"--config {path}: key 'providers.{name}.{key}'", value, 1, MAX_CONCURRENCY)
