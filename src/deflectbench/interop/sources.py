"""What ``deflectbench import`` reads, found and checked before the store is opened.

A missing path, a folder holding nothing importable, a Hugging Face folder of other benchmark
content or Inspect logs without the extra are refused here, before anything is written: a
refused import leaves an existing store as it was, byte for byte, and creates no new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deflectbench.benchmark import Benchmark
from deflectbench.interop.hf import check_results_folder, import_any, is_hf_folder
from deflectbench.interop.importer import ImportReport, collect_files
from deflectbench.interop.inspect_logs import _inspect_log_api, import_logs, split_paths
from deflectbench.store import Store


@dataclass(frozen=True)
class Sources:
    """The files and folders an import reads, by kind, in the order it reads them."""

    release: list[Path]
    hf: list[Path]
    logs: list[Path]


def find_sources(paths: Sequence[Path | str], benchmark: Benchmark) -> Sources:
    """Every input of an import, each checked as far as it can be without a store; raises
    :class:`~.release.InteropError` (one line) for the first that cannot be imported."""
    logs, rest = split_paths(paths)
    hf = [p for p in rest if is_hf_folder(p)]
    release = collect_files([p for p in rest if p not in hf])
    for folder in hf:
        check_results_folder(folder, benchmark)
    if logs:
        _inspect_log_api()  # the inspect extra is installed
    return Sources(release=release, hf=hf, logs=logs)


def import_sources(store: Store, sources: Sources, benchmark: Benchmark) -> ImportReport:
    """Release files and Hugging Face folders, then Inspect logs, into ``store``: one report."""
    found = [*sources.release, *sources.hf]
    report = import_any(store, found, benchmark) if found else ImportReport()
    if sources.logs:
        import_logs(store, sources.logs, report)
    return report
