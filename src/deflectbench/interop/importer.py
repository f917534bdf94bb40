"""The public release's file format (JSON Lines) in and out, and flat CSV / JSONL / Parquet tables.

Import reads ``generations_*.jsonl`` and ``evals_*.jsonl`` (files or folders, any layout) into the
store, so the paper's analysis runs on the release exactly as on our own runs. Export writes the
same format back: an imported release comes out record for record, key order and bytes included,
and our own runs come out in the same schema, so tools written for the release read them too.

How a faithful round trip is kept without a column per release field: every field that can be
derived (from the benchmark, or from the store's columns) is derived on export; at import the
record is compared with what export would derive, and only the differences (plus a few ids the
spec asks to keep verbatim) go to the row's ``extra`` dict. Meta keys there start with ``_``:
``_keys`` (the record's own key order, when not the spec's), ``_json`` (values holding objects,
kept as JSON text because the store sorts object keys) and ``_style`` (the line's JSON style
when it is not ``json.dumps(record, ensure_ascii=False)``).

Robustness policy: a garbled, truncated or non-UTF-8 line, or a record with a missing or
inconsistent field, is reported as ``path:line: message`` and skipped; every good record of a
file is written in one transaction, so a file is either imported (minus its reported lines) or,
if the process dies, not at all: nothing is ever half-written.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from deflectbench.benchmark import Benchmark, Claim, Template, default_benchmark
from deflectbench.store import GenerationRecord, JudgmentRecord, Store, now_iso
from deflectbench.vocab import FALLACY_FIELDS, FALLACY_NAMES, FIELDS, apply_rules

__all__ = [
    "EVAL_KEYS",
    "FALLACY_NAMES",
    "FORMATS",
    "GEN_KEYS",
    "FileReport",
    "ImportReport",
    "InteropError",
    "eval_id",
    "export",
    "gen_id",
    "import_paths",
    "iter_release_records",
    "model_slug",
]

#: Generation record fields, in the release's key order.
GEN_KEYS: tuple[str, ...] = (
    "gen_id",
    "claim_id",
    "claim_text",
    "controversy_level",
    "context",
    "domain",
    "fallacy",
    "explicitness",
    "frame",
    "prompt_num",
    "prompt_id",
    "prompt_text",
    "model",
    "run",
    "response",
    "input_tokens",
    "output_tokens",
    "is_error",
    "timestamp",
)
#: Judge record fields, in the release's key order.
EVAL_KEYS: tuple[str, ...] = (
    "eval_id",
    "gen_id",
    "judge_model",
    "claim_id",
    "claim_text",
    "controversy_level",
    "context",
    "domain",
    "explicitness",
    "frame",
    "prompt_num",
    "prompt_id",
    "run",
    "fallacy_requested",
    "gen_model",
    "reasoning",
    "parse_error",
    "raw_judge_response",
    *FIELDS,
    "detected_fallacies",
    "consistency_flag",
    "timestamp",
)
#: The names ``detected_fallacies`` uses for the three fallacy fields.
#: Kept in ``extra`` even when derivable: the spec asks for these ids and flags verbatim.
_GEN_ALWAYS = frozenset({"gen_id", "timestamp"})
_EVAL_ALWAYS = frozenset(
    {"eval_id", "gen_id", "detected_fallacies", "consistency_flag", "timestamp"}
)
_ERROR_PREFIX = "ERROR: "
_SCORE_VALUES = frozenset({-1, 0, 1})

Kind = Literal["generations", "evals"]
Format = Literal["release", "jsonl", "csv", "parquet"]
FORMATS: tuple[str, ...] = ("release", "jsonl", "csv", "parquet")


class InteropError(ValueError):
    """A path or format the user can fix; the message is one line."""


@cache
def model_slug(model: str) -> str:
    """The release's file-name slug: ``/``, ``-`` and ``.`` become ``_``, cut to 30 characters."""
    return model.replace("/", "_").replace("-", "_").replace(".", "_")[:30]


