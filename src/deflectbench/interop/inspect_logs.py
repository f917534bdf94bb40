"""Inspect logs (``.eval`` or ``.json``, files or folders of them) into the store.

A log written by the ``deflectbench/deflectbench`` Inspect task holds, per sample and epoch,
the rendered prompt, the model's reply and, in its score's metadata, every judge's raw reply.
Each epoch becomes the generation it is (claim, template, sample = epoch) and each judge's
reply a judgment, read by the same parser and rules as a native judge
(:mod:`deflectbench.judging.verdicts`), so ``analyze`` and ``report`` treat a run made in
Inspect exactly as one made here.

Identity: the model is Inspect's name (``openai-api/<service>/<model>`` becomes
``<service>/<model>``), the condition a label derived from the log's generate config
(``inspect-temp1-maxdefault-noseed``), registered like any condition. Importing the same log
again adds nothing; a record whose key is already stored with other content (another Inspect
run of the same settings) is reported and skipped, never replacing the stored one. Each log is
written in one transaction. ``inspect_ai`` is imported only here, lazily, so the rest of
DeflectBench runs without the ``inspect`` extra.

Logs are read only through Inspect's public reading API (``inspect_ai.log.read_eval_log`` for
the header, ``read_eval_log_samples`` streamed): the ``.eval`` format is not a frozen spec, so
nothing here opens its entries; :func:`check_archive` reads only the sizes the ZIP container
declares. Tested with inspect-ai 0.3.285 (the ``inspect`` extra's floor; docs/inspect.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deflectbench import gate
from deflectbench.benchmark import Benchmark
from deflectbench.benchmark.single_turn import resolve_pack
from deflectbench.conditions import Settings
from deflectbench.errors import ConfigError
from deflectbench.gate import GateError
from deflectbench.interop.importer import FileReport, ImportReport
from deflectbench.interop.release import InteropError
from deflectbench.judging import verdicts
from deflectbench.records import GenerationRecord, JudgmentRecord, now_iso
from deflectbench.secrets import scrub
from deflectbench.store import Store
from deflectbench.vocab import FIELDS

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

#: The task's registered name, as a log names it.
TASK = "deflectbench/deflectbench"
#: ``source`` of the rows an Inspect log brings.
SOURCE = "inspect"
LOG_SUFFIXES = (".eval", ".json")


def _inspect_log_api() -> Any:
    try:
        import inspect_ai.log as api
    except ImportError:
        raise InteropError(
            "reading Inspect logs needs the inspect extra: pip install 'deflectbench[inspect]'"
        ) from None
    return api


# -- which paths are Inspect logs -------------------------------------------------------------


def looks_like_log(path: Path) -> bool:
    """An ``.eval`` file, or a ``.json`` file that starts like an Inspect log (a release file
    is ``.jsonl``, never ``.json``)."""
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json":
        return False
    try:
        with path.open("rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"version"' in head and b'"status"' in head


def split_paths(paths: Sequence[Path | str]) -> tuple[list[Path], list[Path]]:
    """(Inspect logs, other paths): a folder goes to both lists when it holds both kinds, and
    to the release list when it holds no Inspect log (so its own error, if any, is kept)."""
    logs: list[Path] = []
    rest: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = [
                f
                for f in sorted(p.rglob("*"))
                if f.is_file() and not f.name.startswith(".") and looks_like_log(f)
            ]
            logs.extend(found)
            has_release = any(
                f.name.endswith((".jsonl", ".jsonl.gz")) for f in p.rglob("*") if f.is_file()
            )
            if has_release or not found:
                rest.append(p)
        elif p.is_file() and looks_like_log(p):
            logs.append(p)
        else:
            rest.append(p)
    unique = list(dict.fromkeys(f.resolve() for f in logs))
    return unique, rest


#: The most one entry of an ``.eval`` archive may expand to: a sample with its events is KBs
#: to a few MB; a small file that expands to hundreds of MB (of whitespace, say) is a bomb that
#: would keep the JSON reader busy for minutes.
MAX_ENTRY_BYTES = 64 * 1024**2
#: The most a whole archive may expand to, or a ``.json`` log may be.
MAX_LOG_BYTES = 8 * 1024**3


def check_archive(path: Path) -> None:
    """Refuse, before Inspect reads it, a log whose entries expand past the limits (by the
    sizes the archive declares; the reader stops at a declared size)."""
    import zipfile

    if not zipfile.is_zipfile(path):
        if path.stat().st_size > MAX_LOG_BYTES:
            raise InteropError(f"{path}: over {MAX_LOG_BYTES:,} bytes; not a DeflectBench log")
        return
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise InteropError(f"{path}: not a readable Inspect log ({exc})") from None
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > MAX_ENTRY_BYTES:
            raise InteropError(
                f"{path}: entry {info.filename!r} expands to {info.file_size:,} bytes, over the "
                f"limit of {MAX_ENTRY_BYTES:,}; not a DeflectBench log"
            )
    if total > MAX_LOG_BYTES:
        raise InteropError(f"{path}: expands to {total:,} bytes, over {MAX_LOG_BYTES:,}")


# -- one log into records ---------------------------------------------------------------------


@dataclass
class LogRecords:
    """What one log holds, decoded: its condition and, per epoch, the generation and the
    judges' verdicts (keyed by the generation's cell)."""

    model: str
    condition: str
    settings: Settings
    benchmark: Benchmark
    generations: list[GenerationRecord]
    #: (claim_id, prompt_id, sample) -> judgments (gen_id 0: set once the generation is stored)
    judgments: dict[tuple[str, str, int], list[JudgmentRecord]]
    problems: list[str]
    samples: int
    #: Sample epochs left out (each with its problem).
    skipped: int = 0
    #: Sample epochs that repeat an earlier one word for word (counted once).
    repeats: int = 0
    #: How many sample epochs the log's header lists, when it does.
    declared: int | None = None
    #: What to know that skipped nothing (the run stopped early: what it holds is imported).
    notes: list[str] = field(default_factory=list)


def condition_of(log: EvalLog, benchmark: Benchmark) -> tuple[Settings, str]:
    """The settings the subject was sampled under, and their label. The task's config merged
    over the model's (the task's values win, as when Inspect sends the request)."""
    config = log.eval.model_generate_config.merge(log.plan.config)
    temperature = 1.0 if config.temperature is None else float(config.temperature)
    settings = Settings(
        temperature=temperature,
        max_tokens=int(config.max_tokens or 0),
        seed=config.seed,
        benchmark_sha256=benchmark.sha256,
        send_seed=config.seed is not None,
        extra={"source": SOURCE},
    )
    cap = f"max{config.max_tokens}" if config.max_tokens else "maxdefault"
    seed = "noseed" if config.seed is None else f"seed{config.seed}"
    return settings, f"inspect-temp{temperature:g}-{cap}-{seed}"


def _served(sample: EvalSample) -> str | None:
    """The model id the reply names (``output.model``), when it names one a store keeps."""
    return gate.served_id(getattr(sample.output, "model", None))


def _prompt(sample: EvalSample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    users = [m for m in sample.input if m.role == "user"]
    return users[-1].text if users else ""


def _judgments(
    score: Any, benchmark: Benchmark, created_at: str, where: str, problems: list[str]
) -> list[JudgmentRecord]:
    """Each judge's reply in a score's metadata, read as a native judge's would be."""
    out: list[JudgmentRecord] = []
    seen: set[str] = set()
    entries = (score.metadata or {}).get("judges") or [] if score is not None else []
    for entry in entries:
        name = verdicts.store_model_name(str(entry.get("model") or entry.get("judge")))
        if name in seen:
            problems.append(f"{where}: two judges answered as {name!r}; kept the first")
            continue
        seen.add(name)
        extra = {"inspect_judge": entry.get("judge")}
        parsed = verdicts.parse_judge(benchmark.rubric, entry)
        if parsed is None:
            error = scrub(str(entry.get("error") or "no reply"))
            out.append(
                JudgmentRecord(
                    0,
                    name,
                    None,
                    None,
                    error=error,
                    source=SOURCE,
                    created_at=created_at,
                    extra=extra,
                )
            )
            continue
        try:
            record = JudgmentRecord(
                gen_id=0,
                judge=name,
                raw=str(entry["raw"]),
                scores=parsed.scores,
                said=parsed.said,
                reasoning=parsed.reasoning if not parsed.parse_error else parsed.problem,
                parse_error=parsed.parse_error,
                consistency_flag=parsed.consistency_flag,
                input_tokens=gate.tokens(entry.get("input_tokens"), "input_tokens"),
                output_tokens=gate.tokens(entry.get("output_tokens"), "output_tokens"),
                latency_s=entry.get("latency_s"),
                source=SOURCE,
                created_at=created_at,
                extra=extra,
            )
            out.append(gate.judgment(record, FIELDS))
        except GateError as exc:
            problems.append(f"{where}: judge {name}: {exc}; left out")
    return out


