"""Load a benchmark pack file and validate it (the rules are in :mod:`.parse`).

A pack is JSON data in the v1 file's shape (the v1 file is the public release's, verbatim),
with optional ``pack``, ``language``, ``turns``, ``based_on`` and ``followups`` (docs/packs.md).
Any problem raises :class:`BenchmarkError` with a one-line message naming the file and entry.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from pathlib import Path

from deflectbench.benchmark.definition import PAPER_PACK, Benchmark, BenchmarkError
from deflectbench.benchmark.parse import pack_error, parse_benchmark

__all__ = [
    "default_benchmark",
    "load_benchmark",
    "parse_benchmark",
    "parse_bytes",
]


def load_benchmark(path: str | Path | None = None) -> Benchmark:
    """Load a pack file (default: the bundled paper's pack, deflectbench-v1) and validate it.

    The pack's id is its ``pack`` field, else the file's stem."""
    if path is None:
        raw = resources.files("deflectbench.benchmark").joinpath(f"data/{PAPER_PACK}.json")
        return parse_bytes(raw.read_bytes(), f"bundled {PAPER_PACK}.json", PAPER_PACK)
    where = str(path)
    try:
        raw_bytes = Path(path).read_bytes()
    except OSError as exc:
        raise BenchmarkError(f"{where}: cannot read ({exc.strerror})") from None
    return parse_bytes(raw_bytes, where, Path(path).stem)


def parse_bytes(raw: bytes, where: str, stem: str) -> Benchmark:
    """Decode and validate a pack's bytes; ``where`` prefixes every problem, ``stem`` is the
    id used when the data names none."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{where}: not valid JSON ({exc})") from None
    try:
        return parse_benchmark(data, sha256=hashlib.sha256(raw).hexdigest(), pack=stem)
    except BenchmarkError as exc:
        problems = exc.problems or [str(exc)]
        raise pack_error([f"{where}: {p}" for p in problems]) from None


@cache
def default_benchmark() -> Benchmark:
    """The bundled paper's pack (deflectbench-v1), loaded once."""
    return load_benchmark()
