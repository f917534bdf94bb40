"""``deflectbench merge OUT STORE...``: the parts of a sharded run (or any stores) as one.

Every cell once: a generation is keyed by (benchmark, model, condition, claim, template,
sample) and a verdict by (that generation, judge), and each goes through the gate as an import's
records do: a repeat with the same content is counted as already present, a conflicting
duplicate is refused and reported (the first one kept), a failed request is replaced by a
result. Conditions are carried with their labels and settings; a label naming other settings
in two stores (or a store and OUT) is refused before anything is written, so other settings
stay other conditions and are never mixed. Runs keep their ids, so OUT says which run (and
which ``--shard``) made each row.

The parts are checked before anything is written: from the ``k/N`` each part's run records,
a part of an array that no input (nor OUT) holds, or one whose cells do not all have a result
row, is refused in one line naming it (``part 8/8 missing``), or only noted with
``allow_missing_parts``: merged, the analysis would cover some parts' claims without a word.

In bounded memory and time linear in what is added: each part is read in chunks
(:data:`~deflectbench.store.merging.CHUNK` rows), and OUT is consulted only for the keys of the
chunk at hand (index lookups, :mod:`deflectbench.store.chunked`), never read whole; the part's
generation ids against OUT's wait on disk (a temporary table) for its verdicts. Merging the
last of many parts costs what merging the first did.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from deflectbench import gate
from deflectbench.conditions import differences
from deflectbench.config.shard import Shard, recorded
from deflectbench.gate import GateError
from deflectbench.interop.importer import stored_contents
from deflectbench.interop.release import InteropError
from deflectbench.records import GenerationRecord, JudgmentRecord
from deflectbench.store import Store
from deflectbench.store.cascade import copy_cascades
from deflectbench.store.chunked import generation_ids_of, generation_rows_of, judgment_rows_of
from deflectbench.store.manifests import copy_manifests
from deflectbench.store.merging import (
    add_condition_row,
    add_planned_rows,
    add_run_row,
    condition_rows,
    generation_cells,
    held_elsewhere,
    mapped_ids,
    planned_rows,
    remember_ids,
    start_id_map,
    stream_chunks,
)
from deflectbench.vocab import FIELDS

#: A generation's identity in any store: (benchmark, condition, model, claim, template, sample).
GenKey = tuple[str, str, str, str, str, int]
#: A record a part's row becomes (a generation or a verdict).
R = TypeVar("R", GenerationRecord, JudgmentRecord)


@dataclass
class StoreReport:
    """What one input store gave: records new to OUT, already there, refused."""

    path: Path
    runs: int = 0
    generations_new: int = 0
    generations_present: int = 0
    judgments_new: int = 0
    judgments_present: int = 0
    refused: int = 0


@dataclass
class MergeReport:
    stores: list[StoreReport] = field(default_factory=list)
    #: ``STORE: what: why`` for every record refused.
    problems: list[str] = field(default_factory=list)
    #: What was not carried (second turns, human labels, open batch items), store by store.
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        def total(name: str) -> int:
            return sum(getattr(s, name) for s in self.stores)

        return (
            f"{len(self.stores)} stores: {total('runs')} runs, generations "
            f"{total('generations_new')} new, {total('generations_present')} already present; "
            f"judgments {total('judgments_new')} new, {total('judgments_present')} already "
            f"present; {total('refused')} refused"
        )


def check_conditions(out: Store, sources: Sequence[Store]) -> None:
    """Refuse (InteropError, one line) a label that names other settings in two of the stores,
    or settings stored under two labels: merged, they would be mixed."""
    by_label: dict[tuple[str, str], tuple[str, str]] = {}
    by_sha: dict[tuple[str, str], tuple[str, str]] = {}
    for store in (out, *sources):
        for row in condition_rows(store):
            model, label, sha = row["model"], row["label"], row["settings_sha256"]
            seen = by_label.setdefault((model, label), (row["settings_json"], str(store.path)))
            if seen[0] != row["settings_json"]:
                diff = differences(json.loads(seen[0]), json.loads(row["settings_json"]))
                raise InteropError(
                    f"{store.path}: {model} condition {label!r} has other settings than in "
                    f"{seen[1]} ({diff}): other settings are another condition; relabel one "
                    "run (--label) instead of merging them"
                )
            other = by_sha.setdefault((model, sha), (label, str(store.path)))
            if other[0] != label:
                raise InteropError(
                    f"{store.path}: {model} settings are condition {label!r} here but "
                    f"{other[0]!r} in {other[1]}: merged, one condition would have two labels"
                )


def part_cells(config: dict[str, Any]) -> list[tuple[str, str, int]]:
    """The cells (claim, template, sample) a part's run planned, from its run row's config
    (its claims, templates and samples, and for scheme 2 the run of them it holds)."""
    cells = [
        (c, p, s)
        for c in config.get("claim_ids") or ()
        for p in config.get("prompt_ids") or ()
        for s in range(1, int(config.get("runs") or 0) + 1)
    ]
    span = (config.get("extra") or {}).get("shard_span")
    return cells[span[0] : span[1]] if span else cells


def part_problems(out: Store, sources: Sequence[Store]) -> list[str]:
    """One line for each part of an array (by the ``k/N`` its runs record) that neither OUT
    nor any input holds, and for each input whose part has cells with no result row."""
    held: dict[int, set[int]] = {}
    problems: list[str] = []
    for store in (out, *sources):
        checked: set[tuple[str, str, str]] = set()
        for run in store.runs():
            got = recorded(run["config"])
            if got is None:
                continue
            part = got[0]
            held.setdefault(part.count, set()).add(part.index)
            if store is out:
                continue  # OUT's parts were checked when they were merged
            config = run["config"]
            labels = config.get("conditions") or {}
            for model in config.get("models") or ():
                key = (str(part), model, str(labels.get(model, "default")))
                if key in checked:
                    continue
                checked.add(key)
                have = generation_cells(store, model, key[2])  # one model's cells at a time
                cells = part_cells(config)
                lacking = sum(1 for c in cells if c not in have)
                if lacking:
                    problems.append(
                        f"part {part} incomplete ({store.path}: {lacking:,} of {len(cells):,} "
                        f"cells of {model} have no result; run the part again to finish it)"
                    )
    for count, indices in sorted(held.items()):
        gone = [str(Shard(i, count)) for i in range(1, count + 1) if i not in indices]
        if gone:
            shown = ", ".join(gone[:8]) + (f" and {len(gone) - 8} more" if len(gone) > 8 else "")
            problems.insert(0, f"part{'s' * (len(gone) > 1)} {shown} missing")
    return problems


def merge_stores(
    out: Store, paths: Sequence[Path], *, allow_missing_parts: bool = False
) -> MergeReport:
    """Merge the stores at ``paths`` into ``out``, one transaction per input store. A part
    missing or incomplete (:func:`part_problems`) is refused (InteropError, one line, nothing
    written) or, with ``allow_missing_parts``, noted."""
    if any(Path(p).resolve() == out.path.resolve() for p in paths):
        raise InteropError(f"{out.path}: OUT is also an input; merge into a new file")
    sources = [Store.open(p, readonly=True) for p in paths]
    try:
        check_conditions(out, sources)
        parts = part_problems(out, sources)
        if parts and not allow_missing_parts:
            raise InteropError(
                f"{'; '.join(parts)}: merge every part once each has finished, or pass "
                "--allow-missing-parts to merge only these (the analysis then covers only "
                "their cells)"
            )
        report = MergeReport()
        report.notes.extend(f"merged without all parts: {p}" for p in parts)
        for src in sources:
            report.stores.append(_merge_one(out, src, report))
        return report
    finally:
        for s in sources:
            s.close()


def _merge_one(out: Store, src: Store, report: MergeReport) -> StoreReport:
    sr = StoreReport(path=src.path)
    for what, n in held_elsewhere(src).items():
        report.notes.append(f"{src.path}: {n} {what} not merged")
    with out.transaction():
        for row in condition_rows(src):
            add_condition_row(out, row)
        sr.runs = sum(add_run_row(out, run) for run in src.runs())
        copy_manifests(out, src)  # what each of those runs really ran
        report.notes.extend(copy_cascades(out, src))  # each pack's cascade design
        add_planned_rows(out, planned_rows(src))
        start_id_map(out)
        _generations(out, src, sr, report)
        _judgments(out, src, sr, report)
    return sr


def _gen_key(row: dict[str, Any]) -> GenKey:
    return (
        row["benchmark"],
        row["condition"],
        row["model"],
        row["claim_id"],
        row["prompt_id"],
        int(row["sample"]),
    )


def _request(row: dict[str, Any]) -> dict[str, Any]:
    """The columns a generation and a verdict share: the request's outcome, cost and origin."""
    return {
        "error": row["error"],
        "input_tokens": row["input_tokens"],
        "output_tokens": row["output_tokens"],
        "latency_s": row["latency_s"],
        "run_id": row["run_id"],
        "source": row["source"],
        "created_at": row["created_at"],
        "extra": json.loads(row["extra_json"]) if row.get("extra_json") else None,
        "cost_usd": row.get("cost_usd"),
    }


