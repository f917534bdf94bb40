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

from deflectbench.config.plan import RunPlan, check_budget, resolve_plan, shard_plan
from deflectbench.config.prices import file_prices
from deflectbench.config.run_config import RunConfig
from deflectbench.config.shard import parse_shard
from deflectbench.config.shard_limits import check_mode

# -- flags over the run file over the defaults ---------------------------------------------


@dataclass(frozen=True)
class ResolvedRun:
    """A :class:`RunConfig` with its defaults applied and checked: every setting decided, the
    plan (the cells, this part's with ``shard``) and the prices; derived, never edited."""

    config: RunConfig
    plan: RunPlan
    prices: dict[str, Price]

    @property
    def file(self) -> dict[str, Any]:
        """The configuration as a run file would say it, stored with the run (never keys)."""
        c = self.config
        prices = {k: v.model_dump(mode="json") for k, v in c.prices.items()}
        return redacted({"run": c.section(), "providers": dict(c.providers), "prices": prices})


def _pick(given: Any, default: Any) -> Any:
    """A setting given (a flag, a keyword, the run file) wins; else the default."""
    return default if given is None or (isinstance(given, list | tuple) and not given) else given


def resolve_run(
    benchmark: Benchmark, config: RunConfig | None = None, env: Mapping[str, str] | None = None
) -> ResolvedRun:
    """The defaults applied: local/smollm2; the release's judge pair when both keys are in
    ``env`` (default: the environment), else lexical; the quick preset; seed 0; the cache on;
    no budget. Each value is checked with a one-line ConfigError naming it."""
    from deflectbench.judging.judges import check_judge_language, default_judges
    from deflectbench.models.registry import DEFAULT_MODEL

    c = config if config is not None else RunConfig()
    judges = _pick(c.judges, None) or list(default_judges(os.environ if env is None else env))
    check_judge_language(judges, benchmark.language, benchmark.pack)
    plan = resolve_plan(
        benchmark,
        models=list(_pick(c.models, [DEFAULT_MODEL])),
        judges=list(judges),
        preset=_pick(c.preset, "quick"),
        claims=_pick(c.claims, None),
        templates=_pick(c.templates, None),
        runs=c.samples,
        seed=_pick(c.seed, 0),
        max_tokens=c.max_tokens,
        temperature=c.temperature,
    )
    plan = shard_plan(plan, parse_shard(c.shard))
    decided = c.model_copy(
        update={
            "models": list(plan.models),
            "judges": list(plan.judges),
            "preset": plan.preset,
            "samples": plan.runs,
            "seed": plan.seed,
            "max_cost": check_budget(c.max_cost),
            "label": _label(c.label),
            "shard_limits": check_mode(c.shard_limits) if c.shard else c.shard_limits,
            **{k: bool(_pick(getattr(c, k), k == "cache")) for k in _SWITCHES},
        }
    )
    return ResolvedRun(decided, plan, file_prices(c.prices))


#: The on/off settings: off unless given, but the cache, on unless given.
_SWITCHES = ("cache", "allow_unpriced", "retry_errors", "batch", "allow_self_judging", "control")


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


class _KeyPlaceholders(dict[str, str]):
    """The environment, with a placeholder for any unset *_API_KEY (dry runs send nothing)."""

    def get(self, key: str, default: Any = None) -> Any:
        value = super().get(key, default)
        if not value and key.endswith("_API_KEY"):
            return "dry-run-placeholder"
        return value
