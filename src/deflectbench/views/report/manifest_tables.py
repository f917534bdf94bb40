"""The report's "Manifest" section: for each run of the report's pack, what each model and
judge really ran, as the client measured it (:mod:`deflectbench.pipeline.manifest`): the ids replies
named, the parameters sent, what a self-hosted server said, requests, tokens, wall time,
throughput and spend. One table, ``manifest.csv``; nothing for a store without manifests (one
from before migration ``m010``, an import). Its cells are provider text: the page escapes them
as it escapes model replies, the CSV neutralises them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from deflectbench.analysis.manifests import CELLS, cells, pack_manifests
from deflectbench.views.report.tables import Table, make_table

__all__ = ["MANIFEST_INTRO", "MANIFEST_TABLES", "manifest_tables"]

MANIFEST_TABLES = ("manifest",)
MANIFEST_INTRO = (
    "What each run really ran, as the client measured it: the model ids the replies named "
    "(and system fingerprints), the generation parameters the requests carried, what a "
    "self-hosted server reported, requests, tokens, the time from the first request to the "
    "last reply, throughput and spend. A judge whose served model or parameters changed "
    "scores differently: compare refuses such results unless told otherwise."
)
#: The CSV's numeric columns, from the manifest's own keys.
NUMBERS = (
    "requests",
    "failed_requests",
    "input_tokens",
    "output_tokens",
    "wall_s",
    "items_per_s",
    "output_tokens_per_s",
    "spent_usd",
)


def manifest_tables(store: Any, benchmark: Any = None) -> list[Table]:
    """The Manifest table of the runs of ``benchmark`` (every run when None)."""
    rows = pack_manifests(store, benchmark)
    if not rows:
        return []
    records, shown = [], []
    for r in rows:
        m = r["manifest"]
        label = r["name"] + (f" [{r['condition']}]" if r["condition"] else "")
        view = cells(m)
        records.append(
            {
                "run_id": r["run_id"],
                "role": r["role"],
                "name": r["name"],
                "condition": r["condition"],
                **{c: view[c] for c in ("served as", "fingerprint", "sent", "server")},
                **{k: m.get(k) if isinstance(m.get(k), int | float) else None for k in NUMBERS},
            }
        )
        shown.append([r["run_id"], r["role"], label, *(view[c] for c in CELLS)])
    frame = pd.DataFrame(records)
    return [
        make_table(
            "manifest",
            "Manifest: what each run really ran, per model and judge",
            frame,
            ["run", "role", "model / judge", *CELLS],
            shown,
            left=7,
            note="Measured at the client; 'not recorded' where a run did not measure it "
            "(batch mode, an in-process model, an import).",
        )
    ]
