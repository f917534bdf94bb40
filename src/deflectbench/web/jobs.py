"""What ``annotate`` does besides serving the page: the one job a command asks for (import
labels, export them, or write the blind sample), and the size of the sample to draw or reuse.
Each returns what to say; the command prints it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deflectbench.web.server import WebError

if TYPE_CHECKING:
    from deflectbench.benchmark import Benchmark
    from deflectbench.store import Store

__all__ = ["label_job", "one_job", "sample_size"]


def one_job(flags: Mapping[str, object]) -> None:
    """Refuse more than one of the jobs (flag -> value; None: not asked)."""
    chosen = [flag for flag, value in flags.items() if value is not None]
    if len(chosen) > 1:
        raise WebError(f"{' and '.join(chosen)} each do one job: give one of them per command")


def label_job(
    store: Store, *, import_from: Path | None, export_to: Path | None, annotator: str | None
) -> str | None:
    """Import or export the human labels as asked; what was done, or None when neither was."""
    from deflectbench.interop.labels import export_labels, import_labels

    if import_from is not None:
        done = import_labels(store, import_from, annotator=annotator)
        who = ", ".join(f"{a}: {n}" for a, n in done.annotators.items())
        return f"imported {done.labels} labels ({who})"
    if export_to is not None:
        return f"{export_labels(store, export_to, annotator)} labels: {export_to}"
    return None


def sample_size(store: Store, benchmark: Benchmark, asked: int | None, default: int) -> int:
    """The sample asked for, else the stored one's size (reused as it is), else ``default``."""
    if asked is not None:
        return asked
    return len(store.annotation_sample(benchmark.key)) or default
