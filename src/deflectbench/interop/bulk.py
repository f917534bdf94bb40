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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from json.encoder import encode_basestring
from typing import Any, cast

from deflectbench import gate
from deflectbench.conditions import RELEASE
from deflectbench.interop.decode import MAX_LINE_CHARS
from deflectbench.interop.fidelity import line_style, plain
from deflectbench.interop.release import (
    ERROR_PREFIX,
    EVAL_KEYS,
    GEN_KEYS,
    Catalog,
    RecordError,
    eval_id,
    gen_id,
)
from deflectbench.store.upsert import Fixed
from deflectbench.vocab import FALLACY_FIELDS, FALLACY_NAMES, FIELDS, apply_rules

#: ``(line number, text, problem)`` as the importer reads them.
Line = tuple[int, str | None, str | None]
Row = tuple[Any, ...]
#: A chunk's lines and their JSON objects, in step.
Parsed = tuple[list[str], list[dict[str, Any]]]
#: A chunk's columns: each field's values, in line order.
Columns = dict[str, tuple[Any, ...]]
GenKey = tuple[str, str, str, int]
#: The store id of each generation of a list of keys (the importer's lookup).
Lookup = Callable[[list[GenKey]], Mapping[GenKey, int]]

#: json.loads's own scanner, ``(object, end)`` from a position (its C reader, without
#: ``raw_decode``'s Python call around it per line; the stubs do not know the attribute).
_scan: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]

#: Whether orjson reads the lines (a dependency; without it json's scanner reads the same,
#: slower).
try:
    from orjson import loads as _orjson_loads

    ORJSON = True
except ImportError:  # pragma: no cover (installed with the package)
    ORJSON = False


def _scanned(line: str) -> Any:
    """The one JSON value that is the whole line (json's own scanner), else None."""
    try:
        obj, end = _scan(line, 0)
    except (ValueError, RecursionError, StopIteration):
        return None
    return obj if end == len(line) else None


#: ``json.dumps(extra, sort_keys=True, ensure_ascii=False)``, as the store writes ``extra``;
#: a string as that writes it.
_extra_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
_text = encode_basestring

#: The fields of a record that vary from record to record, each with the gate's rule it meets
#: as it is (by the store's name for it, in :data:`deflectbench.gate.RULES`), or None where the
#: release says more (an id that follows from other fields, a flag, a timestamp, a verdict).
_GEN_OWN = {
    "gen_id": None, "prompt_text": "prompt", "model": "model", "run": "sample",
    "response": "response", "input_tokens": "input_tokens", "output_tokens": "output_tokens",
    "is_error": None, "timestamp": None,
}  # fmt: skip
_EVAL_OWN = {
    "eval_id": None, "gen_id": None, "judge_model": "judge", "run": "sample", "gen_model": None,
    "reasoning": "reasoning", "parse_error": None, "raw_judge_response": "raw",
    **dict.fromkeys(FIELDS), "detected_fallacies": None, "consistency_flag": None,
    "timestamp": None,
}  # fmt: skip
#: The fields a record copies from its claim and template, in the release's order.
_GEN_COPIED = tuple(k for k in GEN_KEYS if k not in _GEN_OWN)
_EVAL_COPIED = tuple(k for k in EVAL_KEYS if k not in _EVAL_OWN)


@dataclass(frozen=True, slots=True, eq=False)
class _Cell:
    """One claim x template as a record must repeat it."""

    #: The values (and their types) of the fields a generation / judge record copies.
    gen_copied: tuple[Any, ...]
    gen_types: tuple[type, ...]
    eval_copied: tuple[Any, ...]
    eval_types: tuple[type, ...]
    #: The pack's prompt for the cell.
    prompt: str


@dataclass(frozen=True, slots=True, eq=False)
class _Verdict:
    """What one judge record's eight values become in the store."""

    said_json: str | None
    columns: tuple[Any, ...]
    detected: list[str]
    #: ``detected`` as ``json.dumps`` writes it.
    detected_json: str


def _copied(
    record: Mapping[str, Any], names: tuple[str, ...]
) -> tuple[tuple[Any, ...], tuple[type, ...]] | None:
    """The values of ``names`` in a record as its origin has it, with their types; None when
    another field is filled in or one of them is not (then every record of the cell is read
    the careful way)."""
    if tuple(k for k, v in record.items() if v is not None) != names:
        return None
    values = tuple(record[k] for k in names)
    return values, tuple(map(type, values))


def _typed(column: tuple[Any, ...], *kinds: type) -> bool:
    """Whether every value of ``column`` is exactly of one of ``kinds``."""
    return set(map(type, column)) <= set(kinds)


