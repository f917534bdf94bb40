"""The benchmark at a glance: counts by level, context, domain, framing and fallacy."""

from __future__ import annotations

from collections import Counter
from typing import Any

from deflectbench.benchmark.definition import Benchmark
from deflectbench.vocab import LEVEL_NAMES


def benchmark_summary(b: Benchmark) -> dict[str, Any]:
    by_level: dict[str, dict[str, int]] = {}
    for c in b.claims:
        key = f"{c.level} {LEVEL_NAMES.get(c.level, c.level_name)}"
        by_level.setdefault(key, {})
        by_level[key][c.context] = by_level[key].get(c.context, 0) + 1
    templates: dict[str, list[dict[str, str]]] = {}
    for t in b.templates:
        templates.setdefault(t.framing, []).append({"prompt_id": t.prompt_id, "fallacy": t.fallacy})
    return {
        "name": b.name,
        "version": b.version,
        "sha256": b.sha256,
        "pack": b.pack,
        "key": b.key,
        "language": b.language,
        "turns": b.turns,
        "based_on": b.based_on,
        "n_claims": len(b.claims),
        "n_templates": len(b.templates),
        "n_prompts": len(b.claims) * len(b.templates),
        "runs_per_cell": b.runs_per_cell,
        "claims_by_level_context": dict(sorted(by_level.items())),
        "claims_by_domain": dict(Counter(c.domain for c in b.claims).most_common()),
        "templates_by_framing": templates,
        "templates_by_fallacy": dict(Counter(t.fallacy for t in b.templates)),
    }
