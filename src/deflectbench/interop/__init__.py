"""The public release's file format (JSON Lines) in and out, and flat CSV / JSONL / Parquet tables.

Import reads ``generations_*.jsonl`` and ``evals_*.jsonl`` (files or folders, any layout) into the
store, so the paper's analysis runs on the release exactly as on our own runs. Export writes the
same format back: an imported release comes out record for record, key order and bytes included,
and our own runs come out in the same schema, so tools written for the release read them too.

- :mod:`.release`: the format: record keys, ids, and one record as the release writes it;
- :mod:`.fidelity`: what export cannot derive, remembered at import (the faithful round trip);
- :mod:`.decode`: one release line into a store record, every field checked;
- :mod:`.sources`: every input of an import checked before the store is opened;
- :mod:`.importer`: files and folders into the store, bad lines reported and skipped;
- :mod:`.exporter`: the store out as release files; :mod:`.tables`: as tidy tables (one row per
  generation, with the analysis' consensus and outcome);
- :mod:`.hf`: Hugging Face dataset folders (results and the benchmark) out, results back in;
  :mod:`.card`: their dataset card.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.interop.exporter import FORMATS, export
    from deflectbench.interop.hf import export_benchmark, export_hf, import_any, import_hf
    from deflectbench.interop.importer import (
        FileReport,
        ImportReport,
        import_paths,
        iter_release_records,
    )
    from deflectbench.interop.release import (
        EVAL_KEYS,
        GEN_KEYS,
        InteropError,
        eval_id,
        gen_id,
        model_slug,
    )
    from deflectbench.vocab import FALLACY_NAMES

#: Where each name lives, loaded on first use: an import need not load export's, Hugging
#: Face's and the configuration's modules (a command's start-up).
_HOMES = {
    "FORMATS": "exporter",
    "export": "exporter",
    "export_benchmark": "hf",
    "export_hf": "hf",
    "import_any": "hf",
    "import_hf": "hf",
    "FileReport": "importer",
    "ImportReport": "importer",
    "import_paths": "importer",
    "iter_release_records": "importer",
    "EVAL_KEYS": "release",
    "GEN_KEYS": "release",
    "InteropError": "release",
    "eval_id": "release",
    "gen_id": "release",
    "model_slug": "release",
}


def __getattr__(name: str) -> Any:
    if name == "FALLACY_NAMES":
        from deflectbench.vocab import FALLACY_NAMES

        return FALLACY_NAMES
    if name in _HOMES:
        return getattr(import_module(f"deflectbench.interop.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'deflectbench.interop' has no attribute {name!r}")


__all__ = [
    "EVAL_KEYS",
    "FALLACY_NAMES",
    "FORMATS",
    "GEN_KEYS",
    "FileReport",
    "ImportReport",
    "InteropError",
    "eval_id",
    "export",
    "export_benchmark",
    "export_hf",
    "gen_id",
    "import_any",
    "import_hf",
    "import_paths",
    "iter_release_records",
    "model_slug",
]
