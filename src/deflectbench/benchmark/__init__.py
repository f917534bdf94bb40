"""The benchmark definition: packs of claims, templates, fallacies and the judge rubric; loading,
validation and rendering (docs/packs.md describes the file format)."""

from deflectbench.benchmark.definition import (
    PAPER_PACK,
    Benchmark,
    BenchmarkError,
    Claim,
    Fallacy,
    Followup,
    Rubric,
    Template,
)
from deflectbench.benchmark.loader import default_benchmark, load_benchmark
from deflectbench.benchmark.packs import (
    PackInfo,
    load_pack,
    pack_by_key,
    pack_infos,
    resolve_benchmark,
    shipped_packs,
)

# One cell type for the whole package: the records' (a tuple, so plain tuples compare equal).
from deflectbench.records import Cell

__all__ = [
    "PAPER_PACK",
    "Benchmark",
    "BenchmarkError",
    "Cell",
    "Claim",
    "Fallacy",
    "Followup",
    "PackInfo",
    "Rubric",
    "Template",
    "default_benchmark",
    "load_benchmark",
    "load_pack",
    "pack_by_key",
    "pack_infos",
    "resolve_benchmark",
    "shipped_packs",
]
