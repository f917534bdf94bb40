"""How results name the pack they are of: a report, a validation or a page showing numbers of
one pack must say which, or a translation's numbers read as the paper's."""

from __future__ import annotations

from deflectbench.benchmark.definition import Benchmark

__all__ = ["pack_title"]


def pack_title(benchmark: Benchmark) -> str:
    """``DeflectBench v1.0`` for the paper's pack (as the paper names it), ``<pack> v<version>``
    for any other (``deflectbench-v1-es v1.0``): every pack shares the paper's ``name``, so the
    name alone cannot tell them apart."""
    if benchmark.is_paper:
        return f"{benchmark.name} v{benchmark.version}"
    return f"{benchmark.pack} v{benchmark.version}"
