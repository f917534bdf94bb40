"""The benchmark definition: claims, templates, fallacies, the judge rubric; loading and rendering."""

from deflectbench.benchmark.loader import (
    Benchmark,
    BenchmarkError,
    Cell,
    Claim,
    Fallacy,
    Rubric,
    Template,
    default_benchmark,
    load_benchmark,
)

__all__ = [
    "Benchmark",
    "BenchmarkError",
    "Cell",
    "Claim",
    "Fallacy",
    "Rubric",
    "Template",
    "default_benchmark",
    "load_benchmark",
]
