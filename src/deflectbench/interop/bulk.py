"""The common release record straight into its store row: the import's fast lane.

Nearly every line of a release file is a record exactly as export writes it: the release's keys
in its order, the claim's and template's attributes as the benchmark has them, ids that follow
from the record's own fields. For such a record every check of :mod:`.decode` reduces to a
comparison with what the benchmark says (made once per claim x template, per verdict and per
id, not once per line), and the record becomes, without an object in between, the tuple
``Store.add_generation`` or ``Store.add_judgment`` would bind.

Anything else returns None for its whole chunk: a line that is not such a record (garbled,
edited, an unknown claim, an odd type, an ``ERROR:`` reply flagged as an answer, ...), and the
importer then reads that chunk the careful way (:mod:`.decode`, the gate's duplicate rule, one
statement per record), so every problem it reports and every row it stores is that path's.
tests/interop/test_bulk_import.py imports hostile files both ways and compares the reports and
every stored row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any

from deflectbench import gate
from deflectbench.conditions import RELEASE
from deflectbench.gate import GateError
from deflectbench.interop.decode import MAX_LINE_CHARS
from deflectbench.interop.fidelity import line_style
from deflectbench.interop.release import (
    ERROR_PREFIX,
    EVAL_KEYS,
    GEN_KEYS,
    Catalog,
    RecordError,
    eval_id,
    gen_id,
)
from deflectbench.vocab import FALLACY_FIELDS, FALLACY_NAMES, FIELDS, apply_rules

#: ``(line number, text, problem)`` as the importer reads them.
Line = tuple[int, str | None, str | None]
Row = tuple[Any, ...]
#: A line and its JSON object.
Parsed = tuple[str, dict[str, Any]]

#: json.loads's own reader, called on a line that starts with ``{`` (no per-call set-up).
_scan = json.JSONDecoder().raw_decode
#: ``json.dumps(extra, sort_keys=True, ensure_ascii=False)``, as the store writes ``extra``;
#: a string as that writes it.
_extra_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
_text = encode_basestring

#: The fields of a record that vary from record to record (the rest are its cell's).
_GEN_NAMES = (
    "gen_id", "prompt_text", "model", "run", "response", "input_tokens", "output_tokens",
    "is_error", "timestamp",
)  # fmt: skip
_EVAL_NAMES = (
    "eval_id", "gen_id", "judge_model", "run", "gen_model", "reasoning", "parse_error",
    "raw_judge_response", "detected_fallacies", "consistency_flag", "timestamp",
)  # fmt: skip
_GEN_OWN, _EVAL_OWN = itemgetter(*_GEN_NAMES), itemgetter(*_EVAL_NAMES)
_SAID = itemgetter(*FIELDS)
_INTS = (int,) * len(FIELDS)
_CELL = itemgetter("claim_id", "prompt_id")
_GENERATION_KEY = itemgetter("gen_model", "claim_id", "prompt_id", "run")


@dataclass(frozen=True, slots=True)
class _Cell:
    """One claim x template as a record must repeat it."""

    #: The values (and their types) of the fields a generation / judge record copies.
    gen_fields: itemgetter[Any]
    gen_copied: tuple[Any, ...]
    gen_types: tuple[type, ...]
    eval_fields: itemgetter[Any]
    eval_copied: tuple[Any, ...]
    eval_types: tuple[type, ...]
    #: The pack's prompt for the cell.
    prompt: str
    claim_id: str
    prompt_id: str


@dataclass(frozen=True, slots=True)
class _Verdict:
    """What one judge record's eight values become in the store."""

    said_json: str | None
    columns: tuple[Any, ...]
    detected: list[str]
    #: ``detected`` as ``json.dumps`` writes it.
    detected_json: str


def _copied(record: Mapping[str, Any]) -> tuple[itemgetter[Any], tuple[Any, ...], tuple[type, ...]]:
    keys = [k for k, v in record.items() if v is not None]
    values = tuple(record[k] for k in keys)
    return itemgetter(*keys), values, tuple(map(type, values))


