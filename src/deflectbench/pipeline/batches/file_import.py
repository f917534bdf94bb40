"""An engine's output lines matched to the cells this store wrote to batch files, each line
to one cell or to one counted reason it is not taken.

An engine's output is not always one whole file for one open batch: it may come in parts, be
concatenated with another part's, another run's or another store's, repeat lines, answer as
another model, or carry lines that are not output at all. Each line is matched by its custom
id (the cell's id) and the model its reply names, so that:

- a line for a cell of no batch file of this store is skipped and counted (never the reason
  to refuse the rest of the file);
- a line whose reply names a model other than the one its cell was written for is not
  imported unless that model is accepted (``accept``): one warning names it and its count;
- a line that fits cells of two batch files (the same cell id under two conditions, say) is
  not guessed at: counted as ambiguous;
- a cell answered twice (twice in the file, or already answered) keeps its first answer, the
  other line counted as a duplicate; an answer beats an error line for the same cell;
- a cell of a batch file already collected whose row is the "no result line" error (its line
  was missing from an earlier file) takes the line now: the answer replaces that error row,
  and only such rows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from deflectbench.models.batch_api import SUCCEEDED
from deflectbench.models.file_batch import FileLine, Unreadable
from deflectbench.pipeline.batches.collect import LOST
from deflectbench.store.batches import OPEN_STATES, BatchItem, BatchRow, WireItem

#: A cell across batches: (benchmark, model, condition, claim, template, sample).
CellKey = tuple[str, str, str, str, str, int]
#: The error an item given up for want of a line carries (``batch lost: ...``).
LOST_PREFIX = f"batch {LOST}:"


@dataclass(frozen=True)
class Target:
    """Where a line goes: an open item of an open batch file, or an item of a collected one
    whose cell holds the "no result line" error row (``lost``)."""

    row: BatchRow
    item: BatchItem
    lost: bool


@dataclass
class Matched:
    """The lines of one output file, each matched to a cell or counted as not taken."""

    #: Open batch files' ids (``file-<key>``) -> the lines for their open items.
    open: dict[str, list[FileLine]] = field(default_factory=dict)
    #: Collected batch files' lost items and the line that answers them now.
    lost: list[tuple[Target, FileLine]] = field(default_factory=list)
    #: Every line taken, with where it goes.
    taken: list[tuple[Target, FileLine]] = field(default_factory=list)
    other_cells: int = 0
    duplicates: int = 0
    ambiguous: int = 0
    #: The model a skipped line's reply names -> lines.
    other_model: Counter[str] = field(default_factory=Counter)
    #: The model each batch file was written for (its name -> the id its lines carry).
    served: dict[str, str] = field(default_factory=dict)
    unreadable: list[Unreadable] = field(default_factory=list)


def candidates(items: Iterable[WireItem], ids: set[str]) -> list[WireItem]:
    """The items whose custom id is among ``ids`` (their batches' models are the ones to
    build before matching)."""
    return [w for w in items if w.item.custom_id in ids]


def match(
    lines: Iterable[FileLine | Unreadable],
    items: Iterable[WireItem],
    rows: Mapping[str, BatchRow],
    served: Mapping[str, str],
    accept: Iterable[str] = (),
) -> Matched:
    """Each line to at most one cell. ``items``: the batch files' items (:meth:`wire_items`),
    ``rows``: their batches by key, ``served``: each batch model's name -> the model id its
    lines carry, ``accept``: model ids a reply may name besides it."""
    m = Matched(served=dict(served))
    accepted = set(accept)
    by_id: dict[str, list[WireItem]] = {}
    for w in items:
        by_id.setdefault(w.item.custom_id, []).append(w)
    read: list[FileLine] = []
    for line in lines:
        if isinstance(line, Unreadable):
            m.unreadable.append(line)
        else:
            read.append(line)

    def fits(w: WireItem, model: str) -> bool:
        own = served.get(rows[w.batch_key].model)
        return model in accepted or (own is not None and same_model(own, model))

    # the batch models the file's replies name: an error line (it names none) is theirs
    named = {
        rows[w.batch_key].model
        for line in read
        if line.model is not None
        for w in by_id.get(line.custom_id, ())
        if fits(w, line.model)
    }
    chosen: dict[CellKey, tuple[Target, FileLine]] = {}
    for line in read:
        found = by_id.get(line.custom_id)
        if not found:
            m.other_cells += 1
            continue
        if line.model is not None:
            found = [w for w in found if fits(w, line.model)]
            if not found:
                m.other_model[line.model] += 1
                continue
        else:
            found = [w for w in found if rows[w.batch_key].model in named] or found
        cells = {_key(rows[w.batch_key], w.item) for w in found}
        if len(cells) > 1:
            m.ambiguous += 1
            continue
        target = _target(found, rows)
        if target is None:
            m.duplicates += 1  # answered (or failed) before: never replaced
            continue
        key = _key(target.row, target.item)
        before = chosen.get(key)
        if before is not None:
            m.duplicates += 1
            if before[1].kind == SUCCEEDED or line.kind != SUCCEEDED:
                continue  # the first answer stays
        chosen[key] = (target, line)
    for target, line in chosen.values():
        m.taken.append((target, line))
        if target.lost:
            m.lost.append((target, line))
        else:
            remote = target.row.remote_id or f"file-{target.row.batch_key}"
            m.open.setdefault(remote, []).append(line)
    return m


#: A dated snapshot's suffix (``-2024-08-06``, ``-20240806``).
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def same_model(own: str, named: str) -> bool:
    """Whether a reply naming ``named`` is the model whose id the lines carried (``own``): the
    same id, without its ``org/`` prefix (or with one it was asked without), or its dated
    snapshot. Stricter than
    an online reply's check: ``Llama-3-8B-Instruct`` is not ``Llama-3-8B``."""
    names = {own, own.split("/", 1)[-1]}  # ``org/model`` may come back as ``model``
    if named in names or ("/" not in own and named.endswith("/" + own)):
        return True
    dated = _SNAPSHOT.search(named)
    return dated is not None and named[: dated.start()] in names


def _key(row: BatchRow, item: BatchItem) -> CellKey:
    cell = item.cell
    return (row.benchmark, row.model, row.condition or "", *cell)


def _target(found: list[WireItem], rows: Mapping[str, BatchRow]) -> Target | None:
    """The item a line answers: one still open in an open batch file, else one given up for
    want of a line whose cell still holds that error row; None: the cell is done."""
    for w in found:
        row = rows[w.batch_key]
        if w.state == "open" and row.state in OPEN_STATES:
            if w.stored and w.row_error is None:
                return None  # answered meanwhile (another run): its answer stays
            return Target(row, w.item, lost=False)
    for w in found:
        if (
            w.state == "given_up"
            and (w.error or "").startswith(LOST_PREFIX)
            and (w.row_error or "").startswith(LOST_PREFIX)
        ):
            return Target(rows[w.batch_key], w.item, lost=True)
    return None
