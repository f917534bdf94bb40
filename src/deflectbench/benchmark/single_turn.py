"""The pack a ``pack`` task parameter names, single-turn only: what the Inspect task renders its
samples from and what the log import reads a log's cells against, so both resolve it alike."""

from __future__ import annotations

from deflectbench.benchmark.definition import Benchmark, BenchmarkError
from deflectbench.benchmark.packs import resolve_benchmark
from deflectbench.errors import ConfigError

__all__ = ["resolve_pack"]


def resolve_pack(pack: str | None) -> Benchmark:
    """The benchmark a ``pack`` parameter names, as ``--benchmark`` does: the paper's v1 by
    default, a shipped pack by name, or a pack file by path. A multi-turn pack is refused: the
    task asks one turn per sample."""
    try:
        benchmark = resolve_benchmark(pack or None)
    except BenchmarkError as exc:  # it speaks of --benchmark; here the parameter is -T pack=
        raise ConfigError(f"-T pack={pack}: {exc}".replace(f"--benchmark {pack!r}: ", "")) from None
    if getattr(benchmark, "turns", 1) != 1:
        raise ConfigError(
            f"pack {pack!r} is multi-turn; the Inspect task runs single-turn packs only "
            "(run it with `deflectbench run --benchmark`)"
        )
    return benchmark
