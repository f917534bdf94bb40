"""What each side of a comparison was, as far as the store records it: the condition's settings,
the model ids the replies say served them, the package versions of the runs that made the
answers and the verdicts, the judges and how many verdicts each gave.

``compare`` shows the manifests side by side and says where they differ (a served checkpoint,
a sampling setting, a package version): a difference may be the run's, not the model's. Only
the judges are a reason to refuse (:func:`.select.judge_mismatch`); the rest is said.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from deflectbench.analysis.compare.select import Side

__all__ = ["manifest_notes", "side_manifest", "with_manifest"]


def _versions(runs: Mapping[str, Mapping[str, Any]], run_ids: set[Any]) -> list[dict[str, Any]]:
    """The distinct ``versions`` records of these runs (usually one)."""
    seen: dict[str, dict[str, Any]] = {}
    for rid in sorted(str(r) for r in run_ids if r is not None):
        v = dict(runs.get(rid, {}).get("versions") or {})
        if v:
            seen.setdefault(json.dumps(v, sort_keys=True), v)
    return list(seen.values())


def side_manifest(store: Any, side: Side) -> dict[str, Any]:
    """The side's manifest from an open store (see the module's docstring)."""
    gen_ids = set(side.scored["gen_id"].tolist()) if len(side.scored) else set()
    gens = [
        r
        for r in store.generation_rows(include_errors=False, columns=["gen_id", "run_id"])
        if r["gen_id"] in gen_ids
    ]
    judged = [
        r
        for r in store.judgment_rows(columns=["gen_id", "judge", "run_id"])
        if r["gen_id"] in gen_ids and r["judge"] in side.judges
    ]
    runs = {str(r["run_id"]): r for r in store.runs()}
    condition = side.condition or "default"
    settings = next(
        (
            c["settings"]
            for c in store.conditions()
            if c["model"] == side.model and c["label"] == condition
        ),
        None,
    )
    served = {}
    if hasattr(store, "served_models"):
        served = store.served_models(side.pack, side.model, condition)
    return {
        "store": side.store,
        "pack": side.pack,
        "model": side.model,
        "condition": side.condition,
        "scored": len(side.scored),
        "settings": settings,
        "served_models": served,
        "versions": _versions(runs, {r["run_id"] for r in gens}),
        "judges": dict(sorted(Counter(r["judge"] for r in judged).items())),
        "judge_versions": _versions(runs, {r["run_id"] for r in judged}),
    }


def with_manifest(store: Any, side: Side) -> Side:
    return replace(side, manifest=side_manifest(store, side))


def _package(versions: list[dict[str, Any]]) -> str:
    found = sorted({str(v.get("deflectbench")) for v in versions if v.get("deflectbench")})
    return ", ".join(found) or "not recorded"


def manifest_notes(a: Side, b: Side) -> list[str]:
    """One line per way the two manifests differ beyond the model itself."""
    ma, mb = a.manifest or {}, b.manifest or {}
    if not ma or not mb:
        return []
    notes = []
    sa, sb = set(ma.get("served_models") or {}), set(mb.get("served_models") or {})
    if sa and sb and sa != sb:
        notes.append(
            f"served model ids differ: {a.label} {', '.join(sorted(sa))}; "
            f"{b.label} {', '.join(sorted(sb))}"
        )
    xa, xb = ma.get("settings") or {}, mb.get("settings") or {}
    changed = sorted(k for k in xa.keys() & xb.keys() if xa[k] != xb[k] and k != "model")
    if changed:
        notes.append(
            "settings differ: " + "; ".join(f"{k} {xa[k]!r} vs {xb[k]!r}" for k in changed)
        )
    for key, what in (("versions", "answers"), ("judge_versions", "verdicts")):
        pa, pb = _package(ma.get(key) or []), _package(mb.get(key) or [])
        if pa != pb:
            notes.append(f"deflectbench version of the {what}: {a.label} {pa}; {b.label} {pb}")
    return notes