def decode_log(log: EvalLog, path: Path, samples: Iterable[EvalSample] | None = None) -> LogRecords:
    """Every epoch of every sample of one task log, checked against the pack it names.
    ``samples``: the log's samples when read apart from its header (streamed, so a full-size
    log of 24,000 epochs is never held with its events); default ``log.samples``."""
    if log.eval.task not in (TASK, TASK.split("/")[-1]):
        raise InteropError(
            f"{path}: an Inspect log of task {log.eval.task!r}, not {TASK}; only "
            "DeflectBench's task can be imported"
        )
    try:
        benchmark = resolve_pack((log.eval.task_args or {}).get("pack"))
    except (ConfigError, ValueError) as exc:
        raise InteropError(f"{path}: the log's pack: {exc}") from None
    made_with = (log.eval.metadata or {}).get("benchmark_sha256")
    if made_with and made_with != benchmark.sha256:
        raise InteropError(
            f"{path}: made with another content of {benchmark.key} (sha256 {made_with[:12]}, "
            f"this installation has {benchmark.sha256[:12]}); import it where that pack is installed"
        )
    settings, label = condition_of(log, benchmark)
    model = verdicts.store_model_name(log.eval.model)
    params = settings.as_json() | {"inspect_model": log.eval.model}
    problems: list[str] = []
    gens: list[GenerationRecord] = []
    skipped = 0
    judged: dict[tuple[str, str, int], list[JudgmentRecord]] = {}
    read = 0
    repeats = 0
    duplicates = gate.Duplicates()
    for s in log.samples or [] if samples is None else samples:
        read += 1
        where = f"{path}: sample {s.id} epoch {s.epoch}"
        md = s.metadata or {}
        claim_id, prompt_id = md.get("claim_id"), md.get("prompt_id")
        try:
            expected = benchmark.render(str(claim_id), str(prompt_id))
        except KeyError:
            problems.append(
                f"{where}: claim {claim_id!r} / template {prompt_id!r} not in {benchmark.key}"
            )
            skipped += 1
            continue
        prompt = _prompt(s)
        if prompt != expected:
            problems.append(f"{where}: its prompt is not {benchmark.key}'s rendering; skipped")
            skipped += 1
            continue
        created = str(s.completed_at or s.started_at or log.eval.created or now_iso())
        common = GenerationRecord(  # what a reply and a failure share; each fills in the rest
            benchmark=benchmark.key,
            model=model,
            claim_id=str(claim_id),
            prompt_id=str(prompt_id),
            sample=int(s.epoch),
            prompt=prompt,
            response=None,
            params=params,
            source=SOURCE,
            created_at=created,
            condition=label,
            extra={
                "inspect": {
                    "eval_id": log.eval.eval_id,
                    "run_id": log.eval.run_id,
                    "sample_id": s.id,
                    "epoch": s.epoch,
                    "uuid": s.uuid,
                }
            },
        )
        score = (s.scores or {}).get(verdicts.SCORER)
        try:
            if s.error is not None:
                gen = replace(common, error=scrub(s.error.message))
            else:
                text = s.output.completion
                reason = (score.metadata or {}).get("finish_reason") if score is not None else None
                if reason is None:
                    reason = verdicts.finish_reason(s.output.stop_reason, text)
                usage = s.output.usage
                gen = replace(
                    common,
                    response=text,
                    finish_reason=reason,
                    input_tokens=gate.tokens(usage.input_tokens if usage else 0, "input_tokens"),
                    output_tokens=gate.tokens(usage.output_tokens if usage else 0, "output_tokens"),
                    latency_s=s.output.time,
                    served_model=_served(s),
                )
            gate.generation(gen)
            seen = duplicates.check(
                (gen.claim_id, gen.prompt_id, gen.sample),
                (gen.response, gen.error),
                f"sample {s.id} epoch {s.epoch}",
                f"{gen.claim_id}:{gen.prompt_id} epoch {gen.sample}",
            )
        except GateError as exc:
            problems.append(f"{where}: {exc}")
            skipped += 1
            continue
        if seen == gate.REPEAT:
            repeats += 1  # the same epoch twice, word for word: counted once
            continue
        gens.append(gen)
        if s.error is None:
            judged[(gen.claim_id, gen.prompt_id, gen.sample)] = _judgments(
                score, benchmark, created, where, problems
            )
    notes = []
    if log.status != "success":
        notes.append(
            f"{path}: the Inspect run ended with status {log.status!r}: its {read} sample "
            "epochs are imported (re-run or retry the log in Inspect for the rest)"
        )
    declared = _declared(log)
    if declared is not None and declared != read:
        problems.append(
            f"{path}: the log lists {declared} sample epochs but holds {read}: "
            f"{abs(declared - read)} {'missing' if declared > read else 'more than listed'}"
        )
    return LogRecords(
        model,
        label,
        settings,
        benchmark,
        gens,
        judged,
        problems,
        read,
        skipped,
        repeats,
        declared,
        notes,
    )


