"""Hugging Face dataset folders out and in: results and the benchmark itself.

A folder that ``datasets.load_dataset(folder, name)`` reads as it is, and that ``huggingface-cli
upload`` (run by the user: nothing here uploads) can push unchanged: one Parquet file per config
and split under ``data/<config>/``, and a ``README.md`` dataset card whose YAML front matter
declares the configs, their features and splits, the license, and the benchmark's version and
sha256 (see :mod:`.card`).

- results (``export --format hf``): ``generations`` (the tidy rows of :mod:`.tables`, one per
  generation; the default config) and ``judgments`` (one per verdict), split ``train``;
- the benchmark (``export --format hf --what benchmark``): ``claims``, ``templates``,
  ``fallacies`` and ``prompts`` (every claim x template, rendered), split ``test``.

``deflectbench import FOLDER`` reads a results folder back into a store (idempotent), after
checking that its card names the same benchmark content (sha256) as the pack in use.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench import gate
from deflectbench.benchmark import Benchmark, default_benchmark
from deflectbench.gate import GateError
from deflectbench.interop.card import CARD, Config, card_text, read_card
from deflectbench.interop.importer import FileReport, ImportReport, import_paths, stored_contents
from deflectbench.interop.release import Catalog, InteropError, RecordError
from deflectbench.interop.tables import (
    feature_type,
    records,
    require_pyarrow,
    tidy_corrected,
    tidy_generations,
    tidy_judgments,
    write_text,
    write_whole,
)
from deflectbench.records import GenerationRecord, JudgmentRecord
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, LEVEL_NAMES

if TYPE_CHECKING:
    import pandas as pd

#: What ``--what`` exports.
WHAT = ("results", "benchmark")
RESULTS_SPLIT = "train"
BENCHMARK_SPLIT = "test"


@dataclass(frozen=True)
class Table:
    """One config of the folder: its name, split, rows and a line saying what a row is."""

    name: str
    split: str
    frame: pd.DataFrame
    row: str

    @property
    def path(self) -> str:
        return f"data/{self.name}/{self.split}-00000-of-00001.parquet"


# -- export ------------------------------------------------------------------------------------


def export_hf(
    store: Store | None, out: Path, benchmark: Benchmark | None = None, what: str = "results"
) -> list[Path]:
    """Write a Hugging Face dataset folder to ``out``: the store's results or the benchmark."""
    if what not in WHAT:
        raise InteropError(f"unknown --what {what!r}: use one of {', '.join(WHAT)}")
    require_pyarrow("--format hf", "--format csv / jsonl")
    b = benchmark or default_benchmark()
    if what == "benchmark":
        tables = benchmark_tables(b)
    else:
        if store is None:
            raise InteropError("exporting results needs a store (--db)")
        gens = tidy_generations(store, b)
        tables = [
            Table("generations", RESULTS_SPLIT, gens, "one generation, with verdicts and outcome"),
            Table("judgments", RESULTS_SPLIT, tidy_judgments(store, gens), "one judge's verdict"),
        ]
        corrected = tidy_corrected(store, b)
        if corrected is not None:  # human labels: the rates corrected for judge error too
            tables.append(
                Table(
                    "corrected",
                    RESULTS_SPLIT,
                    corrected,
                    "one rate of one model (and framing): judged, labels-only and corrected",
                )
            )
    return write_folder(out, tables, b, what)


def export_benchmark(out: Path, fmt: str, what: str, benchmark: Benchmark) -> list[Path]:
    """``export --what benchmark``: the benchmark as a Hugging Face folder (``--format hf``)."""
    if what not in WHAT:
        raise InteropError(f"unknown --what {what!r}: use one of {', '.join(WHAT)}")
    if fmt != "hf":
        raise InteropError(f"--what {what} is written as a Hugging Face folder: add --format hf")
    return export_hf(None, Path(out), benchmark, what)


