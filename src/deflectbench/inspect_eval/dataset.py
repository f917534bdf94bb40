"""The task's samples: one per claim x template of a benchmark pack, rendered as the release did.

Each sample's input is :meth:`Benchmark.render` verbatim (the same user message a native run
sends, to the character); its metadata names the cell (claim, level, context, framing,
fallacy, template), so Inspect's log viewer can filter by them and the log import can store
each epoch as the generation it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deflectbench.benchmark import Benchmark
from deflectbench.errors import ConfigError, did_you_mean
from deflectbench.vocab import FRAMINGS

#: A task parameter that lists ids: a list (``-T claims='[a, b]'``) or one comma-separated text.
Ids = str | Sequence[str] | None


def ids(value: Ids) -> list[str] | None:
    """The ids a list parameter names (None: all)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    out = [i.strip() for i in items if i.strip()]
    return out or None


def _pick(kind: str, wanted: list[str] | None, known: Sequence[str]) -> list[str]:
    if wanted is None:
        return list(known)
    for w in wanted:
        if w not in known:
            raise ConfigError(
                f"unknown {kind} {w!r}{did_you_mean(w, known)}; "
                f"see `deflectbench spec` for the {kind}s"
            )
    return wanted


def cells(
    benchmark: Benchmark, claims: Ids = None, templates: Ids = None, framings: Ids = None
) -> list[tuple[str, str]]:
    """(claim_id, prompt_id) pairs chosen by the parameters, claims outer, in file order."""
    claim_ids = set(_pick("claim", ids(claims), [c.claim_id for c in benchmark.claims]))
    prompt_ids = set(_pick("template", ids(templates), [t.prompt_id for t in benchmark.templates]))
    chosen_framings = set(_pick("framing", ids(framings), FRAMINGS))
    out = [
        (c.claim_id, t.prompt_id)
        for c in benchmark.claims
        if c.claim_id in claim_ids
        for t in benchmark.templates
        if t.prompt_id in prompt_ids and t.framing in chosen_framings
    ]
    if not out:
        raise ConfigError("no benchmark cell left: the templates chosen have none of the framings")
    return out


def sample_id(claim_id: str, prompt_id: str) -> str:
    return f"{claim_id}:{prompt_id}"


def cell_metadata(benchmark: Benchmark, claim_id: str, prompt_id: str) -> dict[str, Any]:
    """What a sample carries about its cell (keys: ``verdicts.SAMPLE_KEYS``)."""
    claim, template = benchmark.claim(claim_id), benchmark.template(prompt_id)
    return {
        "benchmark": benchmark.key,
        "benchmark_sha256": benchmark.sha256,
        "claim_id": claim_id,
        "claim": claim.text,
        "level": claim.level,
        "level_name": claim.level_name,
        "context": claim.context,
        "domain": claim.domain,
        "prompt_id": prompt_id,
        "framing": template.framing,
        "fallacy": template.fallacy,
        "explicitness": template.explicitness,
    }