def _declared(log: EvalLog) -> int | None:
    """How many sample epochs the log's header says it holds (a finished log's results), when
    it says: what an import's counts must add up to."""
    results = log.results
    if results is None or log.status != "success":
        return None
    count = results.logged_samples if results.logged_samples is not None else results.total_samples
    return count if isinstance(count, int) and count > 0 else None


# -- into the store ---------------------------------------------------------------------------


def _store_log(store: Store, path: Path, recs: LogRecords, report: ImportReport) -> None:
    """One transaction: the condition, the generations, then their judgments."""
    gen_report = FileReport(
        path=path, kind="generations", read=recs.samples, declared=recs.declared
    )
    judge_report = FileReport(path=path, kind="evals")
    report.files += [gen_report, judge_report]
    report.problems += recs.problems
    report.notes += recs.notes
    gen_report.skipped = recs.skipped
    key = recs.benchmark.key
    with store.transaction():
        store.register_condition(recs.model, recs.settings, recs.condition)
        stored = store.generation_contents(key, recs.condition)
        kept = set()
        before = store.counts()
        for g in recs.generations:
            cell = (g.model, g.claim_id, g.prompt_id, g.sample)
            old = stored.get(cell)
            if old is not None and old[2] is None and g.error is not None:
                kept.add(cell[1:])  # a failed attempt never replaces a stored reply
                continue
            if old is not None and old[2] is None and (old[1], old[2]) != (g.response, g.error):
                gen_report.skipped += 1
                report.problems.append(
                    f"{path}: sample {g.claim_id}:{g.prompt_id} epoch {g.sample}: already stored "
                    f"under condition {recs.condition!r} with another reply (another run of the "
                    "same settings); kept the stored one"
                )
                continue
            store.add_generation(g)
            kept.add(cell[1:])
        ids = store.generation_ids(key, recs.condition)
        judged = store.judgment_contents()
        for epoch, judgments in recs.judgments.items():
            gen_id = ids.get((recs.model, *epoch))
            if gen_id is None or epoch not in kept:
                continue
            for j in judgments:
                judge_report.read += 1
                old = judged.get((gen_id, j.judge))
                if old is not None and old[2] is None and j.error is not None:
                    continue  # a failed request never replaces a stored verdict
                if old is not None and old[2] is None and (old[1], old[2]) != (j.raw, j.error):
                    judge_report.skipped += 1
                    report.problems.append(
                        f"{path}: {j.judge} on {epoch[0]}:{epoch[1]} epoch {epoch[2]}: already "
                        "stored with another reply; kept the stored one"
                    )
                    continue
                store.add_judgment(_with_gen_id(j, gen_id))
        after = store.counts()
    gen_report.imported = after["generations"] - before["generations"]
    gen_report.already_present = len(kept) - gen_report.imported + recs.repeats
    judge_report.imported = after["judgments"] - before["judgments"]
    judge_report.already_present = judge_report.read - judge_report.skipped - judge_report.imported


def _with_gen_id(j: JudgmentRecord, gen_id: int) -> JudgmentRecord:
    from dataclasses import replace

    return replace(j, gen_id=gen_id)


def import_logs(
    store: Store, paths: Iterable[Path | str], report: ImportReport | None = None
) -> ImportReport:
    """Import Inspect logs (files; see :func:`split_paths` for folders) into ``store``."""
    api = _inspect_log_api()
    report = report if report is not None else ImportReport()
    for path in map(Path, paths):
        try:
            check_archive(path)
            header = api.read_eval_log(str(path), header_only=True)
            samples = api.read_eval_log_samples(
                str(path),
                all_samples_required=False,
                resolve_attachments=True,
                exclude_fields={"events"},
            )
            recs = decode_log(header, path, samples)
        except InteropError as exc:
            report.problems.append(str(exc))
            continue
        except Exception as exc:  # a damaged or foreign file: its own line, never the batch
            report.problems.append(f"{path}: not a readable Inspect log ({type(exc).__name__})")
            continue
        _store_log(store, path, recs, report)
    return report
