"""What ``import``, ``export`` and ``merge`` return to a caller: typed, with the exit code the
command ends with (1 when lines or records were skipped or refused, so a script sees that rows
were left out). The reports they wrap (:class:`~.importer.ImportReport`,
:class:`~.merge.MergeReport`) are filled while the files are read; these are what is kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deflectbench.interop.importer import FileReport, ImportReport

if TYPE_CHECKING:
    import pandas as pd

    from deflectbench.interop.merge import MergeReport, StoreReport

__all__ = ["ExportResult", "ImportResult", "MergeResult"]

#: The columns of :attr:`ImportResult.table`, one row per file read.
IMPORT_COLUMNS = ("path", "kind", "read", "imported", "already_present", "skipped", "declared")


class _Reported:
    """A result wrapping the report its command filled: the problems, the notes, the exit code
    and the one-line summary read the same way for an import and a merge."""

    report: ImportReport | MergeReport

    @property
    def problems(self) -> Sequence[str]:
        """One line for every line, file or record skipped or refused (``path:line: message``
        for an import, ``STORE: what: why`` for a merge)."""
        return self.report.problems

    @property
    def notes(self) -> Sequence[str]:
        """What a reader should know that skipped nothing (for a merge: what was not carried,
        such as second turns, human labels, open batch items)."""
        return self.report.notes

    @property
    def exit_code(self) -> int:
        """1 when anything was skipped or refused, else 0 (as ``deflectbench import`` and
        ``merge``)."""
        return 1 if self.report.problems else 0

    def summary(self) -> str:
        """One line: how many records were new, already present, skipped or refused."""
        return self.report.summary()


@dataclass(frozen=True)
class ImportResult(_Reported):
    """What an import did to the store ``db``: file by file, every problem it skipped, and what a
    reader should know that skipped nothing."""

    db: Path
    report: ImportReport

    @property
    def files(self) -> Sequence[FileReport]:
        return self.report.files

    @property
    def table(self) -> pd.DataFrame:
        """One row per file read (columns :data:`IMPORT_COLUMNS`)."""
        import pandas as pd

        rows = [[str(f.path), *(getattr(f, c) for c in IMPORT_COLUMNS[1:])] for f in self.files]
        return pd.DataFrame(rows, columns=list(IMPORT_COLUMNS))


@dataclass(frozen=True)
class ExportResult:
    """The files an export wrote, in the order written, under ``out``."""

    out: Path
    files: tuple[Path, ...]

    def summary(self) -> str:
        return f"{len(self.files)} files written to {self.out}"


@dataclass(frozen=True)
class MergeResult(_Reported):
    """What a merge did to ``db``: store by store, and every record it refused."""

    db: Path
    report: MergeReport

    @property
    def stores(self) -> Sequence[StoreReport]:
        return self.report.stores
