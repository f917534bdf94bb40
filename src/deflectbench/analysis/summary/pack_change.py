"""Answers made with other content of the same pack: refused, or analysed and flagged.

A condition keeps the sha256 of the pack file its answers were made with (its settings'
``benchmark_sha256``). When a pack is edited but keeps its id, the store's older answers would
be analysed with the new file's claims, levels and templates (level 1 answers reported at level
4): the analysis refuses them unless ``--allow-pack-change`` says to analyse them anyway, and
then says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from deflectbench.benchmark import Benchmark
from deflectbench.errors import ConfigError

__all__ = ["changed_conditions", "check_pack_content"]


def changed_conditions(store: Any, benchmark: Benchmark) -> list[tuple[str, str, str]]:
    """(model, condition, its pack sha256) of each condition holding answers of ``benchmark``'s
    pack made with other content of it (conditions that recorded none are not judged)."""
    if not hasattr(store, "conditions"):
        return []
    used = {(m, c) for b, m, c in _keys(store) if b == benchmark.key}
    out = []
    for c in store.conditions():
        sha = (c.get("settings") or {}).get("benchmark_sha256")
        if sha and sha != benchmark.sha256 and (c["model"], c["label"]) in used:
            out.append((c["model"], c["label"], str(sha)))
    return out


def check_pack_content(store: Any, benchmark: Benchmark, allow: bool) -> str | None:
    """None when every stored condition of the pack was made with this content; else a
    :class:`ConfigError` (one line), or with ``allow`` the line that flags the analysis."""
    changed = changed_conditions(store, benchmark)
    if not changed:
        return None
    shown = ", ".join(f"{m} / {label} (sha256 {sha[:12]})" for m, label, sha in changed[:5])
    more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
    line = (
        f"answers of {shown}{more} were made with other content of pack {benchmark.pack} than "
        f"this file's (sha256 {benchmark.sha256[:12]}): they are analysed with this file's "
        "claims, levels and templates"
    )
    if not allow:
        raise ConfigError(
            f"{line}, which may not be theirs; analyse them with the file they were made with, "
            "or pass --allow-pack-change to analyse them anyway (flagged)"
        )
    return line


def _keys(store: Any) -> Iterable[tuple[str, str, str]]:
    """(benchmark, model, condition) of every generation, without a dict per row when the
    store reads columns (:meth:`Store.column_lists`)."""
    names = ("benchmark", "model", "condition")
    distinct_rows = getattr(store, "distinct_rows", None)
    if distinct_rows is not None:  # the index's leading columns: not a pass over the rows
        return distinct_rows("generations", names)
    column_lists = getattr(store, "column_lists", None)
    if column_lists is not None:
        data = column_lists("generations", names, repeated=names)
        return zip(*(data[n] for n in names), strict=True)
    return (
        (r["benchmark"], r["model"], r["condition"]) for r in store.generation_rows(columns=names)
    )