def _ruled(columns: Columns, own: Mapping[str, str | None]) -> bool:
    """Whether every value of the columns ``own`` names a rule for meets it as it is."""
    return all(gate.RULES[rule].holds(columns[k]) for k, rule in own.items() if rule)


def _repeat_their_cells(cells: list[_Cell], columns: Columns, judged: bool) -> bool:
    """Whether each record repeats its cell's copied fields, value and type. (The chunk's cells
    must agree on the types, as a benchmark's do; else the careful way compares them.)"""
    names = _EVAL_COPIED if judged else _GEN_COPIED
    kinds = {c.eval_types if judged else c.gen_types for c in set(cells)}
    if len(kinds) != 1:
        return False
    copied = [columns[k] for k in names]
    return all(map(_typed, copied, kinds.pop())) and list(zip(*copied, strict=True)) == [
        c.eval_copied if judged else c.gen_copied for c in cells
    ]


def _stamped(column: tuple[Any, ...]) -> bool:
    """Every record has a timestamp: a non-empty string."""
    return _typed(column, str) and all(column)


def _styles(
    texts: list[str], objects: list[dict[str, Any]], keys: tuple[str, ...]
) -> list[str | None]:
    """Each line's style (:func:`.fidelity.line_style`), asked line by line only when the chunk
    is not plain (:func:`.fidelity.plain`)."""
    if plain(texts, keys[0]):
        return [None] * len(texts)
    return list(map(line_style, texts, objects))


def _gen_extra(style: str | None, gid: str, ts: str) -> str:
    """A generation's ``extra`` as the store writes it (``json.dumps``, keys sorted)."""
    if style:
        return _extra_json({"gen_id": gid, "timestamp": ts, "_style": style})
    return f'{{"gen_id": {_text(gid)}, "timestamp": {_text(ts)}}}'


def _eval_extra(
    style: str | None, flag: int, detected: list[str], v: _Verdict, eid: str, gid: str, ts: str
) -> str:
    """A judge record's ``extra`` as the store writes it (``json.dumps``, keys sorted)."""
    if style:
        return _extra_json(
            {"consistency_flag": flag, "detected_fallacies": detected, "eval_id": eid,
             "gen_id": gid, "timestamp": ts, "_style": style}
        )  # fmt: skip
    return (
        f'{{"consistency_flag": {flag}, "detected_fallacies": {v.detected_json}, '
        f'"eval_id": {_text(eid)}, "gen_id": {_text(gid)}, "timestamp": {_text(ts)}}}'
    )


def _answer_or_error(text: str, is_error: int) -> tuple[str | None, str | None] | None:
    """``(response, error)`` of a release ``response`` in the common form, else None."""
    if is_error == 0 and not text.startswith("ERROR:"):
        return text, None
    if is_error == 1 and text.startswith(ERROR_PREFIX):
        return None, text[len(ERROR_PREFIX) :]
    return None


#: The columns every row written in bulk holds the same value in, as the careful way writes
#: them: written as literals in the statement, not bound row by row (a row holds the others,
#: in the store's order: :func:`bound`).
GEN_FIXED: Fixed = (
    ("condition", RELEASE), ("latency_s", None), ("finish_reason", None), ("params_json", "{}"),
    ("run_id", None), ("source", "import"), ("cost_usd", None), ("served_model", None),
)  # fmt: skip
EVAL_FIXED: Fixed = (
    ("error", None), ("input_tokens", 0), ("output_tokens", 0), ("latency_s", None),
    ("run_id", None), ("source", "import"), ("cost_usd", None),
)  # fmt: skip


def bound(keys: tuple[str, ...], columns: tuple[str, ...], fixed: Fixed) -> tuple[str, ...]:
    """The columns a row written in bulk holds, in its order."""
    held = dict(fixed)
    return tuple(name for name in (*keys, *columns) if name not in held)


