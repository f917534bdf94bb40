"""The packs shipped with DeflectBench (every ``benchmark/data/*.json``), and ``--benchmark
NAME|FILE``: a shipped pack by name, or a pack file of your own.

A pack file of your own may not take a shipped pack's id with other content: its rows would
be stored under that pack's key and mixed with it. Give it an id of its own (``"pack"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from deflectbench.benchmark.definition import PAPER_PACK, Benchmark, BenchmarkError
from deflectbench.benchmark.loader import default_benchmark, load_benchmark, parse_bytes

__all__ = [
    "PackInfo",
    "load_pack",
    "pack_by_key",
    "pack_infos",
    "resolve_benchmark",
    "shipped_packs",
]


@dataclass(frozen=True)
class PackInfo:
    """One line of ``deflectbench spec --list``; ``problem`` is set when the pack is broken."""

    name: str
    language: str = ""
    turns: int = 0
    claims: int = 0
    templates: int = 0
    based_on: str | None = None
    key: str = ""
    sha256: str = ""
    problem: str | None = None


def shipped_packs() -> tuple[str, ...]:
    """The shipped packs' names (file stems), the paper's first, then alphabetical."""
    data = resources.files("deflectbench.benchmark").joinpath("data")
    names = sorted(p.name.removesuffix(".json") for p in data.iterdir() if p.name.endswith(".json"))
    return (PAPER_PACK, *[n for n in names if n != PAPER_PACK])


@cache
def load_pack(name: str) -> Benchmark:
    """A shipped pack by name, loaded once."""
    if name == PAPER_PACK:
        return default_benchmark()
    if name not in shipped_packs():
        raise BenchmarkError(_unknown(name))
    raw = resources.files("deflectbench.benchmark").joinpath(f"data/{name}.json").read_bytes()
    return parse_bytes(raw, f"bundled {name}.json", name)


def pack_infos() -> list[PackInfo]:
    """Every shipped pack at a glance (a broken one listed with its problem)."""
    out = []
    for name in shipped_packs():
        try:
            b = load_pack(name)
        except BenchmarkError as exc:
            out.append(PackInfo(name=name, problem=str(exc)))
            continue
        out.append(
            PackInfo(
                name=b.pack,
                language=b.language,
                turns=b.turns,
                claims=len(b.claims),
                templates=len(b.templates),
                based_on=b.based_on,
                key=b.key,
                sha256=b.sha256,
            )
        )
    return out


def pack_by_key(key: str) -> Benchmark | None:
    """The shipped pack whose generations are stored under ``key`` (None: not a shipped one)."""
    for name in shipped_packs():
        try:
            b = load_pack(name)
        except BenchmarkError:
            continue
        if b.key == key:
            return b
    return None


def resolve_benchmark(value: str | Path | None) -> Benchmark:
    """``--benchmark NAME|FILE``: None is the paper's pack; a shipped pack's name loads it;
    anything else is read as a pack file (which may not reuse a shipped pack's id)."""
    if value is None or str(value) == "":
        return default_benchmark()
    text = str(value)
    if text in shipped_packs():
        return load_pack(text)
    path = Path(text)
    if not path.exists():
        raise BenchmarkError(_unknown(text))
    b = load_benchmark(path)
    if b.pack in shipped_packs():
        shipped = load_pack(b.pack)
        if shipped.sha256 != b.sha256:
            raise BenchmarkError(
                f"{path}: pack id {b.pack!r} is a shipped pack's, but the content differs; "
                f'give your pack an id of its own ("pack": "my-{b.pack}") so its results are '
                "stored apart"
            )
        return shipped
    return b


def _unknown(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(shipped_packs()), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (
        f"--benchmark {name!r}: no shipped pack of that name and no such file{hint}; "
        f"shipped: {', '.join(shipped_packs())} (`deflectbench spec --list`)"
    )
