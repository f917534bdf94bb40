"""What each side of a comparison was, as far as the store records it: the condition's settings,
the model ids the replies say served them, the package versions of the runs that made the
answers and the verdicts, the judges and how many verdicts each gave, and the runs' recorded
manifests (:mod:`deflectbench.pipeline.manifest`: per model and judge, the ids replies named, the
parameters sent, throughput, spend).

``compare`` shows the manifests side by side and says where they differ (a served checkpoint,
a sampling setting, a package version): a difference may be the run's, not the model's. Only
the judges are a reason to refuse (:func:`judge_mismatch`): different judge names, or
the same judge with another recorded manifest (:func:`judge_manifest_mismatch`): another
served model id, or other generation parameters sent (temperature, max tokens, seed, the JSON
schema, any other body field). A judge's system fingerprint changing alone is only said
(:func:`judge_fingerprint_notes`): providers change fingerprints with every deployment, daily.
What a side's runs did not record (an import, batch mode, a store from before the manifest)
is never a reason to refuse.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from deflectbench.analysis.compare.select import Side

__all__ = [
    "judge_fingerprint_notes",
    "judge_identity",
    "judge_manifest_mismatch",
    "judge_mismatch",
    "manifest_notes",
    "side_manifest",
    "with_manifest",
    "with_manifests",
]


def _versions(runs: Mapping[str, Mapping[str, Any]], run_ids: set[Any]) -> list[dict[str, Any]]:
    """The distinct ``versions`` records of these runs (usually one)."""
    seen: dict[str, dict[str, Any]] = {}
    for rid in sorted(str(r) for r in run_ids if r is not None):
        v = dict(runs.get(rid, {}).get("versions") or {})
        if v:
            seen.setdefault(json.dumps(v, sort_keys=True), v)
    return list(seen.values())


#: A store's run ids, read once for all its sides: (gen_id, run_id) of its answers (failed
#: requests left out), (gen_id, judge, run_id) of its verdicts.
RunIds = tuple[pd.DataFrame, pd.DataFrame]


def run_ids(store: Any) -> RunIds:
    """The store's run ids of every answer and verdict (two column reads, as frames)."""
    gen_cols, judge_cols = ["gen_id", "run_id"], ["gen_id", "judge", "run_id"]
    if hasattr(store, "row_tuples"):
        gens = store.row_tuples("generations", gen_cols, include_errors=False)
        judged = store.row_tuples("judgments", judge_cols)
    else:
        rows = store.generation_rows(include_errors=False, columns=gen_cols)
        gens = [tuple(r[c] for c in gen_cols) for r in rows]
        judged = [tuple(r[c] for c in judge_cols) for r in store.judgment_rows(columns=judge_cols)]
    return pd.DataFrame(gens, columns=gen_cols), pd.DataFrame(judged, columns=judge_cols)


def _distinct(run_ids: pd.Series) -> set[Any]:
    """The distinct run ids recorded (a row without one: none)."""
    return set(run_ids.dropna().unique().tolist())


def side_manifest(
    store: Any, side: Side, ids: RunIds | None = None, served: pd.DataFrame | None = None
) -> dict[str, Any]:
    """The side's manifest from an open store (see the module's docstring); ``ids``: the
    store's :func:`run_ids` (or the ones read with its frames), when several sides of it are
    read; ``served``: the served model ids read with its frames
    (:attr:`~.select.StoreRead.served`), else asked of the store."""
    gen_runs, judge_runs = run_ids(store) if ids is None else ids
    gen_ids = side.scored["gen_id"] if len(side.scored) else pd.Series([], dtype=object)
    answers = gen_runs["gen_id"].isin(gen_ids).to_numpy()
    verdicts = (
        judge_runs["gen_id"].isin(gen_ids) & judge_runs["judge"].isin(list(side.judges))
    ).to_numpy()
    gen_run_ids = _distinct(gen_runs.loc[answers, "run_id"])
    judge_run_ids = _distinct(judge_runs.loc[verdicts, "run_id"])
    judges = Counter(judge_runs.loc[verdicts, "judge"].tolist())
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
    if served is not None:  # the side's rows: its pack, its name (model [condition]), condition
        mine = (served["benchmark"] == side.pack) & (served["model"] == side.name)
        named = served.loc[(mine & (served["condition"] == condition)).to_numpy(), "served_model"]
        served_ids = dict(sorted(Counter(str(x) for x in named.tolist()).items()))
    elif hasattr(store, "served_models"):
        served_ids = store.served_models(side.pack, side.model, condition)
    else:
        served_ids = {}
    recorded = _recorded(store, side, gen_run_ids, judge_run_ids, condition)
    return {
        "store": side.store,
        "pack": side.pack,
        "model": side.model,
        "condition": side.condition,
        "scored": len(side.scored),
        "settings": settings,
        "served_models": served_ids,
        "versions": _versions(runs, gen_run_ids),
        "judges": dict(sorted(judges.items())),
        "judge_versions": _versions(runs, judge_run_ids),
        "recorded": recorded,
    }


def _recorded(
    store: Any, side: Side, gen_runs: set[Any], judge_runs: set[Any], condition: str
) -> dict[str, Any]:
    """The stored manifests of the runs that made this side's answers (its model's rows) and
    its verdicts (its judges' rows), each with its ``run_id``."""
    from deflectbench.store.manifests import manifest_rows

    if getattr(store, "conn", None) is None:
        return {"model": [], "judges": {}}
    runs = {str(r) for r in gen_runs | judge_runs if r is not None}
    model: list[dict[str, Any]] = []
    judges: dict[str, list[dict[str, Any]]] = {}
    for r in manifest_rows(store, runs):
        entry = {"run_id": r["run_id"], **r["manifest"]}
        if r["role"] == "model" and r["name"] == side.model and r["run_id"] in gen_runs:
            if (r["condition"] or "default") == condition:
                model.append(entry)
        elif r["role"] == "judge" and r["name"] in side.judges and r["run_id"] in judge_runs:
            judges.setdefault(r["name"], []).append(entry)
    return {"model": model, "judges": dict(sorted(judges.items()))}