class BulkRows:
    """Store rows of the common records, for one import (its cells and verdicts are checked
    once and remembered)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.benchmark = catalog.key
        self.cells: dict[tuple[Any, Any], _Cell | None] = {}
        self.verdicts: dict[tuple[int, tuple[int, ...]], _Verdict | None] = {}
        self.fast = gate.RULES["benchmark"].holds((self.benchmark,)) and gate.RULES[
            "condition"
        ].holds((RELEASE,))

    def _build(self, claim_id: Any, prompt_id: Any) -> _Cell | None:
        if not gate.RULES["claim_id"].holds((claim_id,)) or not gate.RULES["prompt_id"].holds(
            (prompt_id,)
        ):
            return None
        try:
            origin = self.catalog.origin(claim_id, prompt_id)
            prompt = self.catalog.rendered(claim_id, prompt_id)
        except RecordError:
            return None
        gen = _copied(origin.generation, _GEN_COPIED)
        judged = _copied(origin.judgment, _EVAL_COPIED)
        if (
            origin.claim.claim_id != claim_id
            or origin.template.prompt_id != prompt_id
            or not gate.RULES["prompt"].holds((prompt,))
            or gen is None
            or judged is None
        ):
            return None  # every field checked once, copied or the record's own
        return _Cell(*gen, *judged, prompt)

    def _cells(self, columns: Columns) -> list[_Cell] | None:
        """Each record's cell, when every record names one of the benchmark's."""
        try:
            keys = list(zip(columns["claim_id"], columns["prompt_id"], strict=True))
            for key in set(keys).difference(self.cells):
                self.cells[key] = self._build(*key)
        except TypeError:  # an id that is a list or an object
            return None
        cells = list(map(self.cells.__getitem__, keys))
        return cast(list[_Cell], cells) if all(cells) else None

    def _verdicts(self, columns: Columns) -> list[_Verdict] | None:
        """Each judge record's verdict, when its eight values and parse_error are in range."""
        said = [columns[f] for f in FIELDS]
        parse_error = columns["parse_error"]
        if not (_typed(parse_error, int) and all(_typed(c, int) for c in said)):
            return None
        keys = list(zip(parse_error, zip(*said, strict=True), strict=True))
        for key in set(keys).difference(self.verdicts):
            self.verdicts[key] = self._judge(*key)
        verdicts = list(map(self.verdicts.__getitem__, keys))
        return cast(list[_Verdict], verdicts) if all(verdicts) else None

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
        except gate.GateError:
            return None
        detected = [FALLACY_NAMES[f] for f in FALLACY_FIELDS if said[f] == 1]
        return _Verdict(
            json.dumps(said, sort_keys=True),
            tuple(scores.get(f) for f in FIELDS),
            detected,
            json.dumps(detected, ensure_ascii=False),
        )

    # -- one chunk ----------------------------------------------------------------------------

    @staticmethod
    def objects(
        lines: Sequence[Line],
        keys: tuple[str, ...],
        raws: Sequence[bytes | None] | None = None,
        *,
        floats: bool = False,
    ) -> Parsed | None:
        """The lines and their JSON objects, when every line is one object with exactly
        ``keys``, in their order, and nothing around it (what ``json.loads`` reads the same).
        ``raws``, when given, are the lines' bytes (each exactly its text encoded as UTF-8):
        orjson reads them instead of encoding the texts again. ``floats``: the caller refuses a
        chunk with a float among its values itself (:meth:`generations` and :meth:`evals` hold
        every field to a type that is not float, or compare it with a text), so orjson's
        objects are not searched for one: a chunk refused either way.

        Read by orjson when it is installed (twice as fast as json's scanner), the whole chunk
        at once: it reads a subset of what ``json.loads`` reads, the same, but an integer
        beyond 64 bits becomes a float there, so a chunk with any float, or a line orjson
        refuses, is read line by line by json's own scanner."""
        texts = [line for _, line, _ in lines]
        if ORJSON and None not in texts:
            objects = BulkRows._orjson_chunk(cast(list[str], texts), keys, raws, floats)
            if objects is not None:
                return cast(list[str], texts), objects
        return BulkRows._scanned_chunk(texts, keys)

    @staticmethod
    def _orjson_chunk(
        texts: list[str],
        keys: tuple[str, ...],
        raws: Sequence[bytes | None] | None = None,
        floats: bool = False,
    ) -> list[dict[str, Any]] | None:
        """Each line's object read by orjson, when each line is one (opening with ``{`` and
        ending with ``}``: orjson allows whitespace around a value) with exactly ``keys`` and no
        float among its values; else None (json's scanner reads the chunk)."""
        if not (
            max(map(len, texts), default=0) <= MAX_LINE_CHARS
            and all(map(str.startswith, texts, repeat("{")))
            and all(map(str.endswith, texts, repeat("}")))
        ):
            return None
        try:
            # (the lines' bytes, when given: none is None where no text is)
            read = texts if raws is None else cast(Sequence[bytes], raws)
            objects = list(map(_orjson_loads, read))
        except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError
            return None
        if set(map(type, objects)) != {dict} or not all(map(keys.__eq__, map(tuple, objects))):
            return None
        if not floats and float in set(map(type, chain.from_iterable(map(dict.values, objects)))):
            return None
        return objects

    @staticmethod
    def _scanned_chunk(texts: list[str | None], keys: tuple[str, ...]) -> Parsed | None:
        """:meth:`objects` read by json's own scanner, line by line."""
        objects: list[dict[str, Any]] = []
        for line in texts:
            if line is None or len(line) > MAX_LINE_CHARS or line[:1] != "{":
                return None
            obj = _scanned(line)
            if type(obj) is not dict or tuple(obj) != keys:
                return None
            objects.append(obj)
        return cast(list[str], texts), objects

    @staticmethod
    def _columns(objects: list[dict[str, Any]], keys: tuple[str, ...]) -> Columns:
        """The chunk's values field by field (every object has exactly ``keys``, in order)."""
        return dict(zip(keys, zip(*map(dict.values, objects), strict=True), strict=True))

    def generations(
        self, lines: Sequence[Line], raws: Sequence[bytes | None] | None = None
    ) -> tuple[list[Row], list[GenKey]] | None:
        """``(rows, keys)`` of a chunk of common generation records (``raws``: as
        :meth:`objects` takes them), else None: None too for a float among any record's
        values (every field is held to a type that is not float, or compared with a text)."""
        parsed = self.objects(lines, GEN_KEYS, raws, floats=True) if self.fast else None
        if parsed is None:
            return None
        texts, objects = parsed
        col = self._columns(objects, GEN_KEYS)
        cells = self._cells(col)
        claims, prompt_ids, model, run = col["claim_id"], col["prompt_id"], col["model"], col["run"]
        if not (
            cells is not None
            and _ruled(col, _GEN_OWN)
            and _repeat_their_cells(cells, col, judged=False)
            and list(col["prompt_text"]) == [c.prompt for c in cells]
            and _typed(col["is_error"], int)
            and _stamped(col["timestamp"])
            and list(col["gen_id"]) == list(map(gen_id, claims, prompt_ids, model, run))
        ):
            return None
        split = list(map(_answer_or_error, col["response"], col["is_error"]))
        if None in split:
            return None
        responses, errors = zip(*split, strict=True)
        styles = _styles(texts, objects, GEN_KEYS)
        extras = list(map(_gen_extra, styles, col["gen_id"], col["timestamp"]))
        # the columns of bound(GENERATION_KEYS, GENERATION_COLUMNS, GEN_FIXED)
        rows = list(
            zip(repeat(self.benchmark), model, claims, prompt_ids, run, col["prompt_text"],
                responses, errors, col["input_tokens"], col["output_tokens"], col["timestamp"],
                extras)
        )  # fmt: skip
        return rows, list(zip(model, claims, prompt_ids, run, strict=True))

    def evals(self, parsed: Parsed, lookup: Lookup) -> tuple[list[Row], list[Any]] | None:
        """``(rows, keys)`` of a chunk of common judge records (``parsed``, from
        :meth:`objects`, floats and all; ``lookup`` gives the store id of each generation they
        name), else None: None too for a float among any record's values (every field is held
        to a type that is not float, or compared with a text)."""
        texts, objects = parsed
        col = self._columns(objects, EVAL_KEYS)
        cells = self._cells(col)
        claims, prompt_ids, run = col["claim_id"], col["prompt_id"], col["run"]
        gen_model, judge, generation_id = col["gen_model"], col["judge_model"], col["gen_id"]
        flag, detected = col["consistency_flag"], col["detected_fallacies"]
        if not (
            cells is not None
            and _ruled(col, _EVAL_OWN)
            and _repeat_their_cells(cells, col, judged=True)
            and _typed(gen_model, str)
            and _typed(flag, int)
            and set(flag) <= {0, 1}
            and _stamped(col["timestamp"])
            and list(generation_id) == list(map(gen_id, claims, prompt_ids, gen_model, run))
            and list(col["eval_id"]) == list(map(eval_id, generation_id, judge))
            and (verdicts := self._verdicts(col)) is not None
            and _typed(detected, list)
            and list(detected) == [v.detected for v in verdicts]
        ):
            return None
        named = list(zip(gen_model, claims, prompt_ids, run, strict=True))
        gids = list(map(lookup(named).get, named))
        if None in gids:
            return None
        styles = _styles(texts, objects, EVAL_KEYS)
        extras = list(
            map(_eval_extra, styles, flag, detected, verdicts, col["eval_id"], generation_id,
                col["timestamp"])
        )  # fmt: skip
        scores = zip(*(v.columns for v in verdicts), strict=True)
        # the columns of bound(JUDGMENT_KEYS, JUDGMENT_COLUMNS, EVAL_FIXED)
        rows = list(
            zip(gids, judge, col["raw_judge_response"], col["reasoning"], col["parse_error"],
                [v.said_json for v in verdicts], flag, *scores, col["timestamp"], extras,
                strict=True)
        )  # fmt: skip
        return rows, list(zip(gids, judge, strict=True))
