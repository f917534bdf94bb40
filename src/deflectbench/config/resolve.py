"""Flags over the run file over the defaults: the one precedence, the stored (redacted)
configuration, and the models built from it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from deflectbench.benchmark import Benchmark
from deflectbench.conditions import check_label
from deflectbench.cost import Price

if TYPE_CHECKING:
    from deflectbench.models.base import Model

from deflectbench.config.file import RunFile, file_prices
from deflectbench.config.plan import RunPlan, check_budget, resolve_plan

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
    from deflectbench.judging.judges import check_judge_language, default_judges
    from deflectbench.models.registry import DEFAULT_MODEL

    file = file if file is not None else RunFile()
    r = file.run
    models = _pick(list(flags.models), r.models, [DEFAULT_MODEL])
    judges = _pick(list(flags.judges), r.judges, None) or list(
        default_judges(os.environ if env is None else env)
    )
    check_judge_language(judges, benchmark.language, benchmark.pack)
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
        prices=file_prices(file.prices),
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
        if isinstance(section.get("endpoints"), list):
            section["endpoints"] = [
                {**e, "base_url": _strip_userinfo(e["base_url"])}
                if isinstance(e, dict) and isinstance(e.get("base_url"), str)
                else e
                for e in section["endpoints"]
            ]
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
    any work (every missing key named in one error). A dry run needs no keys: it sends
    nothing."""
    from deflectbench.judging.judges import check_judge_name, is_rule_based
    from deflectbench.models.providers import MissingKeyError
    from deflectbench.models.registry import get_model

    missing: list[MissingKeyError] = []

    def build(name: str) -> Model:
        try:
            return get_model(name, providers)
        except MissingKeyError as exc:
            if dry_run:
                return get_model(name, providers, env=_KeyPlaceholders(os.environ))
            missing.append(exc)  # every missing key is named at once, below
            return None  # type: ignore[return-value]

    built = {name: build(name) for name in models}
    for j in judges:
        check_judge_name(j)
        if not is_rule_based(j) and j not in built:
            built[j] = build(j)
    if len(missing) == 1:
        raise missing[0]
    if missing:
        need: dict[str, list[str]] = {}
        for exc in missing:
            need.setdefault(exc.variable, []).append(exc.model)
        raise MissingKeyError(
            f"{len(need)} API key{'s' if len(need) > 1 else ''} missing: set "
            + "; ".join(f"{var} (for {', '.join(names)})" for var, names in need.items())
        )
    return built


class _KeyPlaceholders(dict):  # type: ignore[type-arg]
    """The environment, with a placeholder for any unset *_API_KEY (dry runs send nothing)."""

    def get(self, key: str, default: Any = None) -> Any:
        value = super().get(key, default)
        if not value and key.endswith("_API_KEY"):
            return "dry-run-placeholder"
        return value
