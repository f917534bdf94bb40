"""``deflectbench status`` over several results files: the parts of a ``--shard I/N`` array,
their progress and spending, read file by file (nothing merged, nothing written)."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

from deflectbench.api._common import DbPath, open_store
from deflectbench.results.parts_status import PartRow, PartsStatus


def expand(patterns: Sequence[DbPath]) -> list[Path]:
    """Each path as given, each glob (``results/part-*.db``) as the files it matches, sorted,
    once each; a glob matching nothing is a StoreError (one line)."""
    from deflectbench.store import StoreError

    out: dict[Path, None] = {}
    for p in patterns:
        text = str(p)
        if any(ch in text for ch in "*?["):
            found = sorted(glob.glob(text))
            if not found:
                raise StoreError(f"{text}: no results file matches")
            out |= dict.fromkeys(map(Path, found))
        else:
            out[Path(p)] = None
    return list(out)


def status_parts(dbs: Sequence[DbPath]) -> PartsStatus:
    """Progress and spending of every results file of ``dbs`` (paths or globs), and the parts
    of an array (by the ``k/N`` the files' runs record) that none of them holds."""
    from deflectbench.config.shard import Shard, recorded
    from deflectbench.interop.merge import part_cells

    rows: list[PartRow] = []
    held: dict[int, set[int]] = {}
    for path in expand(dbs):
        with open_store(path, must_exist=True) as store:
            st = store.status()
            parts: dict[str, int] = {}  # each part's cells, for a part killed before planning
            for run in store.runs():
                got = recorded(run["config"])
                if got is not None:
                    cells = len(part_cells(run["config"])) * len(run["config"].get("models", ()))
                    parts[str(got[0])] = max(parts.get(str(got[0]), 0), cells)
                    held.setdefault(got[0].count, set()).add(got[0].index)
        models = st["models"].values()
        planned = max(sum(m["planned"] for m in models), sum(parts.values()))
        ok = sum(m["ok"] + sum(m["non_answers"].values()) for m in models)
        errors = sum(m["errors"] for m in models)
        rows.append(
            PartRow(
                path=path,
                parts=tuple(parts),
                planned=planned,
                ok=ok,
                errors=errors,
                missing=max(planned - ok - errors, 0),
                spent_usd=st["spent_usd"],
            )
        )
    gone = [
        str(Shard(i, n))
        for n, have in sorted(held.items())
        for i in range(1, n + 1)
        if i not in have
    ]
    return PartsStatus(rows, gone)