class BulkRows:
    """Store rows of the common records, for one import (its cells, ids and verdicts are
    checked once and remembered)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.benchmark = catalog.key
        #: Ids the gate has passed (models, judges, the benchmark's claims and templates).
        self.ids: set[str] = set()
        self.cells: dict[tuple[str, str], _Cell | None] = {}
        self.verdicts: dict[tuple[int, tuple[int, ...]], _Verdict | None] = {}
        self.fast = self._id(self.benchmark) and self._id(RELEASE)

    def _id(self, value: Any) -> bool:
        """Whether ``value`` is an id the gate passes (remembered when it is)."""
        if value in self.ids:
            return True
        try:
            self.ids.add(gate.identifier(value, "id"))
        except GateError:
            return False
        return True

    def _build(self, claim_id: str, prompt_id: str) -> _Cell | None:
        try:
            origin = self.catalog.origin(claim_id, prompt_id)
            prompt = self.catalog.rendered(claim_id, prompt_id)
        except RecordError:
            return None
        if not (
            origin.claim.claim_id == claim_id
            and origin.template.prompt_id == prompt_id
            and self._id(claim_id)
            and self._id(prompt_id)
            and len(prompt) <= gate.MAX_TEXT_CHARS
        ):
            return None
        copied = [
            [k for k, v in r.items() if v is not None] for r in (origin.generation, origin.judgment)
        ]
        if sorted([*copied[0], *_GEN_NAMES]) != sorted(GEN_KEYS) or sorted(
            [*copied[1], *_EVAL_NAMES, *FIELDS]
        ) != sorted(EVAL_KEYS):
            return None  # every field checked once, copied or the record's own
        return _Cell(
            *_copied(origin.generation), *_copied(origin.judgment), prompt, claim_id, prompt_id
        )

    def _verdict(self, parse_error: int, values: tuple[int, ...]) -> _Verdict | None:
        key = (parse_error, values)
        if key not in self.verdicts:
            self.verdicts[key] = self._judge(parse_error, values)
        return self.verdicts[key]

    @staticmethod
    def _judge(parse_error: int, values: tuple[int, ...]) -> _Verdict | None:
        if parse_error not in (0, 1):
            return None
        if parse_error:
            if values != (-1,) * len(FIELDS):  # kept verbatim in extra: the careful way
                return None
            return _Verdict(None, (None,) * len(FIELDS), [], "[]")
        if not all(v in gate.SAID_VALUES for v in values):
            return None
        said = dict(zip(FIELDS, values, strict=True))
        scores = apply_rules(said)
        try:
            gate.verdicts(scores, FIELDS)
            gate.verdicts(said, FIELDS)
        except GateError:
            return None
        detected = [FALLACY_NAMES[f] for f in FALLACY_FIELDS if said[f] == 1]
        return _Verdict(
            json.dumps(said, sort_keys=True),
            tuple(scores.get(f) for f in FIELDS),
            detected,
            json.dumps(detected, ensure_ascii=False),
        )

    # -- one chunk ----------------------------------------------------------------------------

    def objects(self, lines: Sequence[Line], keys: tuple[str, ...]) -> list[Parsed] | None:
        """Each line with its JSON object, when every line is one object with exactly ``keys``,
        in their order, and nothing around it (what ``json.loads`` reads the same)."""
        out: list[Parsed] = []
        for _, line, _ in lines:
            if line is None or len(line) > MAX_LINE_CHARS or line[:1] != "{":
                return None
            try:
                obj, end = _scan(line)
            except (ValueError, RecursionError):
                return None
            if end != len(line) or type(obj) is not dict or tuple(obj) != keys:
                return None
            out.append((line, obj))
        return out

    def _cell_of(self, obj: Mapping[str, Any]) -> _Cell | None:
        key = _CELL(obj)
        try:
            return self.cells[key]
        except (KeyError, TypeError):
            if type(key[0]) is not str or type(key[1]) is not str:
                return None
            found = self.cells[key] = self._build(*key)
            return found

    def generations(self, lines: Sequence[Line]) -> tuple[list[Row], list[tuple[Any, ...]]] | None:
        """``(rows, keys)`` of a chunk of common generation records, else None."""
        objects = self.objects(lines, GEN_KEYS) if self.fast else None
        if objects is None:
            return None
        rows, keys = [], []
        benchmark, ids, cell_of = self.benchmark, self.ids, self._cell_of
        for line, obj in objects:
            c = cell_of(obj)
            if c is None:
                return None
            fixed = c.gen_fields(obj)
            gid, prompt, model, run, text, tokens_in, tokens_out, is_error, ts = _GEN_OWN(obj)
            if (
                fixed != c.gen_copied
                or tuple(map(type, fixed)) != c.gen_types
                or prompt != c.prompt
                or type(model) is not str
                or not (model in ids or self._id(model))
                or type(run) is not int
                or not 0 <= run <= gate.MAX_SAMPLE
                or type(text) is not str
                or len(text) > gate.MAX_TEXT_CHARS
                or type(tokens_in) is not int
                or not 0 <= tokens_in <= gate.MAX_TOKENS
                or type(tokens_out) is not int
                or not 0 <= tokens_out <= gate.MAX_TOKENS
                or type(ts) is not str
                or not ts
                or type(is_error) is not int
                or gid != gen_id(c.claim_id, c.prompt_id, model, run)
            ):
                return None
            if is_error == 0 and not text.startswith("ERROR:"):
                response, error = text, None
            elif is_error == 1 and text.startswith(ERROR_PREFIX):
                response, error = None, text[len(ERROR_PREFIX) :]
            else:
                return None
            if style := line_style(line, obj):
                extra = _extra_json({"gen_id": gid, "timestamp": ts, "_style": style})
            else:
                extra = f'{{"gen_id": {_text(gid)}, "timestamp": {_text(ts)}}}'
            rows.append(
                (benchmark, model, RELEASE, c.claim_id, c.prompt_id, run, prompt, response, error,
                 tokens_in, tokens_out, None, None, "{}", None, "import", ts, extra, None, None)
            )  # fmt: skip
            keys.append((model, c.claim_id, c.prompt_id, run))
        return rows, keys

    def evals(
        self, objects: list[Parsed], generations: Mapping[Any, int]
    ) -> tuple[list[Row], list[tuple[Any, ...]]] | None:
        """``(rows, keys)`` of a chunk of common judge records (``objects``, from
        :meth:`objects`; ``generations`` the store id of each generation they name), else
        None."""
        rows, keys = [], []
        ids, cell_of, verdicts = self.ids, self._cell_of, self.verdicts
        for line, obj in objects:
            c = cell_of(obj)
            if c is None:
                return None
            fixed = c.eval_fields(obj)
            (eid, generation_id, judge, run, gen_model, reasoning, parse_error, raw, detected,
             flag, ts) = _EVAL_OWN(obj)  # fmt: skip
            said = _SAID(obj)
            if (
                fixed != c.eval_copied
                or tuple(map(type, fixed)) != c.eval_types
                or type(judge) is not str
                or not (judge in ids or self._id(judge))
                or type(gen_model) is not str
                or type(run) is not int
                or not 0 <= run <= gate.MAX_SAMPLE
                or type(parse_error) is not int
                or type(flag) is not int
                or flag not in (0, 1)
                or tuple(map(type, said)) != _INTS
                or type(ts) is not str
                or not ts
                or not (reasoning is None or type(reasoning) is str)
                or not (raw is None or type(raw) is str)
                or len(reasoning or "") > gate.MAX_TEXT_CHARS
                or len(raw or "") > gate.MAX_TEXT_CHARS
                or generation_id != gen_id(c.claim_id, c.prompt_id, gen_model, run)
                or eid != eval_id(generation_id, judge)
            ):
                return None
            v = verdicts.get((parse_error, said)) or self._verdict(parse_error, said)
            gid = generations.get((gen_model, c.claim_id, c.prompt_id, run))
            if v is None or gid is None or type(detected) is not list or detected != v.detected:
                return None
            if style := line_style(line, obj):
                extra = _extra_json(
                    {"consistency_flag": flag, "detected_fallacies": detected, "eval_id": eid,
                     "gen_id": generation_id, "timestamp": ts, "_style": style}
                )  # fmt: skip
            else:
                extra = (
                    f'{{"consistency_flag": {flag}, "detected_fallacies": {v.detected_json}, '
                    f'"eval_id": {_text(eid)}, "gen_id": {_text(generation_id)}, '
                    f'"timestamp": {_text(ts)}}}'
                )
            rows.append(
                (gid, judge, raw, reasoning, parse_error, None, v.said_json, flag, *v.columns,
                 0, 0, None, None, "import", ts, extra, None)
            )  # fmt: skip
            keys.append((gid, judge))
        return rows, keys

    @staticmethod
    def generation_keys(objects: list[Parsed]) -> list[tuple[str, str, str, int]] | None:
        """The (model, claim_id, prompt_id, run) each judge record names, when all are well
        typed (else None: the careful way)."""
        keys = [_GENERATION_KEY(obj) for _, obj in objects]
        for model, claim, prompt, run in keys:
            if not (type(model) is str and type(claim) is str and type(prompt) is str):
                return None
            if type(run) is not int or not 0 <= run <= gate.MAX_SAMPLE:
                return None
        return keys