def _generation(row: dict[str, Any]) -> GenerationRecord:
    """The row as a generation, through the gate (GateError, ValueError: refused)."""
    return gate.generation(
        GenerationRecord(
            benchmark=row["benchmark"],
            model=row["model"],
            claim_id=row["claim_id"],
            prompt_id=row["prompt_id"],
            sample=int(row["sample"]),
            prompt=row["prompt"],
            response=row["response"],
            finish_reason=row["finish_reason"],
            params=json.loads(row["params_json"] or "{}"),
            condition=row["condition"],
            served_model=row.get("served_model"),
            **_request(row),
        )
    )


def _generations(out: Store, src: Store, sr: StoreReport, report: MergeReport) -> None:
    """Each generation of ``src`` into ``out`` (through the gate), a chunk at a time, OUT
    looked up by the chunk's keys only; remembers (:func:`remember_ids`) the source's gen_id
    -> OUT's gen_id of every generation whose content OUT now holds (a refused one has none,
    so its verdicts are not carried onto another answer)."""
    for chunk in stream_chunks(src, "generations", "gen_id"):
        keys = [_gen_key(row) for row in chunk]
        groups: dict[tuple[str, str], list[tuple[str, str, str, int]]] = {}
        for key in keys:
            groups.setdefault(key[:2], []).append(key[2:])
        stored = {
            group: gate.Duplicates(stored_contents(generation_rows_of(out.conn, *group, cell)))
            for group, cell in groups.items()
        }
        carried: list[tuple[int, GenKey]] = []
        for row, key in zip(chunk, keys, strict=True):
            what = f"{key[2]} {key[3]}/{key[4]}/{key[5]} [{key[1]}]"
            new = _admit(
                row,
                partial(_generation, row),
                lambda rec: (rec.response, rec.error),
                out.add_generation,
                stored[key[:2]],
                key[2:],
                where=str(src.path),
                name=f"generation {what}",
                label=what,
                tally=(sr, report),
            )
            if new is None:
                continue
            if new:
                sr.generations_new += 1
            else:
                sr.generations_present += 1
            carried.append((int(row["gen_id"]), key))
        pairs: list[tuple[int, int]] = []
        for group in groups:
            wanted = [key[2:] for _, key in carried if key[:2] == group]
            ids = generation_ids_of(out.conn, *group, wanted)
            pairs.extend(
                (src_id, ids[key[2:]])
                for src_id, key in carried
                if key[:2] == group and key[2:] in ids
            )
        remember_ids(out, pairs)