def gen_id(claim_id: str, prompt_id: str, model: str, run: int) -> str:
    """A generation's id in the release: ``<claim_id>__<prompt_id>__<model slug>__r<run>``."""
    return f"{claim_id}__{prompt_id}__{model_slug(model)}__r{run}"


def eval_id(generation_id: str, judge: str) -> str:
    """A judge record's id in the release: ``<gen_id>__judge_<judge slug>``."""
    return f"{generation_id}__judge_{model_slug(judge)}"


# -- reports ------------------------------------------------------------------------------------


@dataclass
class FileReport:
    """What happened to one file: lines read, records new to the store, records it already
    held, lines skipped (each skipped line has a problem in the report)."""

    path: Path
    kind: str
    read: int = 0
    imported: int = 0
    already_present: int = 0
    skipped: int = 0


@dataclass
class ImportReport:
    files: list[FileReport] = field(default_factory=list)
    #: ``path:line: message`` for every line or file skipped.
    problems: list[str] = field(default_factory=list)

    def total(self, kind: str, what: str) -> int:
        """Sum of one count (``read``, ``imported``, ...) over the files of one kind."""
        return sum(getattr(f, what) for f in self.files if f.kind == kind)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        parts = []
        for kind, noun in (("generations", "generations"), ("evals", "judge records")):
            if any(f.kind == kind for f in self.files):
                parts.append(
                    f"{noun}: {self.total(kind, 'imported')} new, "
                    f"{self.total(kind, 'already_present')} already present, "
                    f"{self.total(kind, 'skipped')} skipped"
                )
        return "; ".join(parts) or "nothing imported"


class _Bad(Exception):
    """One record's problem (message without location)."""


# -- reading files ------------------------------------------------------------------------------


