"""The TOML run file: ``[run]`` (a :class:`~deflectbench.config.RunConfig`), ``[providers.NAME]``
and ``[prices."provider/model"]``, read and validated with one-line errors."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deflectbench.config.plan import MAX_CONCURRENCY, MAX_CONFIG_BYTES, PRESETS, within
from deflectbench.config.prices import PriceEntry
from deflectbench.config.run_config import TABLES, RunConfig, describe, run_keys
from deflectbench.errors import ConfigError, did_you_mean


class RunFile(BaseModel):
    """A whole run configuration file: ``[run]``, ``[providers.NAME]``, ``[prices."p/m"]``."""

    model_config = ConfigDict(extra="forbid")

    run: RunConfig = Field(default_factory=RunConfig)
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    prices: dict[str, PriceEntry] = Field(default_factory=dict)

    def config(self) -> RunConfig:
        """The whole file as one run configuration (its tables folded in)."""
        return self.run.model_copy(update={"providers": self.providers, "prices": self.prices})


def load_config(path: str | Path) -> RunConfig:
    """A run file as a :class:`RunConfig`; its ``benchmark``, a pack file, relative to it."""
    config = load_run_file(path).config()
    value = config.benchmark
    if value is None or ("/" not in value and not value.endswith(".json")):
        return config
    pack = Path(value)
    return config.model_copy(
        update={"benchmark": str(pack if pack.is_absolute() else Path(path).parent / pack)}
    )


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
    run = data.get("run")
    hidden = [k for k in TABLES if isinstance(run, dict) and k in run]
    if hidden:  # tables of their own in a file, never keys of [run]
        raise ConfigError(
            f"--config {path}: unknown key 'run.{hidden[0]}'; allowed: {', '.join(run_keys())}"
        )
    try:
        parsed = RunFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first.get("loc", ())
        allowed = run_keys() if len(loc) > 1 and loc[0] == "run" else None
        allowed = list(RunFile.model_fields) if len(loc) <= 1 else allowed
        if loc[:1] == ("run",) and isinstance(run, dict) and "runs" in run:
            first["loc"] = tuple("runs" if x == "samples" else x for x in loc)  # as written
        raise ConfigError(f"--config {path}: {describe(first, allowed=allowed)}") from None
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
            raise ConfigError(f"--config {path}: {describe(first)}{hint}") from None
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