def _sent_identity(sent: Any) -> str | None:
    """The sent parameters as compared: a per-request value (a seed drawn per cell) is
    "per request", whatever its values."""
    if not isinstance(sent, Mapping):
        return None
    shown = {
        k: "per request" if isinstance(v, Mapping) and "distinct" in v else v
        for k, v in sorted(sent.items())
    }
    return json.dumps(shown, sort_keys=True)


def judge_identity(side: Side) -> dict[str, dict[str, Any]]:
    """Per judge of the side, what its recorded manifests say it was: ``served`` (the ids its
    replies named), ``sent`` (the parameters its requests carried, as compared) and
    ``fingerprints``; each None where no run recorded it."""
    recorded = (side.manifest or {}).get("recorded") or {}
    out: dict[str, dict[str, Any]] = {}
    for judge, rows in (recorded.get("judges") or {}).items():
        served = {
            k
            for r in rows
            if isinstance(r.get("served_models"), Mapping)
            for k in r["served_models"]
        }
        fps = {
            k
            for r in rows
            if isinstance(r.get("system_fingerprints"), Mapping)
            for k in r["system_fingerprints"]
        }
        sent = {x for r in rows if (x := _sent_identity(r.get("sent"))) is not None}
        out[judge] = {
            "served": sorted(served) or None,
            "sent": sorted(sent) or None,
            "fingerprints": sorted(fps) or None,
        }
    return out


def _sent_diff(a: list[str], b: list[str]) -> str:
    """``temperature 0.0 vs 0.7; seed 0 vs 1``: the sent parameters that differ."""
    pa = [json.loads(x) for x in a]
    pb = [json.loads(x) for x in b]
    keys = sorted({k for p in pa + pb for k in p})
    parts = []
    for k in keys:
        va = sorted({json.dumps(p.get(k), sort_keys=True) for p in pa})
        vb = sorted({json.dumps(p.get(k), sort_keys=True) for p in pb})
        if va != vb:
            parts.append(f"{k} {' / '.join(va)} vs {' / '.join(vb)}")
    return "; ".join(parts) or "the parameters sent"


def judge_manifest_mismatch(a: Side, b: Side) -> str | None:
    """How the same-named judges of two sides differ in their recorded manifests (one line):
    another served model id, or other parameters sent; None when they agree or either side did
    not record it. A fingerprint is not compared here (:func:`judge_fingerprint_notes`)."""
    ia, ib = judge_identity(a), judge_identity(b)
    parts = []
    for judge in sorted(ia.keys() & ib.keys()):
        x, y = ia[judge], ib[judge]
        if x["served"] and y["served"] and x["served"] != y["served"]:
            parts.append(
                f"judge {judge} was served by {', '.join(x['served'])} for {a.label} and by "
                f"{', '.join(y['served'])} for {b.label}"
            )
        if x["sent"] and y["sent"] and x["sent"] != y["sent"]:
            parts.append(
                f"judge {judge} was sent other parameters for {a.label} and {b.label}: "
                + _sent_diff(x["sent"], y["sent"])
            )
    return "; ".join(parts) or None


def judge_fingerprint_notes(a: Side, b: Side) -> list[str]:
    """A line per judge whose system fingerprints differ between the sides (a note, never a
    refusal: a provider's deployment changes it)."""
    ia, ib = judge_identity(a), judge_identity(b)
    notes = []
    for judge in sorted(ia.keys() & ib.keys()):
        fa, fb = ia[judge]["fingerprints"], ib[judge]["fingerprints"]
        if fa and fb and fa != fb:
            notes.append(
                f"judge {judge}: system fingerprint {', '.join(fa)} for {a.label}, "
                f"{', '.join(fb)} for {b.label} (a provider deployment; not refused)"
            )
    return notes


def with_manifest(store: Any, side: Side) -> Side:
    return replace(side, manifest=side_manifest(store, side))


def with_manifests(
    store: Any, sides: list[Side], ids: RunIds | None = None, served: pd.DataFrame | None = None
) -> list[Side]:
    """:func:`with_manifest` of each side, the store's run ids (``ids``, else read) read once
    for all of them (and its served model ids, ``served``, when read with its frames)."""
    if not sides:
        return []
    ids = run_ids(store) if ids is None else ids
    return [replace(s, manifest=side_manifest(store, s, ids, served)) for s in sides]


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
    ra, rb = _model_sent(ma), _model_sent(mb)
    if ra and rb and ra != rb:
        notes.append(f"parameters sent to the model differ: {_sent_diff(ra, rb)}")
    return notes + judge_fingerprint_notes(a, b)


def _model_sent(m: Mapping[str, Any]) -> list[str]:
    rows = (m.get("recorded") or {}).get("model") or []
    found = {x for r in rows if (x := _sent_identity(r.get("sent"))) is not None}
    return sorted(found)


def judge_mismatch(a: Side, b: Side) -> str | None:
    """How the judges of two sides differ (one line), or None when they are the same: other
    judge names, or the same judges with other recorded manifests (another served model id or
    other parameters sent: :func:`judge_manifest_mismatch`; a fingerprint alone is only a
    note)."""
    if a.judges == b.judges:
        return judge_manifest_mismatch(a, b)
    return (
        f"{a.label} was judged by {', '.join(a.judges) or 'no judge'}, {b.label} by "
        f"{', '.join(b.judges) or 'no judge'}"
    )