def _collect(paths: Sequence[Path | str]) -> list[Path]:
    """Files to read: given files as they are, folders searched for ``*.jsonl[.gz]``."""
    out: list[Path] = []
    seen: set[Path] = set()
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f
                for f in p.rglob("*")
                if f.is_file()
                and f.name.endswith((".jsonl", ".jsonl.gz"))
                and not f.name.startswith(".")
            )
            if not found:
                raise InteropError(f"{p}: no .jsonl files in this folder")
        elif p.is_file():
            found = [p]
        else:
            raise InteropError(f"{p}: no such file or folder")
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def _lines(path: Path) -> list[tuple[int, str | None, str | None]]:
    """``(line number, text, problem)`` for each non-blank line; text is None when the line is
    not UTF-8. A bad byte costs its own line only."""
    try:
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise InteropError(
            f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out: list[tuple[int, str | None, str | None]] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for i, raw in enumerate(data.split(b"\n"), start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.append(
                    (i, None, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
                )
                continue
            if line.strip():
                out.append((i, line.rstrip("\r"), None))
        return out
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            out.append((i, line.rstrip("\r"), None))
    return out


def _decode(line: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _Bad(
            f"not valid JSON, garbled or truncated line ({exc.msg}"
            f"{' ' if exc.msg.endswith(' at') else ' at '}column {exc.colno})"
        ) from None
    if not isinstance(obj, dict):
        raise _Bad(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _kind_of(path: Path, lines: list[tuple[int, str | None, str | None]] | None) -> Kind | None:
    """By name prefix; for an unusual name, by the first record's keys."""
    name = path.name.lower()
    if name.startswith("generations"):
        return "generations"
    if name.startswith("evals"):
        return "evals"
    for _, line, _problem in lines or ():
        if line is None:
            continue
        try:
            obj = _decode(line)
        except _Bad:
            continue
        if "judge_model" in obj or "eval_id" in obj:
            return "evals"
        if "response" in obj and "model" in obj:
            return "generations"
        return None
    return None


def _line_style(line: str, obj: Mapping[str, Any]) -> str | None:
    """How the line was written, when not ``json.dumps(obj, ensure_ascii=False)``."""
    style = []
    if line.isascii() and "\\u" in line and not json.dumps(obj, ensure_ascii=False).isascii():
        style.append("ascii")
    end = line.find('":', 1)
    if end != -1 and line[end + 2 : end + 3] != " ":
        style.append("compact")
    return "+".join(style) or None


def _dumps(record: Mapping[str, Any], style: str | None) -> str:
    if style is None:
        return json.dumps(record, ensure_ascii=False)
    return json.dumps(
        record,
        ensure_ascii="ascii" in style,
        separators=(",", ":") if "compact" in style else None,
    )


# -- field checks -------------------------------------------------------------------------------


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


_MISSING: Any = object()


def _get(
    obj: Mapping[str, Any], key: str, kind: type, *, required: bool = True, default: Any = None
) -> Any:
    """``obj[key]`` if it has the JSON type ``kind`` (``int`` excludes booleans). Hot path:
    an exact type test, the messages only on failure."""
    v = obj.get(key, _MISSING)
    if type(v) is kind:
        return v
    if v is _MISSING:
        if required:
            raise _Bad(f"missing field {key!r}")
        return default
    raise _Bad(
        f"field {key!r} must be {'an integer' if kind is int else kind.__name__}, got {_short(v)}"
    )


def _lookup(b: Benchmark, claim_id: str, prompt_id: str) -> tuple[Claim, Template]:
    try:
        claim = b.claim(claim_id)
    except KeyError:
        raise _Bad(f"field 'claim_id': unknown claim {claim_id!r} (not in {b.key})") from None
    try:
        template = b.template(prompt_id)
    except KeyError:
        raise _Bad(f"field 'prompt_id': unknown template {prompt_id!r} (not in {b.key})") from None
    return claim, template


def _agree(
    obj: Mapping[str, Any], claim: Claim, template: Template, b: Benchmark, fallacy_key: str
) -> None:
    """The copied claim/template attributes must be the benchmark's: a mismatch means the file
    belongs to another benchmark version (or was edited), and its records would be misread."""
    for key, expected in (
        ("controversy_level", claim.level),
        ("context", claim.context),
        ("domain", claim.domain),
        (fallacy_key, template.fallacy),
        ("explicitness", template.explicitness),
        ("frame", template.frame),
        ("prompt_num", template.prompt_num),
    ):
        v = obj.get(key, expected)
        if v != expected or type(v) is not type(expected):
            owner = (
                f"claim {claim.claim_id}"
                if key in _CLAIM_KEYS
                else f"template {template.prompt_id}"
            )
            raise _Bad(f"field {key!r} is {_short(v)} but {owner} has {expected!r} in {b.key}")


_CLAIM_KEYS = frozenset({"controversy_level", "context", "domain"})


def _has_object(v: Any) -> bool:
    """Whether a JSON value holds an object anywhere (the store would sort its keys)."""
    t = type(v)
    if t is dict:
        return True
    if t is list:
        for x in v:
            if type(x) in (dict, list) and _has_object(x):
                return True
    return False


def _extra_for(
    obj: Mapping[str, Any], derived: Mapping[str, Any], always: frozenset[str], style: str | None
) -> dict[str, Any]:
    """What export cannot derive: differing or unknown fields, the key order if not the
    spec's, the line style; plus the ``always`` ids."""
    extra: dict[str, Any] = {}
    as_json: dict[str, str] = {}
    if list(obj.items()) == list(derived.items()) and list(map(type, obj.values())) == list(
        map(type, derived.values())
    ):
        # the common case, compared at C speed: only the ids the spec keeps verbatim
        for k in always:
            v = obj[k]
            if _has_object(v):
                as_json[k] = json.dumps(v, ensure_ascii=False)
            else:
                extra[k] = v
        if as_json:
            extra["_json"] = as_json
        if style:
            extra["_style"] = style
        return extra
    for k, v in obj.items():
        dv = derived.get(k, _MISSING)
        if k in always or dv is _MISSING or dv != v or type(dv) is not type(v):
            if k[:1] == "_" or _has_object(v):
                as_json[k] = json.dumps(v, ensure_ascii=False)
            else:
                extra[k] = v
    if as_json:
        extra["_json"] = as_json
    if tuple(obj) != tuple(derived):
        extra["_keys"] = list(obj)
    if style:
        extra["_style"] = style
    return extra


def _overlay(derived: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Apply an ``extra`` written by :func:`_extra_for` to a derived record. Keys in ``extra``
    that are neither release fields nor listed in ``_keys`` are someone else's: ignored."""
    if not extra:
        return derived
    keys = extra.get("_keys")
    allowed = set(derived) | set(keys or ())
    values = dict(derived)
    for k, v in extra.items():
        if k in allowed:
            values[k] = v
    for k, s in (extra.get("_json") or {}).items():
        values[k] = json.loads(s)
    if keys is None:
        return values
    return {k: values[k] for k in keys if k in values}


# -- records: derive (export) and parse (import) ------------------------------------------------


def _derive_generation(
    b: Benchmark,
    claim: Claim,
    template: Template,
    *,
    model: str,
    sample: int,
    prompt: str,
    response: str | None,
    error: str | None,
    input_tokens: int,
    output_tokens: int,
    created_at: str,
) -> dict[str, Any]:
    return {
        "gen_id": gen_id(claim.claim_id, template.prompt_id, model, sample),
        "claim_id": claim.claim_id,
        "claim_text": claim.text,
        "controversy_level": claim.level,
        "context": claim.context,
        "domain": claim.domain,
        "fallacy": template.fallacy,
        "explicitness": template.explicitness,
        "frame": template.frame,
        "prompt_num": template.prompt_num,
        "prompt_id": template.prompt_id,
        "prompt_text": prompt,
        "model": model,
        "run": sample,
        "response": _ERROR_PREFIX + error if error is not None else response,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "is_error": int(error is not None),
        "timestamp": created_at,
    }


def _derive_eval(
    b: Benchmark,
    claim: Claim,
    template: Template,
    *,
    generation_id: str,
    gen_model: str,
    sample: int,
    judge: str,
    reasoning: str | None,
    parse_error: bool,
    raw: str | None,
    said: Mapping[str, Any] | None,
    consistency_flag: int,
    created_at: str,
) -> dict[str, Any]:
    scores = (
        {f: -1 for f in FIELDS}
        if parse_error or said is None
        else {f: said.get(f, -1) for f in FIELDS}
    )
    return {
        "eval_id": eval_id(generation_id, judge),
        "gen_id": generation_id,
        "judge_model": judge,
        "claim_id": claim.claim_id,
        "claim_text": claim.text,
        "controversy_level": claim.level,
        "context": claim.context,
        "domain": claim.domain,
        "explicitness": template.explicitness,
        "frame": template.frame,
        "prompt_num": template.prompt_num,
        "prompt_id": template.prompt_id,
        "run": sample,
        "fallacy_requested": template.fallacy,
        "gen_model": gen_model,
        "reasoning": reasoning,
        "parse_error": int(parse_error),
        "raw_judge_response": raw,
        **scores,
        "detected_fallacies": [FALLACY_NAMES[f] for f in FALLACY_FIELDS if scores[f] == 1],
        "consistency_flag": consistency_flag,
        "timestamp": created_at,
    }


def _parse_generation(obj: dict[str, Any], line: str, b: Benchmark) -> GenerationRecord:
    model = _get(obj, "model", str)
    claim_id = _get(obj, "claim_id", str)
    prompt_id = _get(obj, "prompt_id", str)
    sample = _get(obj, "run", int)
    text = _get(obj, "response", str)
    claim, template = _lookup(b, claim_id, prompt_id)
    _agree(obj, claim, template, b, "fallacy")
    for key in ("gen_id", "claim_text", "timestamp"):
        _get(obj, key, str, required=False)
    prompt = _get(obj, "prompt_text", str, required=False)
    if prompt is None:
        prompt = b.render(claim_id, prompt_id)
    input_tokens = _get(obj, "input_tokens", int, required=False, default=0)
    output_tokens = _get(obj, "output_tokens", int, required=False, default=0)
    is_error = _get(obj, "is_error", int, required=False, default=0)
    created_at = obj.get("timestamp") or now_iso()
    response: str | None = text
    error: str | None = None
    if is_error == 1 or text.startswith("ERROR:"):
        response = None
        error = text[len(_ERROR_PREFIX) :] if text.startswith(_ERROR_PREFIX) else text
    derived = _derive_generation(
        b,
        claim,
        template,
        model=model,
        sample=sample,
        prompt=prompt,
        response=response,
        error=error,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        created_at=created_at,
    )
    return GenerationRecord(
        benchmark=b.key,
        model=model,
        claim_id=claim_id,
        prompt_id=prompt_id,
        sample=sample,
        prompt=prompt,
        response=response,
        error=error,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        source="import",
        created_at=created_at,
        extra=_extra_for(obj, derived, _GEN_ALWAYS, _line_style(line, obj)),
    )


def _parse_eval(
    obj: dict[str, Any], line: str, b: Benchmark, ids: Mapping[tuple[str, str, str, int], int]
) -> JudgmentRecord:
    judge = _get(obj, "judge_model", str)
    gen_model = _get(obj, "gen_model", str)
    claim_id = _get(obj, "claim_id", str)
    prompt_id = _get(obj, "prompt_id", str)
    sample = _get(obj, "run", int)
    claim, template = _lookup(b, claim_id, prompt_id)
    _agree(obj, claim, template, b, "fallacy_requested")
    parse_error = _get(obj, "parse_error", int, required=False, default=0) == 1
    said: dict[str, int] | None = None
    if not parse_error:
        said = {f: obj.get(f) for f in FIELDS}
        for f, v in said.items():
            if type(v) is not int or v not in _SCORE_VALUES:
                _get(obj, f, int)  # names a missing field or a wrong type
                raise _Bad(f"field {f!r} must be 1, 0 or -1, got {_short(v)}")
    for key in ("eval_id", "gen_id", "claim_text", "timestamp"):
        _get(obj, key, str, required=False)
    raw = obj.get("raw_judge_response")
    reasoning = obj.get("reasoning")
    for key, v in (("raw_judge_response", raw), ("reasoning", reasoning)):
        if v is not None and not isinstance(v, str):
            raise _Bad(f"field {key!r} must be a string or null, got {_short(v)}")
    flag = obj.get("consistency_flag", 0)
    gid = ids.get((gen_model, claim_id, prompt_id, sample))
    if gid is None:
        raise _Bad(
            f"unknown generation: no {gen_model} / {claim_id} / {prompt_id} / run {sample} in the "
            "store (import its generations file with it)"
        )
    created_at = obj.get("timestamp") or now_iso()
    derived = _derive_eval(
        b,
        claim,
        template,
        generation_id=gen_id(claim_id, prompt_id, gen_model, sample),
        gen_model=gen_model,
        sample=sample,
        judge=judge,
        reasoning=reasoning,
        parse_error=parse_error,
        raw=raw,
        said=said,
        consistency_flag=flag,
        created_at=created_at,
    )
    return JudgmentRecord(
        gen_id=gid,
        judge=judge,
        raw=raw,
        scores=None if said is None else _rules(said),
        said=said,
        reasoning=reasoning,
        parse_error=parse_error,
        consistency_flag=flag == 1,
        source="import",
        created_at=created_at,
        extra=_extra_for(obj, derived, _EVAL_ALWAYS, _line_style(line, obj)),
    )


_RULED: dict[tuple[int, ...], dict[str, int]] = {}


def _rules(said: Mapping[str, int]) -> dict[str, int]:
    """``apply_rules``, memoised: there are only 3**8 possible verdicts."""
    key = tuple(said.values())
    ruled = _RULED.get(key)
    if ruled is None:
        ruled = _RULED[key] = apply_rules(said)
    return dict(ruled)


# -- import -------------------------------------------------------------------------------------


def import_paths(
    store: Store, paths: Sequence[Path | str], benchmark: Benchmark | None = None
) -> ImportReport:
    """Import release files (or folders of them, searched recursively) into ``store``.

    All generation files first, then all judge files, so a judge record finds its generation
    whatever the file order. Importing the same files again adds nothing. Problems are reported
    per line and skipped; the good records of each file are written in one transaction.
    """
    b = benchmark or default_benchmark()
    report = ImportReport()
    queued: dict[Kind, list[tuple[Path, list[tuple[int, str | None, str | None]] | None]]] = {
        "generations": [],
        "evals": [],
    }
    for path in _collect(paths):
        lines = None if path.name.lower().startswith(("generations", "evals")) else _lines(path)
        kind = _kind_of(path, lines)
        if kind is None:
            report.problems.append(
                f"{path}: skipped: not a generations_ or evals_ file (name and first record do not "
                "say; a generation has 'model' and 'response', a judge record 'judge_model')"
            )
            continue
        queued[kind].append((path, lines))
    for path, lines in queued["generations"]:
        _import_file(
            store,
            path,
            "generations",
            lines,
            lambda obj, line: _parse_generation(obj, line, b),
            report,
        )
    if queued["evals"]:
        ids = store.generation_ids(b.key)
        for path, lines in queued["evals"]:
            _import_file(
                store,
                path,
                "evals",
                lines,
                lambda obj, line: _parse_eval(obj, line, b, ids),
                report,
            )
    return report


def _import_file(
    store: Store,
    path: Path,
    kind: Kind,
    lines: list[tuple[int, str | None, str | None]] | None,
    parse: Callable[[dict[str, Any], str], Any],
    report: ImportReport,
) -> None:
    fr = FileReport(path=path, kind=kind)
    report.files.append(fr)
    records = []
    for lineno, line, problem in lines if lines is not None else _lines(path):
        fr.read += 1
        try:
            if line is None:
                raise _Bad(problem or "unreadable line")
            records.append(parse(_decode(line), line))
        except _Bad as exc:
            fr.skipped += 1
            report.problems.append(f"{path}:{lineno}: {exc}")
    if not records:
        return
    counter = "generations" if kind == "generations" else "judgments"
    before = store.counts()[counter]
    if kind == "generations":
        store.add_generations(records)
    else:
        store.add_judgments(records)
    fr.imported = store.counts()[counter] - before
    fr.already_present = len(records) - fr.imported


# -- export -------------------------------------------------------------------------------------


def export(
    store: Store,
    out_dir: Path | str,
    fmt: str = "release",
    benchmark: Benchmark | None = None,
) -> list[Path]:
    """Write the store's results to ``out_dir`` and return the files written.

    ``release``: ``data/generations/generations_<slug>.jsonl`` per generating model and
    ``data/evals/evals_<slug>.jsonl`` per judge, the public release's layout and schema (only
    ``benchmark``'s generations; judge requests that failed are not verdicts and are left out).
    ``jsonl`` / ``csv`` / ``parquet``: ``generations.<ext>`` and ``judgments.<ext>``, the store's
    columns as flat tables (judgments carry their generation's model, claim, template, sample).
    """
    if fmt not in FORMATS:
        raise InteropError(f"unknown export format {fmt!r}: use one of {', '.join(FORMATS)}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InteropError(f"--out {out} is a file; give a folder")
    if fmt == "release":
        return _export_release(store, out, benchmark or default_benchmark())
    return _export_flat(store, out, fmt)


def _loads(text: str | None) -> dict[str, Any] | None:
    return None if text is None else json.loads(text)


def _export_release(store: Store, out: Path, b: Benchmark) -> list[Path]:
    rows = [r for r in store.generation_rows() if r["benchmark"] == b.key]
    if not rows:
        raise InteropError(f"--db {store.path} holds no generations of {b.key}: nothing to export")
    files: dict[Path, list[str]] = {}
    gens: dict[int, tuple[dict[str, Any], Claim, Template, str]] = {}
    for r in rows:
        try:
            claim, template = _lookup(b, r["claim_id"], r["prompt_id"])
        except _Bad as exc:
            raise InteropError(f"generation {r['gen_id']} in --db {store.path}: {exc}") from None
        extra = _loads(r["extra_json"])
        rec = _overlay(
            _derive_generation(
                b,
                claim,
                template,
                model=r["model"],
                sample=r["sample"],
                prompt=r["prompt"],
                response=r["response"],
                error=r["error"],
                input_tokens=r["input_tokens"],
                output_tokens=r["output_tokens"],
                created_at=r["created_at"],
            ),
            extra,
        )
        release_id = rec.get("gen_id") or gen_id(
            r["claim_id"], r["prompt_id"], r["model"], r["sample"]
        )
        gens[r["gen_id"]] = (r, claim, template, release_id)
        path = out / "data" / "generations" / f"generations_{model_slug(r['model'])}.jsonl"
        files.setdefault(path, []).append(_dumps(rec, (extra or {}).get("_style")))
    for j in store.judgment_rows():
        if j["error"] is not None or j["gen_id"] not in gens:
            continue
        g, claim, template, release_id = gens[j["gen_id"]]
        extra = _loads(j["extra_json"])
        said = _loads(j["said_json"])
        if said is None and not j["parse_error"]:
            said = {f: j[f] for f in FIELDS}
        rec = _overlay(
            _derive_eval(
                b,
                claim,
                template,
                generation_id=release_id,
                gen_model=g["model"],
                sample=g["sample"],
                judge=j["judge"],
                reasoning=j["reasoning"],
                parse_error=bool(j["parse_error"]),
                raw=j["raw"],
                said=said,
                consistency_flag=int(j["consistency_flag"]),
                created_at=j["created_at"],
            ),
            extra,
        )
        path = out / "data" / "evals" / f"evals_{model_slug(j['judge'])}.jsonl"
        files.setdefault(path, []).append(_dumps(rec, (extra or {}).get("_style")))
    for path, lines in files.items():
        _write_text(path, "".join(line + "\n" for line in lines))
    return list(files)


def _write_text(path: Path, text: str) -> None:
    """Write whole or not at all: a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8", newline="\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise InteropError(f"cannot write {path}: {exc.strerror or exc}") from None


#: Columns that hold integers (nullable), so CSV and Parquet keep them integral.
_INT_COLUMNS = (
    "gen_id",
    "judgment_id",
    "sample",
    "input_tokens",
    "output_tokens",
    "parse_error",
    "consistency_flag",
    *FIELDS,
)


def _export_flat(store: Store, out: Path, fmt: str) -> list[Path]:
    gens = store.generation_rows()
    if not gens:
        raise InteropError(f"--db {store.path} holds no generations: nothing to export")
    keys = {r["gen_id"]: r for r in gens}
    judgments = []
    for j in store.judgment_rows():
        g = keys.get(j["gen_id"], {})
        row = {}
        for k, v in j.items():
            row[k] = v
            if k == "gen_id":
                for gk in ("benchmark", "model", "claim_id", "prompt_id", "sample"):
                    row[gk] = g.get(gk)
        judgments.append(row)
    written = []
    for name, rows in (("generations", gens), ("judgments", judgments)):
        path = out / f"{name}.{fmt}"
        if fmt == "jsonl":
            _write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        else:
            _write_table(path, rows, fmt)
        written.append(path)
    return written


def _write_table(path: Path, rows: list[dict[str, Any]], fmt: str) -> None:
    import pandas as pd

    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InteropError(
                "Parquet export needs pyarrow: pip install 'deflectbench[parquet]' "
                "(or use --format csv / jsonl)"
            ) from None
    df = pd.DataFrame(rows)
    for c in _INT_COLUMNS:
        if c in df.columns:
            df[c] = df[c].astype("Int64")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        if fmt == "csv":
            df.to_csv(tmp, index=False)
        else:
            df.to_parquet(tmp, index=False, engine="pyarrow")
        os.replace(tmp, path)
    except OSError as exc:
        raise InteropError(f"cannot write {path}: {exc.strerror or exc}") from None


def iter_release_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one release file, for tests and quick looks (raises on a bad line)."""
    for lineno, line, problem in _lines(Path(path)):
        if line is None:
            raise InteropError(f"{path}:{lineno}: {problem}")
        try:
            yield _decode(line)
        except _Bad as exc:
            raise InteropError(f"{path}:{lineno}: {exc}") from None