def benchmark_tables(b: Benchmark) -> list[Table]:
    """The benchmark as four tables: claims, templates, fallacies, and every rendered prompt."""
    import pandas as pd

    claims = pd.DataFrame(
        [
            {
                "claim_id": c.claim_id,
                "level": c.level,
                "level_name": c.level_name or LEVEL_NAMES[c.level],
                "context": c.context,
                "domain": c.domain,
                "text": c.text,
            }
            for c in b.claims
        ]
    )
    templates = pd.DataFrame(
        [
            {
                "prompt_id": t.prompt_id,
                "prompt_num": t.prompt_num,
                "framing": t.framing,
                "explicitness": t.explicitness,
                "frame": t.frame,
                "fallacy": t.fallacy,
                "template": t.template,
            }
            for t in b.templates
        ]
    )
    fallacies = pd.DataFrame(
        [
            {"fallacy_id": f.fallacy_id, "name": f.name, "definition": f.definition}
            for f in b.fallacies
        ]
    )
    prompts = pd.DataFrame(
        [
            {
                "claim_id": c.claim_id,
                "prompt_id": t.prompt_id,
                "level": c.level,
                "level_name": c.level_name or LEVEL_NAMES[c.level],
                "context": c.context,
                "domain": c.domain,
                "framing": t.framing,
                "explicitness": t.explicitness,
                "fallacy": t.fallacy,
                "prompt": b.render(c.claim_id, t.prompt_id),
            }
            for c in b.claims
            for t in b.templates
        ]
    )
    return [
        Table("prompts", BENCHMARK_SPLIT, prompts, "one claim under one template, rendered"),
        Table("claims", BENCHMARK_SPLIT, claims, "one claim"),
        Table("templates", BENCHMARK_SPLIT, templates, "one prompt template"),
        Table("fallacies", BENCHMARK_SPLIT, fallacies, "one fallacy and its definition"),
    ]


