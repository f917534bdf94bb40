"""Limits shared across parts: N parts of a run (``--shard I/N``) against one API key or one
serving pool each apply the provider's concurrency and per-minute limits, so together they
would send N times what the user allowed. Under ``--shard`` each part takes 1/N of them
(``shard_limits = "split"``, the default) unless the user says each part may use them all
(``"each"``: parts against different keys or pools).

Divided: ``max_concurrency`` and a model's own ``model_max_concurrency`` (and each endpoint's
of ``endpoints = [...]``), rounded down but at least 1 in flight, said when N exceeds the
limit (then the parts together may exceed it); ``requests_per_minute`` and
``tokens_per_minute`` exactly. Models run in this process (local/, gguf/) are not divided:
each part runs its own. What was done is said in lines the dry run and the run show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from deflectbench.config.shard import Shard
from deflectbench.errors import ConfigError

if TYPE_CHECKING:
    from deflectbench.models.base import Limits, Model

#: The ways a part uses a provider's limits: its 1/N share, or all of them.
MODES = ("split", "each")
DEFAULT_MODE = "split"


def check_mode(mode: str | None) -> str:
    """``mode`` (default ``split``), or a ConfigError naming the allowed values."""
    if mode is None:
        return DEFAULT_MODE
    if mode not in MODES:
        raise ConfigError(
            f"shard_limits {mode!r}: give 'split' (each part takes 1/N of a provider's "
            "limits) or 'each' (every part uses them all)"
        )
    return mode


def share_limits(models: Mapping[str, Model], shard: Shard | None, mode: str) -> tuple[str, ...]:
    """Divide each model's limits by the number of parts (in place, on the models built for
    this part) unless ``mode`` is ``each``; the lines saying what was done (none unsharded)."""
    from deflectbench.models.llama_local import IN_PROCESS

    if shard is None or shard.count == 1:
        return ()
    n = shard.count
    if mode == "each":
        return (
            f"part {shard.index}/{n}: each part uses the providers' whole limits "
            f'(shard_limits = "each"; {n} parts together may send {n}x them)',
        )
    lines: list[str] = []
    seen: set[int] = set()
    for name, model in models.items():
        if id(model) in seen or name.split("/", 1)[0] in IN_PROCESS:
            continue
        seen.add(id(model))
        before = model.limits
        model.limits = _divided(before, n)
        for endpoint in getattr(model, "endpoints", None) or []:
            limit = getattr(endpoint, "limit", None)
            if isinstance(limit, int):
                endpoint.limit = max(1, limit // n)
        lines.append(f"{name}: {_said(before, model.limits, n)}")
    if not lines:
        return ()
    head = (
        f"part {shard.index}/{n}: the providers' limits are split across the {n} parts "
        '(shard_limits = "each" or --shard-limits each to give every part all of them)'
    )
    return (head, *lines)


def _divided(limits: Limits, n: int) -> Limits:
    def per_minute(x: float | None) -> float | None:
        return None if x is None else x / n

    cap = limits.model_max_concurrency
    return replace(
        limits,
        max_concurrency=max(1, limits.max_concurrency // n),
        requests_per_minute=per_minute(limits.requests_per_minute),
        tokens_per_minute=per_minute(limits.tokens_per_minute),
        model_max_concurrency=None if cap is None else max(1, cap // n),
    )


def _said(before: Limits, after: Limits, n: int) -> str:
    parts = [f"max_concurrency {before.max_concurrency} -> {after.max_concurrency}"]
    if before.max_concurrency < n:
        parts[-1] += (
            f" (at least 1 in flight: {n} parts over a limit of {before.max_concurrency}, "
            f"together up to {n} at once)"
        )
    for key in ("requests_per_minute", "tokens_per_minute"):
        was: Any = getattr(before, key)
        if was is not None:
            parts.append(f"{key} {_num(was)} -> {_num(getattr(after, key))}")
    cap = before.model_max_concurrency
    if cap is not None:
        parts.append(f"model_max_concurrency {cap} -> {after.model_max_concurrency}")
    return ", ".join(parts)


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"