def _judgment(row: dict[str, Any], gen_id: int) -> JudgmentRecord:
    """The row as a verdict on OUT's ``gen_id``, through the gate (GateError, ValueError:
    refused)."""
    scores = {f: int(row[f]) for f in FIELDS if row.get(f) is not None}
    return gate.judgment(
        JudgmentRecord(
            gen_id=gen_id,
            judge=row["judge"],
            raw=row["raw"],
            scores=scores or None,
            said=json.loads(row["said_json"]) if row.get("said_json") else None,
            reasoning=row["reasoning"],
            parse_error=bool(row["parse_error"]),
            consistency_flag=bool(row["consistency_flag"]),
            **_request(row),
        ),
        FIELDS,
    )


def _admit(
    row: dict[str, Any],
    make: Callable[[], R],
    content: Callable[[R], tuple[str | None, str | None]],
    add: Callable[[R], object],
    dups: gate.Duplicates,
    key: Hashable,
    *,
    where: str,
    name: str,
    label: str,
    tally: tuple[StoreReport, MergeReport],
) -> bool | None:
    """One row of a part through the gate into OUT: True when added, False when OUT holds it
    already (a failed request never replaces anything stored), None when refused (counted, and
    ``WHERE: NAME: why`` reported). ``label`` names the record in a conflict's message."""
    if row["error"] is not None and dups.stored.get(key) is not None:
        return False
    try:
        rec = make()
        verdict = dups.check(key, content(rec), where, label)
    except (GateError, ValueError) as exc:
        tally[0].refused += 1
        tally[1].problems.append(f"{where}: {name}: {exc}")
        return None
    if verdict == gate.REPEAT:
        return False
    add(rec)
    return True


def _judgments(out: Store, src: Store, sr: StoreReport, report: MergeReport) -> None:
    """Each verdict of ``src`` on a carried generation into ``out`` (through the gate), a
    chunk at a time, OUT looked up by the chunk's keys only."""
    for chunk in stream_chunks(src, "judgments", "judgment_id"):
        ids = mapped_ids(out, [int(row["gen_id"]) for row in chunk])
        keys = [(ids[g], row["judge"]) for row in chunk if (g := int(row["gen_id"])) in ids]
        dups = gate.Duplicates(stored_contents(judgment_rows_of(out.conn, keys)))
        for row in chunk:
            gen_id = ids.get(int(row["gen_id"]))
            what = f"judgment {row['judge']} on gen_id {row['gen_id']}"
            if gen_id is None:
                sr.refused += 1
                report.problems.append(f"{src.path}: {what}: its generation was not merged")
                continue
            new = _admit(
                row,
                partial(_judgment, row, gen_id),
                lambda rec: (rec.raw, rec.error),
                out.add_judgment,
                dups,
                (gen_id, row["judge"]),
                where=str(src.path),
                name=what,
                label=what,
                tally=(sr, report),
            )
            if new:
                sr.judgments_new += 1
            elif new is not None:
                sr.judgments_present += 1