def write_folder(out: Path, tables: Sequence[Table], b: Benchmark, what: str) -> list[Path]:
    """Each table as Parquet with its declared Arrow types, then the card (written last, so a
    folder with a card is a complete one)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if out.exists() and not out.is_dir():
        raise InteropError(f"--out {out} is a file; give a folder")
    _check_not_someone_elses(out / CARD)
    configs: list[Config] = []
    written: list[Path] = []
    arrow = {
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "string": pa.string(),
    }
    for i, t in enumerate(tables):
        features = [(str(c), feature_type(str(c), t.frame[c])) for c in t.frame.columns]
        schema = pa.schema([(name, arrow[dtype]) for name, dtype in features])
        table = pa.Table.from_pylist(records(t.frame), schema=schema)
        path = out / t.path
        write_whole(path, partial(pq.write_table, table))
        written.append(path)
        configs.append(
            Config(
                t.name,
                t.split,
                t.path,
                features,
                len(t.frame),
                path.stat().st_size,
                table.nbytes,
                t.row,
                i == 0,
            )
        )
    card = out / CARD
    write_text(card, card_text(configs, b, what))
    return [*written, card]


def _check_not_someone_elses(card: Path) -> None:
    """The card is written as ``README.md``: never over a README that is not one of ours (an
    ``--out .`` in a project folder would replace the project's own)."""
    if not card.exists():
        return
    try:
        ours = read_card(card) is not None
    except InteropError:
        ours = False
    if not ours:
        raise InteropError(
            f"--out {card.parent} holds a {CARD} that is not a DeflectBench dataset card; "
            "give an empty folder (or one written by export --format hf)"
        )


# -- import ------------------------------------------------------------------------------------


def is_hf_folder(path: Path) -> bool:
    """A folder with a DeflectBench dataset card (``README.md`` naming the benchmark)."""
    card = path / CARD
    if not (path.is_dir() and card.is_file()):
        return False
    if any((path / "data").glob("*/*.parquet")):
        return True  # laid out as ours: import says what is wrong with the card, if anything
    try:
        return read_card(card) is not None
    except InteropError:
        return True  # ours, but damaged: import says what is wrong


def import_any(
    store: Store, paths: Sequence[Path | str], benchmark: Benchmark | None = None
) -> ImportReport:
    """Hugging Face folders among ``paths`` imported as such, every other path as release
    files; one report for all."""
    b = benchmark or default_benchmark()
    folders = [Path(p) for p in paths if is_hf_folder(Path(p))]
    rest = [p for p in paths if Path(p) not in folders]
    report = import_paths(store, rest, b) if rest else ImportReport()
    for folder in folders:
        one = import_hf(store, folder, b)
        report.files.extend(one.files)
        report.problems.extend(one.problems)
    return report


#: The columns an import cannot do without, per table (the rest have defaults).
REQUIRED: dict[str, tuple[str, ...]] = {
    "generations": (
        "gen_id", "benchmark", "model", "claim_id", "prompt_id", "sample", "prompt",
        "response", "error", "input_tokens", "output_tokens", "created_at",
    ),
    "judgments": ("gen_id", "judge", "created_at"),
}  # fmt: skip


def _read(folder: Path, config: str) -> tuple[list[dict[str, Any]], int]:
    """Every row of one table, after checking it has the columns an import needs (so a
    damaged folder is refused before anything is stored), and how many rows its files'
    metadata declare."""
    import pyarrow.parquet as pq

    files = sorted((folder / "data" / config).glob("*.parquet"))
    if not files:
        raise InteropError(f"{folder}: no data/{config}/*.parquet; export it again")
    rows: list[dict[str, Any]] = []
    declared = 0
    for f in files:
        try:
            declared += pq.ParquetFile(f).metadata.num_rows
            table = pq.read_table(f)
        except (OSError, ValueError) as exc:
            raise InteropError(f"{f}: not a readable Parquet file ({exc})") from None
        missing = [c for c in REQUIRED[config] if c not in table.column_names]
        if missing and table.num_rows:  # an empty table (no judgments yet) may have no columns
            raise InteropError(
                f"{f}: no column {missing[0]!r}, so it is not a {config} table written by "
                "export --format hf; export it again"
            )
        rows.extend(table.to_pylist())
    return rows, declared


def check_results_folder(folder: Path, b: Benchmark) -> None:
    """Refuse, by its card, a folder that is not results of ``b``: called before a store is
    opened too, so a refused folder leaves the store untouched."""
    require_pyarrow("importing a Hugging Face folder", "the release's JSON Lines files")
    meta = read_card(folder / CARD)
    if meta is None:
        raise InteropError(f"{folder}: {CARD} is not a DeflectBench dataset card")
    if meta.get("benchmark_sha256") != b.sha256:
        raise InteropError(
            f"{folder}: its card names benchmark {meta.get('benchmark')} sha256 "
            f"{str(meta.get('benchmark_sha256'))[:12]}…, but the benchmark in use is {b.key} "
            f"sha256 {b.sha256[:12]}…; import it with the benchmark it was made from"
        )
    if meta.get("kind") != "results":
        raise InteropError(
            f"{folder}: this folder is the benchmark itself, not results: nothing to import "
            "(load it with datasets.load_dataset)"
        )


def import_hf(store: Store, folder: Path, benchmark: Benchmark | None = None) -> ImportReport:
    """Read a results folder written by ``export --format hf`` into ``store``.

    Refused when the card's benchmark sha256 differs from ``benchmark``'s (other claims or
    templates: the rows would be analysed against the wrong prompts) or when the folder holds
    the benchmark rather than results. Importing again adds nothing; a row whose key is stored
    with other content is reported and skipped, never replaces the stored one.
    """
    b = benchmark or default_benchmark()
    check_results_folder(folder, b)
    report = ImportReport()
    (gens, n_gens), (judgments, n_judgments) = (
        _read(folder, "generations"),
        _read(folder, "judgments"),
    )  # both, first
    ids = _import_generations(store, folder, gens, report, Catalog(b), n_gens)
    _import_judgments(store, folder, judgments, ids, report, n_judgments)
    return report


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise GateError(f"not JSON: {text[:40]!r}") from None


def _generation(r: dict[str, Any], catalog: Catalog) -> GenerationRecord:
    """One exported generation row as a record, through the gate: the folder's benchmark,
    known claim and template, the pack's prompt, values in range (never converted: a sample of
    1.9 is refused, not read as 1)."""
    if r["benchmark"] != catalog.key:
        raise GateError(
            f"benchmark {r['benchmark']!r}, not the card's {catalog.key}: import it with its pack"
        )
    claim_id, prompt_id = r["claim_id"], r["prompt_id"]
    try:
        expected = catalog.prompts(str(claim_id), str(prompt_id))
    except RecordError as exc:
        raise GateError(str(exc).removeprefix("field ")) from None
    if r["prompt"] not in expected:
        gate.prompt(r["prompt"], expected[0], catalog.key)  # names the problem
    condition = r.get("condition") or "default"
    rec = GenerationRecord(
        benchmark=r["benchmark"],
        model=r["model"],
        claim_id=claim_id,
        prompt_id=prompt_id,
        sample=gate.sample(r["sample"]),
        prompt=r["prompt"],
        response=r["response"],
        error=r["error"],
        input_tokens=gate.tokens(r["input_tokens"], "input_tokens"),
        output_tokens=gate.tokens(r["output_tokens"], "output_tokens"),
        latency_s=r.get("latency_s"),
        finish_reason=r.get("finish_reason"),
        params=_loads(r.get("params_json")) or {},
        run_id=r.get("run_id"),
        source=r.get("source") or "import",
        created_at=r["created_at"],
        extra=_loads(r.get("extra_json")),
        condition=condition,
        cost_usd=r.get("cost_usd"),
        served_model=r.get("served_model"),
    )
    return gate.generation(rec)


def _import_generations(
    store: Store,
    folder: Path,
    rows: list[dict[str, Any]],
    report: ImportReport,
    catalog: Catalog,
    declared: int,
) -> dict[int, int]:
    """Add the generations; return exported gen_id -> the store's gen_id (only for rows that
    were stored or found stored as they are, so a refused row's verdicts go nowhere)."""
    fr = FileReport(
        path=folder / "data" / "generations", kind="generations", read=len(rows), declared=declared
    )
    report.files.append(fr)
    keep: list[tuple[int, GenerationRecord]] = []
    duplicates: dict[tuple[str, str], gate.Duplicates] = {}
    exported = gate.Duplicates()
    for i, r in enumerate(rows, start=1):
        where = f"{fr.path}: row {i}"
        try:
            rec = _generation(r, catalog)
            exported_id = gate.whole_number(r["gen_id"], "gen_id", 0, 2**62)
            key = (rec.model, rec.claim_id, rec.prompt_id, rec.sample)
            exported.check(exported_id, (rec.condition, *key), f"row {i}", f"gen_id {exported_id}")
            cond = (rec.benchmark, rec.condition)
            if cond not in duplicates:
                duplicates[cond] = gate.Duplicates(
                    stored_contents(store.generation_contents(*cond))
                )
            duplicates[cond].check(
                key,
                (rec.response, rec.error),
                f"row {i}",
                f"{rec.model} {rec.claim_id} {rec.prompt_id} sample {rec.sample}",
            )
        except (KeyError, TypeError, ValueError) as exc:  # GateError is a ValueError
            fr.skipped += 1
            report.problems.append(f"{where}: {_why(exc)}")
            continue
        keep.append((exported_id, rec))  # a repeat's id maps to the row it repeats
    before = store.counts()["generations"]
    store.add_generations(rec for _, rec in keep)
    fr.imported = store.counts()["generations"] - before
    fr.already_present = len(keep) - fr.imported
    ids: dict[int, int] = {}
    contents = {
        cond: store.generation_contents(*cond)
        for cond in {(r.benchmark, r.condition) for _, r in keep}
    }
    for exported_id, rec in keep:
        row = contents[(rec.benchmark, rec.condition)][
            (rec.model, rec.claim_id, rec.prompt_id, rec.sample)
        ]
        ids[exported_id] = row[0]
    return ids


def _why(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"no column {exc.args[0]!r}"
    return str(exc)


def _import_judgments(
    store: Store,
    folder: Path,
    rows: list[dict[str, Any]],
    ids: dict[int, int],
    report: ImportReport,
    declared: int,
) -> None:
    fr = FileReport(
        path=folder / "data" / "judgments", kind="evals", read=len(rows), declared=declared
    )
    report.files.append(fr)
    recs = []
    duplicates = gate.Duplicates(stored_contents(store.judgment_contents()))
    for i, r in enumerate(rows, start=1):
        where = f"{fr.path}: row {i}"
        gen = ids.get(r["gen_id"]) if isinstance(r.get("gen_id"), int) else None
        if gen is None:
            fr.skipped += 1
            report.problems.append(f"{where}: its generation was not imported")
            continue
        try:
            rec = gate.judgment(_judgment(r, gen), FIELDS)
            duplicates.check(
                (gen, rec.judge), (rec.raw, rec.error), f"row {i}", f"{rec.judge} on gen_id {gen}"
            )
        except (KeyError, TypeError, ValueError) as exc:
            fr.skipped += 1
            report.problems.append(f"{where}: bad judgment ({_why(exc)})")
            continue
        recs.append(rec)
    before = store.counts()["judgments"]
    store.add_judgments(recs)
    fr.imported = store.counts()["judgments"] - before
    fr.already_present = len(recs) - fr.imported


def _judgment(r: dict[str, Any], gen: int) -> JudgmentRecord:
    """One exported judgment row as a record of the store's generation ``gen``."""
    values: dict[str, Any] = {f: r.get(f) for f in FIELDS}  # unchecked: the gate checks them
    return JudgmentRecord(
        gen_id=gen,
        judge=r["judge"],
        raw=r.get("raw"),
        scores=None if all(v is None for v in values.values()) else values,
        said=_loads(r.get("said_json")),
        reasoning=r.get("reasoning"),
        parse_error=_flag(r.get("parse_error"), "parse_error"),
        error=r.get("error"),
        consistency_flag=_flag(r.get("consistency_flag"), "consistency_flag"),
        input_tokens=gate.tokens(r.get("input_tokens"), "input_tokens"),
        output_tokens=gate.tokens(r.get("output_tokens"), "output_tokens"),
        latency_s=r.get("latency_s"),
        run_id=r.get("run_id"),
        source=r.get("source") or "import",
        created_at=r["created_at"],
        extra=_loads(r.get("extra_json")),
        cost_usd=r.get("cost_usd"),
    )


def _flag(value: Any, name: str) -> bool:
    """A 0/1 column (None: 0); any other value is refused, not read as true."""
    if value is None or value in (0, 1):
        return bool(value)
    raise GateError(f"{name} must be 0 or 1, got {value!r}")
